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
