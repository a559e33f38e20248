"""PyTorch datasets over a self-play dataset folder, streamed from its shards in bounded memory
(``yutenv.datasets.torch``; imported with torch when first used).

:class:`ShardStream` is an ``IterableDataset``: each pass reads the shards in a shuffled order,
``buffer_shards`` at a time, shuffles the rows of those shards together and yields them (or
batches of them), so that memory holds a few shards whatever the dataset's size; with a
``DataLoader`` of several workers each worker streams its own share of the shards. Rows are
the dataset's decisions (``kind="decisions"``: AlphaZero targets, behaviour cloning) or every
seat's transitions (``kind="transitions"``: offline RL, :func:`yutenv.datasets.transitions`).
The tensors share the memory of the numpy arrays they are made from (``torch.from_numpy``).

::

    from torch.utils.data import DataLoader
    from yutenv.datasets import torch as ytorch

    data = ytorch.ShardStream("data/mcts400", kind="transitions", reward="progress", batch_size=256)
    for batch in DataLoader(data, batch_size=None, num_workers=2):
        batch["obs"], batch["action"], batch["reward"], batch["next_obs"], batch["terminated"]
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

import numpy as np
import numpy.typing as npt

from .._extras import import_extra
from . import shards as _ds
from .stream import shuffled_batches
from .transitions import COLUMNS, check_options, check_v2, iter_transitions

torch: Any = import_extra("torch", "torch", "yutenv.datasets.torch")

__all__ = ["DECISION_COLUMNS", "TRANSITION_COLUMNS", "ShardStream"]

#: The columns a :class:`ShardStream` of decisions yields by default.
DECISION_COLUMNS: tuple[str, ...] = ("obs", "mask", "action", "policy", "value")
#: The columns a :class:`ShardStream` of transitions yields by default.
TRANSITION_COLUMNS: tuple[str, ...] = ("obs", "mask", "action", "reward", "next_obs", "next_mask", "terminated", "truncated")


class ShardStream(torch.utils.data.IterableDataset):  # type: ignore[misc]
    """Rows of the dataset at ``path`` as dicts of tensors, streamed and shuffled across shards.

    Args:
        path: the dataset folder.
        kind: ``"decisions"`` (the dataset's rows, columns of :class:`~yutenv.datasets.Shard`)
            or ``"transitions"`` (the columns of :class:`~yutenv.datasets.Transitions` but the
            throws and ``seed``; needs format version 2).
        columns: the columns to yield (default :data:`DECISION_COLUMNS` or :data:`TRANSITION_COLUMNS`).
        seat, reward, max_decisions: the transitions' view (:func:`~yutenv.datasets.transitions`).
        batch_size: None yields one row at a time (let the ``DataLoader`` batch them); a number
            yields batches of that many rows (the last of a pass may be smaller), which is much
            faster: use ``DataLoader(stream, batch_size=None)``.
        buffer_shards: shards shuffled together; memory holds about twice that many shards.
        shuffle: False reads the shards and their rows in order.
        seed: the shuffle's seed; each pass (``iter``) uses ``seed`` plus the pass number, or
            :meth:`set_epoch`'s epoch. A ``DataLoader`` with workers iterates copies of the
            stream, which do not count the passes: call ``set_epoch(epoch)`` before each epoch
            for a new shuffle.
        verify: check every shard's SHA-256 (the other checks always run).
    """

    def __init__(
        self, path: str | os.PathLike[str], *, kind: str = "decisions", columns: Sequence[str] | None = None,
        seat: int | None = None, reward: str = "win", max_decisions: int = 0, batch_size: int | None = None,
        buffer_shards: int = 2, shuffle: bool = True, seed: int = 0, verify: bool = True,
    ) -> None:  # fmt: skip
        super().__init__()
        if kind not in ("decisions", "transitions"):
            raise ValueError(f"kind must be 'decisions' or 'transitions', got {kind!r}")
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
            raise ValueError(f"batch_size must be None or at least 1, got {batch_size!r}")
        m = _ds.read_manifest(path)
        if kind == "transitions":
            check_v2(path, m, "a stream of transitions")
            check_options(m, seat, reward, max_decisions)
            known: Sequence[str] = [c for c in COLUMNS if c != "seed"]
            default = TRANSITION_COLUMNS
        else:
            known = [n for n in _ds.ARRAYS + _ds.OPTIONAL_ARRAYS if any(a["name"] == n for a in m["arrays"])]
            default = DECISION_COLUMNS
        cols = list(default if columns is None else columns)
        unknown = [c for c in cols if c not in known]
        if unknown or not cols:
            raise ValueError(f"unknown columns {unknown} for {kind}; known: {list(known)}" if unknown else "columns is empty")
        self.path, self.kind, self.columns = path, kind, cols
        self.seat, self.reward, self.max_decisions = seat, reward, max_decisions
        self.batch_size, self.buffer_shards, self.shuffle, self.seed, self.verify = (
            batch_size,
            buffer_shards,
            shuffle,
            seed,
            verify,
        )
        self.shards = len(m["shards"])
        #: Rows of decisions (and of transitions with ``seat=None``); one seat's view has about 1/players of them.
        self.rows = sum(int(e["decisions"]) for e in m["shards"])
        self._epoch: int | None = None
        self._passes = 0

    def set_epoch(self, epoch: int) -> None:
        """Shuffle the next passes with ``seed + epoch`` (as ``DistributedSampler.set_epoch``)."""
        self._epoch = int(epoch)

    def _read(self, order: Sequence[int]) -> Iterator[dict[str, npt.NDArray[Any]]]:
        if self.kind == "transitions":
            for t in iter_transitions(self.path, seat=self.seat, reward=self.reward, max_decisions=self.max_decisions,
                                      verify=self.verify, order=order, progress=False):  # fmt: skip
                cols = {c: t[c] for c in self.columns}
                del t  # the columns not asked for go now
                yield cols
        else:
            for s in _ds.iter_shards(self.path, verify=self.verify, arrays=self.columns, order=order):
                cols = {c: s[c] for c in self.columns}
                del s
                yield cols

    def __iter__(self) -> Iterator[dict[str, Any]]:
        info = torch.utils.data.get_worker_info()
        mine: Sequence[int] = range(self.shards)
        if info is not None:  # each DataLoader worker streams its own shards
            mine = range(info.id, self.shards, info.num_workers)
        epoch = self._epoch if self._epoch is not None else self._passes
        self._passes += 1
        size = self.batch_size or 4096
        batches = shuffled_batches(self._read, mine, size, self.columns, buffer_shards=self.buffer_shards,
                                   seed=self.seed + epoch, shuffle=self.shuffle)  # fmt: skip
        for b in batches:
            tensors = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in b.items()}
            if self.batch_size is not None:
                yield tensors
                continue
            n = len(next(iter(tensors.values())))
            for i in range(n):
                yield {k: v[i] for k, v in tensors.items()}
