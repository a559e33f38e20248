"""Reading and writing the files a user names safely: regular files only, with a size cap;
atomic writes that replace only regular files.

The same policy as the Go package ``internal/userfile``, used by every reader and writer of
the package. A file a user or another program names may be a FIFO (opening it would block),
a device (``/dev/zero`` never ends; replacing ``/dev/null`` as root breaks the machine), a
socket, a directory or a huge file: :func:`open_regular` and :func:`read_regular` open it
without blocking and refuse all of them before reading a byte, checking the opened descriptor
(``fstat``), so what is checked is what is read. :func:`atomic_write` writes a temporary file
beside its target, flushes it to disk and renames it over the target, so a crash leaves either
the old file or the new one, never half of one; an existing target that is not a regular file
is refused before anything is written, and a symbolic link to a regular file is written
through (:func:`write_target`). Every refusal is a :class:`~yutenv.errors.FileRefusedError`
(an OSError) whose message is one line naming the file.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import stat
import sys
import weakref
from pathlib import Path
from typing import IO, BinaryIO, Callable

from .errors import FileRefusedError

__all__ = [
    "FileLock",
    "FileRefused",
    "LockHeld",
    "atomic_write",
    "error_text",
    "kind",
    "open_regular",
    "process_alive",
    "read_regular",
    "remove_stale_temps",
    "sha256_bytes",
    "sha256_file",
    "temp_name",
    "write_target",
]

#: The refusal of a file (the package's documented :class:`~yutenv.errors.FileRefusedError`).
FileRefused = FileRefusedError


def kind(mode: int) -> str:
    """What a file of ``mode`` is, for a message: ``"a FIFO"``, ``"a character device"``, ..."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _not_regular(path: str | os.PathLike[str], mode: int) -> FileRefused:
    return FileRefused(0, f"not a regular file ({kind(mode)})", os.fspath(path))


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading, without blocking on a FIFO; :class:`FileRefused` unless it
    is a regular file (checked on the opened descriptor), OSError for a missing or unreadable
    one."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        try:  # a socket cannot be opened at all (ENXIO): say what it is
            mode = os.stat(path).st_mode
        except OSError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


_open_regular = open_regular


def read_regular(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes`` bytes.

    The file is opened without blocking (a FIFO opens at once and is then refused) and
    checked with ``fstat`` on the opened descriptor, so what is checked is what is read.
    Raises :class:`FileRefused` (an OSError) for a non-regular or too large file, and
    OSError for a missing or unreadable one.
    """
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise FileRefused(0, f"{size} bytes, over the limit of {max_bytes}", str(path))
        data = f.read(size + 1)  # one byte more than fstat saw: a file that grew is seen
    if len(data) > size:
        raise FileRefused(0, f"it grew past its {size} bytes while it was read", str(path))
    return data


def sha256_bytes(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> tuple[str, int]:
    """The hex SHA-256 and the size of the regular file ``path``, read a block at a time.

    Raises :class:`FileRefused` for a non-regular file, OSError for a missing one.
    """
    h = hashlib.sha256()
    n = 0
    with open_regular(path) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            n += len(block)
    return h.hexdigest(), n


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:  # a platform without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or, for a symbolic link, the
    regular file it leads to (the link is written through and kept). A missing ``path`` is
    fine (it will be created); an existing one that is not a regular file, or a link to
    something that is not (or to nothing), raises :class:`FileRefused` naming ``path``."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return p
    if stat.S_ISREG(st.st_mode):
        return p
    if not stat.S_ISLNK(st.st_mode):
        raise FileRefused(0, f"not a regular file ({kind(st.st_mode)}; only a regular file is replaced)", str(path))
    real = Path(os.path.realpath(p))
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        raise FileRefused(0, "not a regular file (a symbolic link that leads to nothing)", str(path)) from None
    if not stat.S_ISREG(mode):
        raise FileRefused(0, f"not a regular file ({kind(mode)}; only a regular file is replaced)", str(path))
    return real


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> Path:
    """Write ``path`` atomically: ``write(f)`` fills a temporary file in the same directory,
    which is flushed to disk and renamed over ``path`` (then the directory is synced).

    An existing ``path`` that is not a regular file (a device, a FIFO, a socket, a directory)
    raises :class:`FileRefused` before ``write`` is called, and is checked again just before
    the rename; a symbolic link to a regular file is written through (:func:`write_target`).
    If ``write`` raises, the temporary file is removed and ``path`` is left as it was.
    The temporary file is created with ``open`` (honouring the umask, unlike ``mkstemp``)
    under a name of this process, ``.NAME.PID.tmp``. Returns the file written.
    """
    target = write_target(path)
    tmp = temp_name(target)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if write_target(path) != target:
            raise FileRefused(0, "replaced while it was written", str(path))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)
    return Path(path)


_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>[0-9]{1,10})\.tmp(?:\.[A-Za-z0-9]{1,8})?$")
"""The name of a temporary file of :func:`temp_name`: ``.NAME.PID.tmp``, optionally with a suffix
a library insists on (``.NAME.PID.tmp.zip``)."""


def temp_name(path: str | os.PathLike[str], suffix: str = "") -> Path:
    """The temporary file this process writes ``path`` through before renaming it over
    ``path``: ``.NAME.PID.tmp`` (and ``suffix``), which :func:`remove_stale_temps` recognises."""
    p = Path(path)
    return p.with_name(f".{p.name}.{os.getpid()}.tmp{suffix}")


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (one that cannot be asked counts as alive)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(kernel32.GetLastError() == 5)  # ERROR_ACCESS_DENIED: it exists
        try:
            code = ctypes.c_ulong()
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return True
            return code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    except OSError:
        return True
    return True


def remove_stale_temps(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files of :func:`temp_name` in ``folder`` left by processes that no
    longer run (a writer killed between writing and renaming); returns them. A live process's
    file, this process's included, is left alone, and so is anything that is not a regular file."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        m = _TEMP.match(e.name)
        if m is None or not e.is_file(follow_symlinks=False):
            continue
        pid = int(m["pid"])
        if pid == os.getpid() or process_alive(pid):
            continue
        try:
            os.unlink(e.path)
        except FileNotFoundError:
            continue
        removed.append(Path(e.path))
    return removed


class LockHeld(OSError):
    """:class:`FileLock` could not take its lock: another process (or another lock of this one)
    holds it. ``holder`` is what the holder wrote in the file (``"PID on HOST"``; "" if unknown),
    ``pid`` its process id (None if unknown)."""

    def __init__(self, path: Path, holder: str) -> None:
        self.holder = holder
        m = re.match(r"([0-9]+)", holder)
        self.pid = int(m[1]) if m else None
        super().__init__(0, f"held by process {holder}" if holder else "held by another process", str(path))


_WIN_LOCK_AT = 1 << 30
"""Where the lock's byte lies on Windows (msvcrt.locking locks a byte range, mandatory for reads):
far past the holder's id at the start of the file, which stays readable."""


class FileLock:
    """An exclusive advisory lock on the file ``path`` (created if missing), held until
    :meth:`release` or the end of the process: the operating system drops it when the process
    dies, however it dies, so a killed holder never blocks the next one.

    ``fcntl.flock`` on Linux and macOS (a lock of the open file: a second :class:`FileLock` on
    the same file in the same process is refused too), ``msvcrt.locking`` of one byte on Windows.
    The holder writes ``"PID on HOST"`` at the start of the file, which a refused opener reads into
    :class:`LockHeld`. A child the process forks closes its copy of the descriptor without
    unlocking, so the lock ends with the process that took it, not with its last forked worker. Raises :class:`LockHeld` when the lock is held, OSError when the file cannot
    be opened.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0), 0o644)
        try:
            try:
                self._lock(fd)
            except OSError:
                os.lseek(fd, 0, os.SEEK_SET)
                holder = os.read(fd, 256).decode("utf-8", "replace").strip()
                raise LockHeld(self.path, holder) from None
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{os.getpid()} on {platform.node()}\n".encode())
        except BaseException:
            os.close(fd)
            raise
        self._fd: int | None = fd
        _HELD.add(self)

    @staticmethod
    def _lock(fd: int) -> None:
        if sys.platform == "win32":
            import msvcrt

            os.lseek(fd, _WIN_LOCK_AT, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Give the lock up (the file stays; a second call does nothing)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if sys.platform == "win32":
                import msvcrt

                os.lseek(fd, _WIN_LOCK_AT, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
            else:
                os.ftruncate(fd, 0)  # no holder to name
        finally:
            os.close(fd)  # closing drops a flock

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:
            pass

    def _forget(self) -> None:
        """In a forked child: close the inherited descriptor without unlocking, so the lock stays
        the parent's and does not outlive it in a child that runs on."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


_HELD: weakref.WeakSet[FileLock] = weakref.WeakSet()
"""The locks this process holds, for the fork hook."""


def _after_fork_in_child() -> None:
    for lock in list(_HELD):
        lock._forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def error_text(e: BaseException) -> str:
    """What a command line prints for ``e``: an OSError's file (when it names one) and its
    reason, any other error's message."""
    if isinstance(e, OSError):
        return f"{f'{e.filename}: ' if e.filename else ''}{e.strerror or e}"
    return str(e)
