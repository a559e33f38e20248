"""The self-play dataset format, read: the manifest, the ``.npz`` shards and their checks.

:mod:`yutenv.datasets` (``yutenv.data.datasets``) is the public face of this module and of the
views built over it (:mod:`.transitions`, :mod:`.export`, :mod:`.torch_data`), which import this
module, not the face, so that no module of the layer imports one that imports it back. The
format is documented in ``docs/DATASETS.md``; only numpy is needed to read it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from .._files import FileRefused, open_regular, read_regular
from .._files import kind as file_kind
from .._layout import check_layout
from .._protocol import (
    DATASET_ARRAYS,
    DATASET_FORMAT,
    DATASET_GAME_ARRAYS,
    DATASET_MANIFEST,
    DATASET_MAX_MANIFEST,
    DATASET_OPTIONAL_ARRAYS,
    DATASET_VERSION,
)
from ..errors import YutEnvError

FORMAT = DATASET_FORMAT
#: The newest format version read (and the one ``yutenv selfplay`` writes); every version from 1 up to it is read.
VERSION = DATASET_VERSION
MANIFEST = DATASET_MANIFEST
#: The largest manifest read, as Go reads (a real one is a few kB; this keeps a hostile one from filling memory).
MAX_MANIFEST = DATASET_MAX_MANIFEST
#: How many bytes of array data one byte of a shard can hold at most: deflate's largest
#: ratio (1032:1, a run of one byte). A manifest whose counts need more data than its shard
#: files could hold is refused before anything is allocated for them.
MAX_DEFLATE_RATIO = 1032

#: The arrays of every shard of the newest version, in the order the manifest lists them
#: (a version 1 dataset has the first nine: no ``potential`` or ``searched``).
ARRAYS: tuple[str, ...] = DATASET_ARRAYS[DATASET_VERSION]
#: Arrays a dataset may add after those: ``visits`` (float32 [180], the raw root visit
#: counts; written by network-guided self-play, :class:`yutenv.az.SelfPlay`), then
#: ``policy_target`` (uint8: 1 if the row's policy is a target, 0 for a fast search of
#: playout cap randomization; a dataset without it has a target in every row).
OPTIONAL_ARRAYS: tuple[str, ...] = DATASET_OPTIONAL_ARRAYS
#: Arrays whose rows are games (version 2 on): ``final_obs`` (float32 [players, D], the
#: observation of the game's final position for every seat).
GAME_ARRAYS: tuple[str, ...] = DATASET_GAME_ARRAYS

__all__ = [
    "ARRAYS",
    "GAME_ARRAYS",
    "OPTIONAL_ARRAYS",
    "Dataset",
    "DatasetError",
    "Shard",
    "iter_shards",
    "load",
    "read_manifest",
]


class DatasetError(YutEnvError, ValueError):
    """A dataset directory, manifest or shard is missing, damaged or inconsistent."""


@dataclass
class Shard:
    """The arrays of one shard (or of a whole dataset, see :class:`Dataset`).

    Row i is one decision: ``obs[i]`` (float32 [D], the tier's observation of the
    seat to move), ``mask[i]`` (uint8 [180], legal actions), ``action[i]`` (int32,
    the action played), ``policy[i]`` (float32 [180], the agent's search policy:
    visit fractions for mcts, one-hot of the played action for other agents),
    ``value[i]`` (float32, the game's final outcome for the seat to move, in
    [-1, 1]), ``search_value[i]`` (float32, the agent's own estimate, 0 without a
    search), ``seat[i]`` (int8), ``game[i]`` (int64, the game's index in the
    dataset), ``decision[i]`` (int32, the decision's index within its game); and
    ``visits[i]`` (float32 [180], the raw root visit counts; zeros for a forced move)
    when the dataset has them, else ``visits`` is None; and ``policy_target[i]`` (uint8,
    1 if ``policy[i]`` is a policy target, 0 if it is the policy of a fast search of
    playout cap randomization, not to be learned from) when the dataset has it, else
    None: every row's policy is a target (:meth:`policy_targets` says so either way).
    Version 2 datasets add ``potential[i]`` (float32, the shaping potential of the seat to
    move, as the env's ``reward="progress"`` computes it), ``searched[i]`` (uint8, 1 if
    the agent searched the decision) and, one row per game, ``final_obs[g]`` (float32
    [players, D], every seat's observation of the final position); None in version 1.
    """

    obs: npt.NDArray[np.float32]
    mask: npt.NDArray[np.uint8]
    action: npt.NDArray[np.int32]
    policy: npt.NDArray[np.float32]
    value: npt.NDArray[np.float32]
    search_value: npt.NDArray[np.float32]
    seat: npt.NDArray[np.int8]
    game: npt.NDArray[np.int64]
    decision: npt.NDArray[np.int32]
    #: The shard's file name ("" for a whole dataset).
    file: str = ""
    #: The first game of the shard and how many games it holds.
    first_game: int = 0
    games: int = 0
    #: The raw root visit counts (datasets of network-guided self-play), else None.
    visits: npt.NDArray[np.float32] | None = None
    #: 1 where the row's policy is a target (self-play with playout cap randomization), else None.
    policy_target: npt.NDArray[np.uint8] | None = None
    #: Version 2: the shaping potential of the seat to move at every decision, else None.
    potential: npt.NDArray[np.float32] | None = None
    #: Version 2: 1 where the agent searched the decision, else None.
    searched: npt.NDArray[np.uint8] | None = None
    #: Version 2: per game, every seat's observation of the final position [G, players, D], else None.
    final_obs: npt.NDArray[np.float32] | None = None

    def __len__(self) -> int:
        return int(self.action.shape[0])

    def __getitem__(self, name: str) -> np.ndarray:
        arr: np.ndarray | None = getattr(self, name) if name in _ALL_NAMES else None
        if arr is None:
            raise KeyError(name)
        return arr

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays of decisions by name (``potential``, ``searched``, ``visits`` and
        ``policy_target`` only when the dataset has them; ``final_obs``, whose rows are
        games, is not among them)."""
        return {name: getattr(self, name) for name in ARRAYS + OPTIONAL_ARRAYS if getattr(self, name) is not None}

    def policy_targets(self, rows: int | None = None) -> npt.NDArray[np.bool_]:
        """Which rows' policy is a target: ``policy_target`` as bools, or all True for a
        dataset without it (every row's policy is a target). ``rows`` is the number of rows
        when ``policy_target`` was not read (``arrays=``); default ``len(self)``."""
        if self.policy_target is not None and len(self.policy_target):
            return self.policy_target.astype(bool)
        return np.ones(len(self) if rows is None else rows, dtype=bool)


@dataclass
class Dataset(Shard):
    """A whole dataset: the rows of every shard, concatenated, and the manifest."""

    manifest: dict[str, Any] = field(default_factory=dict)


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check ``DIR/manifest.json`` (format, version, observation layout, arrays, shard list).

    The manifest is opened without blocking and must be a regular file of at most
    :data:`MAX_MANIFEST` bytes: a FIFO, a device (a link to ``/dev/zero``), a folder or a
    larger file raises :class:`DatasetError` naming it, before it is read.
    """
    d = Path(path)
    mp = d / MANIFEST
    try:
        text = read_regular(mp, MAX_MANIFEST).decode("utf-8")
    except FileRefused as e:  # a FIFO, a device, a directory; or too large
        raise DatasetError(f"{mp}: cannot read the manifest: {e.strerror}") from e
    except FileNotFoundError:
        if not d.exists():
            raise DatasetError(f"{d}: no such dataset directory") from None
        raise DatasetError(f"{d}: no {MANIFEST} (not a yutenv dataset, or written by an unfinished first shard)") from None
    except UnicodeDecodeError as e:
        raise DatasetError(f"{mp}: not UTF-8 text ({e.reason} at byte {e.start}): not a manifest") from None
    except OSError as e:  # a directory, a FIFO, no permission...
        raise DatasetError(f"{mp}: cannot read the manifest: {e.strerror or e}") from e
    try:
        m = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise DatasetError(f"{mp}: not valid JSON: {e}") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise DatasetError(f"{mp}: format {m.get('format') if isinstance(m, dict) else None!r}, want {FORMAT!r}")
    version = m.get("version")
    if isinstance(version, bool) or version not in DATASET_ARRAYS:
        raise DatasetError(f"{mp}: version {version!r}; this reader knows versions 1 to {VERSION} (upgrade yutenv)")
    why = check_layout(m.get("obs_layout"))
    if why is not None:
        raise DatasetError(
            f"{mp}: {why}: its observations do not read as this build's (regenerate the dataset, "
            "or read it with the yutenv that made it)"
        )
    for key, kind in (
        ("arrays", list),
        ("shards", list),
        ("obs_size", int),
        ("tier", str),
        ("agents", list),
        ("game_arrays", list),
    ):
        if key == "game_arrays" and version == 1:
            continue
        if not isinstance(m.get(key), kind) or isinstance(m.get(key), bool):
            raise DatasetError(f"{mp}: field {key!r} is missing or not a {kind.__name__}")
    if "games" in m and not _count(m["games"]):
        raise DatasetError(f"{mp}: field 'games' is {m['games']!r}, want a count")
    for i, a in enumerate(m["arrays"]):
        _check_array_spec(mp, i, a)
    names = [a["name"] for a in m["arrays"]]
    base = DATASET_ARRAYS[version]
    extra = names[len(base) :]
    if tuple(names[: len(base)]) != base or extra != [n for n in OPTIONAL_ARRAYS if n in extra]:
        raise DatasetError(
            f"{mp}: arrays {names}, this reader expects for version {version} {list(base)} and optionally {list(OPTIONAL_ARRAYS)}"
        )
    if version > 1:
        for i, a in enumerate(m["game_arrays"]):
            _check_array_spec(mp, i, a, "game_arrays")
        gnames = [a["name"] for a in m["game_arrays"]]
        if tuple(gnames) != GAME_ARRAYS:
            raise DatasetError(f"{mp}: game_arrays {gnames}, this reader expects {list(GAME_ARRAYS)}")
    nxt = 0
    seen: set[str] = set()
    for i, s in enumerate(m["shards"]):
        if not isinstance(s, dict):
            raise DatasetError(f"{mp}: shard entry {i} is not an object")
        for key in ("file", "records", "sha256"):
            v = s.get(key)
            if not isinstance(v, str) or not v or os.path.basename(v) != v or v in (".", ".."):
                raise DatasetError(f"{mp}: shard {i}: field {key!r} is {v!r}, want a plain file name")
        for key in ("first_game", "games", "decisions", "bytes"):
            if not _count(s.get(key)):
                raise DatasetError(f"{mp}: shard {s['file']}: field {key!r} is {s.get(key)!r}, want a count")
        if s["first_game"] != nxt:
            raise DatasetError(f"{mp}: shard {s['file']} starts at game {s['first_game']}, expected {nxt}")
        if s["file"] in seen:
            raise DatasetError(f"{mp}: shard {s['file']} is listed twice")
        seen.add(s["file"])
        nxt += s["games"]
    return m


def _count(v: object) -> bool:
    """Whether v is a JSON count: an int (not a bool) >= 0."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _check_array_spec(mp: Path, i: int, a: object, where: str = "arrays") -> None:
    """Check one entry of the manifest's ``arrays`` (or ``game_arrays``): {name, dtype, shape}."""
    if not isinstance(a, dict):
        raise DatasetError(f"{mp}: {where}[{i}] is {type(a).__name__}, want an object")
    for key in ("name", "dtype", "shape"):
        if key not in a:
            raise DatasetError(f"{mp}: {where}[{i}] has no {key!r}")
    if not isinstance(a["name"], str):
        raise DatasetError(f"{mp}: {where}[{i}]: name {a['name']!r} is not a string")
    if not isinstance(a["shape"], list) or not all(_count(n) for n in a["shape"]):
        raise DatasetError(f"{mp}: {where}[{i}] ({a['name']}): shape {a['shape']!r}, want a list of counts")
    try:
        if not isinstance(a["dtype"], str):
            raise TypeError("not a string")
        if np.dtype(a["dtype"]).hasobject:
            raise ValueError("object arrays are not data")
    except (TypeError, ValueError, SyntaxError) as e:
        raise DatasetError(f"{mp}: {where}[{i}] ({a['name']}): dtype {a['dtype']!r} is not a numpy dtype ({e})") from None


def _specs(m: Mapping[str, Any]) -> dict[str, tuple[np.dtype, tuple[int, ...], str]]:
    """Every array of the manifest: its dtype, the shape of one row, and what its rows are
    (``"decisions"`` or ``"games"``, the key of a shard entry that counts them)."""
    out = {a["name"]: (np.dtype(a["dtype"]), tuple(a["shape"]), "decisions") for a in m["arrays"]}
    for a in m.get("game_arrays", ()) if m["version"] > 1 else ():
        out[a["name"]] = (np.dtype(a["dtype"]), tuple(a["shape"]), "games")
    return out


def _check_size(p: Path, size: int, entry: Mapping[str, Any], m: Mapping[str, Any], names: Sequence[str]) -> None:
    """The shard file ``p`` has ``size`` bytes, as the manifest lists, and they can hold the
    rows its counts declare for the arrays ``names`` (at most :data:`MAX_DEFLATE_RATIO` bytes of
    data a byte): checked before anything is allocated for those rows."""
    if size != entry["bytes"]:
        raise DatasetError(f"{p}: {size} bytes, the manifest says {entry['bytes']} (truncated or replaced)")
    specs = _specs(m)
    need = sum(int(entry[specs[n][2]]) * math.prod(specs[n][1]) * specs[n][0].itemsize for n in names)
    if need > MAX_DEFLATE_RATIO * size:
        raise DatasetError(
            f"{p}: the manifest's counts ({entry['decisions']} decisions, {entry['games']} games) need {need} bytes of "
            f"arrays, more than a shard of {size} bytes can hold (damaged or forged manifest)"
        )


def _stat_shard(p: Path) -> os.stat_result:
    """The shard file's status: a regular file that is there."""
    try:
        st = p.stat()
    except FileNotFoundError:
        raise DatasetError(f"{p}: listed in the manifest but missing") from None
    except OSError as e:
        raise DatasetError(f"{p}: cannot read the shard: {e.strerror or e}") from e
    if not stat.S_ISREG(st.st_mode):
        raise DatasetError(f"{p}: not a regular file ({file_kind(st.st_mode)}) where a shard should be")
    return st


def _open_shard(p: Path, entry: Mapping[str, Any], m: Mapping[str, Any], verify: bool, names: Sequence[str]) -> IO[bytes]:
    """The shard file opened without blocking: a regular file of the listed size, big enough for
    the rows the manifest declares, and of the listed SHA-256 when ``verify`` (hashed through the
    descriptor that is then read, so what is checked is what is read)."""
    try:
        fh = open_regular(p)
    except FileNotFoundError:
        raise DatasetError(f"{p}: listed in the manifest but missing") from None
    except FileRefused as e:
        raise DatasetError(f"{p}: {e.strerror} where a shard should be") from e
    except OSError as e:
        raise DatasetError(f"{p}: cannot read the shard: {e.strerror or e}") from e
    try:
        _check_size(p, os.fstat(fh.fileno()).st_size, entry, m, names)
        if verify:
            h = hashlib.sha256()
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
            if h.hexdigest() != entry["sha256"]:
                raise DatasetError(f"{p}: SHA-256 {h.hexdigest()} does not match the manifest's {entry['sha256']} (damaged)")
            fh.seek(0)
    except OSError as e:
        fh.close()
        raise DatasetError(f"{p}: cannot read the shard: {e.strerror or e}") from e
    except BaseException:
        fh.close()
        raise
    return fh


def _read_shard(
    d: Path,
    m: Mapping[str, Any],
    entry: Mapping[str, Any],
    verify: bool,
    names: Sequence[str],
    into: Mapping[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Read the arrays ``names`` of one shard, checked; into the given arrays when ``into``
    has them (views of the caller's, of the shard's shape), else into new ones."""
    p = d / entry["file"]
    specs = _specs(m)
    out: dict[str, np.ndarray] = {}
    with _open_shard(p, entry, m, verify, names) as fh:
        try:
            with zipfile.ZipFile(fh) as z:
                members = set(z.namelist())
                missing = [name for name in names if name + ".npy" not in members]
                if missing:
                    raise DatasetError(f"{p}: arrays {missing} are missing")
                for name in names:
                    dtype, row, per = specs[name]
                    with z.open(name + ".npy") as f:
                        dest = into.get(name) if into is not None else None
                        out[name] = _read_npy(p, name, f, dtype, (entry[per], *row), dest)
        except DatasetError:
            raise
        except Exception as e:  # noqa: BLE001
            # A shard is foreign bytes: zip, zlib, the .npy header (parsed with
            # ast/tokenize) and the data raise a dozen unrelated types
            # (BadZipFile, zlib.error, ValueError, EOFError, SyntaxError,
            # tokenize.TokenError, NotImplementedError, ...). All mean a damaged shard.
            raise DatasetError(f"{p}: cannot read the shard ({type(e).__name__}: {e})") from e
    return out


def _read_npy(
    p: Path,
    name: str,
    f: IO[bytes],
    dtype: np.dtype,
    shape: tuple[int, ...],
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Read one .npy member whose header must say dtype and shape (C order), into ``out``
    (a C-contiguous array of that dtype and shape) or a new array.

    The header is checked before anything is allocated, so a damaged or hostile
    one cannot make the reader allocate for a shape the manifest does not list;
    the data is read into the array a chunk at a time, and reading the member to its end
    makes zipfile check its CRC-32.
    """
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        got_shape, fortran, got_dtype = np.lib.format.read_array_header_1_0(f)
    elif version == (2, 0):
        got_shape, fortran, got_dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise DatasetError(f"{p}: {name}: .npy format version {version}, want 1.0 or 2.0")
    if got_dtype != dtype or got_shape != shape or fortran:
        order = " (Fortran order)" if fortran else ""
        raise DatasetError(f"{p}: {name} is {got_dtype.str} {got_shape}{order}, the manifest says {dtype.str} {shape}")
    arr = np.empty(shape, dtype) if out is None else out
    buf = arr.reshape(-1).data.cast("B")
    got = 0
    while got < len(buf):
        n = f.readinto(buf[got : got + min(len(buf) - got, 1 << 18)])  # type: ignore[attr-defined]
        if not n:
            raise DatasetError(f"{p}: {name}: {got} bytes of data, the header says {len(buf)} (truncated)")
        got += n
    if f.read(1):
        raise DatasetError(f"{p}: {name}: bytes after the array's data")
    return arr


def iter_shards(
    path: str | os.PathLike[str],
    *,
    verify: bool = True,
    arrays: Sequence[str] | None = None,
    order: Sequence[int] | None = None,
) -> Iterator[Shard]:
    """Yield the dataset's shards one at a time, in game order, each checked.

    ``verify`` also compares every shard's SHA-256 with the manifest (the size,
    the arrays' shapes and dtypes and zip's CRC-32 are always checked).
    ``arrays`` limits which arrays are read (the others are empty arrays); by default
    every array, ``final_obs`` included.
    ``order`` gives the shards' indices to read, in that order (default: all, in order).
    """
    d = Path(path)
    m = read_manifest(d)
    names = _names(arrays, m)
    entries = m["shards"] if order is None else [m["shards"][int(i)] for i in order]
    for entry in entries:
        got = _read_shard(d, m, entry, verify, names)
        yield Shard(**_fill(got, m), file=entry["file"], first_game=entry["first_game"], games=entry["games"])


def load(path: str | os.PathLike[str], *, verify: bool = True, arrays: Sequence[str] | None = None) -> Dataset:
    """Read a whole dataset into memory: every shard's rows, concatenated in game order.

    Returns a :class:`Dataset` whose arrays are named as in :class:`Shard` and whose
    ``manifest`` is the parsed ``manifest.json`` (rules, agents, tier, seed, ``seed_scheme``
    (absent in datasets written before it was recorded: scheme 1), counts,
    ``complete``). A dataset still being written (``complete`` false) loads the shards
    finished so far. Each array is allocated once, at its full size from the manifest's
    counts, and every shard is read straight into its rows, so memory peaks at the arrays
    returned plus a megabyte. For data larger than memory use :func:`iter_shards`.

    Before anything is allocated, every shard file must be a regular file of the size its
    manifest entry lists, able to hold the rows its counts declare (a manifest that overstates
    them raises :class:`DatasetError`); the manifest and the shards are opened without blocking
    (a FIFO or a device in their place raises :class:`DatasetError` at once, naming it).
    """
    d = Path(path)
    m = read_manifest(d)
    names = _names(arrays, m)
    specs = _specs(m)
    for entry in m["shards"]:  # the counts against the files' real sizes, before allocating for them
        p = d / entry["file"]
        _check_size(p, _stat_shard(p).st_size, entry, m, names)
    totals = {per: sum(int(e[per]) for e in m["shards"]) for per in ("decisions", "games")}
    out = {n: np.empty((totals[specs[n][2]], *specs[n][1]), dtype=specs[n][0]) for n in names}
    at = {"decisions": 0, "games": 0}
    for entry in m["shards"]:
        views = {n: out[n][at[specs[n][2]] : at[specs[n][2]] + entry[specs[n][2]]] for n in names}
        _read_shard(d, m, entry, verify, names, views)
        for per in at:
            at[per] += int(entry[per])
    return Dataset(**_fill(out, m), games=int(m.get("games", 0)), manifest=m)  # type: ignore[arg-type]


def _names(arrays: Sequence[str] | None, m: Mapping[str, Any]) -> list[str]:
    have = list(_specs(m))
    if arrays is None:
        return have
    unknown = [a for a in arrays if a not in have]
    if unknown:
        raise ValueError(f"unknown arrays {unknown}; known: {have}")
    return list(arrays)


def _fill(got: Mapping[str, np.ndarray], m: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Every array by name; those not read are empty with the right dtype and row shape."""
    return {n: got[n] if n in got else np.zeros((0, *row), dtype=dt) for n, (dt, row, _) in _specs(m).items()}


_ALL_NAMES = ARRAYS + OPTIONAL_ARRAYS + GAME_ARRAYS
