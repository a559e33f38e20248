"""Starting, watching and stopping the bundled ``yutenv serve`` process.

A :class:`Server` is one server process that this interpreter started on a
private Unix socket in a fresh temporary directory (mode 0700). Envs open their
own connection to it. The process is stopped when its last user releases it, when
:meth:`Server.close` is called, when the object is garbage collected, and at
interpreter exit; a server is never left running behind the Python process:
its stdin is a pipe from us, and ``yutenv serve --exit-on-stdin-eof`` exits when that
pipe closes, which the kernel does when this process dies, even by SIGKILL.

The server's stderr (its log) is read by a daemon thread into a ring buffer, so an
error raised after the server died can quote its last lines.
"""

from __future__ import annotations

import atexit
import collections
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from importlib import resources
from pathlib import Path
from typing import IO, Any, Sequence

from ..errors import ServerDiedError, ServerStartError

#: How many of the server's last log lines a :class:`Server` keeps, for the error that says why
#: it died.
LOG_LINES = 200
_DEFAULT_START_TIMEOUT = 20.0


def binary_path() -> Path:
    """The ``yutenv`` server binary this package uses.

    ``$YUTENV_BINARY`` wins; otherwise the binary the package build put in
    ``yutenv/_bin``. Raises :class:`ServerStartError` if there is none.
    """
    env = os.environ.get("YUTENV_BINARY")
    if env:
        p = Path(env)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise ServerStartError(f"YUTENV_BINARY={env} is not an executable file")
        return p
    exe = "yutenv.exe" if sys.platform == "win32" else "yutenv"
    p = Path(str(resources.files("yutenv"))) / "_bin" / exe
    if not p.is_file():
        raise ServerStartError(
            f"the bundled server binary is missing ({p}). The package build compiles it with Go: "
            "reinstall with `pip install ./python` from a yutenv checkout (Go required), "
            "or set YUTENV_BINARY to a `yutenv` binary built with `go build ./cmd/yutenv`."
        )
    return p


class _LogReader:
    """Reads a child's stream line by line into a ring buffer (daemon thread)."""

    def __init__(self, stream: IO[bytes], name: str, maxlen: int = LOG_LINES) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=maxlen)
        self._lock = threading.Lock()
        self._stream = stream
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for raw in iter(self._stream.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\n")
                with self._lock:
                    self.lines.append(line)
        except (OSError, ValueError):
            pass

    def text(self, n: int = 40) -> str:
        with self._lock:
            lines = list(self.lines)[-n:]
        return "\n".join(lines)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


_live: weakref.WeakSet[Server] = weakref.WeakSet()
_live_lock = threading.Lock()
_shared: Server | None = None


def _stop_all_at_exit() -> None:
    with _live_lock:
        servers = list(_live)
    for s in servers:
        s.close()


atexit.register(_stop_all_at_exit)


def _stop_process(proc: subprocess.Popen[bytes], stdin: IO[bytes] | None, grace: float) -> None:
    """Stop proc: close its stdin (it exits by itself), then SIGTERM, then SIGKILL."""
    if stdin is not None:
        try:
            stdin.close()
        except OSError:
            pass
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGTERM)
    except OSError:
        pass
    try:
        proc.wait(grace)
        return
    except subprocess.TimeoutExpired:
        pass
    try:
        proc.kill()
    except OSError:
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:  # pragma: no cover - the kernel does not refuse SIGKILL
        pass


def _close_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Close our ends of a dead child's output pipes (the readers have seen EOF)."""
    if proc.poll() is None:
        return
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            try:
                stream.close()
            except (OSError, ValueError):
                pass


def _finalize(proc: subprocess.Popen[bytes], stdin: IO[bytes] | None, tmpdir: str, owner: int) -> None:
    if os.getpid() != owner:  # a forked child must not stop its parent's server
        return
    _stop_process(proc, stdin, grace=2.0)
    _close_pipes(proc)
    shutil.rmtree(tmpdir, ignore_errors=True)


def _names_net_dir(args: Sequence[str]) -> bool:
    return any(a == "--net-dir" or a.startswith("--net-dir=") for a in args)


def _net_dirs(args: Sequence[str]) -> list[str]:
    """The ``--net-dir`` flags of a private server: none if ``args`` chose its own folders,
    else the current directory (for relative names) and ``/``."""
    if _names_net_dir(args):
        return []
    try:
        cwd = ["--net-dir", os.getcwd()]
    except OSError:  # the current directory was removed: relative names cannot mean anything
        cwd = []
    return [*cwd, "--net-dir", "/"]


def _out_dirs(args: Sequence[str]) -> list[str]:
    """The ``--out-dir`` flags of a private server: none if ``args`` chose its own folders,
    else ``/``: its one user may make it write wherever they may write themselves
    (``yutenv.az.SelfPlay(...).run(out=...)``)."""
    if any(a == "--out-dir" or a.startswith("--out-dir=") for a in args):
        return []
    return ["--out-dir", "/"]


def default_transport() -> str:
    """How a server started by the package listens: ``$YUTENV_TRANSPORT`` (``unix`` or
    ``tcp``) if set, else ``tcp`` on Windows and ``unix`` elsewhere."""
    t = os.environ.get("YUTENV_TRANSPORT", "").strip().lower()
    if t:
        if t not in ("unix", "tcp"):
            raise ServerStartError(f"YUTENV_TRANSPORT={t!r}: want unix or tcp")
        return t
    return "tcp" if sys.platform == "win32" else "unix"


class Server:
    """A ``yutenv serve`` process started by this interpreter, private to its user.

    It listens on a Unix socket in a private (0700) folder, or, with ``transport="tcp"`` (the
    default on Windows), on a free TCP port of 127.0.0.1 with a random token that only this
    process knows (passed to the server in a file of that private folder, never on the
    command line, and removed with its folder as soon as the server is ready), so another
    local user can neither connect to it nor read the token.

    The socket lives in a folder only this user may open (or needs the token only this process
    knows), so the server serves one local user who can read and write their own files anyway:
    unless ``args`` names ``--net-dir`` folders itself, the server may open network files
    (``net:PATH`` agents) from anywhere (``--net-dir /``), a relative ``PATH`` first from the
    current directory, as the CLI does; unless ``args`` names ``--out-dir`` folders, it may
    write self-play datasets (``yutenv.az.SelfPlay(...).run(out=...)``) anywhere its user may
    (``--out-dir /``).

    Args:
        binary: the server binary (default: :func:`binary_path`).
        args: extra command-line flags for ``yutenv serve``; with ``--net-dir``, only those
            folders (and the networks shipped with the package) may be named by ``net:`` agents;
            with ``--out-dir``, self-play may write only inside those folders.
        start_timeout: seconds to wait for the server's ready line.
        env: extra environment variables for the server process.
        close_when_unused: stop the server when the last env using it closes (the shared
            server does this); a server you create yourself runs until you close it (or exit).
        transport: ``"unix"`` or ``"tcp"`` (default: :func:`default_transport`).

    Attributes:
        address: where to connect (``unix:/tmp/yutenv-.../yutenv.sock`` or
            ``tcp://127.0.0.1:PORT``).
        token: the token a connection must present (``None`` on a Unix socket, whose folder
            already keeps other users out). Sessions given ``server=`` present it themselves.
        pid: the server's process id.
    """

    def __init__(
        self,
        binary: str | os.PathLike[str] | None = None,
        args: Sequence[str] = (),
        start_timeout: float = _DEFAULT_START_TIMEOUT,
        env: dict[str, str] | None = None,
        close_when_unused: bool = False,
        transport: str | None = None,
    ) -> None:
        exe = Path(binary) if binary is not None else binary_path()
        self.close_when_unused = close_when_unused
        #: True when ``args`` named no ``--net-dir``: the server opens networks anywhere, so a
        #: relative ``net:PATH`` can be sent as this process's absolute path.
        self.opens_any_net = not _names_net_dir(args)
        self._owner = os.getpid()
        self._refs = 0
        self._ref_lock = threading.Lock()
        self.closed = False
        base = None
        # AF_UNIX paths are limited to ~104-108 bytes: fall back to /tmp for long TMPDIRs.
        if len(tempfile.gettempdir()) > 60 and os.path.isdir("/tmp"):
            base = "/tmp"
        self._tmpdir = tempfile.mkdtemp(prefix="yutenv-", dir=base)
        os.chmod(self._tmpdir, 0o700)
        self.transport = default_transport() if transport is None else transport
        self.token: str | None = None
        if self.transport == "unix":
            self.socket_path: str | None = os.path.join(self._tmpdir, "yutenv.sock")
            self.address = "unix:" + self.socket_path
            # The server removes the folder when it exits: a kill -9 of this process leaves
            # nothing (it sees its stdin close, shuts down and removes its socket, then this).
            listen = ["--listen", self.address, "--remove-socket-dir"]
        elif self.transport == "tcp":
            self.socket_path = None
            self.token = secrets.token_hex(16)
            token_file = os.path.join(self._tmpdir, "token")
            fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(self.token)
            self.address = ""  # known from the ready line: the port is picked by the server
            listen = ["--listen", "127.0.0.1:0", "--token-file", token_file]
        else:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            raise ValueError(f"transport {transport!r}: want 'unix' or 'tcp'")
        cmd = [str(exe), "serve", *listen, "--exit-on-stdin-eof", *_net_dirs(args), *_out_dirs(args), *args]
        self.command = cmd
        penv = dict(os.environ)
        if env:
            penv.update(env)
        try:
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=penv,
                # Own process group: a Ctrl-C meant for Python does not kill the server
                # under the trainer's feet; we stop it ourselves.
                start_new_session=True,
                close_fds=True,
            )
        except OSError as e:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            raise ServerStartError(f"cannot start {exe}: {e}") from e
        self.pid = self._proc.pid
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._log = _LogReader(self._proc.stderr, f"yutenv-server-{self.pid}-stderr")
        self._finalizer = weakref.finalize(self, _finalize, self._proc, self._proc.stdin, self._tmpdir, self._owner)
        with _live_lock:
            _live.add(self)
        try:
            self.ready: dict[str, Any] = self._wait_ready(self._proc.stdout, start_timeout)
        except BaseException:
            self.close()
            raise
        if self.transport == "tcp":
            self.address = "tcp://" + str(self.ready["listening"])
            # The server read the token before its ready line: the secret's file, and the folder
            # made for it, go now, so a kill -9 of this process at any later point leaves
            # nothing behind (the server, watching its stdin, exits by itself).
            shutil.rmtree(self._tmpdir, ignore_errors=True)
        # Keep draining stdout so the server never blocks on a full pipe.
        self._out = _LogReader(self._proc.stdout, f"yutenv-server-{self.pid}-stdout")

    def _wait_ready(self, stdout: IO[bytes], timeout: float) -> dict[str, Any]:
        """Wait for the server's ready line: a JSON object with a ``listening`` key on stdout."""
        lines: queue.Queue[bytes] = queue.Queue()

        def read() -> None:
            try:
                for raw in iter(stdout.readline, b""):
                    lines.put(raw)
                    try:
                        obj = json.loads(raw)
                    except ValueError:
                        continue
                    if isinstance(obj, dict) and "listening" in obj:
                        return
            except (OSError, ValueError):
                pass
            lines.put(b"")  # EOF: the server exited

        t = threading.Thread(target=read, name=f"yutenv-server-{self.pid}-ready", daemon=True)
        t.start()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                raw = lines.get(timeout=max(left, 0.0))
            except queue.Empty:
                raise ServerStartError(
                    f"the server did not report ready within {timeout:g}s: {' '.join(self.command)}",
                    returncode=self._proc.poll(),
                    log=self.log_tail(),
                ) from None
            if raw == b"":
                rc = self._wait_exit(2.0)
                self._log.join(1.0)
                raise ServerStartError(
                    f"the server exited before it was ready (exit status {rc}): {' '.join(self.command)}",
                    returncode=rc,
                    log=self.log_tail(),
                )
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict) and "listening" in obj:
                t.join(1.0)
                return obj

    def _wait_exit(self, timeout: float) -> int | None:
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    # ---- state -------------------------------------------------------------

    def alive(self) -> bool:
        """Whether the server process is still running."""
        return not self.closed and self._proc.poll() is None

    def state(self) -> str:
        """The process's state in words, for error messages: ``"running"``, ``"stopped"`` (by
        SIGSTOP or a debugger; Linux only) or ``"exited with status N"``."""
        rc = self._proc.poll()
        if rc is not None:
            return f"exited with status {rc}"
        try:
            with open(f"/proc/{self.pid}/stat", encoding="ascii") as f:
                code = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return "running"
        return "stopped" if code in ("T", "t") else "running"

    @property
    def returncode(self) -> int | None:
        return self._proc.poll()

    def log_tail(self, n: int = 40) -> str:
        """The server's last ``n`` log lines (stderr)."""
        if self._proc.poll() is not None:
            self._log.join(0.05)  # let the reader catch the last lines of a dead server
        return self._log.text(n)

    def died_error(self, what: str) -> ServerDiedError:
        """The error to raise when the connection to this server broke during ``what``."""
        rc = self._wait_exit(1.0)
        if rc is not None:
            self._log.join(1.0)
        if self.closed:
            msg = f"{what}: the server was closed"
        elif rc is None:
            msg = f"{what}: the connection to the server (pid {self.pid}) broke, but the process is still running"
        else:
            how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
            msg = f"{what}: the yutenv server (pid {self.pid}) died ({how})"
        return ServerDiedError(msg, returncode=rc, log=self.log_tail())

    # ---- sharing -----------------------------------------------------------

    def acquire(self) -> bool:
        """Count one more user of the server (see :meth:`release`).

        Returns False (and counts nothing) if the server is already closed.
        """
        with self._ref_lock:
            if self.closed:
                return False
            self._refs += 1
        return True

    def release(self) -> None:
        """Drop one user (see :meth:`acquire`); with ``close_when_unused`` the last one stops the server."""
        with self._ref_lock:
            self._refs -= 1
            last = self._refs <= 0 and self.close_when_unused
            if last:
                self.closed = True  # no new acquire from here on
        if last:
            self._stop()

    def close(self) -> None:
        """Stop the server process and remove its socket directory. Idempotent."""
        with self._ref_lock:
            self.closed = True
        self._stop()

    def _stop(self) -> None:
        with _live_lock:
            _live.discard(self)
        self._finalizer()

    def __enter__(self) -> Server:
        return self

    # A Server is a handle to one external process: copies are the same server (gymnasium.make
    # deep-copies its kwargs, which may hold server=...). It cannot be pickled to another process.
    def __copy__(self) -> Server:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Server:
        return self

    def __reduce__(self) -> Any:
        raise TypeError(
            "a yutenv.Server cannot be pickled: pass its address (server.address) to the other "
            "process and connect with address=..., or let each process start its own server"
        )

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("running" if self.alive() else f"dead({self.returncode})")
        return f"<yutenv.Server pid={self.pid} {self.address} {state}>"


_shared_lock = threading.Lock()


def acquire_shared_server() -> Server:
    """The process-wide server that envs use by default, started on first use, acquired.

    Each env acquires it and releases it on close, so it stops with the last env.
    A dead or closed shared server is replaced by a new one.
    """
    global _shared
    with _shared_lock:
        s = _shared
        if s is not None and s._owner == os.getpid() and s.alive() and s.acquire():
            return s
        s = Server(close_when_unused=True)
        s.acquire()
        _shared = s
        return s
