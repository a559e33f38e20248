"""Exception classes of the yutenv package.

Every error raised by yutenv derives from :class:`YutEnvError`. Errors the server
reports carry its error ``code`` and ``message``; the mapping from wire codes to
classes lives in :func:`error_from_wire`.
"""

from __future__ import annotations

from typing import Any


class YutEnvError(Exception):
    """Base class of every yutenv error."""


class MissingExtraError(YutEnvError, ImportError):
    """An optional module of yutenv was imported without the extra that installs what it needs.

    Attributes:
        feature: what was imported (``"yutenv.sb3"``).
        extra: the extra to install (``"sb3"``).
    """

    def __init__(self, feature: str, extra: str, module: str) -> None:
        self.feature = feature
        self.extra = extra
        super().__init__(
            f"{feature} needs the {extra!r} extra ({module!r} is not installed): pip install 'yutenv[{extra}]'"
            f" (in a yutenv checkout: pip install './python[{extra}]')",
            name=module,
        )


class ServerError(YutEnvError):
    """The server answered a request with an error.

    Attributes:
        code: the server's error code (a short string such as ``"bad_request"``).
        message: the server's message.
        method: the request method that failed, when known.
    """

    def __init__(self, message: str, code: str | int | None = None, method: str | None = None) -> None:
        self.code = code
        self.message = message
        self.method = method
        # The server's messages already open with their method ("make: params.tier: ..."):
        # each layer is named once.
        prefix = f"{method}: " if method and not message.startswith(f"{method}: ") else ""
        suffix = f" [{code}]" if code is not None else ""
        super().__init__(f"{prefix}{message}{suffix}")


class IllegalActionError(ServerError, ValueError):
    """An action is not legal in the current state (server code ``illegal_action``, with the
    ``"error"`` illegal-action policy), or is outside 0..179. Nothing was changed."""


class InvalidRulesError(ServerError, ValueError):
    """The rules configuration was refused (``invalid_rules``); the message names the field."""


class InvalidArgumentError(ServerError, ValueError):
    """A request parameter was refused (``bad_request``): an unknown opponent, a bad tier, a
    wrong number of actions, an env index out of range."""


class NetError(InvalidArgumentError):
    """An agent's network file (``net:PATH``) was refused or cannot be played: not in the
    server's ``--net-dir`` folders, not a valid network, or its output was NaN or infinite
    (server code ``bad_net``)."""


class UnauthorizedError(ServerError):
    """The server requires a token and none or a wrong one was given (``unauthorized``)."""


class LimitExceededError(ServerError):
    """A server limit was hit (``limit_exceeded``): envs per connection, envs in total,
    connections, or a batch whose replies would exceed the frame limit."""


class UnsupportedError(ServerError):
    """The server does not do this (``unsupported``), e.g. rendering images."""


class BadStateError(ServerError, ValueError):
    """A saved state could not be loaded (``bad_state``)."""


class ResetNeeded(ServerError):
    """``step`` before ``reset``, or after the episode ended in a single env (``needs_reset``)."""


class ProtocolError(YutEnvError):
    """The bytes on the wire do not follow the protocol (a bad frame, an unexpected reply,
    a version mismatch): a bug or a mismatch between this client and the server."""

    def __init__(self, message: str, code: str | None = None) -> None:
        self.code = code
        super().__init__(message)


class ServerDiedError(YutEnvError):
    """The server process exited or the connection dropped.

    Attributes:
        returncode: the server's exit status when it was a child process we started, else None.
        log: the server's last log lines (stderr), when we started it.
    """

    def __init__(self, message: str, returncode: int | None = None, log: str = "") -> None:
        self.returncode = returncode
        self.log = log
        text = message
        if log:
            text += "\n--- last server log lines ---\n" + log.rstrip("\n")
        super().__init__(text)


class ServerStartError(ServerDiedError):
    """The bundled server could not be started (missing binary, no ready line, early exit)."""


class YutTimeoutError(YutEnvError, TimeoutError):
    """The server did not answer a request within the client's ``timeout`` (a stopped,
    overloaded or hung server). The connection is closed (a late reply could not be told
    from the next one): make a new env.

    Attributes:
        method: the request that timed out.
        timeout: the timeout, in seconds.
    """

    def __init__(self, message: str, method: str, timeout: float) -> None:
        self.method = method
        self.timeout = timeout
        super().__init__(message)


class EvalTimeoutError(ServerError, TimeoutError):
    """A self-play run's batch of leaves was not answered within its ``eval_timeout``
    (``eval_timeout``): the server cancelled the run; the shards written so far stay."""


class CheckpointError(YutEnvError, ValueError):
    """A training run's checkpoint is damaged, missing or not of this run (:mod:`yutenv.az.train`).

    The message is one line naming the file, what is wrong with it and what to do.

    Attributes:
        path: the damaged file (or directory).
        generation: the generation it belongs to, or None (the run's ``config.json``).
    """

    def __init__(self, message: str, path: str = "", generation: int | None = None) -> None:
        self.path = path
        self.generation = generation
        super().__init__(message)


class FileRefusedError(YutEnvError, OSError):
    """A file yutenv was named was refused before a byte of it was read or written: it is not a
    regular file (a FIFO, a device, a socket, a directory; for a write, also a symbolic link to
    one of those or to nothing), or it is larger than what its reader reads. Files are opened
    without blocking, so a FIFO is refused at once rather than waited on.

    An ``OSError`` too: ``filename`` is the file, ``strerror`` the reason, and the message
    is one line, ``"FILE: REASON"``. Readers of a format wrap it in their own class (a dataset's
    in :class:`yutenv.datasets.DatasetError`, a training run's in :class:`CheckpointError`).
    """

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}" if self.filename else str(self.strerror)


class ClosedError(YutEnvError):
    """The env or client was used after ``close()``."""


class OpponentError(YutEnvError):
    """A Python policy playing an opponent failed: it raised, answered with the wrong shape or
    type, or chose an illegal action. The message names the opponent and the envs. The env
    waits for that opponent's move: call ``reset()`` to go on."""


class OpponentTimeoutError(OpponentError, TimeoutError):
    """A Python policy playing an opponent did not answer within the env's ``timeout``."""


# Wire error codes (docs/PROTOCOL.md, "Errors") mapped to classes.
_CODE_CLASSES: dict[str, type[ServerError]] = {
    "illegal_action": IllegalActionError,
    "invalid_rules": InvalidRulesError,
    "bad_request": InvalidArgumentError,
    "bad_net": NetError,
    "unauthorized": UnauthorizedError,
    "limit_exceeded": LimitExceededError,
    "unsupported": UnsupportedError,
    "bad_state": BadStateError,
    "needs_reset": ResetNeeded,
    "eval_timeout": EvalTimeoutError,
}
# Codes that mean this client and the server disagree about the protocol itself.
_PROTOCOL_CODES = ("bad_frame", "frame_too_large", "unknown_method", "handshake_required", "version_mismatch")


def error_from_wire(err: Any, method: str | None = None) -> YutEnvError:
    """Build the exception for a wire ``error`` object ``{code, message}``."""
    if not isinstance(err, dict):
        return ProtocolError(f"{method or 'reply'}: malformed error object {err!r}")
    code = err.get("code")
    message = str(err.get("message", "(no message)"))
    if code in _PROTOCOL_CODES:
        return ProtocolError(f"{method + ': ' if method else ''}the server says: {message} [{code}]", code=str(code))
    if code == "shutting_down":
        return ServerDiedError(f"{method + ': ' if method else ''}the server is shutting down: {message}")
    cls = _CODE_CLASSES.get(code, ServerError) if isinstance(code, str) else ServerError
    return cls(message, code=code, method=method)
