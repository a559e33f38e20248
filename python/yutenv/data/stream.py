"""Shuffled minibatches streamed from a dataset's shards in bounded memory.

Shared by behaviour cloning (:func:`yutenv.imitation.batches`, rows of decisions) and the
PyTorch datasets (``yutenv.datasets.torch``, rows of decisions or of transitions): each epoch
reads the shards in a shuffled order, ``buffer_shards`` at a time; the rows of those shards are
shuffled together and cut into batches (rows left over join the next shards' rows). Memory
holds at most ``buffer_shards`` shards (and one column more while they are joined) plus one
batch, whatever the number of shards; no shard is read ahead.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["shuffled_batches"]

#: Reads the shards of the given indices, in that order, one dict of arrays (rows first) each.
ReadShards = Callable[[Sequence[int]], Iterable[Mapping[str, npt.NDArray[Any]]]]


def shuffled_batches(
    read: ReadShards,
    shards: Sequence[int],
    batch_size: int,
    names: Sequence[str],
    *,
    buffer_shards: int = 2,
    epochs: int = 1,
    seed: int = 0,
    shuffle: bool = True,
) -> Iterator[dict[str, npt.NDArray[Any]]]:
    """Yield batches of ``batch_size`` rows (the last one of an epoch may be smaller) as dicts
    of the arrays ``names``, from the shards ``shards`` read by ``read``. ``shuffle=False``
    keeps the shards' order and their rows' order. The same ``seed`` gives the same batches."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if buffer_shards < 1:
        raise ValueError(f"buffer_shards must be at least 1, got {buffer_shards}")
    rng = np.random.default_rng(seed)
    names = list(names)
    for _ in range(epochs):
        order = [int(shards[i]) for i in rng.permutation(len(shards))] if shuffle else [int(i) for i in shards]
        carry: dict[str, npt.NDArray[Any]] | None = None
        it = iter(read(order))
        left = len(order)  # shards not read yet: read yields one dict per shard asked for
        while True:
            group = [next(it) for _ in range(min(buffer_shards, left))]
            left -= len(group)
            if not group and carry is None:
                break
            parts = ([carry] if carry is not None else []) + [{k: g[k] for k in names} for g in group]
            del group, carry
            pool: dict[str, npt.NDArray[Any]] = {}
            for k in names:  # a column at a time, each freed from the parts once joined
                pool[k] = np.concatenate([p.pop(k) for p in parts])
            del parts
            rows = len(pool[names[0]])
            perm = rng.permutation(rows) if shuffle else np.arange(rows)
            more = left > 0
            last = rows if not more else rows - rows % batch_size
            for lo in range(0, last, batch_size):
                idx = perm[lo : min(lo + batch_size, last)]
                yield {k: v[idx] for k, v in pool.items()}
            carry = {k: v[perm[last:]] for k, v in pool.items()} if last < rows else None
            del pool
            if not more and carry is None:
                break
