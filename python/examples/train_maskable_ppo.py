"""Train sb3-contrib's MaskablePPO on Yut Nori against the server's ``random`` opponent.

    pip install 'yutenv[sb3]'            # sb3-contrib (and torch); CPU is enough
    python python/examples/train_maskable_ppo.py --minutes 8

The training envs are one :class:`yutenv.integrations.sb3.YutSB3VecEnv`: all ``--n-envs`` games in one
server-side batch, one round trip per step, with ``action_masks()`` for MaskablePPO
(``--vec dummy`` uses plain :class:`yutenv.YutEnv` instances in SB3's ``DummyVecEnv``
instead, one round trip per env per step, as docs/BASELINES.md's run did). Every ``--eval-every`` timesteps (and at the end) the current
policy plays ``--eval-games`` games (deterministic, masked, both seat orders) against
``random`` and ``greedy`` through :func:`yutenv.evaluate`, and the win rates with 95% Wilson
intervals are printed with the elapsed wall time. The last line is a summary.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import yutenv

try:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecMonitor

    import yutenv.integrations.sb3
except ImportError as e:  # pragma: no cover - an optional extra
    raise SystemExit(f"this example needs the sb3 extra: pip install 'yutenv[sb3]' ({e})") from None


class EvalCallback(BaseCallback):
    def __init__(self, every: int, games: int, server: yutenv.Server, t0: float, log: list[dict[str, Any]]) -> None:
        super().__init__()
        self.every, self.games, self.server, self.t0, self.log = every, games, server, t0, log
        self.next = every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            self.next += self.every
            report(self.model, self.games, self.server, self.t0, self.num_timesteps, self.log)
        return True


_eval_spent = [0.0]  # seconds spent evaluating, subtracted from the training time


def report(model: Any, games: int, server: yutenv.Server, t0: float, steps: int, log: list[dict[str, Any]]) -> None:
    start = time.perf_counter()
    train_time = start - t0 - _eval_spent[0]
    row: dict[str, Any] = {"timesteps": steps, "train_s": train_time}
    parts = []
    for opp in ("random", "greedy"):
        # Deterministic masked play, both seat orders, through one vector env on the server.
        res = yutenv.evaluate(model, opp, games, seed=10_000 + steps, server=server, num_envs=100, progress=False)
        w, n, lo, hi = res.wins_a, res.games, res.win_rate_a_low, res.win_rate_a_high
        row[opp] = (w, n, lo, hi)
        parts.append(f"vs {opp}: {w / n:.3f} [{lo:.3f}, {hi:.3f}]")
    log.append(row)
    _eval_spent[0] += time.perf_counter() - start
    print(f"[{train_time:7.1f} s] {steps:>8} timesteps  " + "  ".join(parts), flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=8.0, help="wall-clock training budget (default 8)")
    ap.add_argument("--timesteps", type=int, default=2_000_000, help="upper bound on training timesteps")
    ap.add_argument("--n-envs", type=int, default=8, help="envs stepped together (default 8)")
    ap.add_argument(
        "--vec",
        choices=("yutenv", "dummy"),
        default="yutenv",
        help="yutenv: one YutSB3VecEnv (one round trip per step); dummy: DummyVecEnv of YutEnvs",
    )
    ap.add_argument("--opponent", default="random", help="training opponent (default random)")
    ap.add_argument("--tier", default=None, help="observation tier (default: the server's)")
    ap.add_argument("--eval-every", type=int, default=50_000, help="timesteps between evaluations (default 50000)")
    ap.add_argument("--eval-games", type=int, default=1000, help="games of each evaluation, per opponent (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the envs and the model (default 0)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (leave a core to the server)")
    ap.add_argument("--save", default=None, help="save the trained model here")
    args = ap.parse_args(argv)
    for flag in ("timesteps", "n_envs", "eval_every", "eval_games", "threads"):
        if getattr(args, flag) < 1:
            ap.error(f"--{flag.replace('_', '-')} must be at least 1, got {getattr(args, flag)}")
    if args.minutes <= 0:
        ap.error(f"--minutes must be positive, got {args.minutes}")

    torch.set_num_threads(args.threads)
    server = yutenv.Server()  # one server for training and evaluation envs
    env_kwargs = {"server": server, "opponent": args.opponent, "tier": args.tier, "seat": "random"}
    if args.vec == "dummy":
        venv = make_vec_env(yutenv.YutEnv, n_envs=args.n_envs, seed=args.seed, env_kwargs=env_kwargs)
    else:
        venv = VecMonitor(yutenv.integrations.sb3.vec_env(args.n_envs, seed=args.seed, **env_kwargs))
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=256,
        batch_size=512,
        n_epochs=4,
        learning_rate=3e-4,
        gamma=0.995,
        gae_lambda=0.95,
        ent_coef=0.01,
        policy_kwargs={"net_arch": [256, 256]},
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    log: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    report(model, args.eval_games, server, t0, 0, log)  # the untrained policy
    budget = args.minutes * 60

    class Budget(BaseCallback):
        def _on_step(self) -> bool:
            return bool(time.perf_counter() - t0 - _eval_spent[0] < budget)

    model.learn(
        total_timesteps=args.timesteps,
        callback=[EvalCallback(args.eval_every, args.eval_games, server, t0, log), Budget()],
    )
    steps = model.num_timesteps
    if not log or log[-1]["timesteps"] != steps:
        report(model, args.eval_games, server, t0, steps, log)
    if args.save:
        model.save(args.save)
    best = max(log, key=lambda r: r["random"][0] / r["random"][1])
    w, n, lo, hi = log[-1]["random"]
    print(
        f"summary: {steps} timesteps in {log[-1]['train_s']:.0f} s of training (evaluation time excluded); "
        f"final win rate vs random {w / n:.3f} [{lo:.3f}, {hi:.3f}] over {n} games; "
        f"best {best['random'][0] / best['random'][1]:.3f} at {best['timesteps']} timesteps ({best['train_s']:.0f} s)"
    )
    venv.close()
    server.close()


if __name__ == "__main__":
    main()
