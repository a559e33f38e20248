"""A replay buffer over the self-play datasets of the last K generations.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from yutenv.az.buffer import ReplayBuffer
    buf = ReplayBuffer(window=4)
    buf.add("runs/x/gen-0001/selfplay")        # a dataset directory (docs/DATASETS.md)
    for batch in buf.batches(rng, batch_size=256, steps=100):
        batch.obs, batch.mask, batch.policy, batch.value, batch.policy_target

Only numpy: the datasets are read (and checked) with :mod:`yutenv.datasets`. Adding a
generation beyond the window drops the oldest one.
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import numpy.typing as npt

from ..data import datasets

__all__ = ["Batch", "ReplayBuffer"]

_ARRAYS = ("obs", "mask", "policy", "value", "search_value")

_Arrays = tuple[
    npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bool_]
]


@dataclass
class Batch:
    """One minibatch: observations, legal masks (bool), policy and value targets, and
    ``policy_target`` (bool): whether each row's policy is a target (False: a fast search of
    playout cap randomization; the loss leaves its policy out and keeps its value)."""

    obs: npt.NDArray[np.float32]
    mask: npt.NDArray[np.bool_]
    policy: npt.NDArray[np.float32]
    value: npt.NDArray[np.float32]
    policy_target: npt.NDArray[np.bool_] | None = None


@dataclass
class _Gen:
    path: str
    obs: npt.NDArray[np.float32]
    mask: npt.NDArray[np.bool_]
    policy: npt.NDArray[np.float32]
    value: npt.NDArray[np.float32]
    target: npt.NDArray[np.bool_]


class ReplayBuffer:
    """The decisions of the last ``window`` generations' datasets.

    Args:
        window: how many generations are kept (K >= 1).
        value_mix: the value target is ``(1 - value_mix) * outcome + value_mix *
            search_value`` (0: the game's outcome alone, AlphaZero's target); a forced
            decision (one legal action, not searched: its ``search_value`` is 0) keeps the outcome.
        skip_forced: leave out decisions with a single legal action (nothing to learn
            for the policy; their value targets are kept by default, so False).
    """

    def __init__(self, window: int = 4, *, value_mix: float = 0.0, skip_forced: bool = False) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        if not 0.0 <= value_mix <= 1.0:
            raise ValueError(f"value_mix must be in [0, 1], got {value_mix}")
        self.window = window
        self.value_mix = value_mix
        self.skip_forced = skip_forced
        self._gens: deque[_Gen] = deque(maxlen=window)

    def add(self, path: str | os.PathLike[str]) -> int:
        """Add one generation's dataset (read and checked); return its number of rows."""
        names = [a["name"] for a in datasets.read_manifest(path)["arrays"]]
        ds = datasets.load(path, arrays=_ARRAYS + (("policy_target",) if "policy_target" in names else ()))
        mask = ds.mask.astype(bool)
        keep = np.ones(len(mask), dtype=bool)
        if self.skip_forced:
            keep = mask.sum(axis=1) > 1
        value = ds.value
        if self.value_mix:
            # A forced decision (one legal action) was not searched: its search_value is 0, not an
            # estimate, so its target stays the outcome rather than being pulled toward 0.
            searched = mask.sum(axis=1) > 1
            value = np.where(searched, (1 - self.value_mix) * ds.value + self.value_mix * ds.search_value, ds.value)
        obs, policy, target = ds.obs, ds.policy, ds.policy_targets(len(mask))
        if not keep.all():  # a copy only when rows are left out: a whole dataset is kept as read
            obs, mask, policy, value, target = obs[keep], mask[keep], policy[keep], value[keep], target[keep]
        f32 = np.float32
        self._gens.append(
            _Gen(
                str(path),
                np.ascontiguousarray(obs, f32),
                mask,
                np.ascontiguousarray(policy, f32),
                value.astype(f32, copy=False),
                target,
            )
        )
        return len(value)

    @property
    def paths(self) -> list[str]:
        """The datasets held, oldest first."""
        return [g.path for g in self._gens]

    def __len__(self) -> int:
        return sum(len(g.value) for g in self._gens)

    def _size(self) -> int:
        """The rows held; an empty buffer is an error for whoever wants rows from it."""
        if not self._gens:
            raise ValueError("the replay buffer is empty: add a dataset first")
        return len(self)

    def _rows(self, idx: npt.NDArray[np.int64]) -> Batch:
        """The rows ``idx`` of the generations as one batch, numbered oldest first (row 0 is the
        oldest generation's first). Each generation's rows are gathered where they lie: the
        buffer never holds a second, concatenated copy of its data."""
        gens = list(self._gens)
        g0 = gens[0]
        n = len(idx)
        out = Batch(
            np.empty((n, *g0.obs.shape[1:]), dtype=np.float32),
            np.empty((n, *g0.mask.shape[1:]), dtype=np.bool_),
            np.empty((n, *g0.policy.shape[1:]), dtype=np.float32),
            np.empty(n, dtype=np.float32),
            np.empty(n, dtype=np.bool_),
        )
        assert out.policy_target is not None
        start = 0
        for g in gens:
            end = start + len(g.value)
            sel = np.flatnonzero((idx >= start) & (idx < end))
            local = idx[sel] - start
            out.obs[sel], out.mask[sel], out.policy[sel] = g.obs[local], g.mask[local], g.policy[local]
            out.value[sel], out.policy_target[sel] = g.value[local], g.target[local]
            start = end
        return out

    def _arrays(self) -> _Arrays:
        """Every row, oldest generation first, as one set of arrays (a copy when the buffer holds
        more than one generation; the arrays themselves when it holds one)."""
        n = self._size()
        if len(self._gens) == 1:
            g = self._gens[0]
            return g.obs, g.mask, g.policy, g.value, g.target
        b = self._rows(np.arange(n, dtype=np.int64))
        assert b.policy_target is not None
        return b.obs, b.mask, b.policy, b.value, b.policy_target

    def batches(self, rng: np.random.Generator, batch_size: int, steps: int) -> Iterator[Batch]:
        """``steps`` minibatches of ``batch_size`` rows drawn uniformly (with replacement) by ``rng``."""
        n = self._size()
        for _ in range(steps):
            yield self._rows(rng.integers(0, n, size=batch_size))
