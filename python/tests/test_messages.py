"""Error messages name each layer once: the method, the parameter, the cause ("make: make:
vecenv: ..." and "step: step: ..." once said the method twice)."""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np
import pytest

import yutenv
from yutenv.errors import ServerError


def _make(**kw: Any) -> Callable[[], object]:
    return lambda: yutenv.make(**kw)


def _step_illegal() -> None:
    env = yutenv.make()
    try:
        env.reset(seed=1)
        env.step(179)
    finally:
        env.close()


def _apply_at_throw() -> None:
    g = yutenv.Game("standard")
    g.apply_actions(g.initial_states(2, seed=0), np.array([1, 2]))


CASES = [
    ("unknown opponent", _make(opponent="nope"), "make: params.opponent: "),
    ("bad tier", _make(tier="x"), "make: params.tier: "),
    ("bad rules", _make(rules="players=9"), "make: params.rules: "),
    ("game rules", lambda: yutenv.Game("players=9").initial_states(1, seed=0), "game: params.rules: "),
    ("too much search", _make(opponent="mcts:99999"), "make: params.opponent: "),
    ("illegal step", _step_illegal, "step: env 0, seat 0: "),
    ("apply at a throw", _apply_at_throw, "apply: row 0: "),
]


@pytest.mark.parametrize(("name", "call", "opening"), CASES, ids=[c[0] for c in CASES])
def test_each_layer_is_named_once(name: str, call: Callable[[], object], opening: str) -> None:
    with pytest.raises(ServerError) as info:
        call()
    msg = str(info.value)
    assert msg.startswith(opening), msg
    words = re.findall(r"([a-z_.]+): ", msg)
    assert len(words) == len(set(words)), f"a layer named twice: {msg}"
