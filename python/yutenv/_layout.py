"""The observation layout this package expects (Go: ``obs.LayoutVersion``, docs/OBSERVATIONS.md).

Datasets and ``.ynet`` network files record the layout their observations follow, and one made
for another layout is refused. Layout 1 (compact 205, tactical 2034, planes 590 values) lacked
the seats' missed turns and the seat to move; layout 2 adds both to every tier. The tests check
these values against the server's ``hello``.
"""

from __future__ import annotations

# Both generated from the Go encoder (obs.LayoutVersion, obs.SpaceOf): the layout of this build
# and the length of one observation of every tier under it.
from ._protocol import OBS_LAYOUT as OBS_LAYOUT
from ._protocol import TIER_SIZES as TIER_SIZES


def check_layout(recorded: object) -> str | None:
    """None if ``recorded`` (a file's ``obs_layout``; absent, None, is layout 1) is this
    build's layout, else a sentence naming both layouts."""
    layout = 1 if recorded is None else recorded
    if layout == OBS_LAYOUT and not isinstance(layout, bool):
        return None
    return f"made for observation layout {layout!r}, this build reads layout {OBS_LAYOUT}"
