"""``python -m yutenv.bench``: env steps per second delivered to Python.

Measures, in one run and on one machine:

* ``YutEnv``: one env, one round trip per step;
* ``YutVectorEnv`` with 64, 256 and 1024 envs: one round trip per batch step;
* a pure-Python loop doing the same work per learner decision: the learner's random legal
  action applied, the opponent's random moves, the throws, a legal-action mask and a
  compact observation vector. It runs on :mod:`yutenv.reference` (the project's
  independent pure-Python rules engine).

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
import random
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np
import numpy.typing as npt

from .core import NUM_ACTIONS
from .gym_env import YutEnv
from .server import Server
from .vector import YutVectorEnv


@dataclass
class Row:
    name: str
    envs: int
    steps: int
    seconds: float
    steps_per_s: float
    note: str = ""


Runner = Callable[[float], int]
"""Runs its configuration for about the given seconds and returns the env steps it made."""


def single_runner(server: Server, opponent: str, tier: str | None) -> tuple[Runner, Callable[[], None]]:
    env = YutEnv(server=server, opponent=opponent, tier=tier)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=1)
    state = {"mask": info["action_mask"]}

    def run(limit: float) -> int:
        n = 0
        mask = state["mask"]
        end = time.perf_counter() + limit
        while True:
            for _ in range(256):
                legal = np.flatnonzero(mask)
                _, _, term, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
                if term or trunc:
                    _, info = env.reset()
                mask = info["action_mask"]
            n += 256
            if time.perf_counter() >= end:
                state["mask"] = mask
                return n

    return run, env.close


def _random_legal(masks: npt.NDArray[np.bool_], noise: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    # argmax of iid noise over the legal entries: a uniformly random legal action per row
    # (rows with no legal action, the terminal rows of NEXT_STEP, get 0, which the server ignores).
    out: npt.NDArray[np.int64] = np.argmax(np.where(masks, noise, -1.0), axis=1)
    return out


def vector_runner(server: Server, n: int, opponent: str, tier: str | None) -> tuple[Runner, Callable[[], None]]:
    v = YutVectorEnv(n, server=server, opponent=opponent, tier=tier)
    rng = np.random.default_rng(0)
    noise = rng.random((16, n, NUM_ACTIONS), dtype=np.float32)
    v.reset(seed=1)
    k = [0]

    def run(limit: float) -> int:
        steps = 0
        end = time.perf_counter() + limit
        while True:
            for _ in range(8):
                acts = _random_legal(v.action_masks(), noise[k[0] & 15])
                k[0] += 1
                v.step(acts)
                steps += n
            if time.perf_counter() >= end:
                return steps

    return run, v.close


# ---- the pure-Python loop ---------------------------------------------------------------


def _reference_runner() -> tuple[Callable[[float], int], str]:
    """The pure-Python loop over yutenv.reference, the project's independent rules engine."""
    from . import reference

    return _reference_loop(reference), "yutenv.reference engine"


def _reference_loop(ref: Any) -> Callable[[float], int]:
    rules = ref.Rules()
    rng = random.Random(0)
    n = rules.players
    size = n * 29 + 29 * 5 + 2 * n + 6
    obs = np.zeros(size, dtype=np.float32)
    route_id = {r: i for i, r in enumerate(ref.ROUTES)}
    learner = 0
    st: dict[str, Any] = {"game": 0}

    def new_state() -> Any:
        st["game"] += 1
        return ref.State.new(rules, rng.randrange(n))

    st["s"] = new_state()

    def encode(s: Any) -> None:
        # compact content like the server's: heights by seat and station, routes, hand,
        # finished, pool, from the mover's point of view
        obs[:] = 0.0
        for station, stack in enumerate(s.board):
            if stack is not None:
                rel = (stack.seat - s.to_move) % n
                obs[rel * 29 + station] = stack.height / rules.pieces
                obs[n * 29 + station * 5 + route_id[stack.route]] = 1.0
        base = n * 29 + 29 * 5
        for i in range(n):
            rel = (i - s.to_move) % n
            obs[base + rel] = s.hand[i] / rules.pieces
            obs[base + n + rel] = s.finished[i] / rules.pieces
        for t in range(6):
            obs[base + 2 * n + t] = min(s.pool[t], 4) / 4.0

    def run(limit: float) -> int:
        steps = 0
        s = st["s"]
        end = time.perf_counter() + limit
        while True:
            for _ in range(64):
                # throws and opponents until the learner decides (or the game ends)
                while True:
                    if s.phase == "throw":
                        s.sample_throw(rng)
                    elif s.phase == "over":
                        s = new_state()
                    elif s.to_move != learner:
                        s.apply(rng.choice(s.legal_actions()))
                    else:
                        break
                encode(s)
                mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
                legal = s.legal_actions()
                mask[legal] = 1
                s.apply(legal[rng.randrange(len(legal))])
                steps += 1
            if time.perf_counter() >= end:
                st["s"] = s
                return steps

    return run


def measure(
    configs: list[tuple[str, int, Runner, str]], seconds: float, warmup: float, rounds: int
) -> list[Row]:
    """Run every configuration ``rounds`` times in turn (interleaved, so that a change in the
    machine's load hits all of them alike) and report each one's median rate over its rounds."""
    for _, _, run, _ in configs:
        run(warmup)
    rates: list[list[float]] = [[] for _ in configs]
    totals = [(0, 0.0) for _ in configs]
    for _ in range(rounds):
        for i, (_, _, run, _) in enumerate(configs):
            t0 = time.perf_counter()
            steps = run(seconds / rounds)
            dt = time.perf_counter() - t0
            rates[i].append(steps / dt)
            totals[i] = (totals[i][0] + steps, totals[i][1] + dt)
    return [
        Row(name, envs, totals[i][0], totals[i][1], float(np.median(rates[i])), note)
        for i, (name, envs, _, note) in enumerate(configs)
    ]


# ---- main -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m yutenv.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="measured time per configuration (default 3)")
    ap.add_argument("--warmup", type=float, default=0.5, help="unmeasured warm-up per configuration")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the median rate is reported")
    ap.add_argument("--sizes", default="64,256,1024", help="vector env sizes (default 64,256,1024)")
    ap.add_argument("--opponent", default="random", help="server-side opponent (default random)")
    ap.add_argument("--tier", default=None, help="observation tier (default: the server's)")
    ap.add_argument("--no-python", action="store_true", help="skip the pure-Python loop")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]

    with Server() as server:
        closers: list[Callable[[], None]] = []
        configs: list[tuple[str, int, Runner, str]] = []
        run, close = single_runner(server, args.opponent, args.tier)
        configs.append(("YutEnv (1 env)", 1, run, ""))
        closers.append(close)
        for n in sizes:
            run, close = vector_runner(server, n, args.opponent, args.tier)
            configs.append((f"YutVectorEnv ({n} envs)", n, run, ""))
            closers.append(close)
        if not args.no_python:
            run, what = _reference_runner()
            configs.append(("pure Python loop", 1, run, what))
        try:
            rows = measure(configs, args.seconds, args.warmup, max(1, args.rounds))
        finally:
            for close in closers:
                close()
    base = rows[-1].steps_per_s if not args.no_python else None
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"

    if args.json:
        print(json.dumps({"machine": machine, "rows": [asdict(r) for r in rows]}, indent=2))
        return 0
    if args.markdown:
        print(f"Machine: {machine}\n")
        print("| configuration | env steps/s | vs pure Python |")
        print("|---|---:|---:|")
        for r in rows:
            ratio = f"{r.steps_per_s / base:.1f}x" if base else ""
            print(f"| {r.name}{' (' + r.note + ')' if r.note else ''} | {r.steps_per_s:,.0f} | {ratio} |")
        return 0
    print(
        f"yutenv bench: {machine}; {args.seconds:g} s per configuration in {args.rounds} interleaved "
        f"rounds (median), opponent {args.opponent}"
    )
    print(f"{'configuration':<26} {'env steps/s':>14} {'vs Python':>10}")
    for r in rows:
        ratio = f"{r.steps_per_s / base:.1f}x" if base else ""
        print(f"{r.name:<26} {r.steps_per_s:>14,.0f} {ratio:>10}")
    if not args.no_python:
        print(f"pure Python loop: {rows[-1].note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
