"""Values checked before they go on the wire: seeds and actions, as every front end takes them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import IllegalActionError


def check_seed(seed: Any) -> int:
    """A game seed as an int, or ValueError/TypeError: seeds are integers 0..2**64-1."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"a seed must be an integer 0..2**64-1, got {seed!r}")
    s = int(seed)
    if not 0 <= s < 2**64:
        raise ValueError(f"a seed must be in 0..2**64-1, got {s}")
    return s


def check_action(action: Any, actions: int, what: str = "step") -> int:
    """An action as an int in 0..actions-1: a Python or numpy integer (or a 0-d integer array).

    Floats, strings and bools are refused (TypeError) rather than silently truncated; an
    integer out of range raises :class:`~yutenv.IllegalActionError`."""
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
        raise TypeError(f"{what}: an action must be an integer 0..{actions - 1}, got {action!r}")
    a = int(action)
    if not 0 <= a < actions:
        raise IllegalActionError(f"{what}: action {a} is out of range 0..{actions - 1}", method="step")
    return a
