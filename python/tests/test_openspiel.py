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


@pytest.mark.parametrize("tier", ["compact", "tactical", "planes"])
def test_tensors_are_each_seats_observation_of_the_tier(tier: str) -> None:
    game = pyspiel.load_game("python_yutenv", {"tier": tier})
    size = yutenv.Game().obs_size[tier]
    assert game.get_type().provides_observation_tensor and game.get_type().provides_information_state_tensor
    assert game.observation_tensor_shape() == [size] == game.information_state_tensor_shape()
    rng = np.random.RandomState(1)
    state = game.new_initial_state(seed=5)
    seen = {"chance": 0, "decision": 0, "differ": 0}
    for step in range(400):
        if step % 7 == 0 or state.is_terminal():
            kind = "chance" if state.is_chance_node() else "decision"
            seen[kind] += 0 if state.is_terminal() else 1
            views = [np.asarray(state.observation_tensor(p), np.float32) for p in range(game.num_players())]
            for p, view in enumerate(views):
                assert view.shape == (size,)
                np.testing.assert_array_equal(view, state.yut.observation(tier, seat=p))
                # Perfect information: the information state is the observation.
                np.testing.assert_array_equal(np.asarray(state.information_state_tensor(p), np.float32), view)
            seen["differ"] += int(not np.array_equal(views[0], views[1]))  # each seat's own view
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert state.is_terminal(), "a random game ends within 400 steps"
    assert seen["chance"] and seen["decision"] and seen["differ"]


def test_tier_is_checked_and_defaults_to_compact() -> None:
    assert yutenv.openspiel.load_game().observation_tensor_shape() == [yutenv.Game().obs_size["compact"]]
    assert yutenv.openspiel.load_game("players=3,end=rank", "planes").observation_tensor_shape() == [
        yutenv.Game("players=3,end=rank").obs_size["planes"]
    ]
    with pytest.raises(yutenv.InvalidArgumentError, match="tier 'dense' is not one of compact"):
        pyspiel.load_game("python_yutenv", {"tier": "dense"})


def test_openspiel_q_learners_train_on_the_information_state_tensor() -> None:
    """OpenSpiel's own RL loop: its rl_environment (which feeds agents the information-state
    tensor) and its tabular Q-learner, one per seat, for one full game (a bounded loop)."""
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import tabular_qlearner

    size = yutenv.Game().obs_size["compact"]
    env = rl_environment.Environment(yutenv.openspiel.load_game(), seed=0)
    assert env.observation_spec()["info_state"] == (size,)
    np.random.seed(0)  # the Q-learner explores with numpy's global generator
    agents = [tabular_qlearner.QLearner(p, env.action_spec()["num_actions"]) for p in range(2)]
    time_step = env.reset()
    for _ in range(5000):
        if time_step.last():
            break
        p = time_step.observations["current_player"]
        assert len(time_step.observations["info_state"][p]) == size
        out = agents[p].step(time_step)
        assert out.action in time_step.observations["legal_actions"][p]
        time_step = env.step([out.action])
    assert time_step.last(), "a game ends within 5000 decisions"
    for agent in agents:
        agent.step(time_step)  # the terminal update: the outcome reaches the last decision
    assert sorted(time_step.rewards) == [-1.0, 1.0]
    assert all(len(a._q_values) >= 5 for a in agents), "each seat saw many distinct tensors"
    updated = [v for a in agents for q in a._q_values.values() for v in q.values() if v != 0.0]
    assert len(updated) >= 2, "both seats' final decisions learned the outcome"
