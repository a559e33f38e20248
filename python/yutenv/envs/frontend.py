"""What the front ends share around a batch: Gymnasium spaces from the server's descriptions,
info maps fit for Gymnasium's vectorizers, render modes, and the refusal to be copied."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import gymnasium

    from .batch import Batch

#: What ``step`` says after a step an interrupt (a KeyboardInterrupt) cut short, in every front end.
INTERRUPTED_STEP = "step: call reset() first (the last step was interrupted before its result was read)"


def obs_box(space: Mapping[str, Any]) -> gymnasium.spaces.Box:
    """The Box of one observation, from a server space ``{size, low, high, parts}``.

    Bounds are per element when the server describes parts (each part has its own
    low/high), else the space's overall low/high.
    """
    import gymnasium

    size = int(space["size"])
    low = np.full(size, space.get("low", -np.inf), dtype=np.float32)
    high = np.full(size, space.get("high", np.inf), dtype=np.float32)
    for part in space.get("parts") or ():
        off = int(part["offset"])
        n = int(np.prod(part.get("shape") or [0]))
        if "low" in part:
            low[off : off + n] = part["low"]
        if "high" in part:
            high[off : off + n] = part["high"]
    return gymnasium.spaces.Box(low=low, high=high, shape=(size,), dtype=np.float32)


def obs_part(space: Mapping[str, Any], obs: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
    """The named part of observations, reshaped: ``obs`` is [D] or [N, D] and the result
    is [*part.shape] or [N, *part.shape] (a view, no copy). Part names are those of
    docs/OBSERVATIONS.md, e.g. ``"actions"`` of the tactical tier gives [180, 10]."""
    for part in space.get("parts") or ():
        if part["name"] == name:
            off = int(part["offset"])
            shape = tuple(int(x) for x in part["shape"])
            size = int(np.prod(shape))
            return obs[..., off : off + size].reshape(*obs.shape[:-1], *shape)
    names = [p["name"] for p in space.get("parts") or ()]
    raise KeyError(f"no observation part {name!r} in tier {space.get('tier')!r} (parts: {', '.join(names)})")


def mask_box(actions: int) -> gymnasium.spaces.Box:
    """The Box of an action mask: ``actions`` values in {0, 1}, int8 (Gymnasium's mask dtype
    for ``Discrete.sample(mask=...)``), a view of the wire's 0/1 bytes."""
    import gymnasium

    return gymnasium.spaces.Box(low=0, high=1, shape=(actions,), dtype=np.int8)


def fit_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """A server info map made fit for Gymnasium's vectorizers: seeds (0..2**64-1) become
    ``np.uint64``, which Gymnasium's info arrays keep as uint64 instead of overflowing an
    int64 array; the ended episode's ``final_info`` likewise. A mixture's ``opponent`` entry
    number is dropped: the front ends name the opponent themselves (``info["opponent"]``)."""
    out = dict(info)
    out.pop("opponent", None)
    if "seed" in out:
        out["seed"] = np.uint64(out["seed"])
    fi = out.get("final_info")
    if isinstance(fi, Mapping):
        out["final_info"] = fit_info(fi)
    return out


def render_frame(batch: Batch, mode: str, index: int) -> str | npt.NDArray[np.uint8]:
    """Env ``index``'s position in a Gymnasium render mode: ``"ansi"`` (text) or
    ``"rgb_array"`` (a writable (H, W, 3) uint8 array)."""
    if mode == "rgb_array":
        return batch.render_rgb(index).copy()
    if mode == "ansi":
        return batch.render(index)
    raise ValueError(f"unknown render mode {mode!r}")


class HumanRender:
    """The ``"human"`` render mode: the board as text printed to ``sys.stdout`` at every reset and
    step, at most ``fps`` frames a second (the env's ``metadata["render_fps"]``) so that a person
    can follow the game, as Gymnasium's ``human`` mode paces its window."""

    def __init__(self, fps: float) -> None:
        self._period = 1.0 / fps if fps > 0 else 0.0
        self._due = 0.0

    def show(self, batch: Batch, index: int = 0) -> None:
        text = batch.render(index)
        wait = self._due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.write("\n")
        sys.stdout.flush()
        self._due = time.monotonic() + self._period


class NotCopyable:
    """Mixin of the front ends whose games live in a server session that a copy could not
    share: pickle and deepcopy raise TypeError with ``_not_copyable`` (what to do instead)."""

    _not_copyable = "this env cannot be pickled or copied"

    def __reduce__(self) -> Any:
        raise TypeError(self._not_copyable)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        raise TypeError(self._not_copyable)
