"""A self-play league: snapshots of a learner that play in Go, opponents sampled from them,
ratings on the published scale, and a folder that survives a kill.

A :class:`League` lives in one folder. Every ``snapshot_every`` steps a trainer hands it the
learner (:meth:`League.snapshot`): the policy is exported as a network file
(:func:`yutenv.nets.export`), so past selves play inside the server as ``net:PATH`` agents,
at the speed of any built-in agent. Between snapshots the learner plays the mixture that
:meth:`League.mixture` draws (``env.set_opponents(league.mixture())``):

* the latest snapshot, with probability ``p_latest`` (self-play);
* the league's other members (older snapshots and the ``fixed`` agent specs), the rest of the
  time, either uniformly or by prioritized fictitious self-play (``sampling="pfsp"``, the
  default): a member is drawn in proportion to ``(1 - p)^2`` (``pfsp="hard"``) or
  ``p (1 - p)`` (``pfsp="variance"``), ``p`` being the learner's win rate against it so far
  (:meth:`League.record` adds the results a vector env counted: ``env.opponent_stats(reset=True)``).

Each snapshot is rated when it joins (``rate_games`` games against each of ``anchors``, played in
Go), on the scale of ``yutenv ladder`` (``random`` = 0; :func:`yutenv.evaluate`'s ``rating``).

The state is ``league.json`` (written atomically, with a SHA-256 of its content) and the snapshot
files it names (each written before the state that names it, with its own SHA-256), so a trainer
killed at any moment resumes from the folder: ``League(folder)`` reads it back, and refuses a
damaged or foreign file with one line naming it (:class:`LeagueError`).

Drivers: :class:`yutenv.integrations.sb3.LeagueCallback` (Stable-Baselines3), and
``python/examples/cleanrl_league.py`` (a CleanRL-style PPO loop).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

import numpy as np

from ._files import FileRefused, atomic_write, read_regular, sha256_bytes, sha256_file
from ._protocol import MAX_OPPONENTS
from .errors import YutEnvError

__all__ = ["League", "LeagueConfig", "LeagueError", "Member"]

FORMAT = "yutenv-league"
VERSION = 1
STATE = "league.json"
SNAPSHOTS = "snapshots"
MAX_STATE_BYTES = 16 << 20
"""A league's state file holds a line per member: 16 MiB is far above any real league."""
MAX_MIXTURE = MAX_OPPONENTS
"""The most entries a mixture may have (the server's limit)."""


class LeagueError(YutEnvError, ValueError):
    """A league folder that cannot be used: a damaged or foreign ``league.json``, a missing or
    altered snapshot, or settings that differ from the folder's. The message is one line
    naming the file."""


@dataclass(frozen=True)
class LeagueConfig:
    """How a league samples and rates (stored in ``league.json``; a resumed league must match).

    Attributes:
        fixed: agent specs that are members from the start (``"greedy"``, ``"mc:100"``, ...).
        sampling: ``"pfsp"`` (prioritized fictitious self-play) or ``"uniform"`` over the
            members other than the latest snapshot.
        pfsp: the weighting of ``"pfsp"``: ``"hard"`` ``(1-p)^2`` or ``"variance"`` ``p(1-p)``.
        p_latest: the share of episodes against the latest snapshot (0: none).
        max_members: the most past snapshots a mixture samples from (the newest), besides the
            fixed specs and the latest snapshot.
        tier, rules: the observation tier and rules the learner plays (what exports record).
        rate_games: games against each anchor to rate a new snapshot (0: no rating).
        anchors: the ladder agents those games are against.
    """

    fixed: tuple[str, ...] = ("greedy",)
    sampling: Literal["pfsp", "uniform"] = "pfsp"
    pfsp: Literal["hard", "variance"] = "hard"
    p_latest: float = 0.5
    max_members: int = 32
    tier: str = "compact"
    rules: str = "standard"
    rate_games: int = 200
    anchors: tuple[str, ...] = ("random", "greedy", "mc:100", "mcts:400")

    def __post_init__(self) -> None:
        object.__setattr__(self, "fixed", tuple(self.fixed))
        object.__setattr__(self, "anchors", tuple(self.anchors))
        if self.sampling not in ("pfsp", "uniform"):
            raise ValueError(f"sampling must be 'pfsp' or 'uniform', got {self.sampling!r}")
        if self.pfsp not in ("hard", "variance"):
            raise ValueError(f"pfsp must be 'hard' or 'variance', got {self.pfsp!r}")
        if not (isinstance(self.p_latest, (int, float)) and 0 <= self.p_latest <= 1):
            raise ValueError(f"p_latest must be in [0, 1], got {self.p_latest!r}")
        room = MAX_MIXTURE - 1 - len(self.fixed)
        if not (isinstance(self.max_members, int) and 0 <= self.max_members <= room):
            raise ValueError(
                f"max_members must be 0..{room} (a mixture holds {MAX_MIXTURE} entries: the fixed specs, "
                f"the past snapshots and the latest), got {self.max_members!r}"
            )
        if not (isinstance(self.rate_games, int) and self.rate_games >= 0):
            raise ValueError(f"rate_games must be an integer >= 0, got {self.rate_games!r}")


@dataclass
class Member:
    """One member of a league: a fixed agent spec, or a snapshot of the learner.

    Attributes:
        name: ``"greedy"`` for a fixed spec, ``"snap-000003"`` for a snapshot.
        spec: the agent spec the server plays (``net:PATH`` for a snapshot).
        step: the learner's step count when the snapshot was taken (-1: fixed).
        file: the snapshot's file, relative to the league folder ("" for a fixed spec).
        sha256: the snapshot file's SHA-256.
        games, wins: the learner's games against this member and its wins (:meth:`League.record`).
        rating, rating_low, rating_high: the snapshot's rating on the published scale (None: not rated).
    """

    name: str
    spec: str
    step: int = -1
    file: str = ""
    sha256: str = ""
    games: int = 0
    wins: int = 0
    rating: float | None = None
    rating_low: float | None = None
    rating_high: float | None = None
    added: float = field(default_factory=time.time)

    @property
    def win_rate(self) -> float:
        """The learner's win rate against this member, with one virtual draw (0.5 before any game)."""
        return (self.wins + 0.5) / (self.games + 1)


class League:
    """A league kept in ``folder`` (created if new, resumed if it holds a league).

    Args:
        folder: the league's folder.
        config: a :class:`LeagueConfig` (default: its defaults); keyword arguments replace its
            fields. A resumed league must be given the same settings (or none: the folder's).
    """

    config: LeagueConfig
    members: list[Member]
    step: int

    def __init__(self, folder: str | os.PathLike[str], config: LeagueConfig | None = None, **options: Any) -> None:
        self.folder = Path(folder)
        state = self.folder / STATE
        if state.exists():
            self._load(state)
            if config is not None or options:
                want = LeagueConfig(**{**asdict(config or self.config), **options})
                if want != self.config:
                    raise LeagueError(f"{state}: this league was made with {self.config}; resuming it with {want} is refused")
            return
        self.config = LeagueConfig(**{**asdict(config or LeagueConfig()), **options})
        self.members = [Member(name=s, spec=s) for s in self.config.fixed]
        self.step = 0
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / SNAPSHOTS).mkdir(exist_ok=True)
        self._save()

    @classmethod
    def open(cls, folder: str | os.PathLike[str]) -> League:
        """The league in ``folder``, which must hold one (:class:`LeagueError` otherwise):
        for readers, which must not create a league where a trainer is about to."""
        state = Path(folder) / STATE
        if not state.exists():
            raise LeagueError(f"{state}: no league here")
        return cls(folder)

    # ---- members ------------------------------------------------------------------------

    @property
    def snapshots(self) -> list[Member]:
        """The snapshots, oldest first."""
        return [m for m in self.members if m.file]

    @property
    def latest(self) -> Member | None:
        """The newest snapshot (None before the first)."""
        s = self.snapshots
        return s[-1] if s else None

    def member(self, name: str) -> Member:
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(f"no member {name!r} in the league ({', '.join(m.name for m in self.members)})")

    def snapshot(self, policy: Any, step: int, *, rate: bool = True) -> Member:
        """Add ``policy`` (an SB3 model, its policy, or a torch module :func:`yutenv.nets.export`
        takes) as a new snapshot taken at learner step ``step``; rate it unless ``rate`` is False
        or ``rate_games`` is 0. The file is written before the state that names it."""
        from .nets import export

        n = len(self.snapshots) + 1
        name = f"snap-{n:06d}"
        rel = f"{SNAPSHOTS}/{name}.ynet"
        path = self.folder / rel
        export(policy, path, tier=self.config.tier, rules=self.config.rules)
        digest, _ = sha256_file(path)
        m = Member(name=name, spec=f"net:{path.resolve()}", step=int(step), file=rel, sha256=digest)
        self.members.append(m)
        self.step = max(self.step, int(step))
        self._save()
        if rate and self.config.rate_games > 0:
            self.rate(m)
        return m

    def record(self, stats: Mapping[str, Mapping[str, Any]], step: int | None = None) -> None:
        """Add the learner's results by opponent name (``env.opponent_stats(reset=True)``:
        ``wins``, ``losses``, ``draws``); names not in the league are ignored."""
        names = {m.name: m for m in self.members}
        for name, s in stats.items():
            m = names.get(name)
            if m is None:
                continue
            m.games += int(s.get("wins", 0)) + int(s.get("losses", 0)) + int(s.get("draws", 0))
            m.wins += int(s.get("wins", 0))
        if step is not None:
            self.step = max(self.step, int(step))
        self._save()

    def rate(self, m: Member) -> Member:
        """Rate snapshot ``m`` on the published scale: ``rate_games`` games in Go against each
        anchor, then the Bradley-Terry rating with the anchors' published ratings held fixed."""
        from .evaluation.evaluate import evaluate
        from .evaluation.ladder import published
        from .evaluation.stats import place

        pub = published()
        results = []
        for a in self.config.anchors:
            r = evaluate(m.spec, a, self.config.rate_games, rules=self.config.rules, seed=1_000_003, luck="off")
            results.append((pub.rating(a).elo, r.wins_a, r.games))
        rt = place(results)
        m.rating, m.rating_low, m.rating_high = rt.elo, rt.low, rt.high
        self._save()
        return m

    # ---- sampling -----------------------------------------------------------------------

    def weights(self) -> dict[str, float]:
        """Each member's share of the next episodes, by name (they sum to 1)."""
        latest = self.latest
        pool = [m for m in self.members if not m.file]  # the fixed specs
        pool += [m for m in self.snapshots if m is not latest][-self.config.max_members :]  # the newest past selves
        out: dict[str, float] = {}
        p_latest = self.config.p_latest if latest is not None else 0.0
        if not pool:
            p_latest = 1.0
        if latest is not None and p_latest > 0:
            out[latest.name] = p_latest
        if pool and p_latest < 1:
            if self.config.sampling == "uniform":
                f = np.ones(len(pool))
            else:
                p = np.array([m.win_rate for m in pool])
                f = (1 - p) ** 2 if self.config.pfsp == "hard" else p * (1 - p)
                f = np.maximum(f, 1e-3)  # every member keeps a chance
            f = f / f.sum() * (1 - p_latest)
            for m, w in zip(pool, f):
                out[m.name] = out.get(m.name, 0.0) + float(w)
        return out

    def mixture(self) -> dict[str, float]:
        """The next episodes' opponents as an ``opponent`` mixture: ``{spec: weight}``, for
        ``env.set_opponents(...)`` or ``yutenv.make(opponent=...)``."""
        specs = {m.name: m.spec for m in self.members}
        return {specs[n]: w for n, w in self.weights().items() if w > 0}

    def names(self) -> dict[str, str]:
        """Member name by spec: what a vector env's ``opponent_stats`` keys are mapped back with."""
        return {m.spec: m.name for m in self.members}

    def record_env(self, stats: Mapping[str, Mapping[str, Any]], step: int | None = None) -> None:
        """:meth:`record` of a vector env's ``opponent_stats``, whose keys are the specs of
        :meth:`mixture`."""
        names = self.names()
        self.record({names.get(k, k): v for k, v in stats.items()}, step)

    def table(self) -> str:
        """The members as a table: games, the learner's win rate, the sampling weight, the rating."""
        from tabulate import tabulate

        w = self.weights()
        rows = []
        for m in self.members:
            rating = "" if m.rating is None else f"{m.rating:+.0f} [{m.rating_low:+.0f}, {m.rating_high:+.0f}]"
            rows.append(
                [
                    m.name,
                    m.step if m.step >= 0 else "",
                    m.games,
                    f"{100 * m.wins / m.games:.1f}%" if m.games else "",
                    f"{100 * w.get(m.name, 0):.1f}%",
                    rating,
                ]
            )
        return tabulate(
            rows, headers=["member", "step", "games", "learner wins", "weight", "rating"], tablefmt="pretty", stralign="right"
        )

    # ---- the folder ---------------------------------------------------------------------

    def _content(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "config": asdict(self.config),
            "step": self.step,
            "members": [asdict(m) for m in self.members],
        }

    def _save(self) -> None:
        content = self._content()
        body = json.dumps(content, sort_keys=True, separators=(",", ":"))
        doc = {**content, "sha256": sha256_bytes(body.encode())}
        atomic_write(self.folder / STATE, lambda f: f.write(json.dumps(doc, indent=1, sort_keys=True).encode() + b"\n"))

    def _load(self, state: Path) -> None:
        try:
            raw = read_regular(state, MAX_STATE_BYTES)
            doc = json.loads(raw)
        except (OSError, FileRefused) as e:
            raise LeagueError(f"{state}: cannot read the league state: {e.strerror or e}") from e
        except ValueError as e:
            raise LeagueError(f"{state}: not a league state (not JSON: {e})") from e
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise LeagueError(
                f"{state}: not a league state (format {doc.get('format') if isinstance(doc, dict) else None!r}, want {FORMAT!r})"
            )
        if doc.get("version") != VERSION:
            raise LeagueError(f"{state}: league state version {doc.get('version')!r}; this yutenv reads version {VERSION}")
        digest = doc.pop("sha256", None)
        body = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        if digest != sha256_bytes(body.encode()):
            raise LeagueError(f"{state}: damaged: its content does not match its sha256")
        try:
            self.config = LeagueConfig(**doc["config"])
            self.members = [Member(**m) for m in doc["members"]]
            self.step = int(doc["step"])
        except (KeyError, TypeError, ValueError) as e:
            raise LeagueError(f"{state}: damaged: {e}") from e
        for m in self.snapshots:
            p = self.folder / m.file
            try:
                got, _ = sha256_file(p)
            except OSError as e:
                raise LeagueError(f"{p}: snapshot {m.name} cannot be read: {e.strerror or e}") from e
            if got != m.sha256:
                raise LeagueError(f"{p}: snapshot {m.name} is damaged: its sha256 does not match the league's")
            m.spec = f"net:{p.resolve()}"  # the folder may have moved

    def __repr__(self) -> str:
        return f"League({str(self.folder)!r}, members={len(self.members)}, step={self.step})"
