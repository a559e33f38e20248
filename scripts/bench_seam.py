#!/usr/bin/env python3
"""The Go-Python seam, measured side by side: Python's step() against the same batch in Go.

Runs ``python -m yutenv.bench --go``: in every round, each Python configuration (one env, a
256-env vector env, 1,024 envs in a ``YutEnvPool`` of 2 groups) and, beside it, ``yutenv bench
--batch N`` stepping the same games in process (no socket, no Python; the Go benchmark
``BatchStep`` of ./vecenv). Each round's Python figure is divided by the Go figure of the same
round, and the median over the rounds is reported, so that a change of the machine's load moves
both sides of a ratio alike. Targets: a 256-env step within 1.3x of the Go batch, a one-env
step under 10 us and within 20x, and 1024 envs stepped by the env pool at 80% or more of the
Go batch's env steps per second.

Usage: scripts/bench_seam.py [--seconds S] [--rounds R] [--json]   (from the repository root,
after ``make py-install``; the server is the package's, or $YUTENV_BINARY)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

# The rows the targets are about (the shared-memory paths, views without a copy).
TARGETS = {
    "YutEnv, shared": "< 10 us, <= 20x",
    "YutVectorEnv(256), shared, copy=False": "<= 1.3x",
    "YutEnvPool(1024), 2 groups, shared": ">= 80% of Go",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=6.0, help="measured time per configuration (over all rounds)")
    ap.add_argument("--rounds", type=int, default=8, help="interleaved rounds; the median paired ratio is reported")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "yutenv.bench",
            "--go",
            "--json",
            "--seconds",
            str(args.seconds),
            "--rounds",
            str(args.rounds),
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
    ).stdout
    bench = json.loads(out)
    go = {r["envs"]: r for r in bench["rows"] if r["go"]}
    rows = []
    for r in bench["rows"]:
        if r["vs_go"] is None:
            continue
        g = go[r["envs"]]
        pool = r["pool"]
        rows.append(
            {
                "path": r["name"],
                "python": f"{r['steps_per_s']:,.0f} env steps/s" if pool else f"{r['us_per_step_call']:.1f} us",
                "go": f"{g['steps_per_s']:,.0f} env steps/s" if pool else f"{g['us_per_step_call']:.1f} us",
                "ratio": f"{r['vs_go']:.0%} of Go" if pool else f"{r['vs_go']:.2f}x",
                "target": TARGETS.get(r["name"], ""),
            }
        )
    if args.json:
        print(json.dumps({"machine": bench["machine"], "rows": rows}, indent=2))
        return 0
    print(f"{bench['machine']}; {args.rounds} rounds, the median of each round's ratio")
    w = max(len(r["path"]) for r in rows)
    print(f"{'path':<{w}}  {'Python':>22}  {'Go in process':>22}  {'ratio':>10}  target")
    for r in rows:
        print(f"{r['path']:<{w}}  {r['python']:>22}  {r['go']:>22}  {r['ratio']:>10}  {r['target']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
