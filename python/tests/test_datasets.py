"""yutenv.datasets against real datasets written by ``yutenv selfplay --tier``."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import selfplay
from yutenv.datasets import DatasetError

import yutenv
from yutenv import datasets


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("ds") / "data"
    selfplay(d, "--tier", "compact", "--games", "5", "--shard-games", "2", "--agents", "mcts:8;greedy", "--seed", "3")
    return d


@pytest.fixture
def copy(made: Path, tmp_path: Path) -> Path:
    d = tmp_path / "copy"
    shutil.copytree(made, d)
    return d


def test_load(made: Path) -> None:
    ds = datasets.load(made)
    m = ds.manifest
    assert m["format"] == "yutenv-dataset" and m["complete"] and m["games"] == 5
    assert m["agents"] == ["mcts:8", "greedy"] and m["tier"] == "compact"
    n = m["decisions"]
    assert len(ds) == n > 0
    assert ds.obs.shape == (n, m["obs_size"]) and ds.obs.dtype == np.float32
    assert ds.mask.shape == (n, 180) and ds.mask.dtype == np.uint8
    assert ds.policy.shape == (n, 180) and ds.policy.dtype == np.float32
    for name in ("action", "value", "search_value", "seat", "game", "decision"):
        assert ds[name].shape == (n,)
    assert (ds.mask[np.arange(n), ds.action] == 1).all(), "every action is legal"
    np.testing.assert_allclose(ds.policy.sum(axis=1), 1, atol=1e-5)
    assert (ds.policy[ds.mask == 0] == 0).all(), "no policy mass on illegal actions"
    assert set(np.unique(ds.value)) <= {-1.0, 1.0}
    assert (np.diff(ds.game) >= 0).all() and ds.game[0] == 0 and ds.game[-1] == 4
    for g in range(5):
        rows = ds.game == g
        d = ds.decision[rows]
        assert (d == np.arange(len(d))).all(), "decisions of a game are 0, 1, 2, ..."
        # One winner per game: the value is +1 exactly for the winner's rows.
        winners = set(ds.seat[rows][ds.value[rows] == 1])
        assert len(winners) == 1
    mcts_rows = ds.seat == 0
    assert (ds.policy[mcts_rows] > 0).sum() > mcts_rows.sum(), "mcts rows hold visit distributions, not one-hots"


def test_iter_shards(made: Path) -> None:
    shards = list(datasets.iter_shards(made))
    assert [s.games for s in shards] == [2, 2, 1]
    assert [s.first_game for s in shards] == [0, 2, 4]
    assert [s.file for s in shards] == ["shard-000000.npz", "shard-000001.npz", "shard-000002.npz"]
    ds = datasets.load(made)
    np.testing.assert_array_equal(np.concatenate([s.obs for s in shards]), ds.obs)
    np.testing.assert_array_equal(np.concatenate([s.action for s in shards]), ds.action)


def test_subset_of_arrays(made: Path) -> None:
    ds = datasets.load(made, arrays=["value", "policy"])
    assert ds.value.shape[0] == ds.manifest["decisions"]
    assert ds.obs.shape == (0, ds.manifest["obs_size"])
    with pytest.raises(ValueError, match="unknown arrays"):
        datasets.load(made, arrays=["pixels"])


def test_plain_numpy_reads_a_shard(made: Path) -> None:
    with np.load(made / "shard-000000.npz") as z:
        assert sorted(z.files) == sorted(datasets.ARRAYS + datasets.GAME_ARRAYS)
        assert z["obs"].dtype == np.float32


def test_records_alongside(made: Path) -> None:
    m = datasets.read_manifest(made)
    lines = (made / m["shards"][0]["records"]).read_text().splitlines()
    assert len(lines) == 2
    rec = json.loads(lines[0])
    assert rec["format"] == "yutenv-record" and rec["players"] == ["mcts:8", "greedy"]


def flip(path: Path, at: int) -> None:
    b = bytearray(path.read_bytes())
    b[at] ^= 0xFF
    path.write_bytes(bytes(b))


def compressed_middle(path: Path) -> int:
    """The offset of a byte in the middle of the first array's compressed data: a byte the
    reader needs (a byte of a zip header may be redundant, e.g. a local header's sizes when a
    data descriptor follows, and flipping it harms nothing)."""
    with zipfile.ZipFile(path) as z:
        first = z.infolist()[0]
    b = path.read_bytes()
    name_len, extra_len = struct.unpack_from("<HH", b, first.header_offset + 26)
    return first.header_offset + 30 + name_len + extra_len + first.compress_size // 2


def test_damaged_shard(copy: Path) -> None:
    shard = copy / "shard-000001.npz"
    flip(shard, compressed_middle(shard))
    with pytest.raises(DatasetError, match=r"shard-000001\.npz: SHA-256 .* does not match"):
        datasets.load(copy)
    # Without the SHA-256 check the zip's CRC-32 (or the inflater) still catches it.
    with pytest.raises(DatasetError, match=r"shard-000001\.npz"):
        datasets.load(copy, verify=False)
    it = datasets.iter_shards(copy)
    assert next(it).file == "shard-000000.npz"
    with pytest.raises(DatasetError):
        next(it)


def test_truncated_and_missing_shards(copy: Path) -> None:
    shard = copy / "shard-000002.npz"
    shard.write_bytes(shard.read_bytes()[:100])
    with pytest.raises(DatasetError, match=r"100 bytes, the manifest says \d+ \(truncated"):
        datasets.load(copy)
    shard.unlink()
    with pytest.raises(DatasetError, match="listed in the manifest but missing"):
        datasets.load(copy)


def edit_manifest(d: Path, fn) -> None:  # type: ignore[no-untyped-def]
    p = d / "manifest.json"
    m = json.loads(p.read_text())
    fn(m)
    p.write_text(json.dumps(m))


def test_mismatched_manifest(copy: Path) -> None:
    def wrong_obs(m: dict) -> None:
        m["arrays"][0]["shape"] = [999]

    edit_manifest(copy, wrong_obs)
    with pytest.raises(DatasetError, match=r"obs is <f4 \(\d+, 213\), the manifest says <f4 \(\d+, 999\)"):
        datasets.load(copy, verify=False)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m.update(version=3), "version 3; this reader knows versions 1 to 2"),
        (lambda m: m.update(version=True), "version True; this reader knows versions 1 to 2"),
        (lambda m: m.pop("game_arrays"), "field 'game_arrays' is missing"),
        (
            lambda m: m["game_arrays"][0].update(name="last_obs"),
            r"game_arrays \['last_obs'\], this reader expects \['final_obs'\]",
        ),
        (lambda m: m["arrays"].pop(9), "this reader expects for version 2"),
        (lambda m: m.update(format="zip"), "format 'zip'"),
        (lambda m: m["shards"][1].update(first_game=7), "starts at game 7, expected 2"),
        (lambda m: m["shards"][0].update(file="../evil.npz"), "want a plain file name"),
        (lambda m: m.pop("arrays"), "field 'arrays' is missing"),
    ],
)
def test_bad_manifest(copy: Path, change, message: str) -> None:  # type: ignore[no-untyped-def]
    edit_manifest(copy, change)
    with pytest.raises(DatasetError, match=message):
        datasets.load(copy)


@pytest.mark.parametrize(
    "change, layout",
    [(lambda m: m.pop("obs_layout"), "1"), (lambda m: m.update(obs_layout=1), "1"), (lambda m: m.update(obs_layout=3), "3")],
)
def test_another_observation_layout_is_refused(copy: Path, change, layout: str) -> None:  # type: ignore[no-untyped-def]
    """A dataset records its observation layout; one without the key was written before
    layouts were recorded (layout 1). Another layout than this build's is refused, naming both."""
    assert json.loads((copy / "manifest.json").read_text())["obs_layout"] == yutenv.core.OBS_LAYOUT == 2
    edit_manifest(copy, change)
    with pytest.raises(DatasetError, match=f"made for observation layout {layout}, this build reads layout 2"):
        datasets.load(copy)


def test_not_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such dataset directory"):
        datasets.load(tmp_path / "nothing")
    with pytest.raises(DatasetError, match="no manifest.json"):
        datasets.load(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(DatasetError, match="not valid JSON"):
        datasets.load(tmp_path)


def test_partial_dataset_loads_what_is_written(tmp_path: Path) -> None:
    d = tmp_path / "part"
    selfplay(d, "--tier", "planes", "--games", "3", "--shard-games", "2")
    m = json.loads((d / "manifest.json").read_text())
    m["games_target"], m["complete"] = 10, False  # as a run still being written looks
    (d / "manifest.json").write_text(json.dumps(m))
    ds = datasets.load(d)
    assert ds.manifest["complete"] is False
    assert len(ds) == m["decisions"] and ds.obs.shape[1] == m["obs_size"]


# Damaged datasets: whatever is broken, load raises DatasetError,
# never UnicodeDecodeError, IsADirectoryError, TypeError, KeyError or
# tokenize.TokenError from the parsers underneath.


def rehash(d: Path, file: str) -> None:
    """Make the manifest agree with a shard's damaged bytes (size and SHA-256),
    so that the checks behind the checksum are reached."""
    p = d / file

    def fix(m: dict[str, Any]) -> None:
        for s in m["shards"]:
            if s["file"] == file:
                s["bytes"] = p.stat().st_size
                s["sha256"] = hashlib.sha256(p.read_bytes()).hexdigest()

    edit_manifest(d, fix)


def npy_bytes(header: bytes, data: bytes = b"") -> bytes:
    """A .npy file (format 1.0) with the given header text, padded as numpy does."""
    pad = (64 - (10 + len(header) + 1) % 64) % 64
    h = header + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data


def replace_member(shard: Path, name: str, content: bytes) -> None:
    """Rewrite a shard's zip with one member's bytes replaced."""
    with zipfile.ZipFile(shard) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members[name] = content
    with zipfile.ZipFile(shard, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)


def test_binary_manifest(copy: Path) -> None:
    (copy / "manifest.json").write_bytes(b"\xff\xfe\x00\x01" * 64)
    with pytest.raises(DatasetError, match="not UTF-8"):
        datasets.load(copy)


def test_directory_where_a_file_should_be(copy: Path) -> None:
    shard = copy / "shard-000001.npz"
    shard.unlink()
    shard.mkdir()
    with pytest.raises(DatasetError, match="not a regular file"):
        datasets.load(copy)
    (copy / "manifest.json").unlink()
    (copy / "manifest.json").mkdir()
    with pytest.raises(DatasetError, match="cannot read the manifest"):
        datasets.load(copy)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m["arrays"].__setitem__(0, "obs"), r"arrays\[0\] is str, want an object"),
        (lambda m: m["arrays"][0].update(shape="213"), r"shape '213', want a list of counts"),
        (lambda m: m["arrays"][0].update(shape=[-1]), r"shape \[-1\], want a list of counts"),
        (lambda m: m["arrays"][0].update(shape=[2.5]), r"want a list of counts"),
        (lambda m: m["arrays"][1].update(dtype=5), r"dtype 5 is not a numpy dtype"),
        (lambda m: m["arrays"][1].update(dtype="nonsense"), r"dtype 'nonsense' is not a numpy dtype"),
        (lambda m: m["arrays"][1].update(dtype="[("), r"is not a numpy dtype"),
        (lambda m: m["arrays"][2].pop("shape"), r"arrays\[2\] has no 'shape'"),
        (lambda m: m["arrays"][2].pop("dtype"), r"arrays\[2\] has no 'dtype'"),
        (lambda m: m["arrays"][2].update(name=7), r"name 7 is not a string"),
        (lambda m: m.update(games="5"), r"field 'games' is '5', want a count"),
        (lambda m: m.update(obs_size=True), r"field 'obs_size' is missing"),
        (lambda m: m["shards"][0].pop("bytes"), r"field 'bytes' is None, want a count"),
        (lambda m: m["shards"][0].update(decisions=True), r"field 'decisions' is True"),
        (lambda m: m["shards"][0].update(decisions=1.5), r"field 'decisions' is 1.5"),
        (lambda m: m["shards"][0].update(file=7), r"field 'file' is 7"),
        (lambda m: m["shards"][0].update(file=".."), r"field 'file' is '..'"),
        (lambda m: m["shards"].__setitem__(0, []), r"shard entry 0 is not an object"),
        (lambda m: m["shards"][1].update(file=m["shards"][0]["file"], first_game=2), r"listed twice"),
    ],
)
def test_wrong_json_types(copy: Path, change, message: str) -> None:  # type: ignore[no-untyped-def]
    edit_manifest(copy, change)
    with pytest.raises(DatasetError, match=message):
        datasets.load(copy)


def test_deeply_nested_manifest(copy: Path) -> None:
    (copy / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DatasetError, match="not valid JSON"):
        datasets.load(copy)


@pytest.mark.parametrize("verify", [True, False])
def test_truncated_npz_with_a_matching_manifest(copy: Path, verify: bool) -> None:
    shard = copy / "shard-000000.npz"
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    rehash(copy, shard.name)
    with pytest.raises(DatasetError, match=r"shard-000000\.npz: cannot read the shard"):
        datasets.load(copy, verify=verify)


def test_garbage_npz_with_a_matching_manifest(copy: Path) -> None:
    shard = copy / "shard-000000.npz"
    shard.write_bytes(bytes(range(256)) * (shard.stat().st_size // 256 + 1))
    rehash(copy, shard.name)
    with pytest.raises(DatasetError, match=r"cannot read the shard \(BadZipFile"):
        datasets.load(copy)


@pytest.mark.parametrize(
    "member, message",
    [
        # An unterminated header: numpy's parser raised tokenize.TokenError.
        (npy_bytes(b"{'descr': '<f4', 'fortran_order': False, 'shape': (3,"), "cannot read the shard"),
        (npy_bytes(b"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 213), }"), "cannot read the shard|213"),
        (b"\x93NUMPY\x09\x00garbage", r"format version \(9, 0\), want 1.0 or 2.0"),
        (b"not an npy file at all", "cannot read the shard"),
        # A header that asks for a terabyte: refused before anything is allocated.
        (npy_bytes(b"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 213), }"), r"manifest says"),
        (npy_bytes(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 213), }"), r"obs is <f8"),
    ],
)
def test_corrupt_npy_inside_the_zip(copy: Path, member: bytes, message: str) -> None:
    shard = copy / "shard-000000.npz"
    replace_member(shard, "obs.npy", member)
    rehash(copy, shard.name)
    with pytest.raises(DatasetError, match=message):
        datasets.load(copy)
    with pytest.raises(DatasetError, match=message):
        list(datasets.iter_shards(copy, verify=False))


def test_missing_member_with_a_matching_manifest(copy: Path) -> None:
    shard = copy / "shard-000000.npz"
    with zipfile.ZipFile(shard) as z:
        members = {n: z.read(n) for n in z.namelist() if n != "value.npy"}
    with zipfile.ZipFile(shard, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
    rehash(copy, shard.name)
    with pytest.raises(DatasetError, match=r"arrays \['value'\] are missing"):
        datasets.load(copy)


def test_checksum_mismatch_same_size(copy: Path) -> None:
    shard = copy / "shard-000000.npz"
    b = bytearray(shard.read_bytes())
    b[-1] ^= 0xFF
    shard.write_bytes(bytes(b))
    with pytest.raises(DatasetError, match=r"SHA-256 .* does not match"):
        datasets.load(copy)


def test_manifest_before_the_seed_scheme_loads(copy: Path) -> None:
    # Datasets written before yutenv recorded its seed scheme (scheme 1) have no seed_scheme.
    assert datasets.read_manifest(copy)["seed_scheme"] == 2
    edit_manifest(copy, lambda m: m.pop("seed_scheme"))
    ds = datasets.load(copy)
    assert "seed_scheme" not in ds.manifest and ds.games == 5


def test_load_peaks_at_the_arrays_it_returns(tmp_path: Path) -> None:
    """load allocates every array once, at its full size, and reads each shard into its rows:
    its peak is the arrays it returns plus the reading buffers (a megabyte, whatever the size;
    it was twice the arrays: the shards, then their concatenation)."""
    import tracemalloc

    d = tmp_path / "big"
    selfplay(d, "--tier", "tactical", "--games", "24", "--shard-games", "6", "--agents", "greedy", "--seed", "1")
    tracemalloc.start()
    try:
        ds = datasets.load(d)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    held = sum(a.nbytes for a in ds.arrays().values()) + (ds.final_obs.nbytes if ds.final_obs is not None else 0)
    assert held > 8 << 20
    assert peak < held + (2 << 20), f"peak {peak} bytes for {held} bytes of arrays"  # reading buffers: 1 MB
