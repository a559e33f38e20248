"""yutenv.stats: the one Python home of Wilson intervals and Elo differences, in agreement
with the Go side's (what ``yutenv eval --json`` reports)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest
import yutenv.stats
from yutenv.evaluate import run_eval_json
from yutenv.stats import bradley_terry, elo_diff, place, wilson


def test_doctests() -> None:
    failed, tried = doctest.testmod(yutenv.stats)
    assert tried > 0 and failed == 0


@pytest.mark.parametrize(("wins", "n"), [(0, 0), (0, 10), (10, 10), (7, 20), (600, 1000)])
def test_wilson_bounds(wins: int, n: int) -> None:
    lo, hi = wilson(wins, n)
    p = wins / n if n else 0.5
    assert 0.0 <= lo <= p + 1e-12 and p - 1e-12 <= hi <= 1.0


def test_same_numbers_as_go() -> None:
    m = run_eval_json(["--a", "greedy", "--b", "random", "--games", "40", "--seed", "3"])
    lo, hi = wilson(m["wins_a"], m["games"])
    assert (lo, hi) == pytest.approx((m["win_rate_a_low"], m["win_rate_a_high"]), abs=1e-12)
    assert elo_diff(m["win_rate_a"]) == pytest.approx(m["elo_diff"], abs=1e-9)


def test_evaluate_keeps_its_names() -> None:
    ev = importlib.import_module("yutenv.evaluate")  # (yutenv.evaluate is also the function)
    assert ev.wilson is wilson and ev.elo_diff is elo_diff


def _bt_data(elo: list[float], n: float) -> tuple[list[float], list[list[float]]]:
    k = len(elo)
    games = [[0.0 if i == j else n for j in range(k)] for i in range(k)]
    wins = [sum(n / (1 + 10 ** ((elo[j] - elo[i]) / 400)) for j in range(k) if j != i) for i in range(k)]
    return wins, games


@pytest.mark.parametrize(("elo", "anchor", "anchor_elo"), [([0, 200], 0, 0.0), ([0, 100, 350, -50], 2, 1000.0)])
def test_bradley_terry_known_data(elo: list[float], anchor: int, anchor_elo: float) -> None:
    wins, games = _bt_data(elo, 400)
    r = bradley_terry(wins, games, anchor, anchor_elo)
    for i, x in enumerate(r):
        assert x.elo == pytest.approx(elo[i] - elo[anchor] + anchor_elo, abs=1e-6)
        assert (x.se == 0) == (i == anchor)


def test_bradley_terry_intervals_shrink() -> None:
    small = bradley_terry(*_bt_data([0, 150, 300], 100))
    big = bradley_terry(*_bt_data([0, 150, 300], 400))
    assert [b.se for b in big[1:]] == pytest.approx([s.se / 2 for s in small[1:]], rel=1e-6)


def test_bradley_terry_refuses() -> None:
    with pytest.raises(ValueError, match="no wins"):
        bradley_terry([0, 1], [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="not connected"):
        bradley_terry([1, 1, 1, 1], [[0, 2, 0, 0], [2, 0, 0, 0], [0, 0, 0, 2], [0, 0, 2, 0]])


def test_bradley_terry_same_figures_as_go(tmp_path: Path) -> None:
    """The Python fit of the binary's pair results gives the binary's ratings and intervals."""
    from yutenv.evaluation.ladder import _fit, ladder

    r = ladder(["random", "greedy", "mc:5"], games=12, seed=5)
    mine = {x.agent: x for x in _fit(r.raw["agents"], r.pairs, 0, 0.0)}
    for x in r.ratings:
        m = mine[x.agent]
        assert (m.elo, m.se, m.elo_low, m.elo_high) == pytest.approx((x.elo, x.se, x.elo_low, x.elo_high), abs=1e-6)


def test_place() -> None:
    # One opponent: the rating is the opponent's plus the Elo of the (virtual-draw) win rate.
    r = place([(100.0, 30, 40)])
    d = elo_diff(30.5 / 41)
    assert d is not None and r.elo == pytest.approx(100 + d, abs=1e-9)
    assert r.low < r.elo < r.high
    # Placed between two rated opponents it beat and lost to equally: halfway.
    assert place([(0.0, 60, 100), (200.0, 40, 100)]).elo == pytest.approx(100.0, abs=1e-9)
    with pytest.raises(ValueError):
        place([(0.0, 5, 4)])
