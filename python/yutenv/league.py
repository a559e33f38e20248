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
damaged, foreign or forged file with one line naming it and the field (:class:`LeagueError`).

A league folder has one writer at a time: ``League(folder)`` takes an advisory lock on
``league.lock`` (``fcntl.flock`` on Linux and macOS, ``msvcrt.locking`` on Windows) that it holds
until :meth:`League.close` or the end of its process, and a second trainer on the same folder is
refused with a :class:`LeagueError` naming the folder and the holder's process. The operating
system drops the lock when its process dies, so a killed trainer never blocks the next one, and
the next one removes the temporary files the killed one left (``.league.json.PID.tmp``).
:meth:`League.open` reads a league without the lock (a table while a trainer runs) and refuses to
change it.

Drivers: :class:`yutenv.integrations.sb3.LeagueCallback` (Stable-Baselines3), and
``python/examples/cleanrl_league.py`` (a CleanRL-style PPO loop).
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, Mapping, TypeGuard

import numpy as np

from ._files import FileLock, FileRefused, LockHeld, atomic_write, read_regular, remove_stale_temps, sha256_bytes, sha256_file
from ._protocol import MAX_OPPONENTS, TIERS
from ._specs import net_spec
from .errors import YutEnvError

__all__ = ["League", "LeagueConfig", "LeagueError", "Member"]

FORMAT = "yutenv-league"
VERSION = 1
STATE = "league.json"
SNAPSHOTS = "snapshots"
LOCK = "league.lock"
"""The file whose advisory lock the league's one writer holds (its first line: ``PID on HOST``)."""
MAX_STATE_BYTES = 16 << 20
"""A league's state file holds a line per member: 16 MiB is far above any real league."""
MAX_MIXTURE = MAX_OPPONENTS
"""The most entries a mixture may have (the server's limit)."""
MAX_COUNT = 2**53
"""The bound of a count or step in ``league.json`` (an integer a float holds exactly)."""
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class LeagueError(YutEnvError, ValueError):
    """A league folder that cannot be used: a damaged, foreign or forged ``league.json`` (its
    message names the field), a missing or altered snapshot, settings that differ from the
    folder's, or a folder another trainer holds (its message names the process). The message is
    one line naming the file or folder."""


def _show(v: object) -> str:
    """``repr(v)``, cut to a length a one-line message can hold."""
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _int(v: object) -> TypeGuard[int]:
    """An integer, not a bool (JSON's true is not a count)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _real(v: object) -> bool:
    """A finite real number, not a bool."""
    return (
        isinstance(v, (numbers.Real, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) and math.isfinite(float(v))
    )


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
        for name in ("fixed", "anchors"):
            v = getattr(self, name)
            if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)):
                raise ValueError(f"{name} must be a list of agent specs, got {_show(v)}")
            if not all(isinstance(x, str) and x.strip() for x in v):
                raise ValueError(f"{name} must be a list of agent specs (non-empty strings), got {_show(v)}")
            object.__setattr__(self, name, tuple(v))
        if len(set(self.fixed)) != len(self.fixed):
            raise ValueError(f"fixed names a spec twice: {_show(self.fixed)}")
        if len(self.fixed) > MAX_MIXTURE - 1:
            raise ValueError(
                f"fixed holds {len(self.fixed)} specs; a mixture holds {MAX_MIXTURE} entries, the latest snapshot one of them"
            )
        if self.tier not in TIERS:
            raise ValueError(f"tier must be one of {', '.join(TIERS)}, got {_show(self.tier)}")
        if not isinstance(self.rules, str):
            raise ValueError(f"rules must be a rules string, got {_show(self.rules)}")
        if self.sampling not in ("pfsp", "uniform"):
            raise ValueError(f"sampling must be 'pfsp' or 'uniform', got {self.sampling!r}")
        if self.pfsp not in ("hard", "variance"):
            raise ValueError(f"pfsp must be 'hard' or 'variance', got {self.pfsp!r}")
        if not (_real(self.p_latest) and 0 <= self.p_latest <= 1):
            raise ValueError(f"p_latest must be in [0, 1], got {self.p_latest!r}")
        room = MAX_MIXTURE - 1 - len(self.fixed)
        if not (_int(self.max_members) and 0 <= self.max_members <= room):
            raise ValueError(
                f"max_members must be 0..{room} (a mixture holds {MAX_MIXTURE} entries: the fixed specs, "
                f"the past snapshots and the latest), got {self.max_members!r}"
            )
        if not (_int(self.rate_games) and 0 <= self.rate_games <= MAX_COUNT):
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
    """A league kept in ``folder`` (created if new, resumed if it holds a league), opened as its
    one writer.

    The league holds the folder's lock (``league.lock``) until :meth:`close` (or the end of a
    ``with`` block, or of the process): a second writer, in this process or another, is refused
    with a :class:`LeagueError` naming the folder and the holder's process id; a lock left by a
    killed process is gone with it. Opening removes the temporary files of writers that no longer
    run, and checks ``league.json`` field by field (a forged member file outside ``snapshots/``,
    a count that is not a non-negative integer, settings that cannot be: :class:`LeagueError`
    naming the file and the field). :meth:`open` reads a league without the lock, and refuses to
    change it (:meth:`snapshot`, :meth:`record` and :meth:`rate` raise :class:`LeagueError`), as
    does a league after :meth:`close`.

    Args:
        folder: the league's folder. Any path works: a snapshot's ``net:PATH`` spec quotes a
            path that holds ``,``, ``;``, ``=`` or ``'``.
        config: a :class:`LeagueConfig` (default: its defaults); keyword arguments replace its
            fields. A resumed league must be given the same settings (or none: the folder's).
    """

    config: LeagueConfig
    members: list[Member]
    step: int

    def __init__(self, folder: str | os.PathLike[str], config: LeagueConfig | None = None, **options: Any) -> None:
        self.folder = Path(folder)
        self.readonly, self._closed = False, False
        self._lock: FileLock | None = None
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = self._take_lock()
        try:
            self._open_as_writer(config, options)
        except BaseException:
            self.close()
            raise

    def _take_lock(self) -> FileLock:
        """The folder's writer lock, or a LeagueError naming the process that holds it."""
        try:
            return FileLock(self.folder / LOCK)
        except LockHeld as e:
            who = f"process {e.holder}" if e.holder else "another process"
            raise LeagueError(
                f"{self.folder}: this league is in use by {who} (one trainer writes a league at a time; "
                "League.open reads it while it trains)"
            ) from None
        except OSError as e:
            raise LeagueError(f"{self.folder / LOCK}: cannot lock the league: {e.strerror or e}") from e

    def _open_as_writer(self, config: LeagueConfig | None, options: Mapping[str, Any]) -> None:
        for d in (self.folder, self.folder / SNAPSHOTS):  # what a killed writer left
            remove_stale_temps(d)
        state = self.folder / STATE
        if state.exists():
            self._load(state)
            if config is not None or options:
                try:
                    want = LeagueConfig(**{**asdict(config or self.config), **options})
                except (TypeError, ValueError) as e:
                    raise LeagueError(f"{state}: resuming with settings that cannot be: {e}") from e
                if want != self.config:
                    raise LeagueError(f"{state}: this league was made with {self.config}; resuming it with {want} is refused")
            return
        self.config = LeagueConfig(**{**asdict(config or LeagueConfig()), **options})
        self.members = [Member(name=s, spec=s) for s in self.config.fixed]
        self.step = 0
        (self.folder / SNAPSHOTS).mkdir(exist_ok=True)
        self._save()

    @classmethod
    def open(cls, folder: str | os.PathLike[str]) -> League:
        """The league in ``folder``, which must hold one (:class:`LeagueError` otherwise), for
        reading: it takes no lock, so it reads a league while its trainer runs, and it refuses
        to change the league (the trainer's ``League(folder)`` is its one writer). Readers must
        not create a league where a trainer is about to."""
        state = Path(folder) / STATE
        if not state.exists():
            raise LeagueError(f"{state}: no league here")
        self = cls.__new__(cls)
        self.folder = Path(folder)
        self.readonly, self._closed = True, False
        self._lock = None
        self._load(state)
        return self

    def close(self) -> None:
        """Give up the folder's writer lock: another trainer may then open it. The league is
        read-only afterwards. (The lock also ends with the process.)"""
        lock, self._lock = self._lock, None
        self.readonly, self._closed = True, True
        if lock is not None:
            lock.release()

    def __enter__(self) -> League:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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

        self._check_writer()
        n = len(self.snapshots) + 1
        name = f"snap-{n:06d}"
        rel = f"{SNAPSHOTS}/{name}.ynet"
        path = self.folder / rel
        export(policy, path, tier=self.config.tier, rules=self.config.rules)
        digest, _ = sha256_file(path)
        m = Member(name=name, spec=net_spec(path.resolve()), step=int(step), file=rel, sha256=digest)
        self.members.append(m)
        self.step = max(self.step, int(step))
        self._save()
        if rate and self.config.rate_games > 0:
            self.rate(m)
        return m

    def record(self, stats: Mapping[str, Mapping[str, Any]], step: int | None = None) -> None:
        """Add the learner's results by opponent name (``env.opponent_stats(reset=True)``:
        ``wins``, ``losses``, ``draws``); names not in the league are ignored."""
        self._check_writer()
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

        self._check_writer()  # before the games, whose rating could not be kept

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

    def _check_writer(self) -> None:
        if self.readonly:
            how = "closed" if self._closed else "opened by League.open"
            raise LeagueError(
                f"{self.folder}: this League is read-only ({how}); League(folder), the league's one writer, changes it"
            )

    def _save(self) -> None:
        self._check_writer()
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
        except RecursionError:
            raise LeagueError(f"{state}: not a league state (JSON nested too deeply)") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise LeagueError(
                f"{state}: not a league state (format {_show(doc.get('format')) if isinstance(doc, dict) else None}, want {FORMAT!r})"
            )
        if doc.get("version") != VERSION:
            raise LeagueError(f"{state}: league state version {_show(doc.get('version'))}; this yutenv reads version {VERSION}")
        digest = doc.pop("sha256", None)
        try:
            body = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        except RecursionError:
            raise LeagueError(f"{state}: not a league state (JSON nested too deeply)") from None
        if digest != sha256_bytes(body.encode()):
            raise LeagueError(f"{state}: damaged: its content does not match its sha256")
        self.config, self.members, self.step = _parse_state(doc, state, self.folder)
        for m in self.snapshots:
            p = self.folder / m.file
            try:
                got, _ = sha256_file(p)
            except OSError as e:
                raise LeagueError(f"{p}: snapshot {m.name} cannot be read: {e.strerror or e}") from e
            if got != m.sha256:
                raise LeagueError(f"{p}: snapshot {m.name} is damaged: its sha256 does not match the league's")
            m.spec = net_spec(p.resolve())  # the folder may have moved

    def __repr__(self) -> str:
        return f"League({str(self.folder)!r}, members={len(self.members)}, step={self.step})"


_STATE_KEYS = {"format", "version", "config", "step", "members"}
_MEMBER_KEYS = {f.name for f in fields(Member)}
_CONFIG_KEYS = {f.name for f in fields(LeagueConfig)}


def _parse_state(doc: Mapping[str, Any], state: Path, folder: Path) -> tuple[LeagueConfig, list[Member], int]:
    """The settings, members and step of a league state whose hash matched, each field checked:
    a file re-hashed after an edit is held to what :class:`League` writes. Raises
    :class:`LeagueError` naming ``state`` and the field."""

    def bad(where: str, why: str) -> LeagueError:
        return LeagueError(f"{state}: {where}: {why}")

    extra = sorted(set(doc) - _STATE_KEYS)
    if extra:
        raise bad(extra[0], "not a field of a league state")
    cfg = doc.get("config")
    if not isinstance(cfg, dict):
        raise bad("config", f"must be an object, got {_show(cfg)}")
    extra = sorted(set(cfg) - _CONFIG_KEYS)
    if extra:
        raise bad(f"config.{extra[0]}", "not a setting of a league")
    try:
        config = LeagueConfig(**cfg)
    except (TypeError, ValueError) as e:
        raise bad("config", str(e)) from None
    step = doc.get("step")
    if not (_int(step) and 0 <= step <= MAX_COUNT):
        raise bad("step", f"must be an integer 0..2**53, got {_show(step)}")
    raw = doc.get("members")
    if not isinstance(raw, list):
        raise bad("members", f"must be a list, got {_show(raw)}")
    snapshots = (folder / SNAPSHOTS).resolve()
    members: list[Member] = []
    names: set[str] = set()
    for i, m in enumerate(raw):
        at = f"members[{i}]"
        if not isinstance(m, dict):
            raise bad(at, f"must be an object, got {_show(m)}")
        extra = sorted(set(m) - _MEMBER_KEYS)
        if extra:
            raise bad(f"{at}.{extra[0]}", "not a field of a member")
        for key in ("name", "spec"):
            if not (isinstance(m.get(key), str) and m[key].strip() and len(m[key]) <= 4096):
                raise bad(f"{at}.{key}", f"must be a non-empty string, got {_show(m.get(key))}")
        if m["name"] in names:
            raise bad(f"{at}.name", f"{m['name']!r} names two members")
        names.add(m["name"])
        for key in ("file", "sha256"):
            if not isinstance(m.get(key, ""), str):
                raise bad(f"{at}.{key}", f"must be a string, got {_show(m.get(key))}")
        for key in ("games", "wins"):
            v = m.get(key, 0)
            if not (_int(v) and 0 <= v <= MAX_COUNT):
                raise bad(f"{at}.{key}", f"must be an integer 0..2**53, got {_show(v)}")
        if m.get("wins", 0) > m.get("games", 0):
            raise bad(f"{at}.wins", f"{m['wins']} wins in {m.get('games', 0)} games")
        ratings = [m.get(k) for k in ("rating", "rating_low", "rating_high")]
        if any(r is not None for r in ratings) and not all(_real(r) for r in ratings):
            raise bad(f"{at}.rating", f"rating, rating_low and rating_high must be numbers (or all null), got {_show(ratings)}")
        if "added" in m and not _real(m["added"]):
            raise bad(f"{at}.added", f"must be a time in seconds, got {_show(m['added'])}")
        file = m.get("file", "")
        if not file:  # a fixed spec
            if m["spec"] != m["name"] or m.get("step", -1) != -1 or m.get("sha256", ""):
                raise bad(at, f"a fixed member is its spec alone (name = spec, step -1, no sha256), got {_show(m)}")
        else:
            sub, _, base = file.partition("/")
            if sub != SNAPSHOTS or not base or "/" in base or "\\" in base or base.startswith(".") or "\0" in base:
                raise bad(f"{at}.file", f"must name a file in the league's {SNAPSHOTS}/ folder, got {_show(file)}")
            if (folder / file).resolve().parent != snapshots:
                raise bad(f"{at}.file", f"{file} leads out of the league's {SNAPSHOTS}/ folder")
            if not _SHA256.match(m.get("sha256", "")):
                raise bad(f"{at}.sha256", f"must be 64 hex digits, got {_show(m.get('sha256'))}")
            if not (_int(m.get("step")) and 0 <= m["step"] <= MAX_COUNT):
                raise bad(f"{at}.step", f"must be an integer 0..2**53, got {_show(m.get('step'))}")
        members.append(Member(**m))
    fixed = tuple(m.name for m in members if not m.file)
    if fixed != config.fixed:
        raise bad("members", f"the fixed members {_show(fixed)} are not config.fixed {_show(config.fixed)}")
    return config, members, int(step)
