"""yutenv.stats: the one Python home of Wilson intervals and Elo differences, in agreement
with the Go side's (what ``yutenv eval --json`` reports)."""

from __future__ import annotations

import doctest
import importlib

import pytest

import yutenv.stats
from yutenv.evaluate import run_eval_json
from yutenv.stats import elo_diff, wilson


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
