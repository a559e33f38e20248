"""MaskablePPO training speed: SB3's ``DummyVecEnv`` of ``YutEnv`` against :class:`yutenv.integrations.sb3.YutSB3VecEnv`.

    python -m yutenv.tools.bench_sb3 --num-envs 64 --repeats 3

Both setups train the same MaskablePPO (same network, hyperparameters, seed, torch threads)
against the server's ``random`` opponent, on one server this process starts. The first
rollout and update of each run are a warm-up; then ``learn`` runs ``--rollouts`` more
rollouts and updates and the script reports, per setup, the median over ``--repeats`` runs
(interleaved, so that a busy machine slows both alike) of:

* ``train steps/s``: timesteps / wall time of ``learn`` (rollouts and updates: what a user sees);
* ``rollout steps/s``: timesteps / time in ``collect_rollouts`` (env steps, policy forward
  passes, masks; the part the VecEnv changes);
* ``env steps/s``: the VecEnv alone, stepped with the first legal action of each env.

Needs the ``sb3`` extra. Results are in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import numpy as np
from tabulate import tabulate

from .._extras import import_extra
from ..connection.server import Server
from ..envs.gym_env import YutEnv
from . import _args

for _module in ("torch", "sb3_contrib", "stable_baselines3"):
    import_extra(_module, "sb3", "yutenv.tools.bench_sb3")
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402

from ..integrations.sb3 import YutSB3VecEnv

# A program: its one public name is its entry point.
__all__ = ["main"]

SETUPS = ("dummy", "yutenv", "yutenv-socket")


def build(setup: str, num_envs: int, server: Server, seed: int) -> VecEnv:
    kwargs: dict[str, Any] = {"server": server, "opponent": "random", "seat": "random"}
    if setup == "dummy":
        return make_vec_env(YutEnv, n_envs=num_envs, seed=seed, env_kwargs=kwargs)
    if setup == "yutenv-socket":  # the batch's rows through the socket, not shared memory
        kwargs["transport"] = "socket"
    venv = YutSB3VecEnv(num_envs, **kwargs)
    venv.seed(seed)
    return venv


def env_rate(venv: VecEnv, steps: int) -> float:
    """VecEnv steps per second times num_envs, stepping the first legal action of each env."""
    venv.reset()
    start = time.perf_counter()
    for _ in range(steps):
        masks = np.stack(venv.env_method("action_masks"))
        venv.step(np.argmax(masks, axis=1))
    return float(steps * venv.num_envs / (time.perf_counter() - start))


def train_rate(venv: VecEnv, args: argparse.Namespace) -> tuple[float, float]:
    """(train steps/s, rollout steps/s) of MaskablePPO on ``venv``."""
    # episode statistics: make_vec_env's envs have a Monitor each; the batch gets a VecMonitor
    monitored = VecMonitor(venv) if isinstance(venv, YutSB3VecEnv) else venv
    model = MaskablePPO(
        "MlpPolicy",
        monitored,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        policy_kwargs={"net_arch": args.net},
        seed=args.seed,
        device="cpu",
    )
    per_rollout = args.n_steps * venv.num_envs
    model.learn(per_rollout)  # warm-up: one rollout and one update
    spent = [0.0]
    collect: Callable[..., Any] = model.collect_rollouts

    def timed_collect(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return collect(*a, **kw)
        finally:
            spent[0] += time.perf_counter() - t

    model.collect_rollouts = timed_collect
    before = model.num_timesteps
    start = time.perf_counter()
    model.learn(per_rollout * args.rollouts, reset_num_timesteps=False)
    wall = time.perf_counter() - start
    steps = model.num_timesteps - before
    return steps / wall, steps / spent[0]


def main(argv: list[str] | None = None) -> None:
    """``python -m yutenv.tools.bench_sb3``: the benchmark from the command line (``--help`` lists the
    options)."""
    ap = argparse.ArgumentParser(prog="python -m yutenv.tools.bench_sb3", description=__doc__.split("\n\n")[0])
    ap.add_argument("--num-envs", type=int, default=64, help="envs stepped together (default 64)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs of each setup; the median is reported (default 3)")
    ap.add_argument("--rollouts", type=int, default=3, help="timed rollouts+updates per run (after one warm-up)")
    ap.add_argument("--n-steps", type=int, default=64, help="MaskablePPO n_steps (per env per rollout)")
    ap.add_argument("--batch-size", type=int, default=512, help="MaskablePPO minibatch size (default 512)")
    ap.add_argument("--n-epochs", type=int, default=4, help="MaskablePPO epochs per update (default 4)")
    ap.add_argument("--net", type=lambda s: [int(x) for x in s.split(",")], default=[64, 64], help="hidden layers, e.g. 256,256")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--env-steps", type=int, default=300, help="VecEnv steps of the env-only measurement")
    ap.add_argument("--seed", type=int, default=0, help="seed of the envs and the model (default 0)")
    ap.add_argument("--setups", default=",".join(SETUPS), help="which setups to run (dummy,yutenv,yutenv-socket)")
    args = ap.parse_args(argv)
    setups = _args.setups(ap, args.setups, SETUPS)
    torch.set_num_threads(args.threads)
    results: dict[str, dict[str, list[float]]] = {s: {"train": [], "rollout": [], "env": []} for s in setups}
    with Server() as server:
        for r in range(args.repeats):
            for s in setups:
                venv = build(s, args.num_envs, server, args.seed + r)
                try:
                    results[s]["env"].append(env_rate(venv, args.env_steps))
                    tr, ro = train_rate(venv, args)
                    results[s]["train"].append(tr)
                    results[s]["rollout"].append(ro)
                finally:
                    venv.close()
                print(
                    f"run {r + 1}/{args.repeats} {s:>6}: train {tr:8.0f} steps/s  rollout {ro:8.0f} steps/s  "
                    f"env {results[s]['env'][-1]:8.0f} steps/s",
                    flush=True,
                )
    print(
        f"\nMaskablePPO, {args.num_envs} envs, net {args.net}, n_steps {args.n_steps}, batch {args.batch_size}, "
        f"epochs {args.n_epochs}, torch threads {args.threads}; median of {args.repeats}"
    )
    med = {s: {k: statistics.median(v) for k, v in results[s].items()} for s in setups}
    names = {"dummy": "DummyVecEnv of YutEnv", "yutenv": "YutSB3VecEnv", "yutenv-socket": "YutSB3VecEnv, transport=socket"}
    keys = ("train", "rollout", "env")
    table = [[names[s], *(f"{med[s][k]:.0f}" for k in keys)] for s in setups]
    if "dummy" in med and "yutenv" in med:
        a, b = med["dummy"], med["yutenv"]
        table.append(["YutSB3VecEnv / DummyVecEnv", *(f"{b[k] / a[k]:.2f}x" for k in keys)])
    if "yutenv-socket" in med and "yutenv" in med:
        a, b = med["yutenv-socket"], med["yutenv"]
        table.append(["shared memory / socket", *(f"{b[k] / a[k]:.2f}x" for k in keys)])
    print(tabulate(table, headers=["setup", "train steps/s", "rollout steps/s", "env steps/s"], disable_numparse=True,
                   colalign=("left", "right", "right", "right")))  # fmt: skip


if __name__ == "__main__":
    main()
