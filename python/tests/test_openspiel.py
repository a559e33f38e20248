"""yutenv as an OpenSpiel game: OpenSpiel's own random simulation test and its MCTSBot."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

import yutenv

pyspiel = pytest.importorskip("pyspiel")  # the [openspiel] extra; `make py-test` installs it
from open_spiel.python.algorithms import mcts  # noqa: E402

import yutenv.openspiel  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def close_state_session() -> Iterator[None]:
    yield
    yutenv.state.close_shared_session()


@pytest.mark.parametrize("rules", ["standard", "players=3,end=rank", "players=4,pieces=2"])
def test_random_sim_test_passes(rules: str) -> None:
    game = pyspiel.load_game("python_yutenv", {"rules": rules})
    assert game.num_players() == yutenv.Game(rules).players
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    pyspiel.random_sim_test(game, num_sims=3, serialize=rules == "standard", verbose=False)


def test_states_clone_and_chance() -> None:
    game = yutenv.openspiel.load_game()
    s = game.new_initial_state()
    assert s.is_chance_node() and [t for t, _ in s.chance_outcomes()] == list(range(6))
    c = s.clone()
    c.apply_action(2)  # gae
    assert s.is_chance_node() and not c.is_chance_node()
    assert c.legal_actions() == [89] and c.action_to_string(c.current_player(), 89) == "gae@enter"
    with pytest.raises(yutenv.IllegalActionError, match="no back-do"):
        c.apply_action(5)  # the engine's error comes through OpenSpiel as is
    assert c.legal_actions() == [89]


def test_mcts_bot_plays_a_full_game_against_greedy() -> None:
    game = yutenv.openspiel.load_game()
    rng = np.random.RandomState(0)
    bot = mcts.MCTSBot(game, 2.0, 8, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    state = game.new_initial_state(seed=3)
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        elif state.current_player() == 0:
            state.apply_action(bot.step(state))
            moves += 1
        else:
            state.apply_action(int(game.yut.analyse([state.yut], "greedy").actions[0]))
    assert moves > 5
    assert sorted(state.returns()) == [-1.0, 1.0]
