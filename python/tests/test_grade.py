"""yutenv.grade: the per-move error rate of agent specs and recorded games, through the binary."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

import yutenv
from yutenv import GradeResult, grade
from yutenv.errors import InvalidArgumentError


def test_fields_match_the_command(tmp_path: Path) -> None:
    png = tmp_path / "losses.png"
    r = grade("random", games=4, reference="mc:5", worst=2, png=png)
    assert isinstance(r, GradeResult)
    assert (r.agent, r.opponent, r.reference, r.games, r.source) == ("random", "greedy", "mc:5", 4, "games")
    assert r.decisions > 0 and r.forced >= 0
    assert sum(b.count for b in r.histogram) == r.decisions
    assert r.error_rate == pytest.approx(r.errors / r.decisions)
    assert 0 <= r.median_loss <= r.p90_loss <= r.max_loss
    assert len(r.worst) == 2 and r.worst[0].loss == r.max_loss
    w = r.worst[0]
    assert w.loss == pytest.approx(w.best_value - w.value)
    assert w.position["phase"] == "move"
    assert png.read_bytes().startswith(b"\x89PNG")
    # Every field of the command's JSON is a field of the result, and back.
    out = subprocess.run(
        [str(yutenv.binary_path()), "grade", "--json", "--quiet", "--agent", "random", "--games", "2", "--reference", "mc:5"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    keys = set(json.loads(out))
    assert keys == {f.name for f in dataclasses.fields(GradeResult)} - {"seat"}


def test_the_reference_itself_loses_nothing_and_random_loses_most() -> None:
    own = grade("mc:10", games=4, reference="mc:10")
    assert own.mean_loss == 0 and own.best_rate == 1
    rand = grade("random", games=4, reference="mc:10")
    assert rand.mean_loss > 0.02 and rand.errors > 0


def test_records_and_seat(tmp_path: Path) -> None:
    recs = tmp_path / "games.jsonl"
    subprocess.run([str(yutenv.binary_path()), "selfplay", "--games", "2", "--out", str(recs), "--quiet"], check=True)
    both = grade(records=recs, reference="mc:5")
    one = grade(records=recs, reference="mc:5", seat=0)
    assert both.games == one.games == 2 and both.agent is None and one.seat == 0
    assert 0 < one.decisions + one.forced < both.decisions + both.forced


def test_agent_in_one_seat() -> None:
    # seat= with an agent: the seat-balanced games in which the agent has that seat.
    both = grade("random", games=4, reference="mc:5", worst=10_000)
    for seat in (0, 1):
        one = grade("random", games=2, reference="mc:5", worst=10_000, seat=seat)
        assert one.seat == seat and one.games == 2 and one.quantile_error == 0
        assert one.worst and {w.seat for w in one.worst} == {seat}
        assert [w.loss for w in one.worst] == [w.loss for w in both.worst if w.seat == seat]


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    kata = tmp_path / "kata.jsonl"
    subprocess.run(
        [str(yutenv.binary_path()), "selfplay", "--rules", "kata", "--games", "1", "--out", str(kata), "--quiet"], check=True
    )
    with pytest.raises(InvalidArgumentError, match=r"is of rules kata, not standard") as e:
        grade(records=kata, reference="mc:5")
    assert "\n" not in str(e.value)
    with pytest.raises(InvalidArgumentError, match="greedy is no search"):
        grade("random", games=2, reference="greedy")
    with pytest.raises(TypeError, match="a Python policy cannot be graded"):
        grade(lambda obs, mask: mask.argmax(axis=1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not both"):
        grade("random", records=kata)
    with pytest.raises(ValueError, match="not both"):
        grade()
