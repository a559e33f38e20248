"""``python -m yutenv.bench``: env steps per second delivered to Python.

Measures, in one run and on one machine:

* ``YutEnv``: one env, one request per step;
* ``YutVectorEnv`` with 64, 256 and 1024 envs: one request per batch step;

each over every transport this machine has (``shared``: rows in shared memory, a doorbell per
step; ``socket``: rows through the socket), and for the vector envs with ``copy=False`` (views
of the shared rows) and ``copy=True`` (Gymnasium's default, fresh arrays). Besides env steps per
second, each row gives the time spent inside ``step()`` per call, the figure to compare with the
in-process ``go test -bench BatchStep ./vecenv/``. With ``--go`` every round also steps that batch
in process (``yutenv bench --batch N``) beside the Python rows, and each row gets its ratio to it
(``scripts/bench_seam.py`` prints those against the seam's targets).

Rates are compared with the single env's. There is no pure-Python row: the package ships no
second rules engine to compare with (the project's pure-Python reference engine is a test
oracle in the repository's test tree; docs/BENCHMARKS.md quotes its own rate).

Every configuration plays standard rules against the server's ``random`` opponent with
a uniformly random legal action per decision, chosen in numpy (its cost is included: it is
what a trainer pays too). A "step" is one learner decision; the opponent's replies, throws
and autoresets happen inside it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np
import numpy.typing as npt
from tabulate import tabulate

from ..connection.server import Server, binary_path
from ..envs.gym_env import YutEnv
from ..envs.pool import YutEnvPool
from ..envs.vector import YutVectorEnv

# A program: its one public name is its entry point.
__all__ = ["main"]


@dataclass
class Row:
    name: str
    envs: int
    steps: int
    seconds: float
    steps_per_s: float
    us_per_step_call: float
    #: With ``--go``: the median over the rounds of this row's figure against the in-process Go
    #: batch of as many envs measured in the same round (time per step call over Go's; for the
    #: pool, env steps/s over Go's). None for the Go rows and without ``--go``.
    vs_go: float | None = None
    #: The in-process Go reference (``--go``), and a ``YutEnvPool`` (its figure is env steps/s).
    go: bool = False
    pool: bool = False


Runner = Callable[[float], tuple[int, int, float]]
"""Runs its configuration for about the given seconds and returns the env steps it made, the
``step()`` calls and the seconds spent inside them."""


def single_runner(server: Server, opponent: str, tier: str | None, transport: str) -> tuple[Runner, Callable[[], None]]:
    env = YutEnv(server=server, opponent=opponent, tier=tier, transport=transport)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=1)
    state = {"mask": info["action_mask"]}

    def run(limit: float) -> tuple[int, int, float]:
        n = 0
        inside = 0.0
        mask = state["mask"]
        clock = time.perf_counter
        end = clock() + limit
        while True:
            for _ in range(256):
                legal = np.flatnonzero(mask)
                a = int(legal[rng.integers(len(legal))])
                t0 = clock()
                _, _, term, trunc, info = env.step(a)
                inside += clock() - t0
                if term or trunc:
                    _, info = env.reset()
                mask = info["action_mask"]
            n += 256
            if clock() >= end:
                state["mask"] = mask
                return n, n, inside

    return run, env.close


def _random_legal(masks: npt.NDArray[np.bool_], noise: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    # argmax of iid noise over the legal entries: a uniformly random legal action per row
    # (rows with no legal action, the terminal rows of NEXT_STEP, get 0, which the server ignores).
    out: npt.NDArray[np.int64] = np.argmax(np.where(masks, noise, -1.0), axis=1)
    return out


def vector_runner(
    server: Server, n: int, opponent: str, tier: str | None, transport: str, copy: bool
) -> tuple[Runner, Callable[[], None]]:
    v = YutVectorEnv(n, server=server, opponent=opponent, tier=tier, transport=transport, copy=copy)
    rng = np.random.default_rng(0)
    noise = rng.random((16, n, v.num_actions), dtype=np.float32)
    v.reset(seed=1)
    k = [0]

    def one() -> None:
        acts = _random_legal(v.action_masks(), noise[k[0] & 15])
        k[0] += 1
        t0 = time.perf_counter()
        v.step(acts)
        inside[0] += time.perf_counter() - t0

    inside = [0.0]
    return _timed(one, n, inside), v.close


def pool_runner(server: Server, n: int, groups: int, opponent: str, tier: str | None) -> tuple[Runner, Callable[[], None]]:
    """EnvPool-style stepping: ``groups`` groups of ``n // groups`` envs; the policy (first legal
    action, as the Go benchmark's) runs on one group while the server steps the others."""
    pool = YutEnvPool(n, batch_size=n // groups, server=server, opponent=opponent, tier=tier, copy=False)
    pool.async_reset(seed=1)

    def one() -> None:
        t0 = time.perf_counter()
        _, _, _, _, info = pool.recv()
        inside[0] += time.perf_counter() - t0
        # The first legal action per row: argmax of the mask viewed as bool stops at the first
        # True, as the Go benchmark's bytes.IndexByte does (argmax over int8 reads every entry).
        pool.send(info["action_mask"].view(np.bool_).argmax(axis=1), info["env_id"])

    inside = [0.0]
    return _timed(one, n // groups, inside), pool.close


def go_runner(binary: str, n: int) -> Runner:
    """The reference: ``yutenv bench --batch n`` steps the same games in process (no socket, no
    Python; the first legal action of each env, as ``go test -bench BatchStep ./vecenv/``)."""

    def run(limit: float) -> tuple[int, int, float]:
        out = subprocess.run(
            [binary, "bench", "--batch", str(n), "--time", f"{max(limit, 0.01):.3f}s", "--json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        r = json.loads(out)
        return int(r["steps"]) * n, int(r["steps"]), float(r["seconds"])

    return run


def _timed(one: Callable[[], None], envs: int, inside: list[float]) -> Runner:
    """The runner that calls ``one`` (a step of ``envs`` envs that adds the seconds it spent
    inside the API to ``inside[0]``) in rounds of 8 for about the given seconds."""

    def run(limit: float) -> tuple[int, int, float]:
        calls = 0
        before = inside[0]
        end = time.perf_counter() + limit
        while True:
            for _ in range(8):
                one()
            calls += 8
            if time.perf_counter() >= end:
                return calls * envs, calls, inside[0] - before

    return run


@dataclass
class Config:
    name: str
    envs: int
    run: Runner
    #: An in-process Go reference: its rate is over the time inside its steps (the process's
    #: start is not part of it).
    go: bool = False
    #: A ``YutEnvPool``: compared with Go by env steps/s (the others by time per step call).
    pool: bool = False


def measure(configs: list[Config], seconds: float, warmup: float, rounds: int) -> list[Row]:
    """Run every configuration ``rounds`` times in turn (interleaved, so that a change in the
    machine's load hits all of them alike) and report each one's median rate over its rounds,
    and, where a Go reference of as many envs ran, the median of the paired ratios."""
    for c in configs:
        c.run(warmup)
    rates: list[list[float]] = [[] for _ in configs]
    inside: list[list[float]] = [[] for _ in configs]
    totals = [(0, 0.0) for _ in configs]
    for _ in range(rounds):
        for i, c in enumerate(configs):
            t0 = time.perf_counter()
            steps, calls, spent = c.run(seconds / rounds)
            dt = spent if c.go else time.perf_counter() - t0
            rates[i].append(steps / dt)
            inside[i].append(spent / calls * 1e6)
            totals[i] = (totals[i][0] + steps, totals[i][1] + dt)
    go = {c.envs: i for i, c in enumerate(configs) if c.go}
    rows = []
    for i, c in enumerate(configs):
        vs: float | None = None
        if not c.go and c.envs in go:
            g = go[c.envs]
            pairs = [(rates[i][r] / rates[g][r]) if c.pool else (inside[i][r] / inside[g][r]) for r in range(rounds)]
            vs = float(np.median(pairs))
        rows.append(
            Row(
                c.name,
                c.envs,
                totals[i][0],
                totals[i][1],
                float(np.median(rates[i])),
                float(np.median(inside[i])),
                vs,
                c.go,
                c.pool,
            )
        )
    return rows


def _vs_go(r: Row) -> str:
    if r.vs_go is None:
        return ""
    return f"{r.vs_go:.0%} of Go" if r.pool else f"{r.vs_go:.2f}x"


def transports(server: Server, wanted: list[str]) -> list[str]:
    """The transports of ``wanted`` this machine and server offer (``shared`` needs a Unix
    socket on Linux or macOS)."""
    shared_ok = server.transport == "unix" and sys.platform.startswith(("linux", "darwin"))
    return [t for t in wanted if t != "shared" or shared_ok]


# ---- main -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``python -m yutenv.bench``: the benchmark from the command line (``--help`` lists the
    options); returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m yutenv.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="measured time per configuration (default 3)")
    ap.add_argument("--warmup", type=float, default=0.5, help="unmeasured warm-up per configuration")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the median rate is reported")
    ap.add_argument("--sizes", default="64,256,1024", help="vector env sizes (default 64,256,1024)")
    ap.add_argument("--opponent", default="random", help="server-side opponent (default random)")
    ap.add_argument("--tier", default=None, help="observation tier (default: the server's)")
    ap.add_argument("--transports", default="shared,socket", help="transports to measure (default shared,socket)")
    ap.add_argument("--copies", default="false,true", help="vector envs' copy settings to measure (default false,true)")
    ap.add_argument("--pool", default="1024", help="YutEnvPool sizes, stepped in 2 groups (default 1024; '' for none)")
    ap.add_argument(
        "--go",
        action="store_true",
        help="also step the same games in process (yutenv bench --batch) in every round, and give "
        "each row's ratio to it: the cost of the Go-Python seam",
    )
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]

    with Server() as server:
        closers: list[Callable[[], None]] = []
        configs: list[Config] = []
        pools = [int(x) for x in args.pool.split(",") if x.strip()]
        if args.go:
            for n in sorted({1, *sizes, *pools}):
                configs.append(Config(f"Go in process, batch of {n}", n, go_runner(str(binary_path()), n), go=True))
        kinds = transports(server, [t.strip() for t in args.transports.split(",") if t.strip()])
        copies = [c.strip().lower() in ("true", "1", "yes") for c in args.copies.split(",") if c.strip()]
        for tr in kinds:
            run, close = single_runner(server, args.opponent, args.tier, tr)
            configs.append(Config(f"YutEnv, {tr}", 1, run))
            closers.append(close)
        for n in sizes:
            for tr in kinds:
                for cp in copies:
                    run, close = vector_runner(server, n, args.opponent, args.tier, tr, cp)
                    configs.append(Config(f"YutVectorEnv({n}), {tr}, copy={cp}", n, run))
                    closers.append(close)
        for n in pools:
            run, close = pool_runner(server, n, 2, args.opponent, args.tier)
            configs.append(Config(f"YutEnvPool({n}), 2 groups, {kinds[0]}", n, run, pool=True))
            closers.append(close)
        try:
            rows = measure(configs, args.seconds, args.warmup, max(1, args.rounds))
        finally:
            for close in closers:
                close()
    base = next(r for r in rows if not r.go).steps_per_s
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"

    if args.json:
        print(json.dumps({"machine": machine, "rows": [asdict(r) for r in rows]}, indent=2))
        return 0
    head = ["configuration", "env steps/s", "vs the first", "µs inside step()"] + (["vs Go in process"] if args.go else [])
    table = [
        [
            r.name,
            f"{r.steps_per_s:,.0f}",
            "" if r.go else f"{r.steps_per_s / base:.1f}x",
            f"{r.us_per_step_call:,.1f}",
        ]
        + ([_vs_go(r)] if args.go else [])
        for r in rows
    ]
    if args.markdown:
        print(f"Machine: {machine}\n")
        print(tabulate(table, headers=head, tablefmt="github", disable_numparse=True))
        return 0
    print(
        f"yutenv bench: {machine}; {args.seconds:g} s per configuration in {args.rounds} interleaved "
        f"rounds (median), opponent {args.opponent}"
    )
    print(tabulate(table, headers=head, disable_numparse=True, colalign=("left",) + ("right",) * (len(head) - 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
