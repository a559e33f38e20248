"""Reading and writing files safely: regular files only, with a size cap; atomic writes.

Internal helpers shared by :mod:`yutenv.az` (networks, checkpoints, reports). A file a
user or another program names may be a FIFO (opening it for reading would block), a
device (``/dev/zero`` never ends) or a huge file: :func:`read_regular` refuses all three
before reading a byte. :func:`atomic_write` writes a temporary file in the target's
directory, flushes it to disk and renames it over the target, so a crash leaves either
the old file or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import IO, BinaryIO, Callable

__all__ = ["FileRefused", "atomic_write", "error_text", "read_regular", "sha256_bytes", "sha256_file"]


class FileRefused(OSError):
    """A file that is not a regular file, or is larger than the cap (``read_regular``).

    An :class:`OSError`, so callers that report unreadable files handle it with them;
    ``strerror`` is the reason, without the path.
    """


def _open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading, without blocking on a FIFO; FileRefused unless it is a
    regular file (checked on the opened descriptor)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileRefused(0, "not a regular file", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes`` bytes.

    The file is opened without blocking (a FIFO opens at once and is then refused) and
    checked with ``fstat`` on the opened descriptor, so what is checked is what is read.
    Raises :class:`FileRefused` (an OSError) for a non-regular or too large file, and
    OSError for a missing or unreadable one.
    """
    with _open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise FileRefused(0, f"{size} bytes, over the limit of {max_bytes}", str(path))
        data = f.read(max_bytes + 1)  # a file that grew since fstat still stops at the cap
    if len(data) > max_bytes:
        raise FileRefused(0, f"over {max_bytes} bytes (it is growing)", str(path))
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
    with _open_regular(path) as f:
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


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> Path:
    """Write ``path`` atomically: ``write(f)`` fills a temporary file in the same directory,
    which is flushed to disk and renamed over ``path`` (then the directory is synced).

    If ``write`` raises, the temporary file is removed and ``path`` is left as it was.
    The temporary file is created with ``open`` (honouring the umask, unlike ``mkstemp``)
    under a name of this process, ``.NAME.PID.tmp``.
    """
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(p.parent)
    return p


def error_text(e: BaseException) -> str:
    """What a command line prints for ``e``: an OSError's file (when it names one) and its
    reason, any other error's message."""
    if isinstance(e, OSError):
        return f"{f'{e.filename}: ' if e.filename else ''}{e.strerror or e}"
    return str(e)
