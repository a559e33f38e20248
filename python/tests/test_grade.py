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
from yutenv.evaluation.grade import Separation, separation
from yutenv.evaluation.stats import Z95


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


def test_mean_loss_interval_and_separation(tmp_path: Path) -> None:
    a, b = grade("greedy", games=6, reference="mc:8"), grade("random", games=6, reference="mc:8")
    for r in (a, b):
        assert r.mean_loss_se is not None and r.mean_loss_low is not None and r.mean_loss_high is not None
        assert r.mean_loss_high == pytest.approx(r.mean_loss + Z95 * r.mean_loss_se)
        assert r.mean_loss_low == pytest.approx(max(r.mean_loss - Z95 * r.mean_loss_se, 0))
    # One game says nothing of how games vary: no interval.
    one = grade("greedy", games=1, seat=0, reference="mc:8")
    assert one.decisions > 0 and (one.mean_loss_se, one.mean_loss_low, one.mean_loss_high) == (None, None, None)

    # The same figures as yutenv grade --compare of the same reports saved by the binary.
    files = []
    for spec in ("greedy", "random"):
        f = tmp_path / f"{spec}.json"
        cmd = [str(yutenv.binary_path()), "grade", "--json", "--quiet", "--agent", spec, "--games", "6", "--reference", "mc:8"]
        f.write_text(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        files += ["--compare", str(f)]
    out = subprocess.run(
        [str(yutenv.binary_path()), "grade", "--json", *files], check=True, capture_output=True, text=True
    ).stdout
    pair = json.loads(out)["pairs"][0]
    better, worse = sorted((a, b), key=lambda r: r.mean_loss)
    assert (pair["better"], pair["worse"]) == (better.agent, worse.agent)
    s = separation(better, worse)
    assert dataclasses.asdict(s) == {f.name: pair[f.name] for f in dataclasses.fields(Separation)}

    # A constructed pair (the Go package's TestSeparate): 0.0253 and 0.0274, se 0.0012 and
    # 0.0015 over 200 games each, differ by 0.0021 ± 0.0038: it takes about 643 games each.
    x = dataclasses.replace(a, mean_loss=0.0253, mean_loss_se=0.0012, games=200)
    y = dataclasses.replace(a, mean_loss=0.0274, mean_loss_se=0.0015, games=200)
    s = separation(x, y)
    assert (s.separated, s.games_to_separate) == (False, 643)
    assert s.difference_high - s.difference == pytest.approx(Z95 * (0.0012**2 + 0.0015**2) ** 0.5)
    assert separation(y, x).games_to_separate == 643 and separation(y, x).difference < 0
    assert separation(x, x).games_to_separate is None, "a tie"
    with pytest.raises(ValueError, match=r"no interval of the mean loss: 1 games"):
        separation(one, a)
    with pytest.raises(ValueError, match="losses of different references or rules do not compare"):
        separation(a, dataclasses.replace(b, reference="mc:5"))
