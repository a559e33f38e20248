"""Settings of the learning loop that change over a run: ``--games`` and ``--sims``.

A schedule is one whole number (the same for every generation) or a value followed by later
values, each with the generation it starts at::

    300,600@21,1000@41      300 for generations 1-20, 600 for 21-40, 1000 from 41 on

Early networks are weak and change fast: cheap generations (few games, a shallow search) give
them fresh data often; later ones spend the time on deeper searches and more games, whose
targets are worth more to a stronger network (KataGo ramps its visits the same way).

>>> schedule_at("300,600@21,1000@41", 20), schedule_at("300,600@21,1000@41", 21)
(300, 600)
>>> canonical_schedule(" 64 , 200@21 ")
'64,200@21'
>>> canonical_schedule("64")
64
"""

from __future__ import annotations

__all__ = ["Schedule", "parse_schedule", "canonical_schedule", "schedule_at", "schedule_values"]

#: A schedule as given: a whole number, or the text ``V,V@G,...``.
Schedule = int | str


def parse_schedule(value: Schedule) -> tuple[tuple[int, int], ...]:
    """The ``(first generation, value)`` stages of ``value``, the first starting at generation 1.
    ValueError names what is wrong: not whole numbers, values below 1, generations not rising."""
    if isinstance(value, bool):
        raise ValueError(f"want a whole number or VALUE,VALUE@GEN,..., got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"must be at least 1, got {value}")
        return ((1, value),)
    if not isinstance(value, str):
        raise ValueError(f"want a whole number or VALUE,VALUE@GEN,..., got {value!r}")
    stages: list[tuple[int, int]] = []
    for i, item in enumerate(value.split(",")):
        v, at, g = item.strip().partition("@")
        try:
            n = int(v)
            start = int(g) if at else 1
        except ValueError:
            raise ValueError(f"{value!r}: {item.strip()!r} is not VALUE or VALUE@GEN (whole numbers)") from None
        if i == 0 and at and start != 1:
            raise ValueError(f"{value!r}: the first value holds from generation 1; write it without @")
        if i > 0 and not at:
            raise ValueError(f"{value!r}: {item.strip()!r} needs @GEN, the generation it starts at")
        if n < 1:
            raise ValueError(f"{value!r}: values must be at least 1, got {n}")
        if stages and start <= stages[-1][0]:
            raise ValueError(f"{value!r}: generations must rise ({start} after {stages[-1][0]})")
        stages.append((start, n))
    return tuple(stages)


def canonical_schedule(value: Schedule) -> Schedule:
    """``value`` written one way: a whole number when it never changes, else ``V,V@G,...``
    without spaces (what a run's ``config.json`` records and a resume compares)."""
    stages = parse_schedule(value)
    if len(stages) == 1:
        return stages[0][1]
    return ",".join(str(n) if g == 1 else f"{n}@{g}" for g, n in stages)


def schedule_at(value: Schedule, generation: int) -> int:
    """The value of the schedule at ``generation`` (generation 0 and below: the first value)."""
    out = 0
    for start, n in parse_schedule(value):
        if start > generation and out:
            break
        out = n
    return out


def schedule_values(value: Schedule) -> list[int]:
    """Every value the schedule takes, in order."""
    return [n for _, n in parse_schedule(value)]
