"""The exports of a dataset's transitions, read back with the real packages: Parquet (pyarrow,
Hugging Face ``datasets``), Minari (and its episodes read as d3rlpy builds its MDPDataset),
and the PyTorch stream (``yutenv.datasets.torch``); each refuses a taken destination and
leaves nothing behind when the dataset is damaged."""

from __future__ import annotations

import json
import shutil
import subprocess
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from yutenv.datasets import DatasetError, ExportError

import yutenv
from yutenv import datasets

GAMES = 4


def selfplay(out: Path, *args: str) -> None:
    cmd = [str(yutenv.binary_path()), "selfplay", "--quiet", "--out", str(out), *args]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("ex") / "data"
    selfplay(d, "--tier", "compact", "--games", str(GAMES), "--shard-games", "3", "--agents", "mcts:8;greedy", "--seed", "5")
    return d


@pytest.fixture
def damaged(made: Path, tmp_path: Path) -> Path:
    """A copy whose second shard's bytes are flipped in the middle (the size is right)."""
    d = tmp_path / "damaged"
    shutil.copytree(made, d)
    _flip(d)
    return d


# ---- Parquet -----------------------------------------------------------------------------------


def test_parquet_reads_back_with_pyarrow_and_hugging_face(made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    hf = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    out = tmp_path / "pq"
    files = datasets.to_parquet(made, out, seat=0, reward="progress")
    assert [f.name for f in files] == ["part-000000.parquet", "part-000001.parquet"]
    assert sorted(p.name for p in out.iterdir()) == [f.name for f in files], "nothing else in the folder"
    t = datasets.transitions(made, seat=0, reward="progress")
    d = t.obs.shape[1]

    table = pq.read_table(out)
    assert table.num_rows == len(t)
    columns = list(datasets.transitions.__globals__["COLUMNS"]) + ["throws", "throw_seats"]
    assert table.column_names == columns
    obs_type = table.schema.field("obs").type
    assert pa.types.is_fixed_size_list(obs_type) and obs_type.list_size == d and obs_type.value_type == pa.float32()
    assert table.schema.field("mask").type.list_size == 180
    for name in ("obs", "next_obs", "mask", "next_mask", "policy"):
        got = table[name].combine_chunks().flatten().to_numpy().reshape(len(t), -1)
        np.testing.assert_array_equal(got, t[name])
    for name in ("action", "reward", "terminated", "truncated", "game", "seat", "seed", "step", "search_value"):
        np.testing.assert_array_equal(table[name].to_numpy(), t[name])
    assert table["throws"].to_pylist() == [[th for _, th in t.throws_of(i)] for i in range(len(t))]
    assert table["throw_seats"].to_pylist() == [[s for s, _ in t.throws_of(i)] for i in range(len(t))]
    meta = json.loads(table.schema.metadata[b"yutenv"])
    assert meta["reward"] == "progress" and meta["seat"] == 0 and meta["manifest"]["seed"] == 5

    ds = hf.load_dataset("parquet", data_files=str(out / "*.parquet"), split="train", cache_dir=str(tmp_path / "hf"))
    assert ds.column_names == columns and len(ds) == len(t)
    npds = ds.with_format("numpy")
    np.testing.assert_array_equal(np.stack(npds["obs"]), t.obs)
    np.testing.assert_array_equal(npds["reward"], t.reward)
    np.testing.assert_array_equal(npds["terminated"], t.terminated)


def test_parquet_refuses_a_taken_folder(made: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    out = tmp_path / "taken"
    out.mkdir()
    (out / "manifest.json").write_text("{}")
    with pytest.raises(DatasetError, match=r"taken is not empty \(it holds manifest.json\): export into a new or empty folder"):
        datasets.to_parquet(made, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"], "no temporary folder left"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert len(datasets.to_parquet(made, empty)) == 2, "an empty folder is fine"


def test_parquet_refuses_a_destination_it_cannot_write_before_reading(made: Path, tmp_path: Path) -> None:
    """Each refusal is an ExportError naming the destination as given, raised before the dataset
    is read (the dataset named here does not exist: reading it would raise another error)."""
    pytest.importorskip("pyarrow")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nothing")
    for out, message in [
        (a_file / "sub", r"a-file/sub: .*a-file is not a folder: export into a folder$"),
        (a_file / "deeper" / "sub", r"a-file/deeper/sub: .*a-file is not a folder"),
        (dangling, r"dangling is a symbolic link that leads nowhere"),
        (Path("/proc/self/yutenv-export"), r"^/proc/self/yutenv-export: cannot be written \("),
    ]:
        with pytest.raises(ExportError, match=message) as e:
            datasets.to_parquet(tmp_path / "no-such-dataset", out)
        assert "\n" not in str(e.value) and ".tmp" not in str(e.value), str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "dangling"], "nothing made"


def test_parquet_writes_through_a_link_to_an_empty_folder(made: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    (tmp_path / "real").mkdir()
    link = tmp_path / "link"
    link.symlink_to("real")
    files = datasets.to_parquet(made, link)
    assert link.is_symlink(), "the link is kept"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == [f.name for f in files]
    assert all(f.is_file() for f in files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"], "no temporary folder left"


def _flip(d: Path) -> None:
    p = d / "shard-000001.npz"
    b = bytearray(p.read_bytes())
    b[len(b) // 2] ^= 0xFF
    p.write_bytes(bytes(b))


def _truncate(d: Path) -> None:
    p = d / "shard-000001.npz"
    p.write_bytes(p.read_bytes()[:-100])


def _miscount(d: Path) -> None:
    # A manifest that does not match its shards: the second one's decisions miscounted.
    m = json.loads((d / "manifest.json").read_text())
    m["shards"][1]["decisions"] += 1
    (d / "manifest.json").write_text(json.dumps(m))


def _records(d: Path) -> None:
    p = d / "shard-000001.records.jsonl"
    p.write_bytes(p.read_bytes()[:-50])


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_flip, r"shard-000001.npz: SHA-256 .* does not match the manifest's"),
        (_truncate, r"shard-000001.npz: \d+ bytes, the manifest says \d+ \(truncated or replaced\)"),
        (_miscount, r"shard-000001.npz: obs is <f4 \(\d+, 213\), the manifest says <f4 \(\d+, 213\)"),
        (_records, r"shard-000001.records.jsonl: \d+ bytes, the manifest says"),
    ],
    ids=["flipped byte", "truncated shard", "manifest that does not match", "cut records"],
)
def test_parquet_of_a_damaged_dataset_leaves_nothing(made: Path, tmp_path: Path, damage, message: str) -> None:  # type: ignore[no-untyped-def]
    """The first shard exports fine, the second is damaged: one line naming the file and what is
    wrong, and no folder (nor the first shard's file) left behind."""
    pytest.importorskip("pyarrow")
    d = tmp_path / "damaged"
    shutil.copytree(made, d)
    damage(d)
    out = tmp_path / "out" / "pq"
    with pytest.raises(DatasetError, match=message) as e:
        datasets.to_parquet(d, out)
    assert "\n" not in str(e.value)
    assert not out.exists() and list((tmp_path / "out").iterdir()) == []


# ---- Minari ------------------------------------------------------------------------------------


@pytest.fixture
def minari_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "minari"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    return root


def test_minari_round_trip(made: Path, minari_root: Path) -> None:
    minari = pytest.importorskip("minari")
    pytest.importorskip("h5py")
    got = datasets.to_minari(made, "yutenv/mcts8-greedy-v0", seat=0, reward="progress")
    assert got.spec.dataset_id == "yutenv/mcts8-greedy-v0"
    ds = minari.load_dataset("yutenv/mcts8-greedy-v0")
    t = datasets.transitions(made, seat=0, reward="progress")
    assert ds.total_episodes == GAMES and ds.total_steps == len(t)
    assert "yutenv" in minari.namespace.list_local_namespaces()
    assert [p.name for p in (minari_root / "yutenv").iterdir() if p.name.startswith(".")] == [], "no temporary folder left"

    # Read as d3rlpy builds its MDPDataset from a Minari dataset: per episode, observations[:-1]
    # and [1:], actions, rewards, terminals.
    obs, nxt, act, rew, term, trunc, masks = [], [], [], [], [], [], []
    for ep in ds.iterate_episodes():
        o = ep.observations["observation"]
        obs.append(o[:-1])
        nxt.append(o[1:])
        masks.append(ep.observations["action_mask"][:-1])
        act.append(ep.actions)
        rew.append(ep.rewards)
        term.append(ep.terminations)
        trunc.append(ep.truncations)
        assert len(o) == len(ep.actions) + 1 and ep.terminations[-1]
        meta = next(iter(ds.storage.get_episode_metadata([ep.id])))
        rows = t.seed == meta["seed"]
        assert rows.sum() == len(ep.actions), "each episode's seed is its game's"
        np.testing.assert_array_equal(ep.infos["policy"][:-1], t.policy[rows])
        np.testing.assert_array_equal(ep.infos["searched"][:-1], t.searched[rows])
    np.testing.assert_array_equal(np.concatenate(obs), t.obs)
    np.testing.assert_array_equal(np.concatenate(nxt), t.next_obs)
    np.testing.assert_array_equal(np.concatenate(masks), t.mask.astype(np.int8))
    np.testing.assert_array_equal(np.concatenate(act), t.action)
    np.testing.assert_array_equal(np.concatenate(rew), t.reward)
    np.testing.assert_array_equal(np.concatenate(term), t.terminated)
    np.testing.assert_array_equal(np.concatenate(trunc), t.truncated)
    assert ds.observation_space.contains({"observation": t.obs[0], "action_mask": t.mask[0].astype(np.int8)})

    # The environment it recovers is the one the data came from: replaying an episode's
    # actions from its seed and options gives its observations and rewards.
    env = ds.recover_environment()
    try:
        m = datasets.read_manifest(made)
        assert (env.unwrapped.tier, env.unwrapped.opponent, env.unwrapped.rules) == (m["tier"], "greedy", m["rules_text"])
        ep = next(iter(ds.iterate_episodes()))
        meta = next(iter(ds.storage.get_episode_metadata([ep.id])))
        o, _ = env.reset(seed=int(meta["seed"]), options={"seat": 0})
        np.testing.assert_array_equal(o["observation"], ep.observations["observation"][0])
        for k, a in enumerate(ep.actions):
            o, r, term_, trunc_, _ = env.step(int(a))
            np.testing.assert_array_equal(o["observation"], ep.observations["observation"][k + 1])
            np.testing.assert_array_equal(o["action_mask"], ep.observations["action_mask"][k + 1])
            assert r == ep.rewards[k] and term_ == ep.terminations[k]
    finally:
        env.close()


def test_minari_box_observations(made: Path, minari_root: Path) -> None:
    """obs_type="box": the observation alone (what d3rlpy's get_minari takes), the mask in the
    infos, as the env's info["action_mask"]; the recovered env is a box env."""
    minari = pytest.importorskip("minari")
    pytest.importorskip("h5py")
    datasets.to_minari(made, "yutenv/box-v0", seat=1, obs_type="box")
    ds = minari.load_dataset("yutenv/box-v0")
    t = datasets.transitions(made, seat=1)
    eps = list(ds.iterate_episodes())
    np.testing.assert_array_equal(np.concatenate([ep.observations[:-1] for ep in eps]), t.obs)
    np.testing.assert_array_equal(np.concatenate([ep.observations[1:] for ep in eps]), t.next_obs)
    np.testing.assert_array_equal(np.concatenate([ep.infos["action_mask"][:-1] for ep in eps]), t.mask.astype(np.int8))
    env = ds.recover_environment()
    try:
        assert env.observation_space.shape == (t.obs.shape[1],) and env.unwrapped.opponent == "mcts:8"
    finally:
        env.close()
    with pytest.raises(ValueError, match="obs_type must be 'dict' or 'box'"):
        datasets.to_minari(made, "yutenv/pixels-v0", seat=1, obs_type="pixels")


def test_minari_refuses_what_it_cannot_write(made: Path, damaged: Path, minari_root: Path) -> None:
    pytest.importorskip("minari")
    pytest.importorskip("h5py")
    with pytest.raises(ValueError, match=r"for every seat are not one agent spec"):
        datasets.to_minari(made, "yutenv/both-v0")  # seat 0 plays greedy, seat 1 mcts:8
    with pytest.raises(DatasetError, match=r"shard-000001.npz: SHA-256 .* does not match"):
        datasets.to_minari(damaged, "yutenv/damaged-v0", seat=1)
    assert not (minari_root / "yutenv" / "damaged-v0").exists()
    assert [p.name for p in (minari_root / "yutenv").iterdir() if p.name.startswith(".")] == [], "no temporary folder left"
    datasets.to_minari(made, "yutenv/seat1-v0", seat=1)
    with pytest.raises(DatasetError, match="a Minari dataset 'yutenv/seat1-v0' already exists"):
        datasets.to_minari(made, "yutenv/seat1-v0", seat=1)


@pytest.mark.parametrize(
    ("dataset_id", "message"),
    [
        ("noversion", r"^'noversion' is not a Minari dataset id: give \(namespace/\)name-vVERSION"),
        ("-v0", r"^'-v0' is not a Minari dataset id"),
        ("yutenv/", r"^'yutenv/' is not a Minari dataset id"),
        ("x" * 300 + "-v0", r"^'x{80}\.\.\.': a part of 303 characters, the longest a Minari dataset id may have is 200$"),
        (42, r"^a Minari dataset id is a string, got int"),
    ],
)
def test_minari_refuses_a_malformed_id_before_reading(tmp_path: Path, minari_root: Path, dataset_id: Any, message: str) -> None:
    """Minari's parser raised TypeError for an id without its version, and a 300-character id
    an OSError from the file system; each is an ExportError naming the id, raised before the
    dataset (which does not exist here) is read."""
    pytest.importorskip("minari")
    with pytest.raises(ExportError, match=message) as e:
        datasets.to_minari(tmp_path / "no-such-dataset", dataset_id)
    assert "\n" not in str(e.value)
    assert not minari_root.exists(), "nothing made"


# ---- PyTorch -----------------------------------------------------------------------------------


def test_torch_stream_yields_every_transition_once(made: Path) -> None:
    torch = pytest.importorskip("torch")
    from yutenv.datasets import torch as ytorch

    t = datasets.transitions(made, reward="progress")
    stream = ytorch.ShardStream(made, kind="transitions", reward="progress", batch_size=16,
                                columns=("obs", "action", "reward", "next_obs", "terminated", "game", "decision"))  # fmt: skip
    batches = list(stream)
    assert all(isinstance(b["obs"], torch.Tensor) for b in batches) and batches[0]["obs"].dtype == torch.float32
    key = np.concatenate([b["game"].numpy() * 1000 + b["decision"].numpy() for b in batches])
    assert sorted(key) == sorted(t.game * 1000 + t.decision), "every transition, once"
    assert not (key == t.game * 1000 + t.decision).all(), "shuffled across the shards"
    order = np.argsort(t.game * 1000 + t.decision)
    got = np.argsort(key)
    np.testing.assert_array_equal(np.concatenate([b["reward"].numpy() for b in batches])[got], t.reward[order])
    np.testing.assert_array_equal(np.concatenate([b["next_obs"].numpy() for b in batches])[got], t.next_obs[order])
    again = [b["game"].numpy() for b in ytorch.ShardStream(made, kind="transitions", batch_size=16, columns=("game",))]
    assert len(np.concatenate(again)) == len(t)

    # Rows one at a time, batched by a DataLoader of two workers that split the shards.
    loader = torch.utils.data.DataLoader(
        ytorch.ShardStream(made, columns=("game", "decision", "policy")), batch_size=7, num_workers=2
    )
    rows = np.concatenate([b["game"].numpy() * 1000 + b["decision"].numpy() for b in loader])
    ds = datasets.load(made)
    assert sorted(rows) == sorted(ds.game * 1000 + ds.decision)
    with pytest.raises(ValueError, match=r"unknown columns \['seed'\]"):
        ytorch.ShardStream(made, kind="transitions", columns=("seed",))


def test_torch_stream_memory_is_a_few_shards(tmp_path: Path) -> None:
    """Streaming a dataset of 40 one-game shards, two at a time, holds a few shards: a fraction
    of the dataset that shrinks as the dataset grows."""
    pytest.importorskip("torch")
    from yutenv.datasets import torch as ytorch

    d = tmp_path / "many"
    selfplay(d, "--tier", "tactical", "--games", "40", "--shard-games", "1", "--agents", "greedy", "--seed", "2")
    total = sum(a.nbytes for a in datasets.transitions(d).arrays().values())
    stream = ytorch.ShardStream(d, kind="transitions", batch_size=64, buffer_shards=2, columns=("obs", "next_obs", "action"))
    tracemalloc.start()
    try:
        rows = sum(len(b["action"]) for b in stream)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rows == datasets.read_manifest(d)["decisions"]
    assert peak < total / 3, f"peak {peak} bytes while streaming {total} bytes of transitions"
