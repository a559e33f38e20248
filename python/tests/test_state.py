"""yutenv.Game and yutenv.State held to the Go engine: perft, env equality, round trips, errors."""

from __future__ import annotations

import copy
import pickle
from contextlib import nullcontext
from typing import Iterator

import numpy as np
import pytest
from yutenv.state import CHANCE, GAE, TERMINAL, Game, State, close_shared_session

import yutenv
from yutenv import _protocol


@pytest.fixture(autouse=True, scope="module")
def close_state_session() -> Iterator[None]:
    yield
    yutenv.state.close_shared_session()


def perft(game: Game, root: State, depth: int) -> int:
    """Paths of exactly ``depth`` steps (a throw outcome or a legal action), counted
    level by level with one batched call per kind of step (as env.Perft counts them)."""
    level = game.state(root.packed).game._array([root])
    for _ in range(depth):
        if len(level) == 0:
            return 0
        phase = game.phases(level)
        chance = level[phase == 0]
        moves = level[phase == 1]
        nxt = []
        if len(chance):
            for t, _p in root.chance_outcomes() or [(t, p) for t, p in enumerate(game.chance) if p > 0]:
                nxt.append(game.apply_throws(chance, np.full(len(chance), t)))
        if len(moves):
            mask = game.legal_masks(moves)
            rows, acts = np.nonzero(mask)
            nxt.append(game.apply_actions(moves[rows], acts))
        level = np.concatenate(nxt) if nxt else level[:0]
    return len(level)


def step_randomly(game: Game, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One step of every unfinished row: a sampled throw or a random legal action."""
    rows = rows.copy()
    phase = game.phases(rows)
    if (phase == 0).any():
        rows[phase == 0] = game.apply_throws(rows[phase == 0], -1)
    if (phase == 1).any():
        mask = game.legal_masks(rows[phase == 1])
        acts = [rng.choice(np.flatnonzero(m)) for m in mask]
        rows[phase == 1] = game.apply_actions(rows[phase == 1], np.array(acts))
    return rows


# Golden counts of env/perft_test.go (shallow depths).
PERFT = [
    ("standard", None, [6, 21, 77, 250, 933, 3286]),
    ("players=4,pieces=5,back_do_enters=on,end=rank", None, [6, 16, 64, 182, 758]),
    ("players=3,back_do=off,finish=stop,capture_bonus_yut_mo=on", None, [5, 13, 47, 133, 515]),
    (
        "standard",
        dict(
            to_move=0,
            pool={"back-do": 1, "gae": 1, "yut": 1},
            stacks=[
                (0, 0, "C1", 1),
                (0, 22, "CENTRE/C2", 1),
                (0, 5, "OUTER", 1),
                (1, 1, "OUTER", 2),
                (1, 21, "C1", 1),
                (1, 28, "CENTRE/C1", 1),
            ],
        ),
        [11, 75, 297, 1861],
    ),
]


@pytest.mark.parametrize("rules,pos,counts", PERFT)
def test_perft_through_python_equals_go_golden(rules: str, pos: dict | None, counts: list[int]) -> None:
    game = Game(rules)
    root = game.new_initial_state(seed=1, start=0) if pos is None else game.state_from_position(**pos, seed=1)
    before = root.clone()
    for depth, want in enumerate(counts, start=1):
        assert perft(game, root, depth) == want, f"perft({depth})"
    assert root == before


@pytest.mark.parametrize("rules", list(_protocol.VARIANTS))
def test_random_game_through_state_equals_the_env(rules: str) -> None:
    close_shared_session()  # a connection declares at most 64 rule sets
    game = Game(rules)
    rng = np.random.default_rng(7)
    with yutenv.Session() as session:
        batch = yutenv.Batch(session, n=1, rules=rules, mode="multi")
        for seed in (3, 11, 12, 13):
            batch.reset(seed=seed, options={"start": 0})
            s = game.new_initial_state(seed=seed, start=0)
            while True:
                while s.is_chance_node():
                    s.sample_throw()
                assert State.deserialize(batch.save(0)) == s
                if s.is_terminal():
                    break
                legal = s.legal_actions()
                assert legal == [int(a) for a in np.flatnonzero(batch.load(0, batch.save(0))["mask"])]
                a = int(rng.choice(legal))
                s.apply_action(a)
                batch.step([a])
            assert s.winner() >= 0
            assert sorted(p for p in s.places() if p) == list(range(1, 1 + len([p for p in s.places() if p])))
        batch.close()


def test_missed_turns_survive_every_state_path() -> None:
    """Skip obstacles: the turns a seat will miss live in the packed state (version 2), so
    positions, blobs, pickles and batched apply keep them."""
    game = Game("kata,obstacles=4:skip+9:back2")
    s = game.state_from_position(to_move=0, phase="throw", stacks=[(0, 5, "LINE"), (1, 12, "LINE")], missed=[0, 2], seed=5)
    assert s.position()["missed"] == [0, 2]
    assert len(s.packed) == game.state_size == 108
    assert State.deserialize(s.serialize()) == s and game.deserialize(s.serialize()) == s
    assert pickle.loads(pickle.dumps(s)) == s
    assert game.state_from_position(**s.position(), seed=5) == s
    assert s.json()["missed"] == [0, 2]
    # seat 1 misses its next two turns: seat 0 throws three times running (do each time)
    for _ in range(3):
        assert s.current_player() == CHANCE and s.position()["to_move"] == 0
        s.apply_throw(1)
        s.apply_action(s.legal_actions()[0])
    assert "missed" not in s.position()
    # a version 1 packed state (104 bytes, an old pickle) still loads, nobody missing a turn
    old = game.state_from_position(to_move=1, phase="throw", stacks=[(0, 3, "LINE")], seed=5)
    v1 = b"\x01" + old.packed[1:104]
    assert game.state(v1) == old
    restore, (rules, _packed) = old.__reduce__()  # what unpickling an old pickle calls
    assert restore(rules, v1) == old
    rows = np.frombuffer(v1 * 3, np.uint8).reshape(3, 104)  # an (N, 104) array saved before
    np.testing.assert_array_equal(game.legal_masks(rows), game.legal_masks([old] * 3))


@pytest.mark.parametrize("tier", ["compact", "tactical", "planes"])
def test_a_waiting_seat_sees_whose_turn_it_is(tier: str) -> None:
    """The same position with seat 0 or seat 1 to move looks different to seat 1, and
    under skip obstacles missed turns show in every tier."""
    game = Game("kata,obstacles=4:skip+9:back2")
    pos = dict(phase="throw", stacks=[(0, 5, "LINE"), (1, 12, "LINE")], seed=5)
    s0, s1 = game.state_from_position(to_move=0, **pos), game.state_from_position(to_move=1, **pos)
    o = game.observations([s0, s1], tier, seat=1)
    assert not np.array_equal(o[0], o[1])
    m0, m2 = game.state_from_position(to_move=0, **pos), game.state_from_position(to_move=0, missed=[0, 2], **pos)
    for seat in (0, 1):
        o = game.observations([m0, m2], tier, seat=seat)
        assert not np.array_equal(o[0], o[1])


def test_constructed_position_round_trips() -> None:
    game = Game("players=3,end=rank")
    s = game.state_from_position(
        to_move=2,
        phase="move",
        pool={"yut": 1, "do": 1},
        stacks=[{"seat": 0, "station": 22, "route": "CENTRE/C1", "height": 2}, (2, 7, "OUTER")],
        finished=[0, 4, 0],
        place=[0, 1, 0],
        seed=5,
    )
    assert s.current_player() == 2 and s.places() == [0, 1, 0]
    # serialize / deserialize, under the same game and standalone
    blob = s.serialize()
    assert game.deserialize(blob) == s
    assert State.deserialize(blob) == s
    # pickle and copies
    assert pickle.loads(pickle.dumps(s)) == s
    assert copy.deepcopy(s) == s and copy.copy(s) == s and s.clone() is not s
    # the readable position builds the same state back
    assert game.state_from_position(**s.position(), seed=5) == s
    # the JSON form names the same position
    j = s.json()
    assert j["to_move"] == 2 and j["places"] == [0, 1, 0] and j["legal"] == s.legal_actions()
    # a child is a new value; the parent is unchanged
    c = s.child(s.legal_actions()[0])
    assert c != s and s == game.deserialize(blob)


#: Line boards (RULES.md, "Boards"): alone, the kata preset, and one with more seats, finish=stop and an obstacle.
LINE_BOARDS = ["board=line", "kata", "board=line,players=3,pieces=2,finish=stop,obstacles=4:skip"]


@pytest.mark.parametrize("rules", LINE_BOARDS)
def test_a_line_board_stack_given_by_route_id_round_trips(rules: str) -> None:
    """Route ids are the engine's: id 5 is LINE, a line board's route. (The package's hand-typed
    route list once stopped at CENTRE/C2, id 4, and refused it.)"""
    game = Game(rules)
    pos = dict(to_move=0, pool={"do": 1}, seed=3)
    s = game.state_from_position(stacks=[(0, 1, 5)], **pos)
    assert s == game.state_from_position(stacks=[{"seat": 0, "station": 1, "route": "LINE"}], **pos)
    assert s.position()["stacks"] == [{"seat": 0, "station": 1, "route": "LINE", "height": 1}]
    cell = _protocol.PACKED_FIELDS["cells"].offset + 2 * 1  # station 1: height, then owner << 4 | route id
    assert s.packed[cell : cell + 2] == bytes([1, 0 << 4 | 5])
    assert game.state_from_position(**s.position(), seed=3) == s
    # The env holds the same state, and plays on identically.
    with yutenv.Session() as session:
        batch = yutenv.Batch(session, n=1, rules=rules, mode="multi")
        batch.reset(seed=0)
        mask = batch.load(0, s.serialize())["mask"]
        assert State.deserialize(batch.save(0)) == s
        assert s.legal_actions() == [int(a) for a in np.flatnonzero(mask)]
        for a in (s.legal_actions()[0], s.legal_actions()[-1]):
            t = s.child(a)
            while t.is_chance_node():  # the env throws on with the state's own generator
                t.sample_throw()
            batch.load(0, s.serialize())
            batch.step([a])
            assert State.deserialize(batch.save(0)) == t
        batch.close()


def test_chance_outcomes_and_phases() -> None:
    game = Game("back_do=off")
    s = game.new_initial_state(seed=2)
    assert s.current_player() == CHANCE and s.phase == "throw"
    outs = s.chance_outcomes()
    assert [t for t, _ in outs] == [1, 2, 3, 4, 5]
    assert sum(p for _, p in outs) == pytest.approx(1.0)
    s.apply_throw(GAE)
    assert s.chance_outcomes() == [] and s.current_player() == s.to_move
    over = Game("pieces=1").state_from_position(phase="over", finished=[1, 0], place=[1, 0], to_move=0)
    assert over.current_player() == TERMINAL and over.returns() == [1.0, -1.0] and over.winner() == 0
    assert over.observation("compact", seat=1).shape == (game.obs_size["compact"],)


def test_illegal_input_raises_and_leaves_the_state_alone() -> None:
    game = Game()
    s = game.new_initial_state(seed=1)
    before = s.clone()
    with pytest.raises(yutenv.IllegalActionError, match="phase throw"):
        s.apply_action(89)
    with pytest.raises(ValueError, match="0..5"):
        s.apply_throw(6)
    with pytest.raises(TypeError):
        s.apply_action(1.5)  # type: ignore[arg-type]
    assert s == before
    s.apply_throw(GAE)
    before = s.clone()
    with pytest.raises(yutenv.IllegalActionError, match="no gae|no stack|pool"):
        s.apply_action(62)
    with pytest.raises(yutenv.IllegalActionError):
        s.apply_action(180)
    with pytest.raises(yutenv.IllegalActionError, match="phase move"):
        s.sample_throw()
    # any seat may be observed, from its own chair: once a piece is on the board the two views differ
    moved = s.child(int(np.flatnonzero(s.legal_actions_mask())[0]))
    mine, theirs = moved.observation("compact", seat=0), moved.observation("compact", seat=1)
    assert mine.shape == theirs.shape
    assert not np.array_equal(mine, theirs)
    with pytest.raises(yutenv.InvalidArgumentError, match="out of range"):
        s.observation("compact", seat=7)
    with pytest.raises(yutenv.InvalidArgumentError):
        s.observation("bogus")
    assert s == before
    # a forged state is refused, naming its row
    rows = game.initial_states(3, seed=0)
    forged = rows.copy()
    forged[2, 10] = 9  # seat 0 holds 9 pieces in hand
    with pytest.raises(yutenv.BadStateError, match="row 2"):
        game.apply_throws(forged, -1)
    with pytest.raises(ValueError):
        game.apply_throws(rows[:, :10].copy(), -1)
    with pytest.raises(yutenv.BadStateError, match="not a place of"):
        game.state_from_position(stacks=[(0, 7, "C1")])
    with pytest.raises(yutenv.BadStateError, match="pieces"):
        game.state_from_position(stacks=[(0, 7, "OUTER", 2)], hand=[4, 4])
    with pytest.raises(ValueError, match="unknown throw"):
        game.state_from_position(pool={"six": 1})
    with pytest.raises(yutenv.BadStateError):
        State.deserialize(b"\x91\x91")
    with pytest.raises(yutenv.BadStateError, match="rules"):
        Game("players=4").deserialize(s.serialize())
    with pytest.raises(ValueError, match="rules"):
        Game("players=4").apply_throws([before], -1)


def test_analyse_labels_positions() -> None:
    game = Game()
    rows = game.initial_states(128, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(13):  # a few random steps in, so positions differ
        rows = step_randomly(game, rows, rng)
    rows = rows[game.phases(rows) == 1]
    assert len(rows) > 10
    a = game.analyse(rows, "mcts:64", seed=1)
    mask = game.legal_masks(rows)
    assert a.policy.shape == (len(rows), 180)
    assert (mask[np.arange(len(rows)), a.actions] == 1).all()
    assert np.allclose(a.policy.sum(axis=1), 1, atol=1e-5)
    assert (a.policy[mask == 0] == 0).all()
    assert ((a.value >= -1) & (a.value <= 1)).all()
    assert a.agent.startswith("mcts:64")
    again = game.analyse(rows, "mcts:64", seed=1)
    assert (again.actions == a.actions).all() and (again.policy == a.policy).all()
    g = game.analyse(rows[:5], "greedy")
    assert (g.policy.sum(axis=1) == 1).all()
    with pytest.raises(yutenv.InvalidArgumentError, match="phase throw"):
        game.analyse(game.initial_states(2), "greedy")


def test_analyse_splits_a_batch_above_the_request_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's --max-analyse-sims bounds a request over all its states: a larger batch is
    sent in halves with the same answer; one state above the limits is refused."""
    game = Game()
    rows = game.initial_states(128, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(13):
        rows = step_randomly(game, rows, rng)
    rows = rows[game.phases(rows) == 1]
    assert len(rows) > 10
    whole = game.analyse(rows, "mcts:32", seed=4)
    server = yutenv.Server(args=["--max-analyse-sims", "100"])
    try:
        yutenv.state.close_shared_session()
        monkeypatch.setenv("YUTENV_ADDRESS", server.address)
        split = game.analyse(rows, "mcts:32", seed=4)  # 3 states a request at most
        assert (split.actions == whole.actions).all() and (split.policy == whole.policy).all()
        assert (split.value == whole.value).all()
        with pytest.raises(yutenv.LimitExceededError, match="--max-opponent-sims"):
            game.analyse(rows[:1], "mcts:2001")
        with pytest.raises(yutenv.LimitExceededError, match="--max-analyse-sims 100"):
            game.analyse(rows[:1], "mcts:101")
    finally:
        yutenv.state.close_shared_session()
        server.close()


def test_batches_take_states_or_arrays_and_games_pickle() -> None:
    game = Game("players=3")
    assert pickle.loads(pickle.dumps(game)) == game and game.players == 3
    rows = game.initial_states(5, seed=4, start=None)
    states = game.states(rows)
    assert [s.to_move for s in states] == list(game.query(rows)["to_move"])
    a = game.apply_throws(rows, 2)
    b = game.apply_throws(states, [2] * 5)
    assert (a == b).all()
    assert game.state(a[0]) == game.states(b)[0]
    with pytest.raises(ValueError, match="5 integer"):
        game.apply_throws(rows, [2, 2])
    with pytest.raises(TypeError, match="uint8"):
        game.apply_throws(rows.astype(np.int16), 2)
    # The same rows sampled twice give the same throws: the generator is part of the state.
    assert (game.apply_throws(rows, -1) == game.apply_throws(rows, -1)).all()


def _forge(game: Game, what: str) -> bytes:
    b = bytearray(game.new_initial_state(seed=3).packed)
    if what == "phase":
        b[2] = 9
    elif what == "seat":
        b[1] = 7
    elif what == "place":
        b[18] = 200  # seat 0's final place
    elif what == "two winners":
        b[18] = b[19] = 1
    elif what == "short":
        del b[-1]
    return bytes(b)


@pytest.mark.parametrize("what", ["phase", "seat", "place", "two winners", "short"])
def test_forged_packed_states_raise_bad_state_everywhere(what: str) -> None:
    """Game.state checks the bytes with the server; a State the server never saw (built
    directly, or unpickled) range-checks the bytes Python reads itself: phase, repr and
    winner never answer from, or crash on, bytes out of range."""
    game = Game()
    forged = _forge(game, what)
    with pytest.raises(yutenv.BadStateError):
        game.state(forged)
    if what != "short":
        with pytest.raises(yutenv.BadStateError, match="row 1"):
            game.states(np.stack([np.frombuffer(game.new_initial_state().packed, np.uint8), np.frombuffer(forged, np.uint8)]))
    s = pickle.loads(pickle.dumps(State(game, forged)))
    with pytest.raises(yutenv.BadStateError) if what in ("phase", "short") else nullcontext():
        s.phase  # noqa: B018 - the property raises
    with pytest.raises(yutenv.BadStateError) if what in ("seat", "short") else nullcontext():
        s.to_move  # noqa: B018 - the property raises
    with pytest.raises(yutenv.BadStateError) if what in ("place", "two winners", "short") else nullcontext():
        s.winner()
    assert ("damaged" in repr(s)) == (what in ("phase", "seat", "short"))  # repr never raises


@pytest.mark.parametrize(("progress", "bar"), [(None, False), (True, True), (False, False)])
def test_analyse_progress_bar(progress: bool | None, bar: bool, capsys: pytest.CaptureFixture[str]) -> None:
    # None: on a terminal only (pytest's captured stderr is not one). With a bar the states go
    # in pieces; the answer is the one of a single request.
    game = Game("standard")
    rows = game.apply_throws(game.initial_states(60, seed=3), np.full(60, 2))
    plain = game.analyse(rows, "mc:4", seed=9, progress=False)
    capsys.readouterr()
    got = game.analyse(rows, "mc:4", seed=9, progress=progress)
    err = capsys.readouterr().err
    assert ("analyse mc:4" in err and "60/60" in err) == bar, err
    for name in ("actions", "policy", "value", "values"):
        np.testing.assert_array_equal(getattr(got, name), getattr(plain, name))
