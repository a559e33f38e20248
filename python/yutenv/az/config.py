"""The settings of a training run: :class:`TrainConfig` (saved as ``OUT/config.json``), the
self-play modes and learning-rate schedules it names, and the learning rate it gives each
generation. Imports no torch: :mod:`.cluster` and :mod:`.train_cli` read it without the loop.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .._protocol import NUM_ACTIONS, SELFPLAY_DEFAULTS, TIER_SIZES
from .._specs import net_spec, split_specs
from .schedule import Schedule, canonical_schedule, parse_schedule, schedule_at, schedule_values

__all__ = ["LR_SCHEDULES", "SELFPLAY_MODES", "TrainConfig", "cosine_lr", "learning_rate"]


@dataclass
class TrainConfig:
    """Everything that defines a run (saved as ``OUT/config.json``)."""

    out: str
    generations: int = 10
    #: self-play games a generation: a whole number, or a schedule such as ``"300,600@21"``
    #: (:mod:`yutenv.az.schedule`; :meth:`at` gives one generation's settings)
    games: Schedule = 100
    #: simulations a self-play decision: a whole number or a schedule, as ``games``
    sims: Schedule = 64
    tier: str = "compact"
    rules: str = "standard"
    selfplay: str = "net"
    hidden: Sequence[int] = (256, 256)
    lr: float = 1e-3
    weight_decay: float = 1e-4
    batch: int = 256
    epochs: float = 2.0
    steps: int = 0
    window: int = 4
    value_weight: float = 1.0
    value_mix: float = 0.0
    lr_schedule: str = "constant"
    lr_warmup: float = 0.0
    selfplay_opts: dict[str, Any] = field(default_factory=dict)
    # the self-play settings' defaults are the server's (az.Settings, generated into _protocol)
    games_in_flight: int = SELFPLAY_DEFAULTS.games_in_flight
    c_puct: float = SELFPLAY_DEFAULTS.c
    dirichlet_alpha: float = SELFPLAY_DEFAULTS.dirichlet_alpha
    dirichlet_frac: float = SELFPLAY_DEFAULTS.dirichlet_frac
    temperature_moves: int = SELFPLAY_DEFAULTS.temperature_moves
    fast_sims: int = SELFPLAY_DEFAULTS.fast_sims
    full_prob: float = SELFPLAY_DEFAULTS.full_prob
    workers: int = 0
    eval: Sequence[str] = ("greedy", "mc:100", "mcts:400")
    eval_games: int = 100
    eval_every: int = 1
    eval_envs: int = 32
    eval_sims: int = 0
    seed: int = 0
    threads: int = 1
    #: progress bars (generations, each one's self-play games and training steps) on stderr:
    #: None on a terminal only, True always (into a pipe or a log too), False never and no
    #: status lines either
    progress: bool | None = None
    redo_damaged: bool = False
    shard_games: int = 100
    ray: str = ""
    ray_cpus: int = 0
    ray_tasks: int = 0
    ray_storage: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    init: str = ""

    def __post_init__(self) -> None:
        # One opponent as a string ("random"), or several as on the command line
        # ("greedy;mc:100"), means what it says: a bare string is not a sequence of one-letter specs.
        if isinstance(self.eval, str):
            self.eval = tuple(split_specs(self.eval))
        for name in ("games", "sims"):  # one spelling of a schedule, so a resume compares like with like
            try:
                setattr(self, name, canonical_schedule(getattr(self, name)))
            except ValueError:
                pass  # check() says what is wrong

    def at(self, generation: int) -> TrainConfig:
        """The settings of one generation: ``games`` and ``sims`` as that generation's numbers."""
        return dataclasses.replace(self, games=schedule_at(self.games, generation), sims=schedule_at(self.sims, generation))

    def check(self) -> None:
        """Raise ValueError on an impossible setting."""
        for spec in self.eval:
            if not isinstance(spec, str) or not spec.strip() or ";" in spec:
                raise ValueError(f"eval: want agent specs such as 'greedy' or 'mcts:400', got {spec!r}")
        if self.tier not in TIER_SIZES:
            raise ValueError(f"tier {self.tier!r}: want one of {sorted(TIER_SIZES)}")
        if self.selfplay not in SELFPLAY_MODES:
            raise ValueError(f"selfplay {self.selfplay!r}: want one of {', '.join(map(repr, SELFPLAY_MODES))}")
        if self.selfplay == "net-go":
            self._check_net_go()
        for name in ("games", "sims"):
            try:
                parse_schedule(getattr(self, name))
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
        for name in (
            "generations",
            "batch",
            "window",
            "eval_games",
            "eval_every",
            "eval_envs",
            "threads",
            "games_in_flight",
            "shard_games",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.ray_cpus < 0 or self.ray_tasks < 0:
            raise ValueError(f"ray_cpus and ray_tasks must be >= 0 (0: all), got {self.ray_cpus} and {self.ray_tasks}")
        if self.eval_sims < 0:
            raise ValueError(f"eval_sims must be >= 0, got {self.eval_sims}")
        if self.steps < 0 or self.epochs <= 0 or self.lr <= 0:
            raise ValueError("steps must be >= 0, epochs and lr > 0")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule {self.lr_schedule!r}: want one of {', '.join(LR_SCHEDULES)}")
        if not 0 <= self.lr_warmup <= self.generations:
            raise ValueError(f"lr_warmup must be 0..generations ({self.generations}), got {self.lr_warmup}")
        if self.fast_sims < 0 or self.fast_sims > min(schedule_values(self.sims)):
            raise ValueError(f"fast_sims must be 0..sims ({min(schedule_values(self.sims))}), got {self.fast_sims}")
        if not 0.0 <= self.full_prob <= 1.0:
            raise ValueError(f"full_prob must be in [0, 1], got {self.full_prob}")
        if self.fast_sims and self.selfplay == "mcts":
            raise ValueError(
                "fast_sims (playout cap randomization) is a setting of network self-play: use --selfplay net or net-go"
            )
        if self.selfplay_opts and self.selfplay == "mcts":
            raise ValueError("selfplay options (--selfplay-opt) are parameters of network self-play: use --selfplay net")
        for k in self.selfplay_opts:
            if k in _SELFPLAY_OWN:
                raise ValueError(
                    f"selfplay option {k!r} has its own setting (--{k.replace('_', '-')} or the run's): pass it there"
                )

    def _check_net_go(self) -> None:
        """Refuse what ``--selfplay net-go`` (the Go agent ``net:PATH,sims=N,gumbel=1``) cannot play."""
        why = "--selfplay net-go plays the Go agent net:PATH,sims=N,gumbel=1, which explores by its Gumbel numbers"
        if self.dirichlet_alpha > 0 and self.dirichlet_frac > 0:
            raise ValueError(f"{why}: pass --dirichlet-alpha 0 (root noise is a setting of --selfplay net)")
        if self.temperature_moves:
            raise ValueError(f"{why}: pass --temperature-moves 0 (sampled opening moves are a setting of --selfplay net)")
        extra = set(self.selfplay_opts) - {"gumbel", "gumbel_m"}
        if extra or self.selfplay_opts.get("gumbel", True) is not True:
            raise ValueError(
                f"{why}: its only --selfplay-opt is gumbel_m=M (the root actions it starts from), got {self.selfplay_opts}"
            )
        m = self.selfplay_opts.get("gumbel_m", 0)
        if not isinstance(m, int) or isinstance(m, bool) or not 0 <= m <= NUM_ACTIONS:
            raise ValueError(f"{why}: gumbel_m must be an integer 0..{NUM_ACTIONS} (0: the agent's default), got {m!r}")
        if self.ray and self.ray_storage:
            raise ValueError(
                f"{why}, reading the network from the run folder: with --ray-storage the workers may not see it; use --selfplay net"
            )

    def net_go_agent(self, path: Path) -> str:
        """The agent spec ``--selfplay net-go`` plays, on both seats, with the network file at ``path``."""
        spec = net_spec(path, sims=self.sims, gumbel=1)
        if self.selfplay_opts.get("gumbel_m"):
            spec += f",m={self.selfplay_opts['gumbel_m']}"
        if self.fast_sims:  # playout cap randomization: the agent's fast=N, full_prob=P
            spec += f",fast={self.fast_sims},full_prob={self.full_prob:g}"
        return spec

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["hidden"] = list(self.hidden)
        d["eval"] = list(self.eval)
        return d


#: The self-play modes of ``--selfplay``: the network's search with the network evaluated here in
#: torch (``net``) or in the Go binary (``net-go``), or the baseline ``mcts:SIMS`` (``mcts``).
SELFPLAY_MODES = ("net", "net-go", "mcts")

#: The learning-rate schedules of ``--lr-schedule`` (see :func:`learning_rate`).
LR_SCHEDULES = ("constant", "cosine", "step")

#: The ``selfplay_new`` parameters the loop sets itself; ``--selfplay-opt`` may not override them.
_SELFPLAY_OWN = {
    "rules",
    "tier",
    "sims",
    "c",
    "dirichlet_alpha",
    "dirichlet_frac",
    "temperature_moves",
    "seed",
    "games",
    "games_in_flight",
    "out",
    "first_game",
    "fast_sims",
    "full_prob",
}


def cosine_lr(lr: float, t: float) -> float:
    """The cosine schedule at ``t`` in [0, 1] of the way: from ``lr`` down to ``lr/20``."""
    lo = lr / 20
    return lo + (lr - lo) * 0.5 * (1 + math.cos(math.pi * t))


def learning_rate(cfg: TrainConfig, progress: float) -> float:
    """The learning rate at ``progress`` generations of training (0 at the start of
    generation 1's training, ``cfg.generations`` at the end of the last one's):

    * ``constant``: ``lr``;
    * ``cosine``: from ``lr`` down to ``lr/20`` along half a cosine over the run;
    * ``step``: ``lr``, times 0.3 after half the run and again after three quarters;

    times a linear warm-up from 0 over the first ``lr_warmup`` generations. The schedule is a
    function of ``cfg.generations``: extending a finished run stretches the schedule of the
    generations still to come.
    """
    t = min(max(progress / cfg.generations, 0.0), 1.0)
    if cfg.lr_schedule == "cosine":
        lr = cosine_lr(cfg.lr, t)
    elif cfg.lr_schedule == "step":
        lr = cfg.lr * 0.3 ** ((t >= 0.5) + (t >= 0.75))
    else:
        lr = cfg.lr
    if cfg.lr_warmup > 0 and progress < cfg.lr_warmup:
        lr *= max(progress, 1e-3 * cfg.lr_warmup) / cfg.lr_warmup
    return lr
