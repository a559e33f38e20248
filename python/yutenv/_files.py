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
import stat
from pathlib import Path
from typing import IO, BinaryIO, Callable

from .errors import FileRefusedError

__all__ = [
    "FileRefused",
    "atomic_write",
    "error_text",
    "kind",
    "open_regular",
    "read_regular",
    "sha256_bytes",
    "sha256_file",
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
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
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


def error_text(e: BaseException) -> str:
    """What a command line prints for ``e``: an OSError's file (when it names one) and its
    reason, any other error's message."""
    if isinstance(e, OSError):
        return f"{f'{e.filename}: ' if e.filename else ''}{e.strerror or e}"
    return str(e)
