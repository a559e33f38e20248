"""yutenv.az: the stall diagnostics (yutenv.az.diagnose), the learning-rate schedules and the
pass-through of self-play options, on tiny real runs of the loop."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

from conftest import run_main  # noqa: E402

from yutenv.az import diagnose, train  # noqa: E402

TINY = ["--games", "4", "--sims", "8", "--hidden", "16", "--batch", "32", "--steps", "20", "--eval", "",
        "--seed", "5", "--games-in-flight", "4", "--quiet"]  # fmt: skip


def run_train(out: Path, generations: int, *extra: str, in_process: bool = True) -> subprocess.CompletedProcess[str]:
    args = ["--out", str(out), "--generations", str(generations), *TINY, *extra]
    if in_process:  # no interpreter and torch start for each; the module's fixture runs the real command
        return run_main("yutenv.az.train", *args)
    return subprocess.run([sys.executable, "-m", "yutenv.az.train", *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two generations with the cosine schedule, a warm-up and a self-play option passed through."""
    out = tmp_path_factory.mktemp("learn") / "run"
    p = run_train(out, 2, "--lr-schedule", "cosine", "--lr-warmup", "0.5", "--selfplay-opt", "max_batch=2", in_process=False)
    assert p.returncode == 0, p.stderr
    return out


def gen_json(run: Path, g: int) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((run / f"gen-{g:04d}" / "gen.json").read_text())
    return doc


# --- diagnose ---------------------------------------------------------------------------------


def test_diagnose_cli_writes_figures_of_every_generation(tiny_run: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "yutenv.az.diagnose", str(tiny_run), "--gens", "1,last", "--bins", "4"],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "KL(target‖prior)" in p.stdout and "Value calibration" in p.stdout
    doc = json.loads((tiny_run / "diagnose.json").read_text())
    assert [r["generation"] for r in doc["generations"]] == [1, 2]
    assert (tiny_run / "diagnose.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for r in doc["generations"]:
        assert r["network"] == r["generation"] - 1
        assert 0 < r["rows"] <= r["decisions"] and 0 <= r["forced"] < 1
        assert r["kl"] >= -1e-9 and 0 <= r["argmax_differs"] <= 1
        for h in ("target_entropy", "prior_entropy"):
            assert 0 <= r[h] <= math.log(180) + 1e-9
        for m in ("value_mse_outcome", "value_mse_search", "search_mse_outcome"):
            assert 0 <= r[m] <= 4
        assert sum(c["count"] for c in r["calibration"]) == r["rows"]
        for c in r["calibration"]:
            assert c["low"] <= c["predicted"] <= c["high"] and -1 <= c["outcome"] <= 1
        assert 0 <= r["ece"] <= 2


def test_diagnose_figures_match_a_direct_computation(tiny_run: Path) -> None:
    """KL, entropy and the value MSE of generation 2, recomputed row by row from the dataset
    and generation 1's network."""
    import torch

    from yutenv import datasets
    from yutenv.az.checkpoint import load_checkpoint

    r = diagnose.diagnose_generation(tiny_run, 2, rows=10_000)
    ds = datasets.load(tiny_run / "gen-0002" / "selfplay")
    model, _ = load_checkpoint(tiny_run / "gen-0001" / "model.pt")
    kl, ent, se = [], [], []
    for i in range(len(ds.value)):
        legal = ds.mask[i].astype(bool)
        if legal.sum() < 2:
            continue
        with torch.no_grad():
            logits, v = model(torch.from_numpy(np.asarray(ds.obs[i : i + 1], dtype=np.float32)))
        lg = logits[0].double().numpy()[legal]
        logp = lg - np.log(np.exp(lg - lg.max()).sum()) - lg.max()
        t = np.asarray(ds.policy[i], dtype=np.float64)[legal]
        nz = t > 0
        kl.append(float((t[nz] * (np.log(t[nz]) - logp[nz])).sum()))
        ent.append(float(-(t[nz] * np.log(t[nz])).sum()))
        se.append((math.tanh(float(v[0])) - float(ds.value[i])) ** 2)
    assert r["rows"] == len(kl)
    assert r["kl"] == pytest.approx(np.mean(kl), abs=1e-5)
    assert r["target_entropy"] == pytest.approx(np.mean(ent), abs=1e-5)
    assert r["value_mse_outcome"] == pytest.approx(np.mean(se), abs=1e-5)


def test_diagnose_refuses_missing_generations_in_one_line(tiny_run: Path, tmp_path: Path) -> None:
    p = run_main("yutenv.az.diagnose", str(tiny_run), "--gens", "7")
    assert p.returncode == 1 and "no complete generation 7" in p.stderr and "Traceback" not in p.stderr
    p = run_main("yutenv.az.diagnose", str(tmp_path / "none"))
    assert p.returncode == 2 and "no such folder" in p.stderr
    with pytest.raises(ValueError, match="generation 1 or later"):
        diagnose.diagnose_generation(tiny_run, 0)


# --- the learning-rate schedule -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("schedule", "warmup", "points"),
    [
        ("constant", 0.0, {0: 1e-3, 5: 1e-3, 10: 1e-3}),
        ("cosine", 0.0, {0: 1e-3, 5: 0.05e-3 + 0.95e-3 * 0.5, 10: 0.05e-3}),
        ("step", 0.0, {0: 1e-3, 4.9: 1e-3, 5: 0.3e-3, 7.5: 0.09e-3, 10: 0.09e-3}),
        ("constant", 2.0, {0: 1e-6, 1: 0.5e-3, 2: 1e-3, 6: 1e-3}),
    ],
)
def test_learning_rate_schedules(schedule: str, warmup: float, points: dict[float, float]) -> None:
    cfg = train.TrainConfig(out="x", generations=10, lr=1e-3, lr_schedule=schedule, lr_warmup=warmup)
    cfg.check()
    for progress, want in points.items():
        assert train.learning_rate(cfg, progress) == pytest.approx(want, rel=1e-9), progress


def test_the_schedule_drives_the_optimiser(tiny_run: Path) -> None:
    """gen.json records the learning rate of the first and last step of every generation: a
    cosine over 2 generations with half a generation of warm-up."""
    cfg = train.TrainConfig(out="x", generations=2, lr_schedule="cosine", lr_warmup=0.5)
    for g in (1, 2):
        lrs = gen_json(tiny_run, g)["train"]["lr"]
        assert lrs == pytest.approx([train.learning_rate(cfg, g - 1), train.learning_rate(cfg, g - 1 + 19 / 20)])
    assert gen_json(tiny_run, 1)["train"]["lr"][0] < 1e-5  # warm-up starts near 0
    assert gen_json(tiny_run, 2)["train"]["lr"][1] < 1e-4  # the cosine ends near lr/20


def test_bad_schedules_are_refused_in_one_line(tmp_path: Path) -> None:
    p = run_train(tmp_path / "a", 1, "--lr-warmup", "3")
    assert p.returncode == 1 and "lr_warmup must be 0..generations" in p.stderr
    p = run_train(tmp_path / "b", 1, "--lr-schedule", "linear")
    assert p.returncode == 2 and "invalid choice" in p.stderr


# --- self-play options passed through -------------------------------------------------------------


def test_a_selfplay_option_reaches_the_server(tiny_run: Path) -> None:
    """--selfplay-opt max_batch=2: the server gathered at most 2 leaves a batch."""
    s = gen_json(tiny_run, 1)["selfplay"]["summary"]
    assert s["batches"] > 0 and s["leaves"] <= 2 * s["batches"]
    assert json.loads((tiny_run / "config.json").read_text())["selfplay_opts"] == {"max_batch": 2}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--selfplay-opt", "no_such_option=1"], "no_such_option"),  # refused by the server itself
        (["--selfplay-opt", "sims=3"], "selfplay option 'sims' has its own setting"),
        (["--selfplay-opt", "novalue"], "want KEY=VALUE"),
        (["--selfplay", "mcts", "--selfplay-opt", "max_batch=2"], "use --selfplay net"),
    ],
)
def test_bad_selfplay_options_are_refused_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    p = run_train(tmp_path / "run", 1, *args)
    assert p.returncode == 1, p.stderr
    assert message in p.stderr and "Traceback" not in p.stderr


def test_a_run_of_an_older_yutenv_resumes(tiny_run: Path, tmp_path: Path) -> None:
    """A config.json written before the new settings existed still resumes (they had their defaults)."""
    import shutil

    out = tmp_path / "old"
    shutil.copytree(tiny_run, out)
    cfg = json.loads((out / "config.json").read_text())
    for k in ("lr_schedule", "lr_warmup", "selfplay_opts"):
        cfg.pop(k)
    (out / "config.json").write_text(json.dumps(cfg))
    p = run_train(out, 2)
    assert p.returncode == 0, p.stderr


# --- the ladder plays the shipped agent by default ----------------------------------------------


def test_ladder_plays_the_shipped_az_by_default(tiny_run: Path, tmp_path: Path) -> None:
    import shutil

    from yutenv.az import judge

    assert judge.main([str(tiny_run), "--gens", "2", "--games", "2", "--quiet"]) == 0
    rep = json.loads((tiny_run / "ladder.json").read_text())
    assert [f["opponent"] for f in rep["final"]] == list(judge.DEFAULT_BASELINES)
    assert {"az", "az,sims=200"} <= set(judge.DEFAULT_BASELINES)
    # under other rules the shipped network cannot play: skipped, and said so
    other = tmp_path / "other"
    shutil.copytree(tiny_run, other)
    cfg = json.loads((other / "config.json").read_text())
    cfg["rules"] = "pieces=2"
    (other / "config.json").write_text(json.dumps(cfg))
    assert judge.main([str(other), "--gens", "2", "--games", "2", "--baselines", "az;az,sims=200", "--quiet"]) == 0
    assert "final" not in json.loads((other / "ladder.json").read_text())
    assert "Skipped `az`, `az,sims=200`" in (other / "ladder.md").read_text()
    # and the run's own networks, trained for the standard rules, refuse to play pieces=2
    assert judge.main([str(other), "--gens", "2", "--games", "2", "--baselines", "greedy", "--quiet"]) == 2


# --- --value-mix ---------------------------------------------------------------------------------


def test_value_mix_keeps_the_outcome_of_forced_decisions(tiny_run: Path) -> None:
    """A forced decision was not searched (search_value 0): with --value-mix its target is the
    outcome, not the outcome pulled toward 0; a searched one mixes outcome and search value."""
    from yutenv import datasets
    from yutenv.az.buffer import ReplayBuffer

    path = tiny_run / "gen-0002" / "selfplay"
    ds = datasets.load(path)
    forced = ds.mask.astype(bool).sum(axis=1) == 1
    assert forced.any() and (~forced).any(), "the dataset has both kinds of decisions"
    assert (ds.search_value[forced] == 0).all()
    buf = ReplayBuffer(window=1, value_mix=0.5)
    buf.add(path)
    value = buf._arrays()[3]
    np.testing.assert_array_equal(value[forced], ds.value[forced])
    np.testing.assert_allclose(value[~forced], 0.5 * ds.value[~forced] + 0.5 * ds.search_value[~forced], atol=1e-6)
