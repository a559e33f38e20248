"""Every seat's view of the games of a dataset as offline-RL transitions.

A self-play dataset holds one row per decision of any seat (AlphaZero targets). The env a
learner trains in (:class:`yutenv.YutEnv`) shows one seat its own decisions only: after its
action, the throws and the other seats' moves happen inside the step, and the next
observation is at its next decision (or the end). :func:`transitions` rebuilds exactly that
view from a dataset of format version 2, per seat: the observation and mask, the action,
the reward of the env's reward scheme (``reward="win"`` or ``"progress"``), the next
observation and mask, ``terminated`` and ``truncated``, as the env returns them, plus what
the search said (``policy``, ``search_value``, ``searched``), the throws made between the two
decisions, and the game, seat and seed that replay it (``yutenv.make(opponent=OTHER,
seat=SEAT, tier=TIER, rules=RULES).reset(seed=SEED)``; python/tests/test_transitions.py
replays every transition through the env and compares).

::

    from yutenv import datasets
    t = datasets.transitions("data/mcts400", seat=0, reward="progress")
    t.obs.shape, t.next_obs.shape, t.reward.shape     # (N, D), (N, D), (N,)
    t.throws_of(0)                                    # [(seat, throw id), ...] after transition 0
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np
import numpy.typing as npt

from .._files import FileRefused, open_regular, sha256_bytes
from .._progress import progress_bar
from .._protocol import NUM_ACTIONS, REWARDS, THROWS
from . import shards as _ds

__all__ = ["COLUMNS", "Transitions", "iter_transitions", "transitions"]

#: The arrays of decisions a transition needs from a shard.
_NEEDED = (
    "obs",
    "mask",
    "action",
    "policy",
    "value",
    "search_value",
    "seat",
    "game",
    "decision",
    "potential",
    "searched",
    "final_obs",
)
_THROW_ID = {name: i for i, name in enumerate(THROWS)}


@dataclass
class Transitions:
    """Transitions of one seat's view (or every seat's), as arrays by name; row i is one step
    of an episode (one seat in one game), episodes in game order, then seat order, then step.

    ``obs`` (float32 [N, D]) and ``mask`` (uint8 [N, 180]) at the seat's decision, ``action``
    (int32), ``reward`` (float32, the env's reward of the scheme ``reward_scheme``),
    ``next_obs`` and ``next_mask`` at the seat's next decision, or at the end (then the final
    position's observation and an all-zero mask, as the env's terminal step), ``terminated``
    (bool: the game ended), ``truncated`` (bool: ``max_decisions`` cut the episode);
    ``policy`` (float32 [N, 180]), ``search_value`` (float32) and ``searched`` (bool) of the
    agent's search at the decision (``searched`` False: a one-hot policy and 0); ``value``
    (float32, the game's outcome for the seat); ``seat`` (int8), ``game`` (int64), ``seed``
    (uint64, the game seed: ``reset(seed=...)`` replays it), ``decision`` (int32, the
    decision's index in the game, any seat's decisions counted) and ``step`` (int32, the
    transition's index in its episode). The throws made from the action to the next decision
    (by any seat, in order) are ``throws[throw_offsets[i]:throw_offsets[i+1]]`` (int8 throw
    ids, :data:`yutenv._protocol.THROWS`), thrown by ``throw_seats`` (int8) of the same slice.
    """

    obs: npt.NDArray[np.float32]
    mask: npt.NDArray[np.uint8]
    action: npt.NDArray[np.int32]
    reward: npt.NDArray[np.float32]
    next_obs: npt.NDArray[np.float32]
    next_mask: npt.NDArray[np.uint8]
    terminated: npt.NDArray[np.bool_]
    truncated: npt.NDArray[np.bool_]
    policy: npt.NDArray[np.float32]
    search_value: npt.NDArray[np.float32]
    searched: npt.NDArray[np.bool_]
    value: npt.NDArray[np.float32]
    seat: npt.NDArray[np.int8]
    game: npt.NDArray[np.int64]
    seed: npt.NDArray[np.uint64]
    decision: npt.NDArray[np.int32]
    step: npt.NDArray[np.int32]
    throws: npt.NDArray[np.int8]
    throw_seats: npt.NDArray[np.int8]
    throw_offsets: npt.NDArray[np.int64]
    #: The reward scheme of ``reward`` (``"win"`` or ``"progress"``).
    reward_scheme: str = "win"
    #: The dataset's manifest.
    manifest: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.action.shape[0])

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in COLUMNS and name not in _THROW_ARRAYS:
            raise KeyError(name)
        arr: np.ndarray = getattr(self, name)
        return arr

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays of one row per transition, by name (:data:`COLUMNS`); the throws, whose
        rows are throws, are not among them (see :meth:`throws_of`)."""
        return {name: getattr(self, name) for name in COLUMNS}

    def throws_of(self, i: int) -> list[tuple[int, int]]:
        """The throws from transition ``i``'s action to its next decision: (seat, throw id) pairs in order."""
        lo, hi = int(self.throw_offsets[i]), int(self.throw_offsets[i + 1])
        return [(int(s), int(t)) for s, t in zip(self.throw_seats[lo:hi], self.throws[lo:hi])]

    def episodes(self) -> npt.NDArray[np.int64]:
        """The row where every episode (one seat's view of one game) starts, and ``len(self)`` last."""
        starts = np.flatnonzero(self.step == 0)
        return np.append(starts, len(self)).astype(np.int64)


_THROW_ARRAYS = ("throws", "throw_seats", "throw_offsets")
#: The arrays of :class:`Transitions` with one row per transition, in order.
COLUMNS: tuple[str, ...] = tuple(
    f.name for f in fields(Transitions) if f.name not in _THROW_ARRAYS + ("reward_scheme", "manifest")
)


def check_v2(path: str | os.PathLike[str], m: Mapping[str, Any], what: str) -> None:
    """Refuse a dataset that lacks what transitions need (format version 1)."""
    if m["version"] < 2:
        raise _ds.DatasetError(
            f"{path}: format version {m['version']} ({m.get('software', 'an older yutenv')}) has no potential or final "
            f"observations, which {what} needs: write the dataset again with this yutenv's `yutenv selfplay` (the same flags, another --out)"
        )


def players_of(m: Mapping[str, Any]) -> int:
    """The number of seats of the dataset's rules."""
    rules = m.get("rules")
    return int(rules.get("players", 2)) if isinstance(rules, dict) else 2


def check_options(m: Mapping[str, Any], seat: int | None, reward: str, max_decisions: int) -> None:
    """Refuse a seat the rules lack, an unknown reward scheme, a bad ``max_decisions``
    (ValueError naming the option)."""
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {', '.join(map(repr, REWARDS))}; got {reward!r}")
    players = players_of(m)
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < players):
        raise ValueError(f"seat must be a seat of the dataset's rules (0..{players - 1}) or None for every seat; got {seat!r}")
    if isinstance(max_decisions, bool) or not isinstance(max_decisions, int) or max_decisions < 0:
        raise ValueError(f"max_decisions must be an integer >= 0 (0: never truncate), got {max_decisions!r}")


def iter_transitions(
    path: str | os.PathLike[str],
    *,
    seat: int | None = None,
    reward: str = "win",
    max_decisions: int = 0,
    verify: bool = True,
    order: Any = None,
    progress: bool | None = None,
) -> Iterator[Transitions]:
    """Yield the transitions of one shard at a time (a shard holds whole games), as
    :func:`transitions` returns them for the whole dataset; memory holds one shard.
    ``order`` gives the shards' indices to read, in that order (default: all, in order).
    ``progress``: a bar of the games read (rate, ETA) on stderr, None on a terminal only,
    True always, False never."""
    return _iter(path, seat, reward, max_decisions, verify, order, progress, "transitions")


def _iter(
    path: str | os.PathLike[str],
    seat: int | None,
    reward: str,
    max_decisions: int,
    verify: bool,
    order: Any,
    progress: bool | None,
    desc: str,
) -> Iterator[Transitions]:
    """:func:`iter_transitions` with its bar named ``desc`` (the exports name theirs)."""
    d = Path(path)
    m = _ds.read_manifest(d)
    check_v2(d, m, "transitions")
    check_options(m, seat, reward, max_decisions)
    players = players_of(m)
    entries = m["shards"] if order is None else [m["shards"][int(i)] for i in order]
    bar = progress_bar(sum(int(e["games"]) for e in entries), desc, unit="game", show=progress)
    try:
        for entry in entries:
            got = _ds._read_shard(d, m, entry, verify, _NEEDED)
            recs = _read_records(d, entry, verify)
            t = _shard_transitions(d / entry["file"], got, recs, entry, m, seat, reward, max_decisions, players)
            del got, recs  # not held while the caller has the shard's transitions
            if bar is not None:
                bar.update(int(entry["games"]))
            yield t
            del t
    finally:
        if bar is not None:
            bar.close()


def transitions(
    path: str | os.PathLike[str],
    *,
    seat: int | None = None,
    reward: str = "win",
    max_decisions: int = 0,
    verify: bool = True,
    progress: bool | None = None,
) -> Transitions:
    """Every transition of ``seat``'s view of the dataset's games (``seat=None``: every seat's,
    each game's episodes in seat order), as the env would have produced them.

    ``reward``: the env's reward scheme, ``"win"`` (the game's outcome for the seat at its
    last step, 0 before) or ``"progress"`` (the same plus potential-based shaping by race
    progress: the seat's potential at the next decision minus the one at this decision, 0 in
    place of the next at the end; the potentials are the dataset's ``potential``, computed by
    the engine as the env computes them). ``max_decisions`` truncates every episode after that
    many steps as ``yutenv.make(max_decisions=...)`` does (0: never). Needs a dataset of format
    version 2; a version 1 dataset raises :class:`~yutenv.datasets.DatasetError` saying so.
    For a dataset larger than memory use :func:`iter_transitions`. ``progress``: a bar of the
    games read on stderr, None on a terminal only, True always, False never.
    """
    parts = list(iter_transitions(path, seat=seat, reward=reward, max_decisions=max_decisions, verify=verify, progress=progress))
    m = _ds.read_manifest(path) if not parts else parts[0].manifest
    return concat(parts, reward, m)


def concat(parts: list[Transitions], reward: str, m: dict[str, Any]) -> Transitions:
    """The transitions of ``parts`` in order, as one :class:`Transitions`."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        d = int(m["obs_size"])
        empty = _empty(d)
        return Transitions(**empty, reward_scheme=reward, manifest=m)
    out: dict[str, np.ndarray] = {}
    for name in COLUMNS + ("throws", "throw_seats"):
        out[name] = np.concatenate([getattr(p, name) for p in parts])
        for p in parts:
            setattr(p, name, None)  # free each part's array once copied
    offsets = [np.zeros(1, np.int64)]
    base = 0
    for p in parts:
        offsets.append(p.throw_offsets[1:] + base)
        base += int(p.throw_offsets[-1])
    out["throw_offsets"] = np.concatenate(offsets)
    return Transitions(**out, reward_scheme=reward, manifest=m)


def _empty(d: int) -> dict[str, np.ndarray]:
    return {
        "obs": np.zeros((0, d), np.float32), "mask": np.zeros((0, NUM_ACTIONS), np.uint8), "action": np.zeros(0, np.int32),
        "reward": np.zeros(0, np.float32), "next_obs": np.zeros((0, d), np.float32), "next_mask": np.zeros((0, NUM_ACTIONS), np.uint8),
        "terminated": np.zeros(0, bool), "truncated": np.zeros(0, bool), "policy": np.zeros((0, NUM_ACTIONS), np.float32),
        "search_value": np.zeros(0, np.float32), "searched": np.zeros(0, bool), "value": np.zeros(0, np.float32),
        "seat": np.zeros(0, np.int8), "game": np.zeros(0, np.int64), "seed": np.zeros(0, np.uint64),
        "decision": np.zeros(0, np.int32), "step": np.zeros(0, np.int32), "throws": np.zeros(0, np.int8),
        "throw_seats": np.zeros(0, np.int8), "throw_offsets": np.zeros(1, np.int64),
    }  # fmt: skip


def _read_records(d: Path, entry: Mapping[str, Any], verify: bool) -> list[dict[str, Any]]:
    """The shard's game records (one JSON object a line), checked against the manifest."""
    name = entry.get("records")
    p = d / str(name)
    try:
        with open_regular(p) as f:  # without blocking: a FIFO or a device is refused at once
            size = os.fstat(f.fileno()).st_size
            if "records_bytes" in entry and size != entry["records_bytes"]:
                raise _ds.DatasetError(f"{p}: {size} bytes, the manifest says {entry['records_bytes']} (truncated or replaced)")
            raw = f.read(size + 1)
        if len(raw) != size:
            raise _ds.DatasetError(f"{p}: it changed while it was read ({len(raw)} bytes, {size} at first)")
        if verify and "records_sha256" in entry:
            got = sha256_bytes(raw)
            if got != entry["records_sha256"]:
                raise _ds.DatasetError(f"{p}: SHA-256 {got} does not match the manifest's {entry['records_sha256']} (damaged)")
        lines = raw.decode("utf-8").splitlines()
    except FileRefused as e:
        raise _ds.DatasetError(f"{p}: cannot read the records: {e.strerror}") from e
    except FileNotFoundError:
        raise _ds.DatasetError(f"{p}: listed in the manifest but missing") from None
    except UnicodeDecodeError as e:
        raise _ds.DatasetError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start}): not game records") from None
    except OSError as e:
        raise _ds.DatasetError(f"{p}: cannot read the records: {e.strerror or e}") from e
    recs: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        try:
            r = json.loads(line)
            if not isinstance(r, dict) or not isinstance(r.get("steps"), list) or not isinstance(r.get("seed"), int):
                raise ValueError("not a game record")
        except (ValueError, RecursionError) as e:
            raise _ds.DatasetError(f"{p}: line {i + 1}: {e}") from None
        recs.append(r)
    if len(recs) != entry["games"]:
        raise _ds.DatasetError(f"{p}: {len(recs)} game records, the manifest says {entry['games']} games")
    return recs


def _shard_transitions(
    p: Path,
    a: Mapping[str, np.ndarray],
    recs: list[dict[str, Any]],
    entry: Mapping[str, Any],
    m: dict[str, Any],
    seat: int | None,
    reward: str,
    max_decisions: int,
    players: int,
) -> Transitions:
    first = int(entry["first_game"])
    games = int(entry["games"])
    # The throws of every game, keyed by (game in the shard, actions played before the throw).
    keys: list[int] = []
    tseat: list[int] = []
    tid: list[int] = []
    seeds = np.zeros(games, np.uint64)
    for g, r in enumerate(recs):
        seeds[g] = np.uint64(r["seed"] % (1 << 64))
        actions = 0
        try:
            for st in r["steps"]:
                if "action" in st:
                    actions += 1
                else:
                    keys.append(g << 32 | actions)
                    tseat.append(int(st["seat"]))
                    tid.append(_THROW_ID[st["throw"]])
        except (KeyError, TypeError, ValueError) as e:
            raise _ds.DatasetError(
                f"{p.with_name(str(entry['records']))}: game {first + g}: a step is not a throw or an action ({e!r})"
            ) from None
        nrows = int(np.count_nonzero(a["game"] == first + g))
        if actions != nrows:
            raise _ds.DatasetError(
                f"{p}: game {first + g} has {nrows} rows, its record {actions} actions: the records do not match the arrays"
            )
    tkey = np.asarray(keys, np.int64)
    # The rows of the view: one seat's decisions, or every seat's, episode by episode.
    seat_col = a["seat"]
    local = (a["game"] - first).astype(np.int64)
    if seat is None:
        idx = np.lexsort((np.arange(len(seat_col)), seat_col, local))
    else:
        idx = np.flatnonzero(seat_col == seat)
    ep = local[idx] * players + seat_col[idx]  # one id per episode
    n = len(idx)
    last = np.ones(n, bool)
    if n:
        last[:-1] = ep[1:] != ep[:-1]
    starts = np.flatnonzero(np.r_[True, last[:-1]]) if n else np.zeros(0, np.int64)
    step = (np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))).astype(np.int32)
    keep = np.ones(n, bool)
    truncated = np.zeros(n, bool)
    if max_decisions > 0:
        keep = step < max_decisions
        truncated = (step == max_decisions - 1) & ~last
    terminated = last.copy()
    ended = terminated | truncated
    nxt = np.where(last, idx, np.roll(idx, -1))  # the next decision's row (itself where the game ended)
    pot = a["potential"]
    outcome = np.where(last, a["value"][idx], np.float32(0)).astype(np.float32)
    if reward == "progress":
        pot_next = np.where(last, np.float32(0), pot[nxt]).astype(np.float32)
        rew = (outcome + (pot_next - pot[idx])).astype(np.float32)
    else:
        rew = outcome
    next_obs = a["obs"][nxt]
    fin = np.flatnonzero(last)
    next_obs[fin] = a["final_obs"][local[idx[fin]], seat_col[idx[fin]]]
    next_mask = a["mask"][nxt]
    next_mask[ended] = 0
    # Throws after this decision and up to the next one (to the end of the game at the last).
    dec = a["decision"].astype(np.int64)
    lo_key = local[idx] << 32 | dec[idx]
    hi_key = np.where(last, local[idx] << 32 | ((1 << 32) - 1), local[idx] << 32 | dec[nxt])
    lo = np.searchsorted(tkey, lo_key, side="right")
    hi = np.searchsorted(tkey, hi_key, side="right")
    sel = np.flatnonzero(keep)
    lo, hi = lo[sel], hi[sel]
    counts = hi - lo
    offsets = np.zeros(len(sel) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    take = np.repeat(lo - offsets[:-1], counts) + np.arange(int(offsets[-1]))
    rows = idx[sel]
    return Transitions(
        obs=a["obs"][rows], mask=a["mask"][rows], action=a["action"][rows], reward=rew[sel],
        next_obs=next_obs[sel] if max_decisions > 0 else next_obs, next_mask=next_mask[sel] if max_decisions > 0 else next_mask,
        terminated=terminated[sel], truncated=truncated[sel], policy=a["policy"][rows],
        search_value=a["search_value"][rows], searched=a["searched"][rows].astype(bool), value=a["value"][rows],
        seat=seat_col[rows], game=a["game"][rows], seed=seeds[local[rows]], decision=a["decision"][rows], step=step[sel],
        throws=np.asarray(tid, np.int8)[take], throw_seats=np.asarray(tseat, np.int8)[take], throw_offsets=offsets,
        reward_scheme=reward, manifest=m,
    )  # fmt: skip
