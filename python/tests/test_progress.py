"""Progress on the long runs: the recipes, ``yutenv.az.train`` and the dataset exports draw a
bar with its count, rate and time left on stderr when asked (``--progress always``,
``progress=True``), and none by default when stderr is not a terminal (a pipe, a log, a test)."""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

import pytest
from conftest import run_main
from test_az import HAVE_SELFPLAY

import yutenv
from yutenv import datasets
from yutenv._progress import PROGRESS_MODES, add_progress_argument

#: tqdm's rate: "12.3game/s", or "4.56s/game" when slower than one a second.
RATE = r"(\d+(\.\d+)?(game|step|gen)/s|\d+(\.\d+)?s/(game|step|gen))"


def test_the_progress_argument() -> None:
    ap = argparse.ArgumentParser()
    add_progress_argument(ap)
    assert [PROGRESS_MODES[ap.parse_args(a).progress] for a in ([], ["--progress", "always"], ["--progress", "never"])] == [
        None,
        True,
        False,
    ]
    with pytest.raises(SystemExit):
        ap.parse_args(["--progress", "sometimes"])


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("progress") / "data"
    cmd = [
        str(yutenv.binary_path()),
        "selfplay",
        "--quiet",
        "--out",
        str(d),
        "--tier",
        "compact",
        "--games",
        "4",
        "--shard-games",
        "2",
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    return d


@pytest.mark.parametrize("show", [True, None, False])
def test_exports_draw_a_bar_of_games(made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], show: bool | None) -> None:
    pytest.importorskip("pyarrow")
    datasets.to_parquet(made, tmp_path / "pq", seat=0, progress=show)
    datasets.transitions(made, seat=0, progress=show)
    err = capsys.readouterr().err
    if show:
        assert re.search(r"to_parquet: 100%.*4/4 \[", err), err
        assert re.search(r"transitions: 100%.*4/4 \[", err), err
        assert re.search(RATE, err), err
    else:  # None: stderr is no terminal under pytest
        assert err == ""


def test_minari_export_draws_its_bar(
    made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("minari")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    datasets.to_minari(made, "yutenv/progress-test-v0", seat=0, progress=True)
    assert re.search(r"to_minari: 100%.*4/4 \[", capsys.readouterr().err)


def test_az_train_progress_always_and_by_default(tmp_path: Path) -> None:
    # A generation of two games and two training steps, no evaluation, in this process.
    args = ["--generations", "1", "--games", "2", "--sims", "4", "--hidden", "8", "--batch", "16", "--steps", "2",
            "--eval", "", "--seed", "5", "--workers", "1", "--games-in-flight", "2"]  # fmt: skip
    args += [] if HAVE_SELFPLAY else ["--selfplay", "mcts"]
    p = run_main("yutenv.az.train", *args, "--out", str(tmp_path / "always"), "--progress", "always")
    assert p.returncode == 0, p.stderr
    assert re.search(r"generations: 100%.*1/1 \[", p.stderr), p.stderr
    assert re.search(RATE, p.stderr), p.stderr
    if HAVE_SELFPLAY:
        assert re.search(r"selfplay: 100%.*2/2 \[", p.stderr), "the generation's games"
    assert "gen 1 done" in p.stderr
    p = run_main("yutenv.az.train", *args, "--out", str(tmp_path / "auto"))
    assert p.returncode == 0, p.stderr
    assert "generations:" not in p.stderr and not re.search(RATE, p.stderr), p.stderr
    assert "gen 1 done" in p.stderr, "status lines into a log"


def test_recipes_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sb3_contrib")
    from yutenv import recipes

    # The smallest runs, in this process: the budget's overhead and the rating take most of it.
    small = dict(minutes=0.01, num_envs=4, n_steps=16, snapshot_every=32, net_arch=(8,), rate_games=1, threads=1)
    p = run_main("yutenv.recipes", "league", "--out", str(tmp_path / "always"), "--minutes", "0.01", "--num-envs", "4",
                 "--n-steps", "16", "--snapshot-every", "32", "--net-arch", "8", "--rate-games", "1", "--threads", "1",
                 "--snapshot-rate-games", "1", "--progress", "always")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert re.search(r"league PPO: \d+step \[.*" + RATE + r", \d+:\d\d left, snapshot snap-\d+ [+-]\d+ \[", p.stderr), p.stderr
    capsys.readouterr()
    res = recipes.run("fixed", tmp_path / "auto", **small)  # type: ignore[arg-type]
    assert res["timesteps"] > 0
    assert not re.search(RATE, capsys.readouterr().err), "no bar by default into a pipe"
