"""``--selfplay net-go``: the learning loop's self-play played by the Go agent
``net:PATH,sims=N,gumbel=1`` (the network evaluated in Go, no torch in self-play)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from yutenv.az import train  # noqa: E402
from yutenv.data import datasets  # noqa: E402

NETGO = ["--selfplay", "net-go", "--dirichlet-alpha", "0", "--temperature-moves", "0"]
TINY = [
    "--games",
    "6",
    "--sims",
    "8",
    "--hidden",
    "16",
    "--batch",
    "32",
    "--steps",
    "20",
    "--eval=",
    "--seed",
    "3",
    "--workers",
    "1",
    "--quiet",
]


def run(out: Path, generations: int, *extra: str) -> train.RunResult:
    return train.run(train.config_from_args(["--out", str(out), "--generations", str(generations), *TINY, *NETGO, *extra]))


def shards(d: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(d.glob("shard-*.npz"))]


def test_net_go_plays_the_previous_generation_in_go(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(out, 2, "--selfplay-opt", "gumbel_m=4")
    for g in (1, 2):
        gen = out / f"gen-{g:04d}"
        info = json.loads((gen / "gen.json").read_text())["selfplay"]
        played = gen / "selfplay.ynet"
        # generation g's games are generation g-1's network, as the Go binary read it
        assert played.read_bytes() == (out / f"gen-{g - 1:04d}" / "net.ynet").read_bytes()
        spec = "net:selfplay.ynet,sims=8,gumbel=1,m=4"  # named from the generation's folder
        assert info["command"][:3] == ["selfplay", "--agents", spec]
        assert len(info["net_sha256"]) == 64
        m = datasets.read_manifest(gen / "selfplay")
        assert m["agents"] == [spec, spec] and m["games"] == 6 and info["rows"] == m["decisions"] > 0
        d = datasets.load(gen / "selfplay")
        # Gumbel's improved policy: a distribution over the legal actions of every row
        assert np.allclose(d["policy"].sum(axis=1), 1.0, atol=1e-4)
        assert not (d["policy"] * (1 - d["mask"])).any()


def test_net_go_runs_in_a_folder_whose_path_holds_the_spec_separators(tmp_path: Path) -> None:
    """The agent specs name networks by paths quoted where they need it, so a run folder may hold
    ',', ';' and '=' (they were refused before the run)."""
    out = tmp_path / "runs,seed=3;x"
    train.config_from_args(["--out", str(out), "--generations", "1", *TINY, *NETGO, "--eval-sims", "2"]).check()
    run(out, 1)
    assert (out / "gen-0001" / "net.ynet").exists()


def test_net_go_is_deterministic(tmp_path: Path) -> None:
    """The same seed gives the same games, byte for byte (the Go search and forward pass are),
    wherever the run folder is: the manifest names the network from the generation's folder."""
    run(tmp_path / "a", 1)
    run(tmp_path / "b", 1)
    a, b = tmp_path / "a" / "gen-0001" / "selfplay", tmp_path / "b" / "gen-0001" / "selfplay"
    assert shards(a) and shards(a) == shards(b)
    ma, mb = (json.loads((d / datasets.MANIFEST).read_text()) for d in (a, b))
    assert {k: v for k, v in ma.items() if k not in ("created", "updated")} == {
        k: v for k, v in mb.items() if k not in ("created", "updated")
    }


def test_net_go_plays_the_games_of_net(tmp_path: Path) -> None:
    """With Gumbel search on both, --selfplay net-go plays the very games of --selfplay net (the
    server's search, the leaves valued in torch): the same decisions; the targets differ only by
    the float rounding of Go's forward pass against torch's."""
    gumbel = ["--selfplay-opt", "gumbel_m=4"]
    run(tmp_path / "go", 1, *gumbel)
    train.run(train.config_from_args(["--out", str(tmp_path / "torch"), "--generations", "1", *TINY, "--selfplay", "net", "--dirichlet-alpha", "0",
                                      "--temperature-moves", "0", "--selfplay-opt", "gumbel=true", *gumbel, "--games-in-flight", "4"]))  # fmt: skip
    go, torch_ = (datasets.load(tmp_path / r / "gen-0001" / "selfplay") for r in ("go", "torch"))
    assert len(go) == len(torch_) > 0
    for k in ("obs", "mask", "action", "seat", "game", "value"):
        assert np.array_equal(go[k], torch_[k]), k
    np.testing.assert_allclose(go["policy"], torch_["policy"], atol=1e-4)
    np.testing.assert_allclose(go["search_value"], torch_["search_value"], atol=1e-4)


def test_net_go_with_playout_cap_randomization(tmp_path: Path) -> None:
    """--fast-sims plays the Go agent's fast=N: a share of the decisions search N simulations
    and their rows are no policy targets; training reads the flag, and the run resumes."""
    out = tmp_path / "run"
    run(out, 2, "--fast-sims", "2", "--full-prob", "0.5")
    spec = "net:selfplay.ynet,sims=8,gumbel=1,fast=2,full_prob=0.5"
    for g in (1, 2):
        gen = out / f"gen-{g:04d}"
        info = json.loads((gen / "gen.json").read_text())["selfplay"]
        assert info["command"][:3] == ["selfplay", "--agents", spec]
        m = datasets.read_manifest(gen / "selfplay")
        assert m["agents"] == [spec, spec]
        d = datasets.load(gen / "selfplay")
        choice = d["mask"].sum(axis=1) > 1
        target = d["policy_target"].astype(bool)
        visits = d["visits"].sum(axis=1)
        # full searches spend 8 simulations, fast ones 2: the flag says which ran
        assert (visits[choice & target] == 8).all() and (visits[choice & ~target] == 2).all()
        assert 0 < target[choice].mean() < 1
    before = shards(out / "gen-0002" / "selfplay")
    run(out, 2, "--fast-sims", "2", "--full-prob", "0.5")  # a finished run: nothing changes
    assert shards(out / "gen-0002" / "selfplay") == before


def test_games_and_sims_follow_their_schedules(tmp_path: Path) -> None:
    """--games 4,6@2 --sims 4,8@3: each generation plays its stage's games with its stage's
    search, gen.json records both, and a resume with another schedule is refused."""
    out = tmp_path / "run"
    res = run(out, 3, "--games", "4,6@2", "--sims", "4,8@3")
    want = {1: (4, 4), 2: (6, 4), 3: (6, 8)}
    for g, (games, sims) in want.items():
        gen = out / f"gen-{g:04d}"
        info = json.loads((gen / "gen.json").read_text())["selfplay"]
        assert (info["games"], info["sims"]) == (games, sims), g
        assert info["command"][:3] == ["selfplay", "--agents", f"net:selfplay.ynet,sims={sims},gumbel=1"]
        assert datasets.read_manifest(gen / "selfplay")["games"] == games
    assert [s["selfplay"]["games"] for s in res.generations[1:]] == [4, 6, 6]
    cfg = json.loads((out / "config.json").read_text())
    assert (cfg["games"], cfg["sims"]) == ("4,6@2", "4,8@3")
    run(out, 3, "--games", " 4, 6@2", "--sims", "4,8@3")  # the same schedule written otherwise: resumes
    with pytest.raises(ValueError, match="other settings.*games"):
        run(out, 4, "--games", "4,6@3", "--sims", "4,8@3")


@pytest.mark.parametrize(
    ("settings", "why"),
    [
        ({"games": "4,0@2"}, "games: .*at least 1"),
        ({"sims": "4,8@2x"}, "sims: .*not VALUE"),
        ({"sims": "8,4@2", "fast_sims": 6}, r"fast_sims must be 0\.\.sims \(4\)"),  # the schedule's smallest
    ],
)
def test_bad_schedules_are_refused_before_the_run(tmp_path: Path, settings: dict[str, object], why: str) -> None:
    cfg = train.TrainConfig(out=str(tmp_path / "run"), selfplay="net-go", dirichlet_alpha=0, temperature_moves=0, **settings)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=why):
        cfg.check()


def test_a_bad_schedule_is_an_argument_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        train.config_from_args(["--out", "unused", "--games", "4,0@2"])
    assert "--games: '4,0@2': values must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--selfplay", "net-go", "--temperature-moves", "0"], "--dirichlet-alpha 0"),
        (["--selfplay", "net-go", "--dirichlet-alpha", "0"], "--temperature-moves 0"),
        ([*NETGO, "--selfplay-opt", "eval_timeout=5"], "only --selfplay-opt is gumbel_m"),
        ([*NETGO, "--selfplay-opt", "gumbel=false"], "only --selfplay-opt is gumbel_m"),
        ([*NETGO, "--selfplay-opt", "gumbel_m=500"], "gumbel_m must be"),
        ([*NETGO, "--ray", "auto", "--ray-storage", "s3://bucket/x"], "--ray-storage"),
    ],
)
def test_net_go_refuses_what_it_cannot_play(tmp_path: Path, args: list[str], why: str) -> None:
    with pytest.raises(ValueError, match=why.replace("-", r"\-")):
        train.config_from_args(["--out", str(tmp_path / "run"), "--generations", "1", *TINY, *args]).check()
    assert not (tmp_path / "run").exists()
