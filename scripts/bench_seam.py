#!/usr/bin/env python3
"""The Go-Python seam, measured side by side: the in-process Go batch and Python's step().

Runs, in one go on one machine, ``go test -bench BatchStep ./vecenv/`` (an N-env batch stepped in
process: no socket, no Python), then ``python -m yutenv.bench`` (the same N envs stepped from
Python, by transport), then the Go benchmark again, and prints each Python path's time per
``step()`` call against the mean of the two Go runs, so that a change of the machine's load
between the runs moves both sides alike. Targets: a 256-env step within 1.3x of the Go batch, a
one-env step under 10 us and within 20x, and 1024 envs stepped by the env pool at 80% or more of
the Go batch's env steps per second.

Usage: scripts/bench_seam.py [--seconds S] [--json]   (from the repository root, after
``make py-install``; uses bin/yutenv, built by ``go build -o bin/yutenv ./cmd/yutenv``)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1, 256, 1024)


def go_batch(benchtime: str) -> dict[int, float]:
    """ns per BatchStep call, by N."""
    pat = "BatchStep/n=(" + "|".join(map(str, SIZES)) + ")$"
    out = subprocess.run(
        [
            "go",
            "test",
            "-run",
            "^$",
            "-bench",
            pat,
            "-benchtime",
            benchtime,
            "./vecenv/",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    got = {
        int(m[1]): float(m[2])
        for m in re.finditer(r"BatchStep/n=(\d+)-\d+\s+\d+\s+([\d.]+) ns/op", out)
    }
    missing = set(SIZES) - set(got)
    if missing:
        sys.exit(f"bench_seam: no BatchStep figure for n={sorted(missing)} in:\n{out}")
    return got


def python_bench(seconds: float) -> dict[str, dict[str, float]]:
    env = dict(os.environ)
    env.setdefault("YUTENV_BINARY", str(ROOT / "bin" / "yutenv"))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "yutenv.bench",
            "--json",
            "--seconds",
            str(seconds),
            "--sizes",
            "256",
            "--pool",
            "1024",
            "--copies",
            "false,true",
        ],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    return {r["name"]: r for r in json.loads(out)["rows"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--seconds",
        type=float,
        default=6.0,
        help="Python's measured time per configuration",
    )
    ap.add_argument(
        "--benchtime", default="2s", help="go test -benchtime of each Go run"
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    g1 = go_batch(args.benchtime)
    py = python_bench(args.seconds)
    g2 = go_batch(args.benchtime)
    go_us = {n: (g1[n] + g2[n]) / 2 / 1000 for n in SIZES}
    rows = []
    for name, r in py.items():
        n = int(r["envs"])
        if name.startswith("YutEnvPool"):
            go_rate = n * 1e6 / go_us[n]
            rows.append(
                {
                    "path": name,
                    "python": f"{r['steps_per_s']:,.0f} env steps/s",
                    "go": f"{go_rate:,.0f} env steps/s",
                    "ratio": f"{r['steps_per_s'] / go_rate:.0%} of Go",
                    "target": ">= 80%",
                }
            )
        else:
            target = "< 10 us, <= 20x" if n == 1 else "<= 1.3x"
            rows.append(
                {
                    "path": name,
                    "python": f"{r['us_per_step_call']:.1f} us",
                    "go": f"{go_us[n]:.1f} us",
                    "ratio": f"{r['us_per_step_call'] / go_us[n]:.2f}x",
                    "target": target,
                }
            )
    if args.json:
        print(json.dumps({"go_us": go_us, "rows": rows}, indent=2))
        return 0
    print(
        "Go BatchStep (mean of two runs): "
        + ", ".join(f"n={n}: {go_us[n]:.2f} us" for n in SIZES)
    )
    w = max(len(r["path"]) for r in rows)
    print(
        f"{'path':<{w}}  {'Python':>22}  {'Go in process':>22}  {'ratio':>10}  target"
    )
    for r in rows:
        print(
            f"{r['path']:<{w}}  {r['python']:>22}  {r['go']:>22}  {r['ratio']:>10}  {r['target']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
