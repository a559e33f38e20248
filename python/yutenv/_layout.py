"""The observation layout this package expects (Go: ``obs.LayoutVersion``, docs/OBSERVATIONS.md).

Datasets and ``.ynet`` network files record the layout their observations follow, and one made
for another layout is refused. Layout 1 (compact 205, tactical 2034, planes 590 values) lacked
the seats' missed turns and the seat to move; layout 2 adds both to every tier. The tests check
these values against the server's ``hello``.
"""

from __future__ import annotations

#: The observation layout of this build.
OBS_LAYOUT = 2
#: The length of one observation of every tier under :data:`OBS_LAYOUT`.
TIER_SIZES = {"compact": 213, "tactical": 2042, "planes": 598}


def check_layout(recorded: object) -> str | None:
    """None if ``recorded`` (a file's ``obs_layout``; absent, None, is layout 1) is this
    build's layout, else a sentence naming both layouts."""
    layout = 1 if recorded is None else recorded
    if layout == OBS_LAYOUT and not isinstance(layout, bool):
        return None
    return f"made for observation layout {layout!r}, this build reads layout {OBS_LAYOUT}"
