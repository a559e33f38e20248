"""The shipped agent ``az`` (the network inside the Go binary) wherever agent specs work, without
torch: the CLI (eval, selfplay, analyse, play), ``yutenv.evaluate``, ``yutenv.make(opponent=)``
and ``Game.analyse``; and its clear refusal of rules it was not trained for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import yutenv
from yutenv._protocol import RECOMMENDED_NET, SHIPPED_NET, SHIPPED_NET_RULES, SHIPPED_NETS

REPO = Path(__file__).resolve().parents[2]
META = json.loads((REPO / "nnet" / "shipped" / "az.json").read_text())


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(yutenv.binary_path()), *args], capture_output=True, text=True, timeout=300, input=stdin)


@pytest.mark.parametrize("spec", ["az", "az,sims=8"])
def test_cli_eval_and_selfplay_play_az(spec: str, tmp_path: Path) -> None:
    p = cli("eval", "--a", spec, "--b", "random", "--games", "6", "--json", "--seed", "3")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["a"] == spec and r["games"] == 6
    out = tmp_path / "games.jsonl"
    p = cli("selfplay", "--agents", f"{spec};greedy", "--games", "2", "--out", str(out), "--quiet")
    assert p.returncode == 0, p.stderr
    assert len(out.read_text().splitlines()) == 2
    p = cli("analyse", "--record", str(out), "--decision", "1", "--agent", spec, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["agent"] == spec


def test_cli_play_against_az() -> None:
    """One interactive game: the human leaves at once ('q'); az was accepted as the opponent."""
    p = cli("play", "--opponent", "az", "--seat", "1", "--seed", "4", stdin="q\n")
    assert "az" in p.stdout + p.stderr
    assert "unknown agent" not in p.stderr and "bad agent spec" not in p.stderr


def test_cli_refuses_other_rules_naming_the_trained_ones() -> None:
    p = cli("eval", "--a", "az", "--b", "random", "--games", "2", "--rules", "players=3")
    assert p.returncode != 0
    assert f'trained for, "{META["rules"]}" (tier {META["tier"]}' in p.stderr and '"players=3"' in p.stderr


NO_TORCH = textwrap.dedent(
    """
    import sys
    import numpy as np
    import yutenv
    r = yutenv.evaluate("az", opponent="random", games=4, seed=1, progress=False)
    assert r.games == 4 and r.a == "az", r
    r = yutenv.evaluate("az,sims=4", opponent="greedy", games=2, seed=1, progress=False)
    assert r.games == 2
    env = yutenv.make(opponent="az,sims=4")
    obs, info = env.reset(seed=1)
    done, steps = False, 0
    while not done:
        obs, reward, term, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        done, steps = term or trunc, steps + 1
    env.close()
    game = yutenv.Game("standard")
    s = game.new_initial_state(seed=1)
    while not s.legal_actions():
        s.sample_throw()
    a = game.analyse([s], "az")
    assert a.actions[0] in s.legal_actions(), a
    try:
        yutenv.make(opponent="az", rules="players=3").reset(seed=1)
        raise SystemExit("az was accepted under players=3")
    except yutenv.errors.InvalidArgumentError as e:
        assert "trained for" in str(e), e
    assert "torch" not in sys.modules, "torch was imported"
    print("ok", steps)
    """
)


def test_python_paths_play_az_without_importing_torch() -> None:
    """yutenv.evaluate, yutenv.make(opponent=) and Game.analyse with az never import torch
    (the network is played by the Go binary), checked in a fresh interpreter."""
    p = subprocess.run([sys.executable, "-c", NO_TORCH], capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok ")


BLOCK_TORCH = textwrap.dedent(
    """
    import importlib.abc, sys

    class NoTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ImportError("torch is blocked in this test")
            return None

    sys.meta_path.insert(0, NoTorch())
    """
)


@pytest.mark.parametrize("name", SHIPPED_NETS)
def test_every_shipped_network_plays_with_torch_blocked(name: str) -> None:
    """Every name of the generated SHIPPED_NETS is an agent the binary plays alone and with a
    search, under the rules it was trained for, in an interpreter where importing torch fails;
    under other rules it is refused, naming its own."""
    rules = SHIPPED_NET_RULES[name]
    other = "players=3" if rules != "players=3" else "standard"
    code = BLOCK_TORCH + textwrap.dedent(
        f"""
        import yutenv
        for spec in ({name!r}, {name + ",sims=4"!r}):
            r = yutenv.evaluate(spec, opponent="random", games=2, rules={rules!r}, seed=1, progress=False)
            assert r.games == 2 and r.a == spec, r
        try:
            yutenv.evaluate({name!r}, opponent="random", games=2, rules={other!r}, seed=1, progress=False)
            raise SystemExit("accepted under {other}")
        except yutenv.errors.YutEnvError as e:
            assert "agent {name} plays only" in str(e) and {rules!r} in str(e), e
        assert "torch" not in sys.modules
        print("ok")
        """
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"


def test_the_shipped_names_are_the_binarys() -> None:
    """The generated names, rules and recommendation are what ``yutenv net --list --json`` says
    of the binary the package runs."""
    p = cli("net", "--list", "--json")
    assert p.returncode == 0, p.stderr
    infos = json.loads(p.stdout)
    assert tuple(i["name"] for i in infos) == SHIPPED_NETS
    assert {i["name"]: i["rules"] for i in infos} == SHIPPED_NET_RULES
    assert [i["name"] for i in infos if i["recommended"]] == [RECOMMENDED_NET]
    assert SHIPPED_NETS[0] == SHIPPED_NET == "az"


def test_judge_skips_every_shipped_network_off_its_rules() -> None:
    from yutenv.az.judge import _off_rules

    baselines = ["greedy", *(s for n in SHIPPED_NETS for s in (n, f"{n},sims=200"))]
    for name, rules in SHIPPED_NET_RULES.items():
        kept = [b for b in baselines if b not in _off_rules(baselines, rules)]
        assert name in kept and f"{name},sims=200" in kept and "greedy" in kept
    off = _off_rules(baselines, "players=3")
    assert off == [b for b in baselines if b != "greedy"]
