"""The wire client: length-prefixed msgpack frames over a stream socket.

Every message is a frame: a 4-byte big-endian length, then one msgpack map.
A request is ``{id, method, params}``; the reply is ``{id, result}`` or
``{id, error: {code, message}}`` (docs/PROTOCOL.md). A :class:`Client` is one
connection; calls on it are serialised by a lock, so it is safe (not concurrent)
to share between threads. Use one client per thread for parallelism.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from typing import Any, Mapping, Protocol

import msgpack

from ..errors import ClosedError, ProtocolError, ServerDiedError, YutEnvError, YutTimeoutError, error_from_wire


class ServerProcess(Protocol):
    """What the client asks of the server process behind its address, to explain a broken
    connection: :class:`yutenv.Server` is one. Declared here so that the wire does not import
    the layer above it."""

    pid: int

    def alive(self) -> bool: ...

    def state(self) -> str: ...

    def died_error(self, what: str) -> ServerDiedError: ...


MAX_FRAME = 16 << 20
"""Largest frame this client accepts or sends (the server's default limit)."""

_HDR = struct.Struct(">I")


def parse_address(address: str) -> tuple[int, Any]:
    """Turn an address into ``(family, sockaddr)``.

    Accepted forms: ``unix:/path/to.sock``, ``/path/to.sock`` (an absolute path),
    ``tcp://host:port``, ``tcp:host:port``, ``host:port``.
    """
    a = address.strip()
    if a.startswith("unix:"):
        path = a[len("unix:") :]
        if path.startswith("//"):
            path = path[2:]
        return socket.AF_UNIX, path
    if a.startswith("/") or a.startswith("./"):
        return socket.AF_UNIX, a
    for prefix in ("tcp://", "tcp:"):
        if a.startswith(prefix):
            a = a[len(prefix) :]
            break
    host, sep, port = a.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bad server address {address!r}: want unix:/path, /abs/path.sock, tcp://host:port or host:port")
    host = host.strip("[]") or "127.0.0.1"
    return socket.AF_INET6 if ":" in host else socket.AF_INET, (host, int(port))


_TIMEVAL = struct.Struct("@ll")


def _set_timeout(sock: socket.socket, timeout: float | None) -> None:
    """Bound every blocking read and write of ``sock`` by ``timeout`` seconds.

    The socket stays in blocking mode with the kernel's SO_RCVTIMEO/SO_SNDTIMEO, which make an
    expired read or write fail with EAGAIN (BlockingIOError). ``sock.settimeout`` would instead
    make CPython poll() before every recv, also before the ``MSG_DONTWAIT`` reads of
    :meth:`Client._poll`, which would then block and lose the spin's gain. Where the options
    are not available, ``settimeout`` is the fallback.
    """
    sock.settimeout(None)
    if timeout is None:
        return
    sec = int(timeout)
    tv = _TIMEVAL.pack(sec, max(1, int((timeout - sec) * 1e6)) if sec == 0 else int((timeout - sec) * 1e6))
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
    except (OSError, AttributeError):
        sock.settimeout(timeout)


#: The poll budget of single-env front ends (YutEnv, the AEC env): measured on the 2-core
#: VM, 200 us lifts one env from about 11,000 to 16,500 steps/s (docs/BENCHMARKS.md).
SINGLE_ENV_SPIN = 2e-4


class Client:
    """One connection to a yutenv server.

    Args:
        address: where the server listens (see :func:`parse_address`).
        server: the :class:`~yutenv.Server` process behind ``address``, when we started it;
            used to explain a broken connection with the server's exit status and log.
        timeout: seconds to wait for a reply (None: wait as long as it takes); past it a
            call raises :class:`~yutenv.YutTimeoutError` and closes the connection.
        max_frame: refuse frames larger than this.
    """

    def __init__(
        self,
        address: str,
        server: ServerProcess | None = None,
        timeout: float | None = None,
        max_frame: int = MAX_FRAME,
    ) -> None:
        self.address = address
        self.server = server
        self.timeout = timeout
        self.max_frame = max_frame
        self._owner = os.getpid()
        self._lock = threading.Lock()
        self._next_id = 1
        #: Seconds to poll for a reply without blocking before sleeping in recv. Waking a
        #: blocked thread costs tens of microseconds on a VM, more than a small step takes
        #: the server, so a single env polls briefly; a large batch keeps this 0 so that
        #: the client does not take a core from the server's workers.
        self.spin = 0.0
        self._buf = bytearray(1 << 16)
        self._view = memoryview(self._buf)
        self._start = 0  # unread data is self._buf[self._start:self._end]
        self._end = 0
        self._packer = msgpack.Packer(use_bin_type=True, autoreset=True)
        self.closed = False
        self._closed_why = ""
        #: Set while a call expects a file descriptor with its reply (:meth:`call_fd`).
        self._want_fd = False
        self._fds: list[int] = []
        self._in_flight: str | None = None  # the method of a request sent by send_packed
        self._rid = 0
        family, sockaddr = parse_address(address)
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout if timeout is not None else 30.0)
            sock.connect(sockaddr)
        except OSError as e:
            sock.close()
            if server is not None and not server.alive():
                raise server.died_error(f"connect to {address}") from e
            raise ServerDiedError(f"cannot connect to the yutenv server at {address}: {e}") from e
        _set_timeout(sock, timeout)
        if family != socket.AF_UNIX:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock: socket.socket = sock

    # ---- framing -------------------------------------------------------------

    def _broken(self, what: str, cause: BaseException | None = None) -> YutEnvError:
        self._close_socket()
        self._closed_why = f"{what} found it broken ({cause or 'EOF'})"
        if self.server is not None:
            return self.server.died_error(what)
        return ServerDiedError(f"{what}: the connection to the yutenv server at {self.address} broke ({cause or 'EOF'})")

    def _protocol(self, message: str) -> ProtocolError:
        # The stream is past saving: close it, and say why to every later call.
        self._close_socket()
        self._closed_why = message
        return ProtocolError(message)

    def _timed_out(self, what: str) -> YutTimeoutError:
        # A reply may still come later and would be taken for the next one's: close.
        self._close_socket()
        t = self.timeout if self.timeout is not None else 0.0
        who = f"the yutenv server at {self.address}"
        if self.server is not None:
            who = f"the yutenv server (pid {self.server.pid}, {self.server.state()})"
        return YutTimeoutError(
            f"{what}: no reply from {who} within the timeout of {t:g} s; the connection was closed "
            "(make a new env). Pass a larger timeout= (None: no limit) if the server is just slow.",
            method=what,
            timeout=t,
        )

    def _fill(self, need: int, what: str) -> None:
        """Read until at least ``need`` unread bytes are buffered."""
        have = self._end - self._start
        if have >= need:
            return
        if self._start + need > len(self._buf):
            # Move the unread tail to the front, growing the buffer if the frame is bigger.
            if need > len(self._buf):
                nb = bytearray(max(need, 2 * len(self._buf)))
                nb[:have] = self._view[self._start : self._end]
                self._buf = nb
                self._view = memoryview(nb)
            else:
                self._buf[:have] = self._view[self._start : self._end]
            self._start, self._end = 0, have
        if self.spin > 0 and not self._want_fd:
            self._poll(need)
        while self._end - self._start < need:
            try:
                if self._want_fd:
                    n = self._recv_fds()
                else:
                    n = self._sock.recv_into(self._view[self._end :])
            except (TimeoutError, BlockingIOError) as e:  # BlockingIOError: SO_RCVTIMEO expired
                raise self._timed_out(what) from e
            except OSError as e:
                raise self._broken(what, e) from e
            if n == 0:
                raise self._broken(what)
            self._end += n

    def _recv_fds(self) -> int:
        """One read that also takes the descriptors passed with the bytes (SCM_RIGHTS)."""
        n, anc, flags, _ = self._sock.recvmsg_into([self._view[self._end :]], socket.CMSG_SPACE(4 * 4))
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds = struct.unpack(f"{len(data) // 4}i", data[: len(data) // 4 * 4])
                self._fds.extend(fds)
        if flags & socket.MSG_CTRUNC:
            for fd in self._fds:
                os.close(fd)
            self._fds = []
            raise ProtocolError("the server passed more file descriptors than expected")
        return n

    def _poll(self, need: int) -> None:
        """Read without blocking for up to ``self.spin`` seconds (see ``spin``)."""
        deadline = time.perf_counter() + self.spin
        while self._end - self._start < need and time.perf_counter() < deadline:
            try:
                n = self._sock.recv_into(self._view[self._end :], 0, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                return  # the blocking read below reports it
            if n == 0:
                return
            self._end += n

    def _read_frame(self, what: str) -> Any:
        # Nothing is consumed until the whole frame is buffered: a read that an exception
        # (a KeyboardInterrupt) cuts short leaves the buffer where the next read resumes.
        self._fill(4, what)
        (n,) = _HDR.unpack_from(self._buf, self._start)
        if n > self.max_frame:
            raise self._protocol(f"{what}: the server sent a frame of {n} bytes, above the limit of {self.max_frame}")
        self._fill(4 + n, what)
        self._start += 4
        body = self._view[self._start : self._start + n]
        self._start += n
        if self._start == self._end:
            self._start = self._end = 0
        try:
            return msgpack.unpackb(body, raw=False, strict_map_key=False)
        except Exception as e:  # msgpack raises several unrelated classes
            raise self._protocol(f"{what}: cannot decode the server's reply: {e}") from e
        finally:
            body.release()

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Send one request and return its ``result``; server errors raise exceptions."""
        return self.call_packed(method, self._packer.pack(params if params is not None else {}))

    def call_packed(self, method: str, packed_params: bytes) -> Any:
        """:meth:`call` with ``params`` already msgpack-encoded (the hot path of ``step``)."""
        with self._lock:
            self._send(method, packed_params)
            return self._reply(method)

    def send_packed(self, method: str, packed_params: bytes) -> None:
        """Send a request without waiting for its reply: :meth:`recv_reply` reads it. Until
        then no other call may use the connection (one request in flight)."""
        with self._lock:
            self._send(method, packed_params)
            self._in_flight = method

    def reply_waiting(self) -> bool:
        """Whether the reply of the request :meth:`send_packed` sent has begun to arrive."""
        if self._end > self._start:
            return True
        try:
            n = self._sock.recv_into(self._view[self._end :], 0, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True  # recv_reply reports it
        if n == 0:
            return True
        self._end += n
        return True

    def recv_reply(self, method: str) -> Any:
        """The result of the request :meth:`send_packed` sent (its errors raise)."""
        with self._lock:
            if self._in_flight is None:
                raise YutEnvError(f"{method}: no request is in flight")
            self._in_flight = None
            return self._reply(method)

    def abandon(self) -> None:
        """Stop waiting for the request :meth:`send_packed` sent (its caller was interrupted):
        its reply, whenever it comes, is skipped by the next read (see ``_reply``)."""
        self._in_flight = None

    def _send(self, method: str, packed_params: bytes) -> None:
        if self.closed:
            why = f" ({self._closed_why}; make a new env)" if self._closed_why else ""
            raise ClosedError(f"{method}: the connection to {self.address} is closed{why}")
        if os.getpid() != self._owner:
            raise YutEnvError(
                "a yutenv env or client cannot be used in a forked child process: "
                "create it in the child (or use the 'spawn'/'forkserver' start method)"
            )
        if self._in_flight is not None:
            raise YutEnvError(f"{method}: the reply of {self._in_flight} was not read yet")
        pack = self._packer.pack
        rid = self._next_id
        self._next_id += 1
        # {"id": rid, "method": method, "params": <packed>}: msgpack values concatenate.
        body = b"\x83\xa2id" + pack(rid) + b"\xa6method" + pack(method) + b"\xa6params" + packed_params
        if len(body) > self.max_frame:
            raise YutEnvError(f"{method}: request of {len(body)} bytes is above the frame limit {self.max_frame}")
        frame = memoryview(_HDR.pack(len(body)) + body)
        sent = 0
        try:
            while sent < len(frame):
                sent += self._sock.send(frame[sent:])
        except (TimeoutError, BlockingIOError) as e:  # BlockingIOError: SO_SNDTIMEO expired
            raise self._timed_out(method) from e
        except OSError as e:
            raise self._broken(method, e) from e
        except BaseException:
            # Interrupted (a KeyboardInterrupt): a frame cut short would make the server read
            # the rest of the stream as garbage, so the frame is finished first; its reply is
            # then dropped when the next request's is read (see _reply).
            if sent:
                try:
                    self._sock.sendall(frame[sent:])
                except BaseException:
                    self._close_socket()
                    self._closed_why = f"{method} was interrupted while its request was being sent"
                    raise
                self._rid = rid
            raise
        self._rid = rid

    def _reply(self, method: str) -> Any:
        rid = self._rid
        while True:
            reply = self._read_frame(method)
            if type(reply) is not dict:
                raise ProtocolError(f"{method}: the reply is not a map: {type(reply).__name__}")
            old = reply.get("id")
            if type(old) is not int or not 0 < old < rid:
                break
            # The reply of an earlier request whose caller stopped waiting for it (an
            # interrupted step): requests are answered in order, so the one wanted follows.
        err = reply.get("error")
        if reply.get("id") != rid:
            if reply.get("id") is None and err is not None:
                # The server's last word on a connection it closes before reading the request
                # (too many connections, no hello in time): its error, not a protocol error.
                raise error_from_wire(err, method)
            raise self._protocol(f"{method}: reply id {reply.get('id')!r} does not match request id {rid}")
        if err is not None:
            raise error_from_wire(err, method)
        try:
            return reply["result"]
        except KeyError:
            raise ProtocolError(f"{method}: the reply has neither result nor error") from None

    @property
    def passes_fds(self) -> bool:
        """Whether the connection can carry file descriptors (a Unix socket)."""
        return self._sock.family == getattr(socket, "AF_UNIX", None)

    def call_fd(self, method: str, params: Mapping[str, Any] | None = None) -> tuple[Any, int]:
        """:meth:`call` for a method whose reply carries one file descriptor (``share``): the
        result and the descriptor, which the caller owns. Unix sockets only."""
        if not self.passes_fds:
            raise YutEnvError(f"{method}: passing a file descriptor needs a Unix socket, not {self.address}")
        self._want_fd = True
        try:
            result = self.call(method, params)
        except BaseException:
            for fd in self._fds:
                os.close(fd)
            self._fds = []
            raise
        finally:
            self._want_fd = False
        fds, self._fds = self._fds, []
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise ProtocolError(f"{method}: the reply carried {len(fds)} file descriptors, want 1")
        return result, fds[0]

    # ---- lifetime --------------------------------------------------------------

    def _close_socket(self) -> None:
        self.closed = True
        try:
            self._sock.close()
        except OSError:
            pass

    def close(self) -> None:
        """Close the connection. Idempotent."""
        if not self.closed:
            self._close_socket()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
