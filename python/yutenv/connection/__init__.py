"""How a front end reaches a server: :class:`Session` (the one connection model, see
:mod:`yutenv.connection.session`) and :class:`Server` (the bundled ``yutenv serve`` process)."""

from __future__ import annotations

from .server import Server, acquire_shared_server, binary_path
from .session import DEFAULT_TIMEOUT, PROTOCOL, Session, close_shared_session, shared_session

__all__ = [
    "DEFAULT_TIMEOUT",
    "PROTOCOL",
    "Server",
    "Session",
    "acquire_shared_server",
    "binary_path",
    "close_shared_session",
    "shared_session",
]
