"""yutenv.league: snapshots that play in Go, PFSP sampling, ratings, the SB3 callback and the
CleanRL loop, and a league folder that survives kill -9 and refuses damage. Real torch, real SB3."""

from __future__ import annotations

import json
import os
import runpy
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import yutenv
from yutenv.league import League, LeagueError

torch = pytest.importorskip("torch", reason="torch comes with the sb3 extra")
torch.set_num_threads(1)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def mlp(obs_size: int, seed: int) -> Any:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(obs_size, 32), torch.nn.Tanh(), torch.nn.Linear(32, 180))


def compact_size() -> int:
    from yutenv._layout import TIER_SIZES

    return int(TIER_SIZES["compact"])


def test_snapshots_play_in_go_and_pfsp_samples_the_hard_ones(tmp_path: Path) -> None:
    league = League(tmp_path / "lg", fixed=("greedy", "random"), tier="compact", rate_games=0, p_latest=0.5)
    assert league.weights() == pytest.approx({"greedy": 0.5, "random": 0.5}), "no snapshot yet: the fixed members"
    for i in range(3):
        league.snapshot(mlp(compact_size(), i), step=100 * (i + 1))
    names = [m.name for m in league.snapshots]
    assert names == ["snap-000001", "snap-000002", "snap-000003"]
    w = league.weights()
    assert w["snap-000003"] == pytest.approx(0.5), "the latest"
    assert sum(w.values()) == pytest.approx(1.0)
    # PFSP: the learner beats random and snap-1 often, loses to greedy: greedy gets the most weight.
    league.record(
        {
            "greedy": {"wins": 2, "losses": 18},
            "random": {"wins": 19, "losses": 1},
            "snap-000001": {"wins": 15, "losses": 5},
            "snap-000002": {"wins": 10, "losses": 10},
        }
    )
    w = league.weights()
    assert w["greedy"] > w["snap-000002"] > w["snap-000001"] > w["random"]
    assert w["greedy"] / w["snap-000002"] == pytest.approx(((1 - 2.5 / 21) / (1 - 10.5 / 21)) ** 2)
    # The mixture plays in a real env: its specs are net:PATH files the server opens.
    venv = yutenv.make(num_envs=16, opponent=["random"], tier="compact")
    try:
        venv.set_opponents(league.mixture())
        venv.reset(seed=1)
        for _ in range(200):
            venv.step(venv.action_masks().argmax(axis=1).astype(np.int64))
        before = {m.name: m.games for m in league.members}
        league.record_env(venv.opponent_stats(reset=True), step=400)
        after = {m.name: m.games for m in league.members}
        assert sum(after.values()) > sum(before.values())
        assert after["snap-000003"] > before["snap-000003"], "the latest snapshot was played"
    finally:
        venv.close()
    again = League.open(tmp_path / "lg")  # a reader beside the writer
    assert [m.name for m in again.members] == [m.name for m in league.members]
    assert again.weights() == pytest.approx(league.weights())
    assert "snap-000003" in again.table()


@pytest.mark.parametrize("name", ["runs,seed=3", "a;b", "c:d=e, f", "it's"])
def test_a_league_in_any_folder_plays_its_snapshots(tmp_path: Path, name: str) -> None:
    """A folder whose path holds the spec grammar's separators: the snapshots' net:PATH specs
    quote it, so make, set_opponents and rate play them."""
    league = League(tmp_path / name, fixed=("greedy",), tier="compact", rate_games=4, anchors=("random",))
    m = league.snapshot(mlp(compact_size(), 0), step=1)
    assert m.rating is not None, "rated: the Go evaluator played the snapshot"
    league.snapshot(mlp(compact_size(), 1), step=2, rate=False)
    for venv in (
        yutenv.make(num_envs=4, opponent=league.mixture(), tier="compact"),
        yutenv.make(num_envs=4, opponent=["random"], tier="compact"),
    ):
        try:
            venv.set_opponents(league.mixture())
            venv.reset(seed=1)
            for _ in range(20):
                venv.step(venv.action_masks().argmax(axis=1).astype(np.int64))
        finally:
            venv.close()
    league.close()
    assert League.open(tmp_path / name).member("snap-000002").spec == m.spec.replace("snap-000001", "snap-000002")


def test_snapshots_are_rated_on_the_published_scale(tmp_path: Path) -> None:
    league = League(tmp_path / "lg", fixed=("greedy",), tier="compact", rate_games=20, anchors=("random", "greedy"))
    m = league.snapshot(mlp(compact_size(), 0), step=1)
    assert m.rating is not None and m.rating_low is not None and m.rating_high is not None
    assert m.rating_low < m.rating < m.rating_high
    assert -600 < m.rating < 600


def test_a_damaged_league_is_refused_in_one_line(tmp_path: Path) -> None:
    league = League(tmp_path / "lg", fixed=("greedy",), tier="compact", rate_games=0)
    league.snapshot(mlp(compact_size(), 0), step=1)
    league.close()
    state = tmp_path / "lg" / "league.json"
    good = state.read_text()
    doc = json.loads(good)
    doc["members"][0]["wins"] += 1  # valid JSON, one result changed
    state.write_text(json.dumps(doc))
    with pytest.raises(LeagueError, match=r"league.json: damaged: its content does not match its sha256"):
        League(tmp_path / "lg")
    for bad, match in [
        ("{", "not JSON"),
        ('{"format": "other"}', "not a league state"),
        (good.replace('"version": 1', '"version": 9'), "version 9"),
    ]:
        state.write_text(bad)
        with pytest.raises(LeagueError, match=match) as e:
            League(tmp_path / "lg")
        assert "\n" not in str(e.value) and str(state) in str(e.value)
    state.write_text(good)
    snap = tmp_path / "lg" / "snapshots" / "snap-000001.ynet"
    snap.write_bytes(snap.read_bytes()[:-3] + b"xyz")
    with pytest.raises(LeagueError, match=r"snap-000001.ynet: snapshot snap-000001 is damaged"):
        League(tmp_path / "lg")
    snap.unlink()
    with pytest.raises(LeagueError, match=r"snap-000001.ynet: snapshot snap-000001 cannot be read"):
        League(tmp_path / "lg")
    League(tmp_path / "other", fixed=("greedy",), rate_games=0).close()
    with pytest.raises(LeagueError, match="resuming it with"):
        League(tmp_path / "other", sampling="uniform")


TRAIN = textwrap.dedent(
    """
    import sys, torch
    from pathlib import Path
    from sb3_contrib import MaskablePPO
    from yutenv.league import League
    from yutenv.sb3 import LeagueCallback, vec_env

    torch.set_num_threads(1)
    folder, total = Path(sys.argv[1]), int(sys.argv[2])
    league = League(folder, fixed=("greedy",), tier="compact", rate_games=0)
    venv = vec_env(8, seed=0, opponent=["greedy"], tier="compact", seat="random")
    saved = folder / "learner.zip"
    if saved.exists():
        model = MaskablePPO.load(saved, env=venv)
    else:
        model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0,
                            policy_kwargs={"net_arch": [16]})
    model.learn(total, reset_num_timesteps=False, callback=LeagueCallback(league, snapshot_every=128))
    print("done", model.num_timesteps, flush=True)
    """
)


def test_sb3_league_resumes_after_kill_9(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    folder = tmp_path / "league"
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(folder), "100000"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until the league has a few snapshots
            try:
                if len(League.open(folder).snapshots) >= 3 and (folder / "learner.zip").exists():
                    break
            except LeagueError:
                pass  # between the first writes
            time.sleep(0.2)
        else:
            pytest.fail(
                "no snapshots within 2 minutes: " + proc.stderr.read().decode()[-2000:] if proc.poll() is not None else ""
            )
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    killed = League.open(folder)  # whatever moment the kill hit, the folder reads back whole
    n, step = len(killed.snapshots), killed.step
    out = subprocess.run([sys.executable, str(script), str(folder), "600"], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    resumed = League.open(folder)
    assert len(resumed.snapshots) > n and resumed.step > step
    assert [m.name for m in resumed.snapshots] == [f"snap-{i:06d}" for i in range(1, len(resumed.snapshots) + 1)]
    assert sum(m.games for m in resumed.members) > 0


def test_cleanrl_league_trains_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main = runpy.run_path(str(EXAMPLES / "cleanrl_ppo.py"))["main"]
    args = [
        "--num-envs",
        "8",
        "--num-steps",
        "16",
        "--hidden",
        "16",
        "--league",
        str(tmp_path / "lg"),
        "--opponent",
        "greedy,random",
        "--snapshot-every",
        "1",
        "--rate-games",
        "0",
    ]
    first = main(args + ["--total-timesteps", "256"])
    assert first["iteration"] == 2
    league = League.open(tmp_path / "lg")
    assert len(league.snapshots) == 3  # the start, then one per iteration
    again = main(args + ["--total-timesteps", "512"])
    assert again["iteration"] == 4, "resumed at iteration 3"
    assert len(League.open(tmp_path / "lg").snapshots) == 5
    assert "snap-000005" in capsys.readouterr().out
