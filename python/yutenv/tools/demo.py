"""``python -m yutenv.demo``: play real games through the package and print what happened.

It starts the bundled server itself (as every yutenv env does), then

1. plays games through :class:`yutenv.YutEnv` (one env, Gymnasium API) with a
   uniformly random legal policy in Python against each server-side opponent;
2. plays many more through :class:`yutenv.YutVectorEnv` (one batched env on the server);
3. plays one three-seat game through the PettingZoo AEC env;
4. evaluates a small hand-written policy (a linear score of the ``tactical`` tier's
   per-action features) against the server's baselines with :func:`yutenv.evaluate`,
   both seat orders;

and prints results tables: win rate with a 95% Wilson interval, decisions per game and
throughput. Everything shown is measured in this run.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from tabulate import tabulate

from ..connection.server import Server
from ..envs import pettingzoo as ypz
from ..envs.gym_env import YutEnv
from ..envs.vector import YutVectorEnv
from ..evaluation.evaluate import EvalResult, evaluate
from ..evaluation.stats import wilson

# A program: its one public name is its entry point.
__all__ = ["main"]

# Both tables: two name columns, then numbers.
_COLALIGN = ("left", "left", "right", "right", "right", "right", "right")


@dataclass
class Result:
    front_end: str
    opponent: str
    games: int
    wins: int
    decisions: int
    seconds: float


def play_single(server: Server, opponent: str, games: int, seed: int) -> Result:
    env = YutEnv(server=server, opponent=opponent)
    rng = np.random.default_rng(seed)
    wins = decisions = 0
    t = time.perf_counter()
    for g in range(games):
        _, info = env.reset(seed=seed + g)
        while True:
            legal = np.flatnonzero(info["action_mask"])
            _, reward, term, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
            decisions += 1
            if term or trunc:
                wins += reward > 0
                break
    dt = time.perf_counter() - t
    env.close()
    return Result("YutEnv", opponent, games, int(wins), decisions, dt)


def play_vector(server: Server, opponent: str, num_envs: int, games: int, seed: int) -> Result:
    v = YutVectorEnv(num_envs, server=server, opponent=opponent)
    rng = np.random.default_rng(seed)
    v.reset(seed=seed)
    wins = done = decisions = 0
    t = time.perf_counter()
    while done < games:
        masks = v.action_masks()
        noise = rng.random(masks.shape, dtype=np.float32)
        acts = np.argmax(np.where(masks, noise, -1.0), axis=1)  # random legal action per env
        _, rew, term, trunc, _ = v.step(acts)
        decisions += int(masks.any(axis=1).sum())
        ended = term | trunc
        done += int(ended.sum())
        wins += int((rew[ended] > 0).sum())
    dt = time.perf_counter() - t
    v.close()
    return Result(f"YutVectorEnv({num_envs})", opponent, done, wins, decisions, dt)


def play_aec(server: Server, seed: int) -> tuple[dict[str, float], int, int]:
    env = ypz.raw_env(server=server, rules="players=3,end=rank")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    final: dict[str, float] = {}
    decisions = repeats = 0
    last = None
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            final[agent] = reward
            env.step(None)
            continue
        repeats += agent == last
        last = agent
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
        decisions += 1
    env.close()
    return final, decisions, repeats


# Weights of the tactical tier's 10 per-action features (docs/OBSERVATIONS.md): legal, enter,
# moved, captures, finishes, places, joins, shortcut, distance, exposure.
FEATURE_WEIGHTS = np.array([0.0, 0.0, 0.0, 4.0, 3.0, 10.0, 0.5, 1.0, -0.5, -2.0], dtype=np.float32)


def feature_policy(probe: YutEnv) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A batched policy: the legal action with the best linear score of its features."""

    def policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        scores = probe.obs_part(obs, "actions") @ FEATURE_WEIGHTS  # [N, 180]
        best: np.ndarray = np.where(mask, scores, -np.inf).argmax(axis=1)
        return best

    policy.__name__ = "features"
    return policy


def evaluate_policy(server: Server, opponents: list[str], games: int, seed: int) -> list[EvalResult]:
    probe = YutEnv(server=server, tier="tactical")
    try:
        policy = feature_policy(probe)
        return [evaluate(policy, opp, games, tier="tactical", seed=seed, server=server, luck="off") for opp in opponents]
    finally:
        probe.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m yutenv.demo`` and ``yutenv-demo``: the demo from the command line; returns
    the exit status."""
    ap = argparse.ArgumentParser(prog="python -m yutenv.demo", description="Play Yut Nori through yutenv and print the results.")
    ap.add_argument("--games", type=int, default=100, help="games per opponent through YutEnv (default 100)")
    ap.add_argument("--vector-games", type=int, default=2000, help="games per opponent through YutVectorEnv (default 2000)")
    ap.add_argument("--num-envs", type=int, default=256, help="size of the vector env (default 256)")
    ap.add_argument("--opponents", default="random,greedy", help="server-side opponents (default random,greedy)")
    ap.add_argument("--eval-games", type=int, default=400, help="games per baseline in the evaluation (default 400)")
    ap.add_argument(
        "--baselines", default="random,greedy,mc:50", help="baselines to evaluate against (default random,greedy,mc:50)"
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of the games (default 0)")
    args = ap.parse_args(argv)
    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]

    t0 = time.perf_counter()
    with Server() as server:
        print(f"yutenv demo: server pid {server.pid} on {server.address} (started by the package)")
        print("policy: uniformly random legal action, chosen in Python from the action mask\n")
        results = []
        for opp in opponents:
            results.append(play_single(server, opp, args.games, args.seed))
        for opp in opponents:
            results.append(play_vector(server, opp, args.num_envs, args.vector_games, args.seed))
        final, decisions, repeats = play_aec(server, args.seed)
        baselines = [b.strip() for b in args.baselines.split(",") if b.strip()]
        evals = evaluate_policy(server, baselines, args.eval_games, args.seed)

    rows = []
    for r in results:
        lo, hi = wilson(r.wins, r.games)
        rows.append([r.front_end, r.opponent, r.games, f"{r.wins / max(r.games, 1):.3f}", f"[{lo:.3f}, {hi:.3f}]",
                     f"{r.decisions / max(r.games, 1):.1f}", f"{r.decisions / r.seconds:,.0f}"])  # fmt: skip
    print(tabulate(rows, headers=["front end", "opponent", "games", "win rate", "95% CI", "dec/game", "steps/s"],
                   disable_numparse=True, colalign=_COLALIGN))  # fmt: skip
    print(
        f"\nPettingZoo AEC, 3 seats, end=rank: {decisions} decisions, {repeats} repeated turns "
        f"(yut, mo, captures), rewards {', '.join(f'{a} {r:+.0f}' for a, r in sorted(final.items()))}"
    )
    print("\nyutenv.evaluate: a linear policy over the tactical tier's action features vs the baselines")
    rows = [
        [e.a, e.b, e.games, f"{e.win_rate_a:.3f}", f"[{e.win_rate_a_low:.3f}, {e.win_rate_a_high:.3f}]",
         f"{e.elo_diff:+.0f}" if e.elo_diff is not None else "-", f"{e.ms_per_decision_b:.3f}"]
        for e in evals
    ]  # fmt: skip
    print(tabulate(rows, headers=["policy", "baseline", "games", "win rate", "95% CI", "Elo diff", "ms/dec (baseline)"],
                   disable_numparse=True, colalign=_COLALIGN))  # fmt: skip
    print(f"\ntotal {time.perf_counter() - t0:.1f} s; the server was stopped on exit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
