"""The examples of positions and search run, and do what their docs say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(script: str, *args: str, cwd: Path) -> str:
    p = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_expectimax_plays(tmp_path: Path) -> None:
    out = run("expectimax.py", "--depth", "2", "--max-decisions", "6", cwd=tmp_path)
    assert "decisions 6" in out or "winner" in out


def test_label_positions_in_one_call(tmp_path: Path) -> None:
    # 10,000 positions in one analyse call (greedy: fast), then a small mcts:400 batch.
    out = run("label_positions.py", "--n", "10000", "--agent", "greedy", "--out", "g.npz", cwd=tmp_path)
    assert "10000 positions labelled by greedy" in out
    d = np.load(tmp_path / "g.npz")
    assert d["policy"].shape == (10000, 180) and d["obs"].shape[0] == 10000
    assert (d["mask"][np.arange(10000), d["action"]] == 1).all()
    out = run("label_positions.py", "--n", "100", "--agent", "mcts:400", "--tier", "compact", "--out", "m.npz", cwd=tmp_path)
    d = np.load(tmp_path / "m.npz")
    assert d["policy"].shape == (100, 180)
    assert np.allclose(d["policy"].sum(axis=1), 1, atol=1e-5)
    assert (d["policy"][d["mask"] == 0] == 0).all()


def test_bench_search_runs(tmp_path: Path) -> None:
    out = run("bench_search.py", "--depth", "2", "--positions", "1", "--batch", "64", cwd=tmp_path)
    assert "states/s" in out or "nodes" in out, out


def test_openspiel_mcts_plays(tmp_path: Path) -> None:
    pytest.importorskip("pyspiel")
    out = run("openspiel_mcts.py", "--games", "2", "--sims", "4", "--opponents", "random", cwd=tmp_path)
    assert "random" in out, out


def test_train_maskable_ppo_trains_and_evaluates(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    out = run("train_maskable_ppo.py", "--timesteps", "512", "--n-envs", "2", "--eval-every", "256", "--eval-games", "4",
              "--save", str(tmp_path / "model.zip"), cwd=tmp_path)  # fmt: skip
    assert "vs random" in out, out
    assert (tmp_path / "model.zip").is_file()
