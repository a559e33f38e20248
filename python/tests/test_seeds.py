"""One seed scheme everywhere: game g of ``yutenv selfplay --seed S`` is the game a server env
plays with the game seed S + g (a ``YutEnv`` reset with that seed, or env g of a vector env
reset with seed S), with the same throws and, when the server's opponent is the agent of a
seat, the same moves for that seat (docs/PROTOCOL.md, "Seeds and determinism")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import yutenv

SCRIPT = Path(sys.executable).parent / "yutenv"
BASE = 2**64 - 2  # game 2 wraps to game seed 0
GAMES = 4
Step = tuple[int, str, int]  # (seat, throw name or "", action or -1)


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("seeds") / "x.jsonl"
    p = subprocess.run(
        [
            str(SCRIPT),
            "selfplay",
            "--agents",
            "greedy;mc:20",
            "--seed",
            str(BASE),
            "--games",
            str(GAMES),
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    recs = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    assert [r["seed"] for r in recs] == [(BASE + g) % 2**64 for g in range(GAMES)]
    return recs


def record_steps(rec: dict[str, Any]) -> list[Step]:
    return [(s["seat"], s.get("throw", ""), s.get("action", -1)) for s in rec["steps"]]


def event_steps(events: list[dict[str, Any]]) -> list[Step]:
    return [(e["seat"], e["throw"], -1) if e["kind"] == "throw" else (e["seat"], "", e["action"]) for e in events]


def learner_moves(rec: dict[str, Any], seat: int) -> list[int]:
    return [s["action"] for s in rec["steps"] if "action" in s and s["seat"] == seat]


# The server's opponent plays one seat of the command line's game, the learner plays the
# recorded moves of the other seat.
CASES = [("greedy", 1), ("mc:20", 0)]


@pytest.mark.parametrize(("opponent", "seat"), CASES)
def test_yutenv_plays_the_command_lines_games(
    srv: yutenv.Server, records: list[dict[str, Any]], opponent: str, seat: int
) -> None:
    env = yutenv.YutEnv(opponent=opponent, seat=seat, info=True, server=srv)
    try:
        for g, rec in enumerate(records):
            _, info = env.reset(seed=(BASE + g) % 2**64)
            assert int(info["seed"]) == rec["seed"]
            seen = event_steps(info["events"])
            for a in learner_moves(rec, seat):
                assert info["action_mask"][a] == 1, f"game {g}: the record's move {a} is not legal here"
                _, _, term, trunc, info = env.step(a)
                seen += event_steps(info["events"])
            assert term and not trunc
            assert seen == record_steps(rec), f"game {g}"
    finally:
        env.close()


@pytest.mark.parametrize(("opponent", "seat"), CASES)
def test_vector_env_plays_the_command_lines_games(
    srv: yutenv.Server, records: list[dict[str, Any]], opponent: str, seat: int
) -> None:
    venv = yutenv.YutVectorEnv(GAMES, opponent=opponent, seat=seat, info=True, server=srv)
    try:
        _, infos = venv.reset(seed=BASE)
        assert [int(s) for s in infos["seed"]] == [r["seed"] for r in records]
        seen: list[list[Step]] = [event_steps(infos["events"][i]) for i in range(GAMES)]
        moves = [learner_moves(r, seat) for r in records]
        done = np.zeros(GAMES, dtype=bool)
        while not done.all():
            actions = np.zeros(GAMES, dtype=np.int64)
            for i in range(GAMES):
                mask = infos["action_mask"][i]
                actions[i] = moves[i].pop(0) if not done[i] else (np.flatnonzero(mask)[0] if mask.any() else 0)
            _, _, term, trunc, infos = venv.step(actions)
            for i in range(GAMES):
                if not done[i]:
                    seen[i] += event_steps(infos["events"][i])
                    done[i] = bool(term[i] or trunc[i])
        for i, rec in enumerate(records):
            assert seen[i] == record_steps(rec), f"env {i}"
            assert moves[i] == []
    finally:
        venv.close()
