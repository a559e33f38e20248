"""``--games`` and ``--sims`` schedules of the learning loop (:mod:`yutenv.az.schedule`)."""

from __future__ import annotations

import pytest

from yutenv.az.schedule import canonical_schedule, parse_schedule, schedule_at, schedule_values


@pytest.mark.parametrize(
    "given, stages, canonical",
    [
        (64, ((1, 64),), 64),
        ("64", ((1, 64),), 64),
        (" 300 , 600@21 ,1000@41", ((1, 300), (21, 600), (41, 1000)), "300,600@21,1000@41"),
        ("5@1,7@2", ((1, 5), (2, 7)), "5,7@2"),
        ("8,4@10", ((1, 8), (10, 4)), "8,4@10"),  # a schedule may fall as well as rise
    ],
)
def test_schedules_parse_to_stages_and_one_spelling(
    given: int | str, stages: tuple[tuple[int, int], ...], canonical: int | str
) -> None:
    assert parse_schedule(given) == stages
    assert canonical_schedule(given) == canonical
    assert parse_schedule(canonical) == stages


@pytest.mark.parametrize(
    "bad, why",
    [
        (0, "at least 1"),
        ("0", "at least 1"),
        ("10,-5@3", "at least 1"),
        ("", "not VALUE"),
        ("ten", "not VALUE"),
        ("10,20", "needs @GEN"),
        ("10@2", "from generation 1"),
        ("10,20@5,30@5", "must rise"),
        ("10,20@5,30@3", "must rise"),
        ("10,20@x", "not VALUE"),
        ("1.5", "not VALUE"),
        (True, "whole number"),
        (2.0, "whole number"),
    ],
)
def test_bad_schedules_are_refused_with_the_reason(bad: object, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_schedule(bad)  # type: ignore[arg-type]


def test_each_generation_gets_its_stages_value() -> None:
    s = "300,600@21,1000@41"
    assert [schedule_at(s, g) for g in (0, 1, 20, 21, 40, 41, 500)] == [300, 300, 300, 600, 600, 1000, 1000]
    assert schedule_at(7, 99) == 7
    assert schedule_values(s) == [300, 600, 1000]
