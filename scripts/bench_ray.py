#!/usr/bin/env python3
"""Scaling benchmark of yutenv.az.distributed (not a test): games/s of distributed self-play
and evaluation with 1, 2, ... tasks in flight on one local Ray, next to one `yutenv
selfplay` process with as many workers. Results go to docs/BENCHMARKS.md ("Ray").

The worker counts are measured in turn, round after round (1, 2, 1, 2, ...), so that a
change in the machine's load during the run hits every count alike; the median of the
rounds is reported. The load average is printed with every line.

    .venv/bin/python scripts/bench_ray.py --workers 1,2 --rounds 3 --games 200 --agents mcts:400
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time

import ray
import yutenv
from yutenv import distributed


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workers", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--agents", default="mcts:400")
    p.add_argument("--eval-b", default="greedy")
    p.add_argument("--shard-games", type=int, default=20)
    a = p.parse_args()
    counts = [int(x) for x in a.workers.split(",")]
    ray.init(num_cpus=max(counts), log_to_driver=False)
    distributed.evaluate_agents(
        "random", "random", 2 * max(counts), chunk_games=2
    )  # warm the workers up
    got: dict[tuple[str, int], list[float]] = {}
    for rnd in range(a.rounds):
        for w in counts:
            with tempfile.TemporaryDirectory() as d:
                t0 = time.perf_counter()
                distributed.selfplay(os.path.join(d, "ds"), a.games, agents=a.agents, tier="compact", seed=rnd + 1,
                                     shard_games=a.shard_games, max_tasks=w)  # fmt: skip
                sp = a.games / (time.perf_counter() - t0)
            t0 = time.perf_counter()
            distributed.evaluate_agents(
                a.agents,
                a.eval_b,
                a.games,
                seed=rnd + 1,
                chunk_games=a.shard_games,
                max_tasks=w,
            )
            ev = a.games / (time.perf_counter() - t0)
            with tempfile.TemporaryDirectory() as d:
                cmd = [str(yutenv.binary_path()), "selfplay", "--quiet", "--agents", a.agents, "--tier", "compact",
                       "--games", str(a.games), "--seed", str(rnd + 1), "--shard-games", str(a.shard_games),
                       "--workers", str(w), "--out", os.path.join(d, "ds")]  # fmt: skip
                r0, t0 = (
                    resource.getrusage(resource.RUSAGE_CHILDREN),
                    time.perf_counter(),
                )
                subprocess.run(cmd, check=True, capture_output=True)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                local = a.games / (time.perf_counter() - t0)
                cpu = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / a.games
            for key, v in (
                ("ray selfplay", sp),
                ("ray eval", ev),
                ("one process", local),
            ):
                got.setdefault((key, w), []).append(v)
            print(f"round {rnd} workers={w}: ray selfplay {sp:.1f} games/s, ray eval {ev:.1f} games/s, one yutenv selfplay "
                  f"--workers {w}: {local:.1f} games/s ({1000 * cpu:.1f} ms CPU/game); load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    print("medians (games/s):")
    for key in ("ray selfplay", "ray eval", "one process"):
        med = {w: statistics.median(got[(key, w)]) for w in counts}
        print(
            f"  {key}: "
            + ", ".join(
                f"{w} workers {med[w]:.1f} ({med[w] / med[counts[0]]:.2f}x)"
                for w in counts
            )
        )
    ray.shutdown()


if __name__ == "__main__":
    main()
