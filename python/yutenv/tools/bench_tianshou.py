"""Tianshou env steps per second: its own vector envs of ``YutEnv`` against :class:`yutenv.integrations.tianshou.YutTianshouVectorEnv`.

    python -m yutenv.tools.bench_tianshou --num-envs 8,64 --repeats 3

Three setups, the same games against the server's ``random`` opponent on one server this
process starts: Tianshou's ``DummyVectorEnv`` of :func:`yutenv.integrations.tianshou.gym_env` (one round
trip per env per step), its ``SubprocVectorEnv`` of the same (one process per env, each with
its own connection to the server) and the door (one server batch, one round trip per step).
Per setup and number of envs, the median over ``--repeats`` runs (interleaved, so that a busy
machine slows every setup alike) of:

* ``env steps/s``: the vector env alone, as Tianshou's ``Collector`` drives it: ``step`` with
  the first legal action of each env, then ``reset(env_id=...)`` of the envs whose episode ended;
* ``collect steps/s``: Tianshou's ``Collector`` (n_step collects into a ``VectorReplayBuffer``)
  with Tianshou's masked random policy: what a trainer's data collection costs.

Needs the ``tianshou`` extra. Results are in docs/BENCHMARKS.md ("Tianshou").
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from typing import Any

import gymnasium
import numpy as np
from tabulate import tabulate

from .._extras import import_extra
from .._protocol import NUM_ACTIONS
from ..connection.server import Server
from . import _args

import_extra("tianshou", "tianshou", "yutenv.tools.bench_tianshou")
from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Collector, CollectStats, VectorReplayBuffer  # noqa: E402
from tianshou.env import BaseVectorEnv, DummyVectorEnv, SubprocVectorEnv  # noqa: E402

from ..integrations.tianshou import YutTianshouVectorEnv, gym_env

__all__ = ["main"]

#: The vector envs measured, in the order of the table.
SETUPS = ("dummy", "subproc", "yutenv")
#: Each setup's name in the table.
NAMES = {"dummy": "DummyVectorEnv of gym_env", "subproc": "SubprocVectorEnv of gym_env", "yutenv": "YutTianshouVectorEnv"}


def build(setup: str, num_envs: int, server: Server) -> BaseVectorEnv:
    """The vector env of ``setup`` with ``num_envs`` envs, playing on ``server``."""
    if setup == "yutenv":
        return YutTianshouVectorEnv(num_envs, server=server, opponent="random", seat="random")
    # The workers of SubprocVectorEnv connect to this process's server by its address.
    fn = functools.partial(gym_env, address=server.address, token=server.token, opponent="random", seat="random")
    if setup == "dummy":
        return DummyVectorEnv([fn] * num_envs)
    return SubprocVectorEnv([fn] * num_envs)


def env_rate(venv: BaseVectorEnv, steps: int, seed: int) -> float:
    """Env steps per second: ``steps`` vector steps of every env with its first legal action,
    the envs whose episode ended reset by id, as Tianshou's Collector does."""
    venv.seed(seed)
    obs, _ = venv.reset()
    n = len(venv)
    start = time.perf_counter()
    for _ in range(steps):
        obs, _, term, trunc, _ = venv.step(np.argmax(obs.mask, axis=1) if hasattr(obs, "mask") else _first_legal(obs))
        done = np.flatnonzero(term | trunc)
        if len(done):
            first, _ = venv.reset(env_id=done)
            obs[done] = first
    return float(steps * n / (time.perf_counter() - start))


def _first_legal(obs: Any) -> Any:
    """Tianshou's own vector envs stack dict observations into an object array of dicts."""
    return np.array([np.argmax(o["mask"]) for o in obs])


def collect_rate(venv: BaseVectorEnv, steps: int, seed: int) -> float:
    """Env steps per second through Tianshou's Collector with its masked random policy."""
    n = len(venv)
    policy = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=gymnasium.spaces.Discrete(NUM_ACTIONS))
    collector = Collector[CollectStats](policy, venv, VectorReplayBuffer(steps * n + n, n))
    venv.seed(seed)
    collector.reset()
    collector.collect(n_step=n * 8)  # warm-up
    start = time.perf_counter()
    stats = collector.collect(n_step=steps * n)
    return float(stats.n_collected_steps / (time.perf_counter() - start))


def main(argv: list[str] | None = None) -> None:
    """Measure and print the table; ``argv`` as on the command line."""
    ap = argparse.ArgumentParser(prog="python -m yutenv.tools.bench_tianshou", description=__doc__.split("\n\n")[0])
    ap.add_argument("--num-envs", default="8,64", help="numbers of envs stepped together, comma-separated (default 8,64)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs of each setup; the median is reported (default 3)")
    ap.add_argument("--steps", type=int, default=300, help="vector steps of each measurement (default 300)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the envs (default 0)")
    ap.add_argument("--setups", default=",".join(SETUPS), help="which setups to run (dummy,subproc,yutenv)")
    args = ap.parse_args(argv)
    setups = _args.setups(ap, args.setups, SETUPS)
    sizes = [int(x) for x in args.num_envs.split(",") if x]
    results: dict[tuple[str, int], dict[str, list[float]]] = {(s, n): {"env": [], "collect": []} for s in setups for n in sizes}
    with Server() as server:
        for r in range(args.repeats):
            for n in sizes:
                for s in setups:
                    venv = build(s, n, server)
                    try:
                        res = results[(s, n)]
                        res["env"].append(env_rate(venv, args.steps, args.seed + r))
                        res["collect"].append(collect_rate(venv, args.steps, args.seed + r))
                    finally:
                        venv.close()
                    print(
                        f"run {r + 1}/{args.repeats} {n:4d} envs {s:>8}: env {res['env'][-1]:9.0f} steps/s  "
                        f"collect {res['collect'][-1]:9.0f} steps/s",
                        flush=True,
                    )
    print(f"\nTianshou, opponent random, {args.steps} vector steps a measurement; median of {args.repeats}")
    table = []
    for n in sizes:
        med = {s: {k: statistics.median(v) for k, v in results[(s, n)].items()} for s in setups}
        for s in setups:
            table.append([f"{NAMES[s]}, {n} envs", f"{med[s]['env']:.0f}", f"{med[s]['collect']:.0f}"])
        for base in ("dummy", "subproc"):
            if base in med and "yutenv" in med:
                a, b = med[base], med["yutenv"]
                table.append(
                    [f"YutTianshouVectorEnv / {base}", f"{b['env'] / a['env']:.2f}x", f"{b['collect'] / a['collect']:.2f}x"]
                )
    print(tabulate(table, headers=["setup", "env steps/s", "collect steps/s"], disable_numparse=True,
                   colalign=("left", "right", "right")))  # fmt: skip


if __name__ == "__main__":
    main()
