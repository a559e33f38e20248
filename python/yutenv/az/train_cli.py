"""The command line of ``python -m yutenv.az.train``: its parser, and the :class:`TrainConfig`
it reads from the arguments (:func:`config_from_args`); :func:`yutenv.az.train.main` runs it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

from .._progress import PROGRESS_MODES, add_progress_argument
from .._protocol import SHIPPED_NETS, TIER_SIZES
from .._specs import split_specs
from .config import LR_SCHEDULES, SELFPLAY_MODES, TrainConfig
from .schedule import Schedule, canonical_schedule

__all__ = ["config_from_args"]


def _parser() -> argparse.ArgumentParser:
    d = TrainConfig(out="")
    p = argparse.ArgumentParser(
        prog="python -m yutenv.az.train",
        description="AlphaZero-style training for yutenv: self-play with the current network, train it on the "
        "last generations' datasets, evaluate it against baseline agents, checkpoint, repeat. Rerun the same "
        "command to resume after an interruption.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--out", required=True, help="run directory (created; an existing run in it is resumed)")
    p.add_argument("--generations", type=int, default=d.generations, help="generations to reach (self-play + train + eval each)")
    p.add_argument(
        "--games",
        type=_schedule_arg,
        default=d.games,
        help="self-play games per generation: N, or a schedule N,N@GEN,... (300,600@21: 600 from generation 21 on)",
    )
    p.add_argument(
        "--sims",
        type=_schedule_arg,
        default=d.sims,
        help="MCTS simulations per self-play decision: N, or a schedule N,N@GEN,... as --games",
    )
    p.add_argument("--tier", default=d.tier, choices=sorted(TIER_SIZES), help="observation tier the network reads")
    p.add_argument("--rules", default=d.rules, help="rules (key=value pairs, docs/FORMATS.md)")
    p.add_argument(
        "--selfplay", default=d.selfplay, choices=SELFPLAY_MODES,
        help="net: network-guided MCTS (yutenv.az.SelfPlay), the network in torch; net-go: the same search with Gumbel root sampling and "
        "the network in Go (yutenv selfplay --agents net:PATH,sims=N,gumbel=1; no root noise or temperature; faster); "
        "mcts: the baseline mcts:SIMS agents (no network in self-play)",
    )  # fmt: skip
    p.add_argument("--hidden", default=",".join(map(str, d.hidden)), help="trunk widths, comma-separated")
    p.add_argument(
        "--init", default=d.init, metavar="PATH",
        help="generation 0 is this yutenv-net file's network (e.g. RUN/gen-G/net.ynet: go on from another run with other "
        "settings), or a shipped network's name (az, ...: yutenv net lists them) for that network in the binary; its tier, --hidden and --rules must be the run's. '': a fresh network",
    )  # fmt: skip
    p.add_argument("--lr", type=float, default=d.lr, help="AdamW learning rate")
    p.add_argument("--weight-decay", type=float, default=d.weight_decay, help="AdamW weight decay")
    p.add_argument("--batch", type=int, default=d.batch, help="minibatch size")
    p.add_argument(
        "--epochs", type=float, default=d.epochs, help="training samples per generation, in passes over the replay buffer"
    )
    p.add_argument("--steps", type=int, default=d.steps, help="training steps per generation (0: from --epochs)")
    p.add_argument("--window", type=int, default=d.window, help="replay buffer: the datasets of the last K generations")
    p.add_argument("--value-weight", type=float, default=d.value_weight, help="weight of the value MSE in the loss")
    p.add_argument("--value-mix", type=float, default=d.value_mix, help="value target: (1-m)*outcome + m*search value")
    p.add_argument(
        "--lr-schedule",
        default=d.lr_schedule,
        choices=LR_SCHEDULES,
        help="learning rate over the run: constant; cosine (down to lr/20); step (x0.3 at 1/2 and 3/4 of the generations)",
    )
    p.add_argument(
        "--lr-warmup",
        type=float,
        default=d.lr_warmup,
        help="linear learning-rate warm-up over the first N generations' training (0: none)",
    )
    p.add_argument(
        "--selfplay-opt", action="append", default=[], metavar="KEY=VALUE",
        help="one more parameter of the server's network self-play (selfplay_new, docs/PROTOCOL.md), passed as is; repeatable. "
        "VALUE is read as JSON if it parses (8, 0.5, true), else as a string",
    )  # fmt: skip
    p.add_argument(
        "--games-in-flight", type=int, default=d.games_in_flight, help="self-play games played at once (net self-play)"
    )
    p.add_argument("--c-puct", type=float, default=d.c_puct, help="PUCT exploration constant (net self-play)")
    p.add_argument("--dirichlet-alpha", type=float, default=d.dirichlet_alpha, help="root noise alpha (net self-play)")
    p.add_argument("--dirichlet-frac", type=float, default=d.dirichlet_frac, help="root noise fraction (net self-play)")
    p.add_argument(
        "--temperature-moves",
        type=int,
        default=d.temperature_moves,
        help="decisions per game sampled at temperature 1, then argmax (net self-play)",
    )
    p.add_argument(
        "--fast-sims", type=int, default=d.fast_sims,
        help="playout cap randomization (KataGo; net and net-go self-play): a decision not drawn as a full search runs N simulations without "
        "root noise or temperature and gives no policy target (its value target is kept); 0: off",
    )  # fmt: skip
    p.add_argument(
        "--full-prob",
        type=float,
        default=d.full_prob,
        help="with --fast-sims: the probability of a full search of --sims, whose row gives a policy target",
    )
    p.add_argument("--workers", type=int, default=d.workers, help="games at once for --selfplay mcts (0: all cores)")
    p.add_argument(
        "--eval",
        default=";".join(d.eval),
        help="opponents the network is evaluated against, ';'-separated agent specs ('' for none)",
    )
    p.add_argument("--eval-games", type=int, default=d.eval_games, help="evaluation games per opponent")
    p.add_argument("--eval-every", type=int, default=d.eval_every, help="evaluate every N generations (and the last)")
    p.add_argument("--eval-envs", type=int, default=d.eval_envs, help="evaluation games played at once per seat")
    p.add_argument(
        "--eval-sims",
        type=int,
        default=d.eval_sims,
        help="also evaluate the network with N simulations of MCTS (the Go agent net:PATH,sims=N); 0: only without search",
    )
    p.add_argument("--seed", type=int, default=d.seed, help="seed of the run (network init, self-play, sampling, evaluation)")
    p.add_argument("--threads", type=int, default=d.threads, help="torch CPU threads")
    p.add_argument("--quiet", action="store_true", help="no progress bars or status lines (--progress never)")
    add_progress_argument(p)
    p.add_argument(
        "--shard-games",
        type=int,
        default=d.shard_games,
        help="games per self-play dataset shard (with --ray: the games of one task)",
    )
    p.add_argument(
        "--ray", default=d.ray, metavar="ADDRESS",
        help="play each generation's self-play on this Ray cluster ('auto', 'HOST:PORT', 'ray://HOST:10001'; 'local': start one "
        "here with --ray-cpus CPUs), the same datasets as without it; training and evaluation stay here (docs/TRAINING.md); '': self-play here too",
    )  # fmt: skip
    p.add_argument("--ray-cpus", type=int, default=d.ray_cpus, help="CPUs of the Ray started by --ray local (0: all)")
    p.add_argument(
        "--ray-tasks", type=int, default=d.ray_tasks, help="self-play tasks in flight at most (0: as many as the cluster runs)"
    )
    p.add_argument(
        "--ray-storage",
        default=d.ray_storage,
        metavar="URL",
        help="folder or fsspec URI every Ray worker and this machine reach, for the parts of a generation's dataset ('': OUT/ray-selfplay)",
    )
    p.add_argument(
        "--redo-damaged", action="store_true",
        help="on resume, delete a damaged generation (checksum, generation or weights wrong) and every later one, and train them "
        "again from the last good one; without it a damaged generation stops the run with an error naming the file",
    )  # fmt: skip
    return p


def _schedule_arg(text: str) -> Schedule:
    try:
        return canonical_schedule(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _selfplay_opts(items: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` items as a map, each VALUE as JSON if it parses, else as a string."""
    out: dict[str, Any] = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise ValueError(f"--selfplay-opt {item!r}: want KEY=VALUE")
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


def config_from_args(argv: Sequence[str] | None = None) -> TrainConfig:
    """Parse command-line arguments into a :class:`TrainConfig`."""
    a = _parser().parse_args(argv)
    return TrainConfig(
        out=a.out, generations=a.generations, games=a.games, sims=a.sims, tier=a.tier, rules=a.rules,
        selfplay=a.selfplay, hidden=tuple(int(x) for x in a.hidden.split(",") if x.strip()), lr=a.lr,
        weight_decay=a.weight_decay, batch=a.batch, epochs=a.epochs, steps=a.steps, window=a.window,
        value_weight=a.value_weight, value_mix=a.value_mix, lr_schedule=a.lr_schedule, lr_warmup=a.lr_warmup,
        selfplay_opts=_selfplay_opts(a.selfplay_opt), games_in_flight=a.games_in_flight, c_puct=a.c_puct,
        dirichlet_alpha=a.dirichlet_alpha, dirichlet_frac=a.dirichlet_frac, temperature_moves=a.temperature_moves,
        fast_sims=a.fast_sims, full_prob=a.full_prob, workers=a.workers, eval=tuple(split_specs(a.eval)), eval_games=a.eval_games,
        eval_every=a.eval_every, eval_envs=a.eval_envs, eval_sims=a.eval_sims, seed=a.seed, threads=a.threads, progress=False if a.quiet else PROGRESS_MODES[a.progress], redo_damaged=a.redo_damaged,
        shard_games=a.shard_games, ray=a.ray, ray_cpus=a.ray_cpus, ray_tasks=a.ray_tasks, ray_storage=a.ray_storage,
        init=a.init if a.init in ("", *SHIPPED_NETS) else str(Path(a.init).resolve()),
    )  # fmt: skip
