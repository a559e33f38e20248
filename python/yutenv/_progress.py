"""One progress bar for the package's long operations (count, rate, ETA on stderr).

``show=None`` (every default) draws the bar only when stderr is a terminal, so that pipes,
logs and CI output stay free of bar updates; ``True`` draws it anyway, ``False`` never.
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm.auto import tqdm

__all__ = ["progress_bar"]


def progress_bar(
    total: int, desc: str, unit: str = "game", show: bool | None = None, initial: int = 0, leave: bool = True
) -> Any:
    """A tqdm bar of ``total`` steps, or ``None`` when ``show`` says no bar (see the module);
    ``leave=False`` erases it when it closes (an inner bar)."""
    if show is False:
        return None
    if show is None and not sys.stderr.isatty():
        return None
    return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=leave)
