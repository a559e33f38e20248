"""Scaling benchmark of yutenv.distributed (not a test): games/s of distributed self-play
and evaluation on a local Ray with 1, 2, ... CPUs, next to one `yutenv selfplay` process
with as many workers. Results go to docs/BENCHMARKS.md ("Ray").

    .venv/bin/python scripts/bench_ray.py --workers 1,2 --games 400 --agents mcts:100
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time

import ray

import yutenv
from yutenv import distributed


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workers", default="1,2")
    p.add_argument("--games", type=int, default=400)
    p.add_argument("--agents", default="mcts:100")
    p.add_argument("--eval-b", default="greedy")
    p.add_argument("--shard-games", type=int, default=25)
    p.add_argument("--repeat", type=int, default=2)
    a = p.parse_args()
    print(f"load average before: {os.getloadavg()}")
    for w in [int(x) for x in a.workers.split(",")]:
        ray.init(num_cpus=w, log_to_driver=False)
        # Warm up: workers started and the package imported on each.
        distributed.evaluate_agents("random", "random", 2 * w, chunk_games=2)
        for rep in range(a.repeat):
            with tempfile.TemporaryDirectory() as d:
                t0 = time.perf_counter()
                distributed.selfplay(os.path.join(d, "ds"), a.games, agents=a.agents, tier="compact", seed=rep + 1,
                                     shard_games=a.shard_games)  # fmt: skip
                sp = a.games / (time.perf_counter() - t0)
            t0 = time.perf_counter()
            distributed.evaluate_agents(a.agents, a.eval_b, a.games, seed=rep + 1, chunk_games=a.shard_games)
            ev = a.games / (time.perf_counter() - t0)
            with tempfile.TemporaryDirectory() as d:
                cmd = [str(yutenv.binary_path()), "selfplay", "--quiet", "--agents", a.agents, "--tier", "compact",
                       "--games", str(a.games), "--seed", str(rep + 1), "--shard-games", str(a.shard_games),
                       "--workers", str(w), "--out", os.path.join(d, "ds")]  # fmt: skip
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True)
                local = a.games / (time.perf_counter() - t0)
            print(f"workers={w} rep={rep}: ray selfplay {sp:.1f} games/s, ray eval {ev:.1f} games/s, "
                  f"one yutenv selfplay --workers {w}: {local:.1f} games/s; load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
        ray.shutdown()


if __name__ == "__main__":
    main()
