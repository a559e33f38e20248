"""Training recipes with a time budget, rated on the published scale: one command each.

    python -m yutenv.recipes fixed  --minutes 30 --out runs/fixed            # PPO against random
    python -m yutenv.recipes league --minutes 30 --out runs/league           # PPO in a league
    yutenv selfplay --agents az --games 10000 --tier compact --out az-data/  # az's own games
    python -m yutenv.recipes league --clone az-data/ --minutes 30 --out runs/bc-league

Each trains sb3-contrib's ``MaskablePPO`` (an ``MlpPolicy``, compact tier, the learner in a random
seat) for ``--minutes`` of wall time in all (cloning included), then rates the final policy
alone, no search, with :func:`yutenv.evaluate` (``rating=True``: games against the ladder's
anchors, the rating on the scale where ``random`` is 0). ``league`` trains in a
:class:`~yutenv.league.League` (``--fixed`` specs, past selves by PFSP, the latest self);
``--clone DIR`` first clones a ``yutenv selfplay`` dataset (:func:`yutenv.imitation.clone`,
streamed from disk). ``RUN/result.json`` holds the settings, the training's figures and the
rating; the league folder is ``RUN/league``. Needs the ``sb3`` extra. The measured results are
in docs/TRAINING.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any, Sequence

from ._progress import PROGRESS_MODES, add_progress_argument, progress_bar
from ._specs import split_specs

__all__ = ["main", "run"]


def run(
    kind: str,
    out: str | os.PathLike[str],
    *,
    minutes: float = 30.0,
    clone: str | None = None,
    clone_epochs: int = 2,
    opponent: str = "random",
    fixed: Sequence[str] = ("greedy", "mc:100"),
    num_envs: int = 512,
    n_steps: int = 32,
    snapshot_every: int = 100_000,
    net_arch: Sequence[int] = (256, 256),
    seed: int = 0,
    rate_games: int = 1000,
    threads: int | None = None,
    lr: float = 3e-4,
    ent_coef: float = 0.01,
    target_kl: float | None = None,
    reward: str = "win",
    progress: bool | None = None,
    snapshot_rate_games: int = 0,
) -> dict[str, Any]:
    """Train and rate one recipe (see the module's doc); returns what ``result.json`` holds.

    ``progress`` draws the training's progress on stderr (the steps, steps a second, the time
    left of the budget, the latest league snapshot and its rating), the cloning's and the
    rating's: None on a terminal only, True always, False never. ``snapshot_rate_games`` rates
    each league snapshot in that many games against each anchor (0: unrated; the games come out
    of the budget).
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList

    from . import imitation
    from .evaluation.evaluate import evaluate
    from .integrations.sb3 import LeagueCallback, vec_env
    from .league import League

    if kind not in ("fixed", "league"):
        raise ValueError(f"kind must be 'fixed' or 'league', got {kind!r}")
    threads = threads or os.cpu_count() or 1
    torch.set_num_threads(threads)
    run_dir = Path(out)
    run_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    deadline = start + 60 * minutes
    opp: Any = opponent if kind == "fixed" else list(fixed)
    venv = vec_env(num_envs, seed=seed, opponent=opp, tier="compact", seat="random", reward=reward)
    result: dict[str, Any] = {
        "kind": kind,
        "minutes": minutes,
        "clone": clone,
        "opponent": opponent if kind == "fixed" else list(fixed),
        "num_envs": num_envs,
        "n_steps": n_steps,
        "threads": threads,
        "net_arch": list(net_arch),
        "seed": seed,
        "lr": lr,
        "ent_coef": ent_coef,
        "target_kl": target_kl,
        "reward": reward,
        "snapshot_rate_games": snapshot_rate_games,
    }
    league: League | None = None
    try:
        model = MaskablePPO(
            "MlpPolicy",
            venv,
            seed=seed,
            n_steps=n_steps,
            batch_size=2048,
            n_epochs=4,
            learning_rate=lr,
            ent_coef=ent_coef,
            target_kl=target_kl,
            gamma=0.995,
            policy_kwargs={"net_arch": list(net_arch)},
            verbose=0,
        )
        if clone:
            t0 = time.monotonic()
            result["clone_stats"] = imitation.clone(
                model, clone, epochs=clone_epochs, batch_size=1024, lr=1e-3, seed=seed, progress=progress
            )
            result["clone_seconds"] = time.monotonic() - t0

        if kind == "league":
            league = League(run_dir / "league", fixed=tuple(fixed), tier="compact", rate_games=snapshot_rate_games)

        class Budget(BaseCallback):  # type: ignore[misc]
            """Stops training at the deadline, and draws the progress: the steps, their rate, the
            time left of the budget and the latest snapshot's rating."""

            def _on_training_start(self) -> None:
                self.bar = progress_bar(None, f"{kind} PPO", unit="step", show=progress)
                self.shown = 0.0

            def _on_step(self) -> bool:
                now = time.monotonic()
                if self.bar is not None:
                    self.bar.update(self.num_timesteps - self.bar.n)
                    if now - self.shown >= 1.0:
                        self.shown = now
                        self.bar.set_postfix_str(_status(deadline - now, league), refresh=False)
                return now < deadline

            def _on_training_end(self) -> None:
                if self.bar is not None:
                    self.bar.set_postfix_str(_status(deadline - time.monotonic(), league), refresh=False)
                    self.bar.close()

        callbacks: list[Any] = [Budget()]
        if league is not None:
            callbacks.append(LeagueCallback(league, snapshot_every=snapshot_every))
        t0 = time.monotonic()
        model.learn(total_timesteps=10**12, callback=CallbackList(callbacks))
        result["ppo_seconds"] = time.monotonic() - t0
        result["timesteps"] = int(model.num_timesteps)
        model.save(run_dir / "model.zip")
        if league is not None:
            result["league_members"] = len(league.members)
    finally:
        venv.close()
        if league is not None:
            league.close()
    result["train_seconds"] = time.monotonic() - start
    r = evaluate(model, opponent="greedy", games=rate_games, tier="compact", rating=True, progress=progress)
    result["rating"] = {"elo": r.rating, "low": r.rating_low, "high": r.rating_high, "games": r.rating_games}
    result["against_greedy"] = {k: v for k, v in r.as_dict().items() if k.startswith(("win_rate", "luck", "mean_luck", "games"))}
    (run_dir / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def _status(left: float, league: Any) -> str:
    """The bar's fields after the count and rate: the time left of the budget, and in a league
    the latest snapshot with its rating."""
    m, sec = divmod(max(int(left), 0), 60)
    text = f"{m}:{sec:02d} left"
    latest = league.latest if league is not None else None
    if latest is not None:
        rating = (
            "unrated" if latest.rating is None else f"{latest.rating:+.0f} [{latest.rating_low:+.0f}, {latest.rating_high:+.0f}]"
        )
        text += f", snapshot {latest.name} {rating}"
    return text


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m yutenv.recipes fixed|league --out DIR ...``: :func:`run` from the command line
    (``--help`` lists the options)."""
    ap = argparse.ArgumentParser(prog="python -m yutenv.recipes", description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=("fixed", "league"), help="PPO against one opponent, or in a league")
    ap.add_argument("--out", required=True, help="the run's folder")
    ap.add_argument("--minutes", type=float, default=30.0, help="wall-time budget of the training, cloning included")
    ap.add_argument("--clone", default=None, help="first clone this yutenv selfplay dataset (compact tier)")
    ap.add_argument("--clone-epochs", type=int, default=2, help="epochs of behaviour cloning over the dataset")
    ap.add_argument("--opponent", default="random", help="fixed: the opponent")
    ap.add_argument("--fixed", default="greedy,mc:100", help="league: its fixed members, agent specs separated by ';' or ','")
    ap.add_argument("--num-envs", type=int, default=512, help="training envs, stepped as one batch on the server")
    ap.add_argument("--n-steps", type=int, default=32, help="PPO's steps per env per rollout (num_envs x n_steps a rollout)")
    ap.add_argument("--snapshot-every", type=int, default=100_000, help="league: learner steps between snapshots")
    ap.add_argument("--net-arch", default="256,256", help="hidden layer sizes")
    ap.add_argument("--seed", type=int, default=0, help="seeds PPO, the envs, the league and the cloning order")
    ap.add_argument("--rate-games", type=int, default=1000, help="games against each rating anchor")
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads (default: every core; PPO's updates and the server's steps take turns)",
    )
    ap.add_argument("--lr", type=float, default=3e-4, help="PPO's learning rate")
    ap.add_argument("--ent-coef", type=float, default=0.01, help="PPO's entropy bonus")
    ap.add_argument("--target-kl", type=float, default=None, help="stop an update's epochs past this KL (PPO's target_kl)")
    ap.add_argument(
        "--reward",
        default="win",
        choices=("win", "progress"),
        help="the training env's reward: the outcome alone, or with potential-based shaping by race progress",
    )
    ap.add_argument(
        "--snapshot-rate-games",
        type=int,
        default=0,
        help="league: rate each snapshot in this many games against each anchor, shown in the progress (0: unrated)",
    )
    add_progress_argument(ap)
    a = ap.parse_args(argv)
    res = run(
        a.kind,
        a.out,
        minutes=a.minutes,
        clone=a.clone,
        clone_epochs=a.clone_epochs,
        opponent=a.opponent,
        fixed=split_specs(a.fixed),
        num_envs=a.num_envs,
        n_steps=a.n_steps,
        snapshot_every=a.snapshot_every,
        net_arch=[int(x) for x in a.net_arch.split(",")],
        seed=a.seed,
        rate_games=a.rate_games,
        threads=a.threads,
        lr=a.lr,
        ent_coef=a.ent_coef,
        target_kl=a.target_kl,
        reward=a.reward,
        progress=PROGRESS_MODES[a.progress],
        snapshot_rate_games=a.snapshot_rate_games,
    )
    rt = res["rating"]
    print(
        f"{a.kind}{' after cloning' if a.clone else ''}: {res['timesteps']} steps in {res['train_seconds'] / 60:.1f} min; "
        f"rating {rt['elo']:+.0f} [{rt['low']:+.0f}, {rt['high']:+.0f}] on the published scale"
    )


if __name__ == "__main__":
    main()
