"""Tests of the pure-Python rules reference (tests/reference.py, the test tree: it is not shipped).

They need neither the Go server nor the rest of the package: the module is
loaded from its file, so these tests run even where numpy or gymnasium are not
installed. The perft numbers are the golden counts of env/perft_test.go, which
the Go engine computes too; env/crosscheck_test.go compares whole games.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Sequence

import pytest

_PATH = Path(__file__).resolve().parent / "reference.py"
_spec = importlib.util.spec_from_file_location("yutenv_reference", _PATH)
assert _spec is not None and _spec.loader is not None
ref: Any = importlib.util.module_from_spec(_spec)
sys.modules["yutenv_reference"] = ref
_spec.loader.exec_module(ref)

BACK_DO, DO, GAE, GEOL, YUT, MO = range(6)
ENTER = 29


def act(throw: int, source: int) -> int:
    return throw * 30 + source


def position(
    pool: Sequence[int],
    stacks: Sequence[tuple[int, int, str, int]],
    rules: Any | None = None,
    seat: int = 0,
    finished: Sequence[int] = (),
) -> Any:
    """A decision for ``seat``: stacks are (seat, station, route, height); other pieces in hand."""
    rules = rules or ref.Rules()
    s = ref.State.new(rules, seat)
    for throw in pool:
        s.pool[throw] += 1
    for i, n in enumerate(finished):
        s.finished[i] = n
        s.hand[i] -= n
    for owner, station, route, height in stacks:
        s.board[station] = ref.Stack(owner, route, height)
        s.hand[owner] -= height
    assert all(h >= 0 for h in s.hand)
    s.phase = "move" if pool else "throw"
    return s


def board(s: Any) -> list[tuple[int, int, str, int]]:
    return [(st.seat, i, st.route, st.height) for i, st in enumerate(s.board) if st is not None]


# --- throws -----------------------------------------------------------------


def test_throw_table() -> None:
    table = [0.0384, 0.1152, 0.3456, 0.3456, 0.1296, 0.0256]  # RULES.md at p = 0.6
    assert ref.throw_probabilities(0.6, True) == pytest.approx(table, abs=1e-15)
    assert ref.throw_probabilities(0.6, False) == pytest.approx([0, table[0] + table[1]] + table[2:], abs=1e-15)
    for p in (0.5, 0.6, 0.65):
        assert sum(ref.throw_probabilities(p, True)) == pytest.approx(1.0, abs=1e-15)
    s = ref.State.new(ref.Rules(back_do=False), 0)
    assert [t for t, _ in s.chance_outcomes()] == [DO, GAE, GEOL, YUT, MO]
    with pytest.raises(ref.IllegalAction):
        s.apply_throw(BACK_DO)


# --- moves (RULES.md, "Moving") ---------------------------------------------

STD = ref.Rules()
STOP = ref.Rules(finish="stop")


@pytest.mark.parametrize(
    "name, station, route, steps, want",
    [
        ("stop on C1 takes C1", 3, "OUTER", 2, (5, "C1", False, True)),
        ("stop on C2 takes C2", 8, "OUTER", 2, (10, "C2", False, True)),
        ("stop on centre from C1", 20, "C1", 2, (22, "CENTRE/C1", False, True)),
        ("stop on centre from C2", 25, "C2", 2, (22, "CENTRE/C2", False, True)),
        ("passing C1 changes nothing", 3, "OUTER", 3, (6, "OUTER", False, False)),
        ("C1 passing the centre goes to 23", 21, "C1", 2, (23, "C1", False, False)),
        ("C1 passing the centre reaches C3", 21, "C1", 4, (15, "C1", False, False)),
        ("C3 has no shortcut", 13, "OUTER", 2, (15, "OUTER", False, False)),
        ("backed onto C1 goes on along OUTER", 5, "OUTER", 1, (6, "OUTER", False, False)),
        ("stop exactly on HOME waits", 18, "OUTER", 2, (0, "OUTER", False, False)),
        ("centre route to HOME", 22, "CENTRE/C2", 3, (0, "CENTRE/C2", False, False)),
        ("past HOME finishes", 18, "OUTER", 5, (0, "OUTER", True, False)),
        ("from HOME any move finishes", 0, "C2", 1, (0, "C2", True, False)),
    ],
)
def test_forward(name: str, station: int, route: str, steps: int, want: tuple[int, str, bool, bool]) -> None:
    got = ref.forward(STD, station, route, steps)
    assert (got.station, got.route, got.finished, got.shortcut) == want, name


def test_finish_stop_variant() -> None:
    assert ref.forward(STOP, 18, "OUTER", 2).finished
    assert not ref.forward(STOP, 18, "OUTER", 1).finished


@pytest.mark.parametrize(
    "station, route, want",
    [
        (1, "OUTER", (0, "OUTER")),
        (0, "OUTER", (19, "OUTER")),
        (0, "C1", (19, "C1")),
        (0, "C2", (28, "C2")),
        (0, "CENTRE/C1", (28, "CENTRE/C1")),
        (5, "C1", (4, "OUTER")),
        (10, "C2", (9, "OUTER")),
        (22, "CENTRE/C1", (21, "C1")),
        (22, "CENTRE/C2", (26, "C2")),
        (6, "OUTER", (5, "OUTER")),
        (23, "C1", (22, "C1")),
        (15, "C1", (24, "C1")),
        (27, "C2", (22, "C2")),
        (20, "C1", (5, "C1")),
    ],
)
def test_back_do(station: int, route: str, want: tuple[int, str]) -> None:
    got = ref.backward(station, route)
    assert (got.station, got.route) == want


def test_entering() -> None:
    assert [(ref.enter(STD, k).station, ref.enter(STD, k).route) for k in range(1, 6)] == [
        (1, "OUTER"),
        (2, "OUTER"),
        (3, "OUTER"),
        (4, "OUTER"),
        (5, "C1"),
    ]
    s = position([BACK_DO, GAE], [(0, 7, "OUTER", 1)])
    assert s.legal_actions() == [act(BACK_DO, 7), act(GAE, 7), act(GAE, ENTER)]
    s = position([GAE, GAE], [])
    assert s.legal_actions() == [act(GAE, ENTER)], "one enter action per result"


def test_back_do_without_pieces_on_board_passes_the_turn() -> None:
    s = ref.State.new(STD, 0)
    ev = s.apply_throw(BACK_DO)
    assert (ev.turn_ended, ev.discarded, s.to_move, s.phase) == (True, 1, 1, "throw")
    s = ref.State.new(ref.Rules(back_do_enters=True), 0)
    s.apply_throw(BACK_DO)
    assert s.legal_actions() == [act(BACK_DO, ENTER)]
    s.apply(act(BACK_DO, ENTER))
    assert board(s) == [(0, 0, "OUTER", 1)]


def test_stacking_adopts_the_movers_route_and_capture_sends_home() -> None:
    s = position([GAE, DO], [(0, 3, "OUTER", 1), (0, 5, "OUTER", 2)])
    ev = s.apply(act(GAE, 3))
    assert ev.joined and ev.shortcut and board(s) == [(0, 5, "C1", 3)]
    s = position([GAE, GEOL], [(0, 6, "OUTER", 1), (1, 8, "OUTER", 3)])
    ev = s.apply(act(GAE, 6))
    assert (ev.captured, ev.bonus_throw, s.phase, s.hand, s.pool) == (3, True, "throw", [3, 4], [0, 0, 0, 1, 0, 0])
    s = position([GAE, DO], [(0, 6, "OUTER", 1), (1, 7, "OUTER", 1)])
    s.apply(act(GAE, 6))
    assert board(s) == [(1, 7, "OUTER", 1), (0, 8, "OUTER", 1)], "passing over does nothing"


@pytest.mark.parametrize("bonus_rule, want_bonus", [(False, False), (True, True)])
def test_capture_bonus_after_yut(bonus_rule: bool, want_bonus: bool) -> None:
    s = position([YUT, DO], [(0, 6, "OUTER", 1), (1, 10, "OUTER", 1)], rules=ref.Rules(capture_bonus_yut_mo=bonus_rule))
    ev = s.apply(act(YUT, 6))
    assert ev.captured == 1 and ev.bonus_throw == want_bonus


def test_first_finisher_wins_and_rank_mode_plays_on() -> None:
    s = position([MO, GAE], [(0, 19, "C1", 1)], finished=(3, 0))
    ev = s.apply(act(GAE, 19))
    assert (ev.game_over, s.winner, s.places, s.phase, s.pool) == (True, 0, [1, 0], "over", [0] * 6)
    s = position([GAE], [(1, 19, "OUTER", 1)], rules=ref.Rules(players=3, end="rank"), seat=1, finished=(0, 3, 0))
    ev = s.apply(act(GAE, 19))
    assert (ev.game_over, ev.turn_ended, s.winner, s.to_move, s.phase) == (False, True, 1, 2, "throw")
    s.apply_throw(BACK_DO)
    s.apply_throw(BACK_DO)
    assert s.to_move == 2, "the ranked seat is skipped"


def test_illegal_actions_change_nothing() -> None:
    s = position([DO, MO], [(0, 0, "C2", 1), (1, 3, "OUTER", 1)])
    legal = set(s.legal_actions())
    before = s.to_json()
    for a in range(180):
        if a not in legal:
            with pytest.raises(ref.IllegalAction):
                s.apply(a)
            assert s.to_json() == before
    with pytest.raises(ref.WrongPhase):
        s.apply_throw(DO)


# --- perft and JSON -----------------------------------------------------------

GOLDEN = [
    (ref.Rules(), [6, 21, 77, 250, 933, 3286, 13271]),
    (ref.Rules(players=4, pieces=5, back_do_enters=True, end="rank"), [6, 16, 64, 182, 758, 2314]),
    (ref.Rules(players=3, back_do=False, finish="stop", capture_bonus_yut_mo=True), [5, 13, 47, 133, 515, 1588]),
]


@pytest.mark.parametrize("rules, counts", GOLDEN)
def test_perft_matches_the_engine_goldens(rules: Any, counts: list[int]) -> None:
    s = ref.State.new(rules, 0)
    assert [ref.perft(s, d) for d in range(1, len(counts) + 1)] == counts


def test_divide() -> None:
    s = ref.State.new(STD, 0)
    assert ref.divide(s, 5) == [
        ("throw", 0, 250),
        ("throw", 1, 75),
        ("throw", 2, 75),
        ("throw", 3, 75),
        ("throw", 4, 229),
        ("throw", 5, 229),
    ]


def test_json_form() -> None:
    s = ref.State.new(STD, 0)
    hand = '{"seat":%d,"status":"hand"}'
    pieces = ",".join([hand % 0] * 4 + [hand % 1] * 4)
    assert ref.json_line(-1, None, s) == (
        '{"step":-1,"state":{"to_move":0,"phase":"throw","pool":[0,0,0,0,0,0],"pieces":['
        + pieces
        + '],"winner":-1,"places":[0,0],"legal":[]}}'
    )
    s = position([GAE], [(0, 22, "CENTRE/C1", 2), (1, 0, "OUTER", 1)], finished=(1, 0))
    back = ref.State.from_json(STD, json.loads(ref.dumps(s.to_json())))
    assert back.to_json() == s.to_json()
    assert s.to_json()["legal"] == [82, 89]
    ev = s.apply(82)
    assert ev.to_json() == {
        "kind": "move",
        "seat": 0,
        "throw": "gae",
        "action": 82,
        "from": 22,
        "to": 28,
        "moved": 2,
        "turn_ended": True,
    }


def test_replay_record() -> None:
    record: Any = {
        "format": "yutenv-record",
        "version": 1,
        "rules": {"players": 2},
        "seed": 1,
        "start": 0,
        "steps": [
            {"seat": 0, "throw": "yut"},
            {"seat": 0, "throw": "gae"},
            {"seat": 0, "action": act(YUT, ENTER)},
            {"seat": 0, "action": act(GAE, 4)},
            {"seat": 1, "throw": "back-do"},
            {"seat": 0, "throw": "do"},
        ],
    }
    lines: list[str] = []
    final = ref.replay_record(record, lambda i, ev, s: lines.append(ref.json_line(i, ev, s)))
    assert len(lines) == 7
    assert board(final) == [(0, 6, "OUTER", 1)] and final.phase == "move"
    record["steps"][3]["action"] = act(GAE, 5)
    with pytest.raises(ValueError, match="record step 3"):
        ref.replay_record(record, lambda i, ev, s: None)


# --- playouts -----------------------------------------------------------------


@pytest.mark.parametrize(
    "rules",
    [
        ref.Rules(),
        ref.Rules(players=4, pieces=5, end="rank"),
        ref.Rules(pieces=1, finish="stop", back_do=False),
        ref.Rules(players=3, back_do_enters=True, capture_bonus_yut_mo=True),
    ],
)
def test_random_playouts(rules: Any) -> None:
    for seed in range(30):
        a, b = ref.random_playout(rules, seed), ref.random_playout(rules, seed)
        assert a == b, "same seed, same game"
        assert 0 <= a.winner < rules.players and a.places[a.winner] == 1
        assert 0 < a.decisions < 2000
        if rules.end == "rank":
            assert sorted(a.places) == list(range(1, rules.players + 1))


def test_rules_are_validated() -> None:
    for bad in (
        {"players": 5},
        {"pieces": 0},
        {"flat_prob": 0.7},
        {"shortcut": "choice"},
        {"finish": "never"},
        {"end": "never"},
        {"back_do": False, "back_do_enters": True},
        {"colour": "red"},
        {"spaces": 5},
        {"board": "line", "spaces": 30},
        {"board": "line", "spaces": 5, "back_do_enters": True},
        {"pool": "off", "capture_bonus_yut_mo": True},
        {"obstacles": "0:skip"},
        {"board": "line", "spaces": 5, "obstacles": "4:back1"},
        {"obstacles": "3:jump"},
    ):
        with pytest.raises(ref.InvalidRules):
            ref.Rules.from_json(bad)
