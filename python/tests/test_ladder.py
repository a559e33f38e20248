"""yutenv.ladder and evaluate(rating=True): the fixed Elo scale (random = 0) from Python,
against the real binary and server."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from yutenv.evaluate import RATING_ANCHORS, evaluate

import yutenv
from yutenv.errors import InvalidArgumentError
from yutenv.evaluation.ladder import LadderResult, ladder, published

DOCS = Path(__file__).resolve().parents[2] / "docs" / "BASELINES.md"


def first_legal(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.asarray(mask.argmax(axis=1))


def test_ladder_of_specs() -> None:
    r = yutenv.ladder(["greedy", "random", "mc:5"], games=10, seed=3)
    assert isinstance(r, LadderResult)
    assert r.anchor == "random" and r.rating("random").elo == 0.0 and r.rating("random").se == 0.0
    assert [x.elo for x in r.ratings] == sorted((x.elo for x in r.ratings), reverse=True)
    for x in r.ratings:
        assert x.low <= x.elo <= x.high and x.games == 20
    assert len(r.pairs) == 3 and all(p.games == 10 and p.wins_a + p.wins_b == 10 for p in r.pairs)
    assert "95% interval" in str(r)


def test_ladder_anchor_and_png(tmp_path: Path) -> None:
    png = tmp_path / "l.png"
    r = ladder(["random", "greedy"], games=6, anchor="greedy", anchor_elo=500, png=png)
    assert r.rating("greedy").elo == 500.0 and r.rating("random").elo < 500
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_ladder_resumes_and_refuses_another_ladders_state(tmp_path: Path) -> None:
    state = tmp_path / "state"
    a = ladder(["random", "greedy"], games=8, state=state)
    assert state.exists()
    b = ladder(["random", "greedy"], games=8, state=state)
    assert [(x.agent, x.elo, x.wins) for x in a.ratings] == [(x.agent, x.elo, x.wins) for x in b.ratings]
    with pytest.raises(InvalidArgumentError, match="made by a different ladder"):
        ladder(["random", "greedy"], games=10, state=state)


@pytest.mark.parametrize(
    ("agents", "kwargs", "match"),
    [
        (["random", "greedy"], {"rules": "players=3"}, "two-seat rules"),
        (["greedy", "mc:5"], {}, "not one of the agents"),
        (["random", "nope"], {}, "unknown agent"),
    ],
)
def test_ladder_refused(agents: list[str], kwargs: dict[str, str], match: str) -> None:
    with pytest.raises(InvalidArgumentError, match=match):
        ladder(agents, games=2, **kwargs)  # type: ignore[arg-type]


def test_ladder_with_a_python_policy() -> None:
    r = ladder(["random", "greedy", first_legal], games=8, seed=2)
    assert {x.agent for x in r.ratings} == {"random", "greedy", "first_legal"}
    me = r.rating("first_legal")
    assert me.games == 16 and me.low < me.elo < me.high
    assert r.rating("random").elo == 0.0
    # The spec agents' own pair is the binary's; the policy's pairs come from evaluate.
    assert [(p.a, p.b) for p in r.pairs] == [("random", "greedy"), ("first_legal", "random"), ("first_legal", "greedy")]


def test_published_ladder_is_the_docs_table() -> None:
    """docs/BASELINES.md's ladder table and the shipped ladder.json say the same."""
    pub = published()
    assert pub.anchor == "random" and pub.rating("random").elo == 0.0
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## The ladder", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\|\s*(\d+)\s*\|\s*(\S+)\s*\|\s*([+-]\d+)\s*\|\s*\[([+-]\d+), ([+-]\d+)\]\s*\|", section, re.M)
    assert rows, "no ladder table in docs/BASELINES.md"
    assert [r[1] for r in rows] == [x.agent for x in pub.ratings]
    for (_, agent, elo, lo, hi), x in zip(rows, pub.ratings):
        assert (int(elo), int(lo), int(hi)) == (round(x.elo), round(x.elo_low), round(x.elo_high)), agent
    assert f"--games {pub.games_per_pair}" in section
    for a in RATING_ANCHORS:
        pub.rating(a)  # every default anchor is on the published ladder


def test_evaluate_rating_places_a_policy() -> None:
    r = evaluate(first_legal, opponent="random", games=20, rating=True, anchors=["random", "greedy"])
    assert set(r.rating_games) == {"random", "greedy"} and r.rating_games["random"] == (r.games, r.wins_a)
    assert r.rating is not None and r.rating_low is not None and r.rating_high is not None
    assert r.rating_low < r.rating < r.rating_high
    assert "on the published scale" in str(r)


def test_evaluate_rating_finds_a_published_agent() -> None:
    """greedy, placed through its games against the anchors, lands on its published rating."""
    pub = published()
    r = evaluate("greedy", opponent="random", games=200, rating=True, anchors=["random", "greedy"])
    assert r.rating_low is not None and r.rating_high is not None
    assert r.rating_low <= pub.rating("greedy").elo <= r.rating_high


def test_evaluate_rating_needs_the_published_rules() -> None:
    with pytest.raises(ValueError, match="published ladder of rules"):
        evaluate(first_legal, opponent="random", games=4, rules="kata", rating=True)
    with pytest.raises(ValueError, match="not on the published ladder"):
        evaluate(first_legal, opponent="random", games=4, rating=True, anchors=["mc:7"])


def test_ladder_png_is_for_spec_agents_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="png="):
        ladder(["random", "greedy", first_legal], games=2, png=tmp_path / "l.png")
    assert not (tmp_path / "l.png").exists()
