"""Exports of a dataset's transitions: Apache Parquet (pyarrow, Hugging Face ``datasets``) and
Farama's Minari (d3rlpy and other offline-RL libraries).

Both write one shard at a time (memory holds one shard's transitions) into a temporary
sibling of the destination and move it into place when complete, so a failed or killed export
leaves nothing that looks like a dataset; a destination that already holds something is
refused before anything is written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from .._extras import import_extra
from .._protocol import THROWS
from . import shards as _ds
from .transitions import COLUMNS, Transitions, _iter, check_options, check_v2, players_of

__all__ = ["ExportError", "to_minari", "to_parquet"]

#: The key of the Parquet schema metadata that holds how the file was made (JSON).
PARQUET_METADATA_KEY = b"yutenv"


class ExportError(_ds.DatasetError):
    """An export's destination already holds something or cannot be written (its folder is a
    file, is not writable), or a Minari dataset id is malformed. The message is one line naming
    the destination or the id, and it is raised before anything is read or written."""


#: The longest part of a Minari dataset id (between slashes): each is a folder's name, and the
#: export's temporary sibling adds 18 characters to it, within the 255 of a file name.
MAX_ID_PART = 200


def _refuse_taken(out: Path, what: str) -> None:
    """Refuse a destination that exists and is not an empty folder."""
    if out.is_dir():
        try:
            inside = sorted(os.listdir(out))
        except OSError as e:
            raise ExportError(f"{out}: cannot read the folder: {e.strerror or e}") from e
        if inside:
            shown = ", ".join(inside[:3]) + (", ..." if len(inside) > 3 else "")
            raise ExportError(f"{out} is not empty (it holds {shown}): {what} into a new or empty folder, or remove it first")
    elif out.exists() or out.is_symlink():
        raise ExportError(f"{out} exists and is not a folder: {what} into a new or empty folder")


def _destination(out: Path, what: str) -> Path:
    """Check the destination ``out`` before any work, and return the folder to write: ``out``,
    or for a symbolic link the folder it leads to (written through, the link kept). Refused with
    :class:`ExportError` naming ``out``: a taken destination (:func:`_refuse_taken`), a link
    that leads nowhere, a path under a file, a folder that cannot be written (a temporary folder
    is made in it and removed, as the export will)."""
    real = Path(os.path.realpath(out)) if out.is_symlink() else out
    if out.is_symlink() and not real.exists():
        raise ExportError(f"{out} is a symbolic link that leads nowhere: {what} into a new or empty folder")
    _refuse_taken(real, what)
    above = real.parent
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir():
        raise ExportError(f"{out}: {above} is not a folder: {what} into a folder")
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        os.rmdir(_mktemp(real))
    except OSError as e:
        raise ExportError(f"{out}: cannot be written ({e.strerror or e}): {what} into a folder you can write") from None
    return real


def _mktemp(out: Path) -> Path:
    """A new empty folder beside ``out``, ``.NAME.RANDOM.tmp``, with the umask's permissions
    (mkdtemp's would be 0700)."""
    tmp = out.parent / f".{out.name}.{uuid.uuid4().hex[:12]}.tmp"
    tmp.mkdir()
    return tmp


@contextlib.contextmanager
def _staged(out: Path, what: str, shown: Path | None = None) -> Iterator[Path]:
    """A temporary folder beside ``out`` (checked with :func:`_destination` first), moved to
    ``out`` when the block succeeds and removed when it fails. A failure to write the folder
    is an :class:`ExportError` naming ``shown`` (default ``out``), not a temporary path."""
    shown = out if shown is None else shown
    out = _destination(out, what)
    try:
        tmp = _mktemp(out)
    except OSError as e:
        raise ExportError(f"{shown}: cannot be written ({e.strerror or e})") from None
    try:
        yield tmp
        _refuse_taken(out, what)  # taken meanwhile
        if out.is_dir():
            out.rmdir()
        os.replace(tmp, out)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ExportError(f"{shown}: cannot be written ({e.strerror or e})") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# ---- Parquet ---------------------------------------------------------------------------------


def to_parquet(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    seat: int | None = None,
    reward: str = "win",
    max_decisions: int = 0,
    verify: bool = True,
    compression: str = "zstd",
    progress: bool | None = None,
) -> list[Path]:
    """Write the transitions of the dataset at ``path`` (:func:`~yutenv.datasets.transitions`,
    the same ``seat``, ``reward`` and ``max_decisions``) as Parquet files into the new folder
    ``out``, one file per shard (``part-000000.parquet``, ...), and return their paths.

    One row per transition, with the columns of :data:`~yutenv.data.transitions.COLUMNS`
    (observations, masks and policies as fixed-size lists) and ``throws`` and ``throw_seats``
    (lists of int8: the throws from the action to the next decision and who threw them). The
    schema metadata ``yutenv`` holds the dataset's manifest and the options, as JSON. pyarrow
    (``pyarrow.parquet.read_table(out)``), Hugging Face ``datasets``
    (``load_dataset("parquet", data_files=f"{out}/*.parquet")``), pandas, polars and DuckDB
    read it. Needs the ``parquet`` extra. ``progress``: a bar of the games written (rate, ETA)
    on stderr, None on a terminal only, True always, False never.

    ``out`` must be a new or empty folder (a symbolic link to one is written through); one that
    holds something, lies under a file or cannot be written raises :class:`ExportError` naming
    it, before anything is read.
    """
    pa = import_extra("pyarrow", "parquet", "yutenv.datasets.to_parquet")
    pq = import_extra("pyarrow.parquet", "parquet", "yutenv.datasets.to_parquet")
    _destination(Path(out), "export")  # before anything is read (and again when it is written)
    m = _ds.read_manifest(path)
    check_v2(path, m, "to_parquet")
    check_options(m, seat, reward, max_decisions)
    dest = Path(out)
    written: list[str] = []
    meta = {"format": "yutenv-transitions", "version": 1, "seat": seat, "reward": reward, "max_decisions": max_decisions,
            "throws": list(THROWS), "manifest": m}  # fmt: skip
    with _staged(dest, "export") as tmp:
        parts = _iter(path, seat, reward, max_decisions, verify, None, progress, "to_parquet")
        for k, t in enumerate(parts):
            table = _table(pa, t, meta)
            name = f"part-{k:06d}.parquet"
            pq.write_table(table, tmp / name, compression=compression)
            written.append(name)
            del table, t
    return [dest / n for n in written]


def _table(pa: Any, t: Transitions, meta: Mapping[str, Any]) -> Any:
    """One Arrow table of transitions; numeric columns share the numpy arrays' memory."""
    cols: dict[str, Any] = {}
    for name in COLUMNS:
        a = np.ascontiguousarray(t[name])
        if a.ndim == 2:
            cols[name] = pa.FixedSizeListArray.from_arrays(pa.array(a.reshape(-1)), a.shape[1])
        else:
            cols[name] = pa.array(a)
    offsets = pa.array(t.throw_offsets.astype(np.int32))
    cols["throws"] = pa.ListArray.from_arrays(offsets, pa.array(t.throws))
    cols["throw_seats"] = pa.ListArray.from_arrays(offsets, pa.array(t.throw_seats))
    table = pa.table(cols)
    return table.replace_schema_metadata({PARQUET_METADATA_KEY: json.dumps(meta).encode()})


# ---- Minari ----------------------------------------------------------------------------------

_minari_root_lock = threading.Lock()


def _opponent(m: Mapping[str, Any], seats: Sequence[int]) -> str:
    """The env's opponent spec for learners in ``seats``: the agent of every other seat, which
    must be one spec (the env plays every other seat with one opponent)."""
    agents = [str(a) for a in m["agents"]]
    found: set[str] = set()
    for s in seats:
        found |= {a for j, a in enumerate(agents) if j != s}
    if len(found) != 1:
        which = "seat " + str(seats[0]) if len(seats) == 1 else "every seat"
        raise ValueError(f"the dataset's agents are {agents}: the learner's opponents for {which} are not one agent spec, "
                         "which the env needs (it plays every other seat with one opponent); export one seat (seat=N) "
                         "whose opponents are one spec")  # fmt: skip
    return found.pop()


def env_spec(m: Mapping[str, Any], seat: int | None, reward: str, max_decisions: int, obs_type: str = "dict") -> Any:
    """The Gymnasium spec of ``yutenv/Yut-v0`` whose episodes are the seat's view of the
    dataset's games: the same rules, tier, opponent and reward, and ``obs_type`` (``"dict"``:
    the action mask in the observation; ``"box"``: in ``info["action_mask"]``)."""
    import gymnasium

    from .._meta import ENV_ID

    seats = list(range(players_of(m))) if seat is None else [seat]
    kwargs = {"rules": m["rules_text"], "tier": m["tier"], "opponent": _opponent(m, seats),
              "seat": "random" if seat is None else int(seat), "reward": reward, "obs_type": obs_type,
              "max_decisions": max_decisions}  # fmt: skip
    return dataclasses.replace(gymnasium.spec(ENV_ID), kwargs=kwargs)


@contextlib.contextmanager
def _minari_root(root: Path) -> Iterator[None]:
    """Minari's dataset folder is ``$MINARI_DATASETS_PATH``: point it at ``root`` meanwhile."""
    with _minari_root_lock:
        old = os.environ.get("MINARI_DATASETS_PATH")
        os.environ["MINARI_DATASETS_PATH"] = str(root)
        try:
            yield
        finally:
            if old is None:
                del os.environ["MINARI_DATASETS_PATH"]
            else:
                os.environ["MINARI_DATASETS_PATH"] = old


def _episodes(buffer: Any, t: Transitions, obs_type: str) -> list[Any]:
    """The episodes (one seat's view of one game) of ``t`` as Minari episode buffers: n steps,
    n+1 observations (the last is the terminal one), the env's infos at each observation."""
    out = []
    bounds = t.episodes()
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo, hi = int(lo), int(hi)
        obs = np.concatenate([t.obs[lo:hi], t.next_obs[hi - 1 : hi]])
        mask = np.concatenate([t.mask[lo:hi], t.next_mask[hi - 1 : hi]]).astype(np.int8)
        n = hi - lo
        seat = int(t.seat[lo])
        pad = np.zeros((1, t.policy.shape[1]), np.float32)
        infos = {
            "action_mask": mask,
            "seat": np.full(n + 1, seat, np.int64),
            "policy": np.concatenate([t.policy[lo:hi], pad]),
            "search_value": np.append(t.search_value[lo:hi], np.float32(0)),
            "searched": np.append(t.searched[lo:hi], False),
            "decision": np.append(t.decision[lo:hi], np.int32(-1)).astype(np.int64),
        }
        out.append(buffer(
            seed=int(t.seed[lo]), options={"seat": seat},
            observations={"observation": obs, "action_mask": mask} if obs_type == "dict" else obs,
            actions=t.action[lo:hi].astype(np.int64), rewards=t.reward[lo:hi].astype(np.float64),
            terminations=t.terminated[lo:hi].copy(), truncations=t.truncated[lo:hi].copy(), infos=infos,
        ))  # fmt: skip
    return out


def _check_id(dataset_id: object, parse_id: Any) -> str | None:
    """The namespace of the Minari dataset id ``dataset_id`` (None without one), checked with
    Minari's own grammar (``minari.dataset.minari_dataset.parse_dataset_id``), its version
    required (Minari's parser fails on a missing one with a TypeError), each part at most
    :data:`MAX_ID_PART` characters; else :class:`ExportError` naming the id."""
    form = "give (namespace/)name-vVERSION, such as 'yutenv/selfplay-v0'"
    if not isinstance(dataset_id, str):
        raise ExportError(f"a Minari dataset id is a string, got {type(dataset_id).__name__}: {form}")
    shown = dataset_id if len(dataset_id) <= 80 else dataset_id[:80] + "..."
    try:
        namespace, _, _ = parse_id(dataset_id)
    except (ValueError, TypeError):
        raise ExportError(f"{shown!r} is not a Minari dataset id: {form}") from None
    longest = max(dataset_id.split("/"), key=len)
    if len(longest) > MAX_ID_PART:
        raise ExportError(
            f"{shown!r}: a part of {len(longest)} characters, the longest a Minari dataset id may have is {MAX_ID_PART}"
        )
    return namespace if isinstance(namespace, str) else None


def to_minari(
    path: str | os.PathLike[str],
    dataset_id: str,
    *,
    seat: int | None = None,
    reward: str = "win",
    max_decisions: int = 0,
    obs_type: str = "dict",
    verify: bool = True,
    author: str | None = None,
    description: str | None = None,
    data_format: str | None = None,
    progress: bool | None = None,
) -> Any:
    """Write the transitions of the dataset at ``path`` as the Minari dataset ``dataset_id``
    (in Minari's folder, ``$MINARI_DATASETS_PATH`` or ``~/.minari/datasets``) and return it
    loaded (a ``minari.MinariDataset``).

    Minari holds single-agent data: each episode is one seat's view of one game
    (:func:`~yutenv.datasets.transitions` with the same ``seat``, ``reward`` and
    ``max_decisions``; ``seat=None``: every seat's). Observations are the env's ``obs_type``
    observations: ``"dict"``, ``{"observation": obs, "action_mask": int8 mask}``, or ``"box"``,
    the observation alone (what d3rlpy's ``get_minari`` takes; the mask is then in the infos),
    with the terminal one last; actions, rewards, terminations and truncations as the env returns
    them; infos at every observation: ``action_mask``, ``seat``, and the search's ``policy``,
    ``search_value``, ``searched`` and the ``decision`` index (zeros and -1 at the terminal
    observation). Each episode's ``seed`` is the game seed and its ``options`` ``{"seat": s}``,
    so ``env.reset(seed=..., options=...)`` replays it. The environment spec is
    ``yutenv/Yut-v0`` with the dataset's rules and tier, the other seats' agent as opponent
    and the same reward, so ``recover_environment()`` makes the env the data came from; the
    other seats must have one agent spec between them (with ``seat=None``, every seat the same
    one). Needs the ``minari`` extra. ``progress``: a bar of the games written (rate, ETA) on
    stderr, None on a terminal only, True always, False never.

    ``dataset_id`` is Minari's ``(namespace/)name-vN`` with its version (``yutenv/selfplay-v0``),
    each part between slashes at most :data:`MAX_ID_PART` characters; a malformed id, an id that
    exists, or a Minari folder that cannot be written raises :class:`ExportError` naming it,
    before anything is read.
    """
    minari = import_extra("minari", "minari", "yutenv.datasets.to_minari")
    buffer = import_extra("minari.data_collector.episode_buffer", "minari", "yutenv.datasets.to_minari").EpisodeBuffer
    parse_id = import_extra("minari.dataset.minari_dataset", "minari", "yutenv.datasets.to_minari").parse_dataset_id
    import gymnasium

    from .._meta import __version__

    if obs_type not in ("dict", "box"):
        raise ValueError(f"obs_type must be 'dict' or 'box', got {obs_type!r}")
    namespace = _check_id(dataset_id, parse_id)  # before anything is read
    m = _ds.read_manifest(path)
    check_v2(path, m, "to_minari")
    check_options(m, seat, reward, max_decisions)
    spec = env_spec(m, seat, reward, max_decisions, obs_type)
    dest = Path(minari.storage.get_dataset_path(dataset_id))
    if dest.exists():
        raise ExportError(
            f"{dest}: a Minari dataset {dataset_id!r} already exists: give another id (or a new version, -v1) or delete it first"
        )
    _destination(dest, f"export Minari dataset {dataset_id!r}")
    env = gymnasium.make(spec)
    try:
        obs_space, act_space = env.observation_space, env.action_space
        parts = _iter(path, seat, reward, max_decisions, verify, None, progress, "to_minari")
        first = next(parts, None)
        agents = ", ".join(map(str, m["agents"]))
        desc = description or (f"yutenv self-play: {m.get('games', 0)} games of {agents} ({m['rules_text']}, tier {m['tier']}), "
                               f"{'every seat' if seat is None else f'seat {seat}'}'s view, reward {reward!r}")  # fmt: skip
        with _staged(dest, f"export Minari dataset {dataset_id!r}") as tmp:
            root = Path(tempfile.mkdtemp(prefix=".yutenv-minari.", dir=tmp))
            with _minari_root(root):
                made = minari.create_dataset_from_buffers(
                    dataset_id=dataset_id, buffer=_episodes(buffer, first, obs_type) if first is not None else [], env=env,
                    algorithm_name=f"yutenv selfplay ({agents})", author=author, description=desc,
                    requirements=[f"yutenv>={__version__}"], observation_space=obs_space, action_space=act_space,
                    data_format=data_format,
                )  # fmt: skip
                del first
                for t in parts:
                    made.storage.update_episodes(_episodes(buffer, t, obs_type))
                    del t
            inner = root / dataset_id
            for item in inner.iterdir():
                os.replace(item, tmp / item.name)
            shutil.rmtree(root)
    finally:
        env.close()
    ns = import_extra("minari.namespace", "minari", "yutenv.datasets.to_minari")
    if namespace is not None and namespace not in ns.list_local_namespaces():
        ns.create_namespace(namespace)
    return minari.load_dataset(dataset_id)
