"""yutenv.stats: the one Python home of Wilson intervals and Elo differences, in agreement
with the Go side's (what ``yutenv eval --json`` reports)."""

from __future__ import annotations

import doctest
import importlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yutenv.stats
from yutenv.evaluate import run_eval_json
from yutenv.stats import bradley_terry, control_variate, elo_diff, place, wilson

REPO = Path(__file__).resolve().parents[2]
#: The cases Go's stats.ControlVariate is held to as well (stats/control_test.go).
CV_CASES = json.loads((REPO / "stats" / "testdata" / "control_variate.json").read_text())["cases"]


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


@pytest.mark.parametrize("case", CV_CASES, ids=[c["name"] for c in CV_CASES])
def test_control_variate_table(case: dict[str, Any]) -> None:
    """The cross-fitted luck adjustment gives the shared table's figures, as Go's does."""
    e = control_variate(case["outcomes"], case["luck"], case["folds"])
    want = case["want"]
    if want is None:
        assert e is None
        return
    assert e is not None
    for key, got in (("mean", e.mean), ("low", e.low), ("high", e.high), ("mean_luck", e.mean_control)):
        assert got == pytest.approx(want[key], abs=1e-9), key
    assert list(e.coef) == pytest.approx(want["coef"], abs=1e-9)
    ratio = want["variance_ratio"]
    assert e.variance_ratio == (math.inf if ratio is None else pytest.approx(ratio, abs=1e-9))
    assert e.adjusted == want["adjusted"]


def _synthetic(rng: np.random.Generator, matches: int, games: int) -> tuple[np.ndarray, np.ndarray]:
    """Go's cvMatch: luck of -1, -0.5, 0.5 or 1 and outcome l + l² - 0.625 + noise (mean 0)."""
    lk = rng.choice([-1.0, -0.5, 0.5, 1.0], size=(matches, games))
    return lk + lk**2 - 0.625 + rng.normal(0, 0.3, size=lk.shape), lk


def test_control_variate_is_unbiased_where_an_in_sample_fit_is_not() -> None:
    """Over many small matches of known mean outcome 0, the cross-fitted estimate averages 0
    within its standard error; the same coefficient fitted on the games it adjusts is biased by
    many standard errors (the test fails if the folds are dropped)."""
    o, lk = _synthetic(np.random.default_rng(1), 20000, 32)
    folds = np.arange(32) // 2 % 2
    est = np.array([e.mean for e in (control_variate(a, b, folds) for a, b in zip(o, lk)) if e is not None])
    beta = (o * lk).sum(axis=1) / (lk * lk).sum(axis=1)
    in_sample = o.mean(axis=1) - beta * lk.mean(axis=1)
    se = est.std(ddof=1) / math.sqrt(len(est))
    assert abs(est.mean()) < 3 * se
    assert abs(in_sample.mean()) > 6 * in_sample.std(ddof=1) / math.sqrt(len(in_sample))


def test_control_variate_is_never_wider_than_raw() -> None:
    """Luck unrelated to the outcomes, which a coefficient of 1 would add as noise: the interval
    stays the raw one's (ratio 1, coefficients 0)."""
    rng = np.random.default_rng(3)
    o = rng.choice([-1.0, 1.0], size=400)
    lk = rng.normal(0, 0.5, size=400)
    assert (o - lk).var(ddof=1) > o.var(ddof=1), "coefficient 1 adds variance here"
    e = control_variate(o, lk, np.arange(400) // 2 % 2)
    assert e is not None
    assert e.high - e.low <= 2 * 1.959964 * math.sqrt(o.var(ddof=1) / 400) + 1e-12
    assert e.variance_ratio >= 1
    if not e.adjusted:
        assert e.coef == (0.0, 0.0) and e.variance_ratio == 1 and e.mean == pytest.approx(o.mean())
