"""``python -m yutenv.az.train --ray ADDRESS``: the learning loop's self-play on a real local Ray
cluster (two raylet nodes on this machine, one CPU each), the learner here. For the same seed
the run must write the datasets and train the weights of the run on one machine, bit for bit,
with one worker or two, and a run may change between the two when it is resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

ray = pytest.importorskip("ray")
torch = pytest.importorskip("torch")
pytest.importorskip("fsspec")
from ray.cluster_utils import Cluster  # noqa: E402

from yutenv import datasets  # noqa: E402
from yutenv.az import cluster as az_cluster  # noqa: E402
from yutenv.az import train  # noqa: E402

# Two tiny generations of 6 games, cut into 3 ranges of 2 games (3 Ray tasks a generation).
TINY: dict[str, Any] = dict(
    games=6, sims=4, hidden=(16,), batch=16, steps=2, games_in_flight=4, shard_games=2, eval=(), seed=3, progress=False
)
CLI = ["--games", "6", "--sims", "4", "--hidden", "16", "--batch", "16", "--steps", "2", "--games-in-flight", "4",
       "--shard-games", "2", "--eval=", "--seed", "3", "--quiet"]  # fmt: skip


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


def run(out: Path, generations: int, **kw: Any) -> None:
    threads = torch.get_num_threads()  # the loop sets torch's threads (to --threads): restore them
    try:
        train.run(train.TrainConfig(out=str(out), generations=generations, **{**TINY, **kw}))
    finally:
        torch.set_num_threads(threads)


def cli(out: Path, generations: int, *more: str) -> list[str]:
    return [sys.executable, "-m", "yutenv.az.train", "--out", str(out), "--generations", str(generations), *CLI, *more]


@pytest.fixture(scope="module")
def one_machine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run on this machine alone (no Ray)."""
    out = tmp_path_factory.mktemp("one") / "run"
    run(out, 2)
    return out


def files(gen: Path) -> dict[str, bytes]:
    """Every file of a generation's dataset, by name: the manifest without its timestamps."""
    d = gen / "selfplay"
    m = datasets.read_manifest(d)
    got = {name: (d / name).read_bytes() for sh in m["shards"] for name in (sh["file"], sh["records"])}
    assert sorted(p.name for p in d.iterdir()) == sorted([*got, datasets.MANIFEST]), "nothing but the dataset"
    got[datasets.MANIFEST] = json.dumps({k: v for k, v in m.items() if k not in ("created", "updated")}, sort_keys=True).encode()
    return got


def assert_same_run(got: Path, want: Path, generations: int = 2) -> None:
    """The same datasets, file for file, and the same weights, bit for bit, every generation."""
    for g in range(1, generations + 1):
        a, b = train.gen_dir(got, g), train.gen_dir(want, g)
        assert files(a) == files(b), f"generation {g}'s dataset"
        assert (a / "net.ynet").read_bytes() == (b / "net.ynet").read_bytes(), f"generation {g}'s network"
        wa = torch.load(a / "model.pt", map_location="cpu", weights_only=True)["model"]
        wb = torch.load(b / "model.pt", map_location="cpu", weights_only=True)["model"]
        assert sorted(wa) == sorted(wb)
        for k in wb:
            assert torch.equal(wa[k], wb[k]), (g, k)


def selfplay_info(out: Path, g: int) -> dict[str, Any]:
    info: dict[str, Any] = json.loads((train.gen_dir(out, g) / "gen.json").read_text())["selfplay"]
    return info


@pytest.mark.parametrize("workers", [1, 2])
def test_ray_selfplay_gives_the_one_machine_run(cluster: Cluster, one_machine: Path, tmp_path: Path, workers: int) -> None:
    out = tmp_path / "ray"
    run(out, 2, ray=cluster.address, ray_tasks=workers)
    assert_same_run(out, one_machine)
    for g in (1, 2):
        info = selfplay_info(out, g)
        assert info["ray"]["ranges"] == 3 and info["ray"]["ranges_resumed"] == 0 and info["ray"]["max_tasks"] == workers
        assert "summary" not in info and "summary" in selfplay_info(one_machine, g)
    assert not (out / az_cluster.STAGING).exists(), "the staging folder is cleaned up"


def test_mcts_selfplay_on_ray(cluster: Cluster, tmp_path: Path) -> None:
    """--selfplay mcts (the baseline agents, no network) on Ray: the one-machine datasets too."""
    one, dist = tmp_path / "one", tmp_path / "ray"
    run(one, 1, selfplay="mcts", workers=1)
    run(dist, 1, selfplay="mcts", ray=cluster.address)
    assert_same_run(dist, one, 1)


def test_net_go_selfplay_on_ray(cluster: Cluster, tmp_path: Path) -> None:
    """--selfplay net-go (the network in Go; the workers read its file from the shared run
    folder, running there) on Ray: the one-machine datasets and weights, file for file."""
    one, dist = tmp_path / "one", tmp_path / "ray"
    netgo = dict(selfplay="net-go", dirichlet_alpha=0.0, temperature_moves=0)
    run(one, 2, **netgo, workers=1)
    run(dist, 2, **netgo, ray=cluster.address)
    assert_same_run(dist, one)
    for g in (1, 2):
        assert datasets.read_manifest(train.gen_dir(dist, g) / "selfplay")["agents"] == ["net:selfplay.ynet,sims=4,gumbel=1"] * 2
        assert "ray" in selfplay_info(dist, g) and selfplay_info(dist, g)["net_sha256"] == selfplay_info(one, g)["net_sha256"]


def test_playout_cap_selfplay_on_ray(cluster: Cluster, tmp_path: Path) -> None:
    """--fast-sims on Ray: the same datasets (policy_target included) and networks as on one machine."""
    one, dist = tmp_path / "one", tmp_path / "ray"
    run(one, 1, fast_sims=2, full_prob=0.5)
    run(dist, 1, fast_sims=2, full_prob=0.5, ray=cluster.address)
    assert_same_run(dist, one, 1)
    ds = datasets.load(train.gen_dir(dist, 1) / "selfplay")
    assert ds.policy_target is not None and 0 < ds.policy_target.sum() < len(ds)


def test_a_run_moves_between_one_machine_and_ray_on_resume(cluster: Cluster, one_machine: Path, tmp_path: Path) -> None:
    """Generation 1 on Ray, generation 2 here; and the other way round."""
    a = tmp_path / "a"
    run(a, 1, ray=cluster.address)
    assert "ray" in selfplay_info(a, 1)
    run(a, 2)
    assert "ray" not in selfplay_info(a, 2)
    assert_same_run(a, one_machine)
    b = tmp_path / "b"
    run(b, 1)
    run(b, 2, ray=cluster.address)
    assert "ray" in selfplay_info(b, 2)
    assert_same_run(b, one_machine)


def test_a_killed_driver_resumes_with_the_ranges_done(cluster: Cluster, one_machine: Path, tmp_path: Path) -> None:
    """kill -9 of the driver while generation 1's ranges are played (one at a time): the same
    command again keeps the ranges already in the staging folder, plays the others, and ends
    where the uninterrupted run does."""
    out = tmp_path / "run"
    cmd = cli(out, 2, "--ray", cluster.address, "--ray-tasks", "1")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not list((out / az_cluster.STAGING).glob("gen-0001-*/parts/part-*.json")):
            assert proc.poll() is None, "the run ended before a range of generation 1 was done"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert not (train.gen_dir(out, 1) / "gen.json").exists(), "killed too late: generation 1 had finished"
    run(out, 2, ray=cluster.address, ray_tasks=1)  # the same run, resumed in this process (joined to the cluster)
    assert selfplay_info(out, 1)["ray"]["ranges_resumed"] >= 1
    assert_same_run(out, one_machine)


def test_stale_ranges_of_another_network_are_dropped(cluster: Cluster, one_machine: Path, tmp_path: Path) -> None:
    """A staging folder of the same generation but another network (a run killed, then trained
    otherwise) is deleted, never merged."""
    out = tmp_path / "run"
    stale = out / az_cluster.STAGING / "gen-0001-0123456789abcdef" / "parts"
    stale.mkdir(parents=True)
    (stale / "part-000000000.json").write_text("{}")
    run(out, 2, ray=cluster.address)
    assert not (out / az_cluster.STAGING).exists()
    assert_same_run(out, one_machine)


@pytest.mark.parametrize("bad", [{"ray_cpus": -1}, {"ray_tasks": -2}, {"shard_games": 0}])
def test_bad_ray_settings_are_refused(tmp_path: Path, bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        train.TrainConfig(out=str(tmp_path), **bad).check()


def test_ray_local_starts_its_own_ray(cluster: Cluster, tmp_path: Path) -> None:
    """``--ray local --ray-cpus 1`` starts a Ray of its own even when another cluster is
    announced (RAY_ADDRESS here; a `ray start` on the machine does the same): joining that one
    would fail (num_cpus is refused when connecting) or send the work elsewhere."""
    out = tmp_path / "run"
    env = {**os.environ, "RAY_ADDRESS": cluster.address}
    p = subprocess.run(
        cli(out, 1, "--ray", az_cluster.LOCAL, "--ray-cpus", "1"), capture_output=True, text=True, timeout=600, env=env
    )
    assert p.returncode == 0, p.stderr
    assert selfplay_info(out, 1)["ray"]["address"] == "local"
    assert "Started a local Ray instance" in p.stderr
