"""yutenv.az.fit: a network fitted to existing datasets, scored on a held-out one, played in Go."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import run_main  # noqa: E402

import yutenv  # noqa: E402
from yutenv.az import fit, net  # noqa: E402


def selfplay(out: Path, games: int, seed: int, tier: str = "compact") -> str:
    cmd = [str(yutenv.binary_path()), "selfplay", "--quiet", "--out", str(out), "--tier", tier,
           "--games", str(games), "--agents", "mcts:6", "--seed", str(seed), "--workers", "1"]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    return str(out)


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("fit")
    return {
        "a": selfplay(d / "a", 12, 1),
        "b": selfplay(d / "b", 12, 2),
        "held": selfplay(d / "held", 8, 3),
        "planes": selfplay(d / "planes", 2, 4, tier="planes"),
    }


def run_cli(*args: str, in_process: bool = True) -> subprocess.CompletedProcess[str]:
    """python -m yutenv.az.fit ARGS; in this process unless asked (the first test runs the real one)."""
    if in_process:
        return run_main("yutenv.az.fit", *args)
    return subprocess.run([sys.executable, "-m", "yutenv.az.fit", *args], capture_output=True, text=True, timeout=600)


def test_fit_learns_scores_the_holdout_and_plays_in_go(sets: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "n.ynet"
    res = fit.fit(
        fit.FitConfig(
            data=[sets["a"], sets["b"]], holdout=sets["held"], out=str(out), hidden=(32,), epochs=6, batch=64, progress=False
        )
    )
    assert res.path == out and res.tier == "compact" and res.rules == "standard"
    assert res.rows == len(yutenv.datasets.load(sets["a"])) + len(yutenv.datasets.load(sets["b"]))
    assert res.holdout_rows == len(yutenv.datasets.load(sets["held"]))
    assert [r["epoch"] for r in res.epochs] == [1, 2, 3, 4, 5, 6]
    first, last = res.epochs[0], res.epochs[-1]
    assert last["policy_loss"] < first["policy_loss"] and last["holdout_policy_loss"] < first["holdout_policy_loss"]
    assert 0 <= last["holdout_policy_kl"] <= last["holdout_policy_loss"] and 0 <= last["holdout_argmax_agrees"] <= 1
    assert np.isfinite(last["holdout_value_mse"])
    back = net.load_net(out)
    assert back.hidden == (32,) and back.tier == "compact"
    r = yutenv.evaluate(f"net:{out}", opponent="random", games=4, seed=1)  # the Go agent plays the file
    assert r.games == 4
    again = tmp_path / "again.ynet"  # the same seed fits the same bits
    fit.fit(
        fit.FitConfig(
            data=[sets["a"], sets["b"]], holdout=sets["held"], out=str(again), hidden=(32,), epochs=6, batch=64, progress=False
        )
    )
    assert again.read_bytes() == out.read_bytes()


def test_cli_prints_the_epochs_and_goes_on_from_init(sets: dict[str, str], tmp_path: Path) -> None:
    first = tmp_path / "first.ynet"
    p = run_cli("--data", sets["a"], "--out", str(first), "--hidden", "16", "--epochs", "1", "--quiet", in_process=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("| epoch | policy loss | value loss | seconds |") and "network: " in p.stdout
    p = run_cli(
        "--data",
        sets["b"],
        "--holdout",
        sets["held"],
        "--init",
        str(first),
        "--out",
        str(tmp_path / "second.ynet"),
        "--epochs",
        "1",
        "--quiet",
    )
    assert p.returncode == 0, p.stderr
    assert "holdout policy kl" in p.stdout
    assert net.load_net(tmp_path / "second.ynet").hidden == (16,)  # --init's trunk, not --hidden's default


def test_init_az_fine_tunes_the_shipped_network(sets: dict[str, str], tmp_path: Path) -> None:
    """--init az: the network shipped inside the binary (the bytes `yutenv net az` writes, whose
    SHA-256 az.json declares) is the start; the fit moves it and the result plays in Go."""
    meta = json.loads((Path(__file__).resolve().parents[2] / "nnet" / "shipped" / "az.json").read_text())
    raw = net.shipped_net_bytes()
    assert hashlib.sha256(raw).hexdigest() == meta["sha256"] and len(raw) == meta["bytes"]
    start = net.load_start_net("az")
    assert (start.tier, list(start.hidden), start.rules) == (meta["tier"], meta["hidden"], meta["rules"])
    out = tmp_path / "tuned.ynet"
    p = run_cli("--data", sets["a"], "--init", "az", "--out", str(out), "--epochs", "1", "--batch", "64", "--quiet")
    assert p.returncode == 0, p.stderr
    tuned = net.load_net(out)
    assert tuned.hidden == start.hidden
    assert not torch.equal(tuned.policy.weight, start.policy.weight), "the fit trained the shipped network on"
    assert yutenv.evaluate(f"net:{out}", opponent="random", games=2, seed=1).games == 2


@pytest.mark.parametrize("name", net.SHIPPED_NAMES)
def test_every_shipped_name_is_an_init(name: str) -> None:
    """--init takes every shipped name: its bytes are the binary's (`yutenv net NAME --json`'s
    SHA-256) and load as a network of its rules; an unknown name is a path, and a shipped-looking
    name the binary does not ship is refused naming the shipped ones."""
    info = json.loads(
        subprocess.run([str(yutenv.binary_path()), "net", name, "--json"], capture_output=True, text=True, check=True).stdout
    )
    raw = net.start_net_bytes(name)
    assert hashlib.sha256(raw).hexdigest() == info["sha256"]
    start = net.load_start_net(name)
    assert (start.tier, list(start.hidden), start.rules) == (info["tier"], info["hidden"], info["rules"])
    assert net.RECOMMENDED in net.SHIPPED_NAMES and net.SHIPPED_NAMES[0] == net.SHIPPED == "az"
    with pytest.raises(net.NetFileError, match="no shipped network 'mystery': the binary ships az"):
        net.shipped_net_bytes("mystery")


@pytest.mark.parametrize("case", ["tiers differ", "damaged dataset", "damaged init", "no such dataset"])
def test_bad_input_is_one_line_and_exit_1(sets: dict[str, str], tmp_path: Path, case: str) -> None:
    args = ["--data", sets["a"], "--out", str(tmp_path / "x.ynet"), "--hidden", "8", "--epochs", "1", "--quiet"]
    want = ""
    if case == "tiers differ":
        args += ["--holdout", sets["planes"]]
        want = "differ in tier"
    elif case == "damaged dataset":
        bad = tmp_path / "bad"
        subprocess.run(["cp", "-r", sets["b"], str(bad)], check=True)
        shard = sorted(bad.glob("shard-*.npz"))[0]
        data = bytearray(shard.read_bytes())
        data[len(data) // 2] ^= 0xFF
        shard.write_bytes(bytes(data))
        args += ["--holdout", str(bad)]
        want = str(bad)
    elif case == "damaged init":
        init = tmp_path / "init.ynet"
        init.write_bytes(b"\x81\xa6format\xa3bad")
        args += ["--init", str(init)]
        want = "init.ynet"
    else:
        args[1] = str(tmp_path / "missing")
        want = "missing"
    p = run_cli(*args)
    assert p.returncode == 1, p.stdout
    assert p.stderr.startswith("yutenv.az.fit: ") and p.stderr.count("\n") == 1 and want in p.stderr, p.stderr
    assert not (tmp_path / "x.ynet").exists()


def test_help_lists_the_options() -> None:
    p = run_cli("--help")
    assert p.returncode == 0
    for opt in ("--data", "--holdout", "--out", "--hidden", "--init", "--epochs", "--value-mix"):
        assert opt in p.stdout, opt
