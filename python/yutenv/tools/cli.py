"""The ``yutenv`` command that ``pip install`` puts on PATH: the package's own server binary.

``yutenv ARGS...`` runs the binary this package ships (:func:`yutenv.binary_path`, or
``$YUTENV_BINARY``) with the same arguments, standard streams and exit status, so that the
commands of README.md and docs/DATASETS.md (``yutenv selfplay``, ``yutenv eval``, ``yutenv
play``, ...) work after ``pip install ./python`` without a Go toolchain on PATH.
"""

from __future__ import annotations

import os
import subprocess
import sys

from ..connection.server import binary_path
from ..errors import YutEnvError

# A program: its one public name is its entry point.
__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the bundled binary with ``argv`` (default ``sys.argv[1:]``). On POSIX the Python
    process is replaced by the binary (``exec``): signals and the exit status are its own."""
    args = sys.argv[1:] if argv is None else argv
    try:
        exe = str(binary_path())
    except YutEnvError as e:
        print(f"yutenv: {e}", file=sys.stderr)
        return 127
    if os.name == "posix" and argv is None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(exe, [exe, *args])
    return subprocess.call([exe, *args])


if __name__ == "__main__":
    sys.exit(main())
