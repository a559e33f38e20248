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
        self._cat: _Arrays | None = None

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
        self._gens.append(
            _Gen(
                str(path),
                np.ascontiguousarray(ds.obs[keep], dtype=np.float32),
                mask[keep],
                np.ascontiguousarray(ds.policy[keep], dtype=np.float32),
                np.ascontiguousarray(value[keep], dtype=np.float32),
                ds.policy_targets(len(mask))[keep],
            )
        )
        self._cat = None
        return int(keep.sum())

    @property
    def paths(self) -> list[str]:
        """The datasets held, oldest first."""
        return [g.path for g in self._gens]

    def __len__(self) -> int:
        return sum(len(g.value) for g in self._gens)

    def _arrays(self) -> _Arrays:
        if self._cat is None:
            if not self._gens:
                raise ValueError("the replay buffer is empty: add a dataset first")
            self._cat = (
                np.concatenate([g.obs for g in self._gens]),
                np.concatenate([g.mask for g in self._gens]),
                np.concatenate([g.policy for g in self._gens]),
                np.concatenate([g.value for g in self._gens]),
                np.concatenate([g.target for g in self._gens]),
            )
        return self._cat

    def batches(self, rng: np.random.Generator, batch_size: int, steps: int) -> Iterator[Batch]:
        """``steps`` minibatches of ``batch_size`` rows drawn uniformly (with replacement) by ``rng``."""
        obs, mask, policy, value, target = self._arrays()
        n = len(value)
        for _ in range(steps):
            idx = rng.integers(0, n, size=batch_size)
            yield Batch(obs[idx], mask[idx], policy[idx], value[idx], target[idx])
