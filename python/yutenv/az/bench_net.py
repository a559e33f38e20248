"""Measure the network evaluator: alone, and through network-guided self-play.

    python -m yutenv.az.bench_net --hidden 256,256 --batch 256            # torch alone
    python -m yutenv.az.bench_net --hidden 256,256 --batch 256 --selfplay --games 256 --sims 32

``--selfplay`` plays ``--games`` games with :class:`yutenv.az.SelfPlay` (``games_in_flight``
and ``max_batch`` = ``--batch``), the leaves valued by :class:`~yutenv.az.net.NetEvaluator`
on a freshly initialised :class:`~yutenv.az.net.PolicyValueNet`, and reports the leaves
evaluated per second of wall time (the server's search, the protocol and torch together),
the mean batch and the share of the time spent in torch.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
import tempfile
import time
from typing import Any, Sequence

import numpy as np

from .._extras import import_extra

import_extra("torch", "az", "yutenv.az.bench_net")
import torch  # noqa: E402

from ..envs.batch import NUM_ACTIONS
from .net import TIER_SIZES, NetEvaluator, PolicyValueNet

__all__ = ["bench_evaluator", "bench_selfplay", "main"]


def bench_evaluator(model: PolicyValueNet, batch: int, seconds: float = 3.0) -> dict[str, Any]:
    """Rows per second of ``NetEvaluator(model)`` on random batches of ``batch`` rows."""
    rng = np.random.default_rng(0)
    obs = rng.uniform(0, 1, size=(batch, model.obs_size)).astype(np.float32)
    mask = rng.random((batch, NUM_ACTIONS)) < 0.05
    ev = NetEvaluator(model)
    ev(obs, mask)  # warm up
    n, t0 = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - t0) < seconds:
        ev(obs, mask)
        n += 1
    return {
        "batch": batch,
        "calls": n,
        "seconds": elapsed,
        "rows_per_second": n * batch / elapsed,
        "ms_per_call": 1000 * elapsed / n,
    }


def bench_selfplay(
    model: PolicyValueNet,
    batch: int,
    games: int,
    sims: int,
    rules: str = "standard",
    seed: int = 0,
    fast_sims: int = 0,
    full_prob: float = 0.25,
) -> dict[str, Any]:
    """Leaves and positions (dataset rows) per second through :class:`yutenv.az.SelfPlay` with
    ``model`` as the evaluator (with ``fast_sims``: playout cap randomization)."""
    sp_cls = importlib.import_module(".selfplay", __package__).SelfPlay
    sp = sp_cls(
        rules=rules,
        tier=model.tier,
        sims=sims,
        games_in_flight=batch,
        max_batch=batch,
        seed=seed,
        fast_sims=fast_sims,
        full_prob=full_prob,
    )
    ev = NetEvaluator(model)
    with tempfile.TemporaryDirectory() as d:
        summary = sp.run(ev, games=games, out=f"{d}/selfplay")
    s = dataclasses.asdict(summary)
    s.pop("out", None)
    s.update(
        leaves_per_second=summary.leaves_per_second,
        mean_batch=summary.mean_batch,
        torch_share=summary.eval_seconds / summary.seconds if summary.seconds else 0.0,
        games_per_second=games / summary.seconds if summary.seconds else 0.0,
        positions_per_second=summary.decisions / summary.seconds if summary.seconds else 0.0,
    )
    return s


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module doc)."""
    p = argparse.ArgumentParser(
        prog="python -m yutenv.az.bench_net", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--tier", default="compact", choices=sorted(TIER_SIZES), help="observation tier, the network's input (default compact)"
    )
    p.add_argument("--hidden", default="256,256", help="trunk widths, comma-separated")
    p.add_argument("--batch", type=int, default=256, help="rows per evaluator call (and games in flight with --selfplay)")
    p.add_argument("--seconds", type=float, default=3.0, help="how long to time the evaluator alone")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--selfplay", action="store_true", help="also measure through yutenv.az.SelfPlay")
    p.add_argument("--games", type=int, default=256, help="self-play games for --selfplay")
    p.add_argument("--sims", type=int, default=32, help="simulations per decision for --selfplay")
    p.add_argument(
        "--fast-sims",
        type=int,
        default=0,
        help="playout cap randomization for --selfplay: fast searches of N simulations (0: off)",
    )
    p.add_argument("--full-prob", type=float, default=0.25, help="with --fast-sims: the probability of a full search")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = PolicyValueNet(TIER_SIZES[a.tier], [int(x) for x in a.hidden.split(",")], tier=a.tier)
    out: dict[str, Any] = {
        "tier": a.tier,
        "hidden": a.hidden,
        "threads": a.threads,
        "evaluator": bench_evaluator(model, a.batch, a.seconds),
    }
    if a.selfplay:
        out["selfplay"] = bench_selfplay(model, a.batch, a.games, a.sims, fast_sims=a.fast_sims, full_prob=a.full_prob)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
