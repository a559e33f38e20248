"""yutenv.az.distributed on a real local Ray cluster (two raylet nodes on this machine, one
CPU each, so tasks run in several worker processes), against ``yutenv selfplay`` run on
one machine with the same flags: the datasets must be the same, game by game."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

ray = pytest.importorskip("ray")
fsspec = pytest.importorskip("fsspec")
from conftest import run_main  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402
from yutenv.datasets import DatasetError  # noqa: E402

import yutenv  # noqa: E402
from yutenv import datasets, distributed  # noqa: E402

# A run: cheap agents, 10 shards of 12 games, tasks of 24 games (5 ranges).
GAMES, SHARD, RANGE = 120, 12, 24
FLAGS: dict[str, Any] = dict(agents="greedy;random", tier="compact", seed=11, shard_games=SHARD, range_games=RANGE)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    c.add_node(num_cpus=1)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same dataset written by one `yutenv selfplay` on this machine."""
    d = tmp_path_factory.mktemp("one") / "data"
    cmd = [str(yutenv.binary_path()), "selfplay", "--quiet", "--out", str(d), "--games", str(GAMES),
           "--agents", FLAGS["agents"], "--tier", "compact", "--seed", "11", "--shard-games", str(SHARD)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    return d


def assert_same_dataset(got: Path, want: Path) -> None:
    """Shard list, every file byte for byte, every row and every game record."""
    mg, mw = datasets.read_manifest(got), datasets.read_manifest(want)
    for key in ("games", "decisions", "complete", "agents", "rules", "seed", "tier", "shard_games", "arrays"):
        assert mg[key] == mw[key], key
    assert mg["shards"] == mw["shards"]
    for sh in mw["shards"]:
        for name in (sh["file"], sh["records"]):
            assert (got / name).read_bytes() == (want / name).read_bytes(), name
    a, b = datasets.load(got).arrays(), datasets.load(want).arrays()
    assert sorted(a) == sorted(b)
    for name in b:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    games = {}
    for sh in mg["shards"]:
        for i, line in enumerate((got / sh["records"]).read_text().splitlines()):
            games[sh["first_game"] + i] = json.loads(line)
    assert sorted(games) == list(range(mw["games"])), "every game once"


def test_selfplay_matches_one_machine(cluster: Cluster, reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "dist"
    m = distributed.selfplay(str(out), GAMES, **FLAGS)
    assert m["complete"] and m["games"] == GAMES
    assert_same_dataset(out, reference)
    # Tasks ran on both nodes' workers: the parts are there, one per range.
    assert len(list((out / distributed.PARTS).glob("part-*.json"))) == GAMES // RANGE
    # The merged dataset is an ordinary one: yutenv selfplay finds it complete...
    cmd = [str(yutenv.binary_path()), "selfplay", "--quiet", "--out", str(out), "--games", str(GAMES),
           "--agents", FLAGS["agents"], "--tier", "compact", "--seed", "11", "--shard-games", str(SHARD)]  # fmt: skip
    assert "complete" in subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300).stdout
    # ... and running the distributed call again plays nothing.
    t = os.path.getmtime(out / m["shards"][0]["file"])
    assert distributed.selfplay(str(out), GAMES, **FLAGS)["shards"] == m["shards"]
    assert os.path.getmtime(out / m["shards"][0]["file"]) == t


def test_file_uri_and_extend(cluster: Cluster, reference: Path, tmp_path: Path) -> None:
    """A file:// URI through fsspec; one task at a time; a dataset extended by a second,
    larger run."""
    out = tmp_path / "uri"
    m = distributed.selfplay(f"file://{out}", GAMES // 2, **FLAGS, max_tasks=1)
    assert m["games"] == GAMES // 2 and m["complete"]
    m = distributed.selfplay(f"file://{out}", GAMES, **FLAGS)
    assert m["games_target"] == GAMES and m["complete"]
    assert_same_dataset(out, reference)


def _worker_pids(fn: str) -> list[int]:
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes()
            except OSError:
                continue
            if f"ray::{fn}".encode() in cmd:
                pids.append(int(p.name))
    return pids


def test_killed_workers(cluster: Cluster, reference: Path, tmp_path: Path) -> None:
    """Ray worker processes killed while they play: Ray retries their ranges, and the
    dataset is still every game exactly once, as on one machine."""
    out = tmp_path / "killed"
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["m"] = distributed.selfplay(str(out), GAMES, **{**FLAGS, "range_games": SHARD}, max_retries=10)
        except BaseException as e:  # noqa: BLE001 - reported below
            result["err"] = e

    th = threading.Thread(target=run)
    th.start()
    killed = 0
    deadline = time.monotonic() + 120
    while th.is_alive() and killed < 3 and time.monotonic() < deadline:
        for pid in _worker_pids("_run_range"):
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    th.join(300)
    assert not th.is_alive()
    assert "err" not in result, result.get("err")
    assert killed >= 1, "no worker was caught playing"
    assert_same_dataset(out, reference)


def test_driver_killed_and_resumed(cluster: Cluster, reference: Path, tmp_path: Path) -> None:
    """The driver (python -m yutenv.az.distributed) is killed mid-run; the same command
    resumes, plays only the missing ranges, and the dataset is the one-machine one."""
    out = tmp_path / "driver"
    args = [sys.executable, "-m", "yutenv.distributed", "selfplay", "--address", cluster.address, "--quiet",
            "--out", str(out), "--games", str(GAMES), "--agents", FLAGS["agents"], "--tier", "compact",
            "--seed", "11", "--shard-games", str(SHARD), "--range-games", str(SHARD)]  # fmt: skip
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    parts = out / distributed.PARTS
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and len(list(parts.glob("part-*.json"))) < 2:
        time.sleep(0.02)
    proc.kill()
    proc.communicate()
    done = len(list(parts.glob("part-*.json")))
    assert done >= 2, "the driver was killed before two ranges were written"
    # A copy killed midway, and damage to one finished part's shard: that range must be
    # played again, and the leftover removed.
    (out / "shard-000099.npz.tmp").write_bytes(b"half a shard")
    first = sorted(parts.glob("part-*.json"))[0]
    shard = out / json.loads(first.read_text())["shards"][0]["file"]
    shard.write_bytes(shard.read_bytes()[:50])
    r = run_main("yutenv.az.distributed", *args[3:])  # the same command, resumed in this process (joined to the cluster)
    assert r.returncode == 0, r.stderr
    assert f"{GAMES} games" in r.stdout
    assert_same_dataset(out, reference)
    assert not list(out.glob("*.tmp")) and not list(parts.glob("*.tmp"))


def test_memory_backend_and_merge_refusals(reference: Path) -> None:
    """fsspec memory:// (in-process): the writer path and merge's refusals, no Ray."""
    url = "memory://yutenv-merge-test"
    fs = fsspec.filesystem("memory")
    for first in (0, 2 * SHARD):  # a gap: games SHARD..2*SHARD-1 missing
        distributed._run_range(
            distributed.RangeTask(first, SHARD, FLAGS["agents"], "compact", 11, "standard", SHARD),
            url,
            distributed.play_range_cli,
        )
    m = distributed.merge(url, 3 * SHARD)
    assert m["games"] == SHARD and not m["complete"], "merge stops at the gap"
    distributed._run_range(
        distributed.RangeTask(SHARD, SHARD, FLAGS["agents"], "compact", 11, "standard", SHARD), url, distributed.play_range_cli
    )
    m = distributed.merge(url, 3 * SHARD)
    assert m["games"] == 3 * SHARD and m["complete"]
    want = datasets.read_manifest(reference)["shards"][:3]
    assert m["shards"] == want
    for sh in want:
        assert fs.cat_file(f"/yutenv-merge-test/{sh['file']}") == (reference / sh["file"]).read_bytes()

    # A part of another run (other seed) is refused, naming the field.
    distributed._run_range(
        distributed.RangeTask(3 * SHARD, SHARD, FLAGS["agents"], "compact", 12, "standard", SHARD),
        url,
        distributed.play_range_cli,
    )
    with pytest.raises(DatasetError, match="made with seed 12"):
        distributed.merge(url)
    fs.rm("/yutenv-merge-test", recursive=True)

    # Overlapping parts (made by hand from two real ranges) are refused.
    url2 = "memory://yutenv-overlap-test"
    distributed._run_range(
        distributed.RangeTask(0, 2 * SHARD, FLAGS["agents"], "compact", 11, "standard", SHARD), url2, distributed.play_range_cli
    )
    distributed._run_range(
        distributed.RangeTask(SHARD, SHARD, FLAGS["agents"], "compact", 11, "standard", SHARD), url2, distributed.play_range_cli
    )
    with pytest.raises(DatasetError, match="overlaps"):
        distributed.merge(url2)
    fs.rm("/yutenv-overlap-test", recursive=True)


def test_plan_ranges() -> None:
    assert distributed.plan_ranges(250, 50, 100) == [(0, 100), (100, 100), (200, 50)]
    assert distributed.plan_ranges(250, 50, 100, start=150) == [(150, 100)]
    # a complete dataset of games not a multiple of shard_games, asked again: nothing to play
    assert distributed.plan_ranges(4, 100, 100, start=4) == []
    with pytest.raises(ValueError, match="multiple"):
        distributed.plan_ranges(100, 30, 40)
    with pytest.raises(ValueError, match="extended by yutenv selfplay"):
        distributed.plan_ranges(100, 30, 30, start=31)


def test_evaluate_agents(cluster: Cluster) -> None:
    r = distributed.evaluate_agents("greedy", "random", 200, seed=3, chunk_games=50)
    assert r.games == 200 and r.wins_a + r.wins_b == 200
    assert r.win_rate_a_low < r.win_rate_a < r.win_rate_a_high
    assert r.win_rate_a > 0.5, "greedy beats random"
    # The chunks (rounded up to 60 games, a multiple of every seat count) are parts of one
    # run: the merged result is exactly that of one `yutenv eval` with the same seed.
    cmd = [str(yutenv.binary_path()), "eval", "--json", "--quiet", "--a", "greedy", "--b", "random", "--games", "200",
           "--seed", "3"]  # fmt: skip
    one = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300).stdout)
    assert (r.wins_a, r.games) == (one["wins_a"], one["games"])
    assert r.decisions_per_game == pytest.approx(one["decisions_per_game"])
    parts = [
        distributed._eval_agents_chunk("greedy", "random", g, n, 3, "standard", 1)
        for g, n in [(0, 60), (60, 60), (120, 60), (180, 20)]
    ]
    assert distributed.merge_results(parts).wins_a == r.wins_a


def test_evaluate_policy(cluster: Cluster) -> None:
    """A Python policy with weights, shipped to the workers; merged like one run."""

    class Linear:
        def __init__(self, w: np.ndarray) -> None:
            self.w = w

        def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
            scores = obs @ self.w
            return np.where(mask, scores, -np.inf).argmax(axis=1)

    rng = np.random.default_rng(0)
    pol = Linear(rng.standard_normal((213, 180)).astype(np.float32))
    r = distributed.evaluate_policy(pol, "random", 80, seed=5, chunk_games=20, num_envs=8, name="linear")
    assert r.a == "linear" and r.games == 80 and r.wins_a + r.wins_b == 80
    assert sum(g for g, _ in r.per_seat.values()) == 80
    assert r.win_rate_a_low <= r.win_rate_a <= r.win_rate_a_high
    from yutenv.evaluate import evaluate

    one = [evaluate(pol, "random", 20, seed=5 + 20 * k, num_envs=8, progress=False, name="linear") for k in range(4)]
    assert distributed.merge_results(one).wins_a == r.wins_a, "the chunks are evaluate() runs"


def test_cli_eval(cluster: Cluster, tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "yutenv.distributed", "eval", "--address", cluster.address, "--a", "greedy",
                        "--b", "random", "--games", "40", "--chunk-games", "20", "--json"],  # fmt: skip
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["games"] == 40 and d["a"] == "greedy"
    bad = subprocess.run([sys.executable, "-m", "yutenv.distributed", "selfplay", "--address", cluster.address, "--out",
                          str(tmp_path / "never"), "--games", "10", "--shard-games", "3", "--range-games", "4"],  # fmt: skip
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert bad.returncode == 1 and "multiple of shard_games" in bad.stderr
    assert not (tmp_path / "never").exists()


def test_cli_without_address_starts_its_own_ray(cluster: Cluster, tmp_path: Path) -> None:
    """Without --address a new Ray starts here, even when RAY_ADDRESS (or another user's `ray
    start` on the machine) announces a cluster: ray.init() would join that one, refuse
    --num-cpus, and send the work to someone else's workers."""
    env = {**os.environ, "RAY_ADDRESS": cluster.address}
    r = subprocess.run([sys.executable, "-m", "yutenv.distributed", "selfplay", "--num-cpus", "1", "--out", "data",
                        "--games", "4", "--shard-games", "2", "--agents", "random", "--quiet"],  # fmt: skip
                       capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "Started a local Ray instance" in r.stderr
    assert datasets.read_manifest(tmp_path / "data")["complete"]


def test_a_relative_out_is_this_directory_s(cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative --out names a folder under the driver's working directory, not under each
    worker's (the cluster's workers were started in another one)."""
    monkeypatch.chdir(tmp_path)
    m = distributed.selfplay("rel", 4, agents="random", tier="compact", seed=3, shard_games=2)
    assert m["complete"] and datasets.read_manifest(tmp_path / "rel")["games"] == 4


def test_play_range_hook(cluster: Cluster, reference: Path, tmp_path: Path) -> None:
    """play_range replaces the yutenv process of every task (the learning loop's hook):
    it runs on the workers, once per range, and what it writes is the dataset."""
    marks = tmp_path / "marks"
    marks.mkdir()

    def play(task: distributed.RangeTask, out_dir: str) -> None:
        (marks / f"{task.first}-{os.getpid()}").touch()
        distributed.play_range_cli(task, out_dir)

    out = tmp_path / "hook"
    distributed.selfplay(str(out), GAMES, **FLAGS, play_range=play)
    firsts = sorted(int(p.name.split("-")[0]) for p in marks.iterdir())
    assert firsts == list(range(0, GAMES, RANGE))
    assert all(int(p.name.split("-")[1]) != os.getpid() for p in marks.iterdir()), "ran in Ray workers"
    assert_same_dataset(out, reference)


def test_az_selfplay_matches_one_machine(cluster: Cluster, tmp_path: Path) -> None:
    """Network-guided self-play on Ray (weights in the object store, one server and one
    network per task): the dataset, ``visits`` included, is the one SelfPlay writes on
    this machine with the same weights and seed, array for array and byte for byte."""
    torch = pytest.importorskip("torch")
    from yutenv.az import NetEvaluator, PolicyValueNet, SelfPlay
    from yutenv.az.net import TIER_SIZES

    torch.manual_seed(5)
    model = PolicyValueNet(TIER_SIZES["compact"], (16,), tier="compact")
    settings = SelfPlay(tier="compact", sims=6, games_in_flight=3, temperature_moves=3, seed=21, shard_games=2)
    want = tmp_path / "one"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the tasks (threads_per_task=1): the order of float sums
    try:
        settings.run(NetEvaluator(model), games=10, out=want)
    finally:
        torch.set_num_threads(threads)
    got = tmp_path / "ray"
    m = distributed.az_selfplay(str(got), 10, model, settings, range_games=4)
    assert m["complete"] and m["games"] == 10
    assert [a["name"] for a in m["arrays"]][-1] == "visits"
    assert m["seed_scheme"] == datasets.read_manifest(want)["seed_scheme"]
    assert len(list((got / distributed.PARTS).glob("part-*.json"))) == 3
    assert_same_dataset(got, want)
    # A part played again (its part manifest lost) gives the same bytes.
    (got / distributed.PARTS / "part-000000004.json").unlink()
    (got / datasets.MANIFEST).unlink()
    distributed.az_selfplay(str(got), 10, model, settings, range_games=4)
    assert_same_dataset(got, want)


def test_node_lost(cluster: Cluster, reference: Path, tmp_path: Path) -> None:
    """A whole node (its raylet and workers) dies mid-run: its ranges are played again
    on the nodes left, and the dataset is the one-machine one."""

    def slow_play(task: distributed.RangeTask, out_dir: str) -> None:
        # Nested, so that Ray ships it by value (the test module is not importable there).
        distributed.play_range_cli(task, out_dir)
        time.sleep(1.0)  # keep the run going long enough to lose a node in the middle

    node = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    out = tmp_path / "node"
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["m"] = distributed.selfplay(
                str(out), GAMES, **{**FLAGS, "range_games": SHARD}, max_retries=10, play_range=slow_play
            )
        except BaseException as e:  # noqa: BLE001 - reported below
            result["err"] = e

    th = threading.Thread(target=run)
    th.start()
    parts = out / distributed.PARTS
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and th.is_alive() and not list(parts.glob("part-*.json")):
        time.sleep(0.02)
    assert th.is_alive(), "the run ended before the node could be lost"
    cluster.remove_node(node, allow_graceful=False)
    th.join(600)
    assert not th.is_alive()
    assert "err" not in result, result.get("err")
    assert_same_dataset(out, reference)
