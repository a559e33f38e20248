"""The one connection model: how every front end gets a handshaken connection to a server.

A front end (an env, a vector env, the PettingZoo envs, the state API, AlphaZero self-play)
never opens a socket itself: it makes a :class:`Session`, which picks its server by one rule,
in this order:

1. ``server=`` a :class:`~yutenv.Server` the caller started (a private server);
2. ``address=`` (``unix:/path``, ``host:port``), or ``$YUTENV_ADDRESS``: a server the user
   runs, with ``token=`` or ``$YUTENV_TOKEN`` / ``$YUTENV_TOKEN_FILE`` when it has one;
3. otherwise the process-wide bundled server (:func:`~yutenv.connection.server.acquire_shared_server`),
   started on first use on a private socket.

And one lifetime rule: a session holds its server (it *acquires* it) until the session is closed
or garbage collected; the shared server stops when its last session ends (and at exit), a
private one when its owner closes it, a user's never. The state API's calls share one session per
process (:func:`shared_session`), which is reopened after a fork, a close or a broken connection.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

from .._meta import __version__
from .._wire.client import Client
from ..errors import ClosedError, ProtocolError
from .server import Server, acquire_shared_server

PROTOCOL = 1
"""The protocol version this client speaks (``hello``)."""
CLIENT_NAME = f"yutenv-python {__version__}"
"""The client name this package gives the server in ``hello`` (its log and ``stats`` name it)."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a request waits for the server's reply by default (``timeout``)."""


def _resolve_target(address: str | None, token: str | None) -> tuple[str | None, str | None]:
    if address is None:
        address = os.environ.get("YUTENV_ADDRESS") or None
    if token is None:
        token = os.environ.get("YUTENV_TOKEN") or None
        tf = os.environ.get("YUTENV_TOKEN_FILE")
        if token is None and tf:
            with open(tf, encoding="utf-8") as f:
                token = f.read().strip()
    return address, token


def _end_session(client: Client, server: Server | None) -> None:
    """Close a session's connection and release its server (also run when a session that was
    never closed is garbage collected, so that a dropped env does not keep the shared server)."""
    try:
        client.close()
    finally:
        if server is not None:
            server.release()


class Session:
    """One handshaken connection to a yutenv server.

    What the server says in ``hello`` is kept in :attr:`hello` and used rather than assumed:
    :attr:`actions` (the action count), :attr:`tiers` (every observation space by name), and
    the frame limit (the client's read limit). A session that is garbage collected without
    :meth:`close` is closed then (its envs are freed by the server when the connection ends).

    Args:
        address: the server to connect to (``unix:/path``, ``host:port``); default
            ``$YUTENV_ADDRESS``, else the bundled server started on a private socket.
        token: the server's token, if it has one (default ``$YUTENV_TOKEN`` or the
            contents of ``$YUTENV_TOKEN_FILE``).
        server: a :class:`~yutenv.Server` to use instead of the shared one.
        timeout: seconds to wait for any reply (None: no limit); past it a call raises
            :class:`~yutenv.YutTimeoutError`.
    """

    def __init__(
        self,
        address: str | None = None,
        token: str | None = None,
        server: Server | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> None:
        release: Server | None = None
        self.closed = True
        addr, tok = _resolve_target(address, token)
        if server is not None:
            if not server.acquire():
                raise ClosedError(f"{server!r} is closed")
            release = server
            addr = server.address
            tok = tok if tok is not None else server.token
        elif addr is None:
            server = acquire_shared_server()
            release = server
            addr = server.address
            tok = server.token
        #: Seconds a reply may take (None: no limit); a Python opponent's answer too.
        self.timeout: float | None = timeout
        try:
            self.client = Client(addr, server=server, timeout=timeout)
        except BaseException:
            if release is not None:
                release.release()
            raise
        self._end = weakref.finalize(self, _end_session, self.client, release)
        self.server = server
        self.address = addr
        #: What the state API declared on this connection: rules string -> game id.
        self.game_ids: dict[str, int] = {}
        try:
            params: dict[str, Any] = {"protocol": PROTOCOL, "client": CLIENT_NAME}
            if tok is not None:
                params["token"] = tok
            self.hello: dict[str, Any] = self.client.call("hello", params)
            if self.hello.get("protocol") != PROTOCOL:
                raise ProtocolError(f"the server speaks protocol {self.hello.get('protocol')}, this client {PROTOCOL}")
            #: The number of actions of the server's action codec.
            self.actions: int = int(self.hello["actions"])
            #: Every observation tier's space, by name (docs/PROTOCOL.md, hello).
            self.tiers: dict[str, dict[str, Any]] = {str(t["tier"]): dict(t) for t in self.hello["tiers"]}
            self.client.max_frame = int(self.hello["limits"]["max_frame"])
        except BaseException:
            self._end()
            raise
        self.closed = False

    def call(self, method: str, params: Any = None) -> Any:
        """One request on this session's connection (:meth:`Client.call`)."""
        return self.client.call(method, params)

    def ping(self) -> None:
        self.client.call("ping")

    def stats(self) -> dict[str, Any]:
        return dict(self.client.call("stats"))

    def close(self) -> None:
        self.closed = True
        self._end()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_shared_lock = threading.Lock()
_shared: Session | None = None
_shared_pid = 0


def shared_session() -> Session:
    """The process's shared session of the state API (:class:`~yutenv.Game`, :class:`~yutenv.State`),
    made as :class:`Session` makes one with no arguments, on first use; a fresh one after a fork,
    after :func:`close_shared_session` and after :func:`forget_shared_session`."""
    global _shared, _shared_pid
    with _shared_lock:
        s = _shared
        if s is None or s.closed or _shared_pid != os.getpid():
            s = _shared = Session()
            _shared_pid = os.getpid()
        return s


def forget_shared_session(session: Session) -> None:
    """Let the next :func:`shared_session` open a new session if ``session`` is still the shared
    one (its connection broke: the next call starts afresh)."""
    global _shared
    with _shared_lock:
        if _shared is session:
            _shared = None


def close_shared_session() -> None:
    """Close the state API's shared session (it reopens on next use)."""
    global _shared
    with _shared_lock:
        s, _shared = _shared, None
    if s is not None:
        s.close()
