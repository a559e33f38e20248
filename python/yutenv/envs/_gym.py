"""What yutenv takes from Gymnasium that not every Gymnasium it supports (1.0 on) has."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

__all__ = ["AutoresetMode"]

if TYPE_CHECKING:
    from gymnasium.vector import AutoresetMode
else:
    try:
        from gymnasium.vector import AutoresetMode
    except ImportError:  # Gymnasium 1.0: its vector envs reset in the next step and name no mode

        class AutoresetMode(enum.Enum):
            """Gymnasium 1.1's ``AutoresetMode``, for Gymnasium 1.0, which has none: the same
            members and values, so code written for either runs on both (``yutenv.AutoresetMode``
            is Gymnasium's own where it exists)."""

            NEXT_STEP = "NextStep"
            SAME_STEP = "SameStep"
            DISABLED = "Disabled"
