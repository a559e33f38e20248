"""One progress bar for the package's long operations (count, rate, ETA on stderr).

``show=None`` (every default) draws the bar only when stderr is a terminal, so that pipes,
logs and CI output stay free of bar updates; ``True`` draws it anyway, ``False`` never. The
programs spell these ``--progress auto|always|never`` (:func:`add_progress_argument`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tqdm.auto import tqdm

__all__ = ["PROGRESS_MODES", "add_progress_argument", "progress_bar"]

#: ``--progress``'s values and the ``show``/``progress=`` each stands for.
PROGRESS_MODES: dict[str, bool | None] = {"auto": None, "always": True, "never": False}


def add_progress_argument(ap: argparse.ArgumentParser) -> None:
    """Add ``--progress auto|always|never`` to a program's arguments; the parsed value is the
    ``show`` of :func:`progress_bar` (None, True or False)."""
    ap.add_argument(
        "--progress",
        choices=tuple(PROGRESS_MODES),
        default="auto",
        type=str,
        help="progress (count, rate, time left) on stderr: auto (on a terminal only), always (into a pipe or a log too) or never",
    )


def progress_bar(
    total: int | None, desc: str, unit: str = "game", show: bool | None = None, initial: int = 0, leave: bool = True
) -> Any:
    """A tqdm bar of ``total`` steps (None: a count with its rate, no end), or ``None`` when
    ``show`` says no bar (see the module); ``leave=False`` erases it when it closes (an inner bar)."""
    if show is False:
        return None
    if show is None and not sys.stderr.isatty():
        return None
    return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=leave)
