"""Playout cap randomization (KataGo) in the training loop: ``--fast-sims N --full-prob P``.

The loss leaves out the policy of rows without a policy target (a hand-made batch), the
datasets expose ``policy_target``, and a tiny real run trains with it and resumes with its
settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

import torch  # noqa: E402
from conftest import run_main  # noqa: E402

from yutenv import datasets  # noqa: E402
from yutenv.az import train  # noqa: E402
from yutenv.az.buffer import ReplayBuffer  # noqa: E402

TINY = ["--games", "6", "--sims", "8", "--hidden", "16", "--batch", "32", "--steps", "10", "--eval", "",
        "--seed", "3", "--games-in-flight", "4", "--quiet"]  # fmt: skip
PCR = ["--fast-sims", "4", "--full-prob", "0.25"]


def val(t: torch.Tensor) -> float:
    return float(t.detach())


def run_train(out: Path, generations: int, *extra: str, in_process: bool = True) -> subprocess.CompletedProcess[str]:
    args = ["--out", str(out), "--generations", str(generations), *TINY, *extra]
    if in_process:  # no interpreter and torch start for each; the module's fixture runs the real command
        return run_main("yutenv.az.train", *args)
    return subprocess.run([sys.executable, "-m", "yutenv.az.train", *args], capture_output=True, text=True, timeout=600)


def test_the_loss_ignores_the_policy_of_rows_without_a_target() -> None:
    """Two rows; the second has no policy target: changing its policy (or making it
    impossible, a target on an illegal action) changes neither loss nor the gradient, while
    its value still counts."""
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 180, generator=g, requires_grad=True)
    v = torch.tensor([0.3, -0.2], requires_grad=True)
    mask = torch.zeros(2, 180, dtype=torch.bool)
    mask[:, :5] = True
    pi = torch.zeros(2, 180)
    pi[0, 1] = 1.0
    pi[1, 2] = 1.0
    z = torch.tensor([1.0, -1.0])
    target = torch.tensor([True, False])

    pl, vl = train.losses(logits, v, mask, pi, z, target)
    alone, _ = train.losses(logits[:1], v[:1], mask[:1], pi[:1], z[:1])
    assert val(pl) == pytest.approx(val(alone))  # the mean over the target rows only
    assert val(vl) == pytest.approx(val(((torch.tanh(v) - z) ** 2).mean()))  # both rows' values

    pl.backward()
    assert logits.grad is not None and torch.all(logits.grad[1] == 0)
    bad = pi.clone()
    bad[1] = 0
    bad[1, 100] = 1.0  # an illegal action: its log-probability is -inf
    pl2, _ = train.losses(logits, v, mask, bad, z, target)
    assert torch.isfinite(pl2) and val(pl2) == pytest.approx(val(pl))

    none, _ = train.losses(logits, v, mask, pi, z, torch.tensor([False, False]))
    assert val(none) == 0.0
    every, _ = train.losses(logits, v, mask, pi, z, torch.tensor([True, True]))
    assert val(every) == pytest.approx(val(train.losses(logits, v, mask, pi, z)[0]))


@pytest.fixture(scope="module")
def pcr_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pcr") / "run"
    p = run_train(out, 2, *PCR, in_process=False)
    assert p.returncode == 0, p.stderr
    return out


def test_a_tiny_run_with_playout_cap_randomization(pcr_run: Path) -> None:
    """The datasets carry policy_target, about a quarter of the rows are full searches,
    the buffer passes it to the loss, and the settings are the run's."""
    d = pcr_run / "gen-0001" / "selfplay"
    ds = datasets.load(d)
    assert ds.policy_target is not None and ds.policy_target.dtype == np.uint8
    assert len(ds.policy_target) == len(ds) > 100
    share = float(ds.policy_targets().mean())
    assert 0.12 < share < 0.38, share
    assert "policy_target" in ds.arrays()
    assert all(a.endswith(",fast=4,full_prob=0.25") for a in ds.manifest["agents"])
    # fast rows searched 4 simulations at most (0 when forced), full ones more when searched
    n = ds.visits.sum(axis=1) if ds.visits is not None else None
    assert n is not None
    assert np.all(n[~ds.policy_targets()] <= 4)
    assert np.any(n[ds.policy_targets()] > 4)

    buf = ReplayBuffer(window=2)
    buf.add(d)
    b = next(buf.batches(np.random.default_rng(0), 64, 1))
    assert b.policy_target is not None and b.policy_target.dtype == bool and not b.policy_target.all()

    cfg = json.loads((pcr_run / "config.json").read_text())
    assert cfg["fast_sims"] == 4 and cfg["full_prob"] == 0.25
    gen = json.loads((pcr_run / "gen-0002" / "gen.json").read_text())
    assert np.isfinite(gen["train"]["policy_loss"]) and gen["train"]["policy_loss"] > 0


def test_diagnose_reads_the_full_searches_only(pcr_run: Path) -> None:
    from yutenv.az import diagnose

    ds = datasets.load(pcr_run / "gen-0002" / "selfplay")
    full = int(((ds.mask.sum(axis=1) > 1) & ds.policy_targets()).sum())
    (r,) = diagnose.diagnose(pcr_run, gens=[2], rows=100_000)
    assert r["rows"] == full < len(ds)


def test_a_run_resumes_with_its_settings_and_refuses_others(pcr_run: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(pcr_run, out)
    p = run_train(out, 2, "--fast-sims", "4", "--full-prob", "0.5")
    assert p.returncode == 1 and "full_prob" in p.stderr and "Traceback" not in p.stderr
    p = run_train(out, 2)  # without the flags: fast_sims 0 is another setting
    assert p.returncode == 1 and "fast_sims" in p.stderr


def test_an_older_dataset_has_a_policy_target_in_every_row(tmp_path: Path) -> None:
    """A run without --fast-sims writes no policy_target; every row counts as a target."""
    out = tmp_path / "run"
    p = run_train(out, 1, "--games", "2")
    assert p.returncode == 0, p.stderr
    ds = datasets.load(out / "gen-0001" / "selfplay")
    assert ds.policy_target is None and "policy_target" not in ds.arrays()
    assert ds.policy_targets().all() and len(ds.policy_targets()) == len(ds)
    buf = ReplayBuffer()
    buf.add(out / "gen-0001" / "selfplay")
    b = next(buf.batches(np.random.default_rng(0), 16, 1))
    assert b.policy_target is not None and b.policy_target.all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fast-sims", "9"], "fast_sims must be 0..sims"),
        (["--fast-sims", "4", "--full-prob", "1.5"], "full_prob must be in [0, 1]"),
        (["--fast-sims", "4", "--selfplay", "mcts"], "use --selfplay net"),
    ],
)
def test_bad_playout_cap_settings_are_refused_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    p = run_train(tmp_path / "run", 1, *args)
    assert p.returncode == 1, p.stderr
    assert message in p.stderr and "Traceback" not in p.stderr


def test_playout_cap_randomization_with_gumbel_targets(tmp_path: Path) -> None:
    """Gumbel search with playout cap randomization, every self-play option at once: the
    request then holds more keys than the codec once allowed (16), and the run failed with
    bad_request. It trains, and the full rows carry the improved policy (not one-hot visits)."""
    out = tmp_path / "gumbel"
    p = run_train(out, 1, *PCR, "--selfplay-opt", "gumbel=true", "--selfplay-opt", "gumbel_m=4",
                  "--dirichlet-alpha", "0", "--temperature-moves", "0")  # fmt: skip
    assert p.returncode == 0, p.stderr
    ds = datasets.load(out / "gen-0001" / "selfplay")
    assert ds.policy_target is not None and 0 < float(ds.policy_targets().mean()) < 1
    assert all(",gumbel=1" in a and a.endswith(",fast=4,full_prob=0.25") for a in ds.manifest["agents"])
