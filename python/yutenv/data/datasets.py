"""Read self-play datasets written by ``yutenv selfplay --tier T --out DIR``.

A dataset is a directory with a ``manifest.json`` and ``.npz`` shards (one zip of
``.npy`` arrays each), plus the game records of every shard as JSON lines. The format
is documented in ``docs/DATASETS.md``; only numpy is needed to read it.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from yutenv import datasets
    ds = datasets.load("data/mcts400")           # every shard, concatenated
    ds.obs.shape, ds.policy.shape, ds.value.shape
    # -> ((52310, 2042), (52310, 180), (52310,))
    for shard in datasets.iter_shards("data/mcts400"):   # one shard at a time
        train_on(shard.obs, shard.mask, shard.policy, shard.value)

Every shard is checked against the manifest: its size and SHA-256, and the name,
dtype and shape of every array; zip's CRC-32 protects each array too. A damaged,
missing or mismatched shard raises :class:`DatasetError` naming the file and what
is wrong. The manifest, shards and records are opened without blocking and must be regular
files (a FIFO or a device in their place is refused at once), the manifest is read with a size
bound (``MAX_MANIFEST``), and the counts it declares are checked against the shard files' real
sizes before anything is allocated for them. An export whose destination or Minari id cannot
be written raises :class:`ExportError` (a :class:`DatasetError`) before anything is read.

Format versions 1 and 2 are read; version 2 adds every row's ``potential`` and
``searched`` and every game's ``final_obs``, from which :func:`transitions` gives each
seat's (obs, action, reward, next obs, terminated) view of the games, the exports to
Minari (:func:`to_minari`) and Parquet (:func:`to_parquet`) are built, and
``yutenv.datasets.torch`` streams them into PyTorch (imported when first used).
"""

from __future__ import annotations

from typing import Any

from .export import ExportError, to_minari, to_parquet
from .shards import ARRAYS, GAME_ARRAYS, OPTIONAL_ARRAYS, Dataset, DatasetError, Shard, iter_shards, load, read_manifest
from .shards import FORMAT as FORMAT  # the names of the format outside __all__, importable from here as before
from .shards import MANIFEST as MANIFEST
from .shards import MAX_MANIFEST as MAX_MANIFEST
from .shards import VERSION as VERSION
from .transitions import Transitions, iter_transitions, transitions

__all__ = [
    "ARRAYS",
    "GAME_ARRAYS",
    "OPTIONAL_ARRAYS",
    "Dataset",
    "DatasetError",
    "ExportError",
    "Shard",
    "Transitions",
    "iter_shards",
    "iter_transitions",
    "load",
    "read_manifest",
    "to_minari",
    "to_parquet",
    "transitions",
]


def __getattr__(name: str) -> Any:
    """``yutenv.datasets.torch``: PyTorch datasets over a dataset folder, imported (with torch)
    when first used."""
    if name == "torch":
        from . import torch_data

        return torch_data
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
