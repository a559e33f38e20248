"""The learning loop's self-play on a Ray cluster (``python -m yutenv.az.train --ray ADDRESS``).

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    python -m yutenv.az.train --out runs/x --generations 20 --games 600 --sims 64 \\
        --shard-games 25 --ray auto

Only step 1 of a generation (self-play) leaves this machine: the learner (training,
checkpoints, evaluation) stays here. Each generation's games are cut into ranges of
``--shard-games`` games (one Ray task each); game ``g`` of generation ``G`` is played with the
game seed ``seed(G) + g`` whichever worker plays it and however many there are, so the
dataset is, shard for shard and byte for byte, the one the loop writes on one machine (the
network-guided self-play with :func:`yutenv.az.distributed.az_selfplay`, ``--selfplay mcts``
with :func:`yutenv.az.distributed.selfplay`). The network goes to the workers once a generation
through Ray's object store; every worker needs ``yutenv[az,ray]`` (torch evaluates the leaves
there, with ``--threads`` threads as here, so that the floats are the same bits).

The parts are written to a staging folder named by the generation and a checksum of the
network and the self-play settings: ``--ray-storage URL`` (a path or fsspec URI every worker
and this machine reach: ``s3://...``, an NFS mount), by default ``OUT/ray-selfplay`` (enough
for a cluster on this machine, or a run directory on a shared file system). When every range
is there the dataset is copied into ``gen-G/selfplay`` and the staging folder deleted.

Failures: a worker that dies is retried by Ray; a driver killed mid-generation resumes, when
the same command is run again, with the ranges already in the staging folder (a network
trained differently has another checksum, so its ranges are never mixed in). Since both paths
write the same datasets, a run started without ``--ray`` may be resumed with it, and the other
way round.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..data.datasets import MANIFEST
from . import distributed
from .schedule import schedule_at
from .selfplay import SelfPlay

if TYPE_CHECKING:
    from .config import TrainConfig
    from .net import PolicyValueNet

__all__ = ["LOCAL", "STAGING", "ray_selfplay"]

#: ``--ray local``: start a new Ray on this machine (``--ray-cpus`` CPUs), never joining the one
#: ``RAY_ADDRESS`` or ``ray start`` points to (``ray.init(address="local")``).
LOCAL = "local"

#: The staging folder of the parts in the run directory (without ``--ray-storage``).
STAGING = "ray-selfplay"


def _key(model: PolicyValueNet | None, settings: SelfPlay | None, agents: str, seed: int, cfg: TrainConfig, games: int) -> str:
    """A checksum of everything that decides the games: the network's weights and
    architecture and the self-play settings (the shard size too: parts are cut by it)."""
    h = hashlib.sha256()
    if settings is not None and model is not None:
        params = settings.params(games, "/")
        for k in ("out", "eval_timeout"):
            params.pop(k, None)
        h.update(json.dumps({"spec": model.spec(), "params": params}, sort_keys=True).encode())
        for name, t in sorted(model.state_dict().items()):
            h.update(name.encode())
            h.update(t.detach().cpu().contiguous().numpy().tobytes())
    else:
        doc = {
            "agents": agents,
            "seed": seed,
            "tier": cfg.tier,
            "rules": cfg.rules,
            "games": games,
            "shard_games": cfg.shard_games,
        }
        h.update(json.dumps(doc, sort_keys=True).encode())
    return h.hexdigest()[:16]


def _fetch(url: str, dest: Path) -> None:
    """Copy the complete dataset at ``url`` into the new folder ``dest``, manifest last."""
    fs, root = distributed._fs(url)
    m = json.loads(fs.cat_file(f"{root}/{MANIFEST}"))
    dest.mkdir(parents=True)
    for sh in m["shards"]:
        for name in (sh["file"], sh["records"]):
            fs.get_file(f"{root}/{name}", str(dest / name))
    fs.get_file(f"{root}/{MANIFEST}", str(dest / MANIFEST))


def ray_selfplay(
    cfg: TrainConfig,
    g: int,
    out: Path,
    model: PolicyValueNet | None,
    settings: SelfPlay | None,
    seed: int,
    agents: str = "",
    net_sha: str = "",
    cwd: str | None = None,
) -> dict[str, Any]:
    """Play generation ``g``'s self-play of the run ``cfg`` (a
    :class:`~yutenv.az.train.TrainConfig` with ``ray`` set) on Ray into the new dataset folder
    ``out``: with ``settings`` (the loop's :class:`~yutenv.az.SelfPlay`) network-guided by
    ``model``, or with ``settings`` None the Go agents ``agents`` on both seats (default the
    baseline ``mcts:SIMS`` of ``--selfplay mcts``; ``--selfplay net-go``'s ``net:PATH,...``
    with ``net_sha`` the SHA-256 of the file, which the workers read from the shared run
    folder, ``PATH`` relative to the folder ``cwd``) with the game seed base ``seed``. Returns
    what the generation's summary records."""
    games = schedule_at(cfg.games, g)  # the generation's (a schedule's stage)
    agents = agents or f"mcts:{schedule_at(cfg.sims, g)}"
    key = _key(model, settings, agents + net_sha, seed, cfg, games)
    local = not cfg.ray_storage
    # absolute: a worker's working directory is not this one
    base = str(Path(cfg.out).resolve() / STAGING) if local else cfg.ray_storage.rstrip("/")
    url = f"{base}/gen-{g:04d}-{key}"
    fs, root = distributed._fs(url)
    if local:  # another network's ranges of this generation (a run killed, then changed): never used
        for p in Path(base).glob(f"gen-{g:04d}-*"):
            if p.name != Path(root).name:
                fs.rm(str(p), recursive=True)
    done = 0
    if fs.exists(root):
        have, parts = distributed._done_parts(fs, root)
        done = len(parts) + (int(have["games"]) // cfg.shard_games if have else 0)
    run: dict[str, Any] = dict(
        range_games=cfg.shard_games, address=cfg.ray, num_cpus=cfg.ray_cpus or None,
        threads_per_task=cfg.threads, max_tasks=cfg.ray_tasks or None, progress=False,
    )  # fmt: skip
    if settings is not None and model is not None:
        if settings.shard_games != cfg.shard_games:
            raise ValueError(f"the self-play settings cut shards of {settings.shard_games} games, the run {cfg.shard_games}")
        distributed.az_selfplay(url, games, model, settings, **run)
    else:
        distributed.selfplay(
            url, games, agents=agents, tier=cfg.tier, seed=seed, rules=cfg.rules, shard_games=cfg.shard_games, cwd=cwd, **run
        )
    _fetch(url, out)
    fs.rm(root, recursive=True)
    if local:  # the staging folder, unless another generation's ranges (or a dead driver's last write) are there
        with contextlib.suppress(OSError):
            Path(base).rmdir()
    return {
        "ray": {
            "address": cfg.ray,
            "storage": base,
            "ranges": -(-games // cfg.shard_games),
            "ranges_resumed": done,
            "threads_per_task": cfg.threads,
            "max_tasks": cfg.ray_tasks or None,
        }
    }
