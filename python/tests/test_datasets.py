"""yutenv.datasets against real datasets written by ``yutenv selfplay --tier``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import yutenv
from yutenv import datasets
from yutenv.datasets import DatasetError


def selfplay(out: Path, *args: str) -> None:
    cmd = [str(yutenv.binary_path()), "selfplay", "--quiet", "--out", str(out), *args]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)


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
        assert sorted(z.files) == sorted(datasets.ARRAYS)
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


def test_damaged_shard(copy: Path) -> None:
    shard = copy / "shard-000001.npz"
    flip(shard, shard.stat().st_size // 2)
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
    with pytest.raises(DatasetError, match=r"obs is <f4 \(\d+, 205\), the manifest says <f4 \(\d+, 999\)"):
        datasets.load(copy, verify=False)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m.update(version=2), "version 2; this reader knows version 1"),
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
