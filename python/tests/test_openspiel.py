"""yutenv as an OpenSpiel game: OpenSpiel's own random simulation test and its MCTSBot."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

import yutenv

pyspiel = pytest.importorskip("pyspiel")  # the [openspiel] extra; `make py-test` installs it
import yutenv.openspiel  # noqa: E402
from open_spiel.python.algorithms import mcts  # noqa: E402


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


@pytest.mark.parametrize("rules", ["standard", "players=3,end=rank"])
def test_game_pickles_by_its_parameters(rules: str) -> None:
    """AlphaZero's driver pickles the game into its processes: the copy is the same game
    (pyspiel's game string would cut a rules value at its commas)."""
    game = yutenv.openspiel.load_game(rules, "planes")
    copy = pickle.loads(pickle.dumps(game))
    assert isinstance(copy, yutenv.openspiel.YutSpielGame)
    assert copy.get_parameters() == {"rules": rules, "tier": "planes"} and copy.yut == game.yut
    assert copy.num_players() == game.num_players() and copy.observation_tensor_shape() == [598]
    state = copy.new_initial_state()
    state.apply_action(2)
    assert state.legal_actions() == [89]


def test_openspiel_dqn_trains_on_the_information_state_tensor() -> None:
    """OpenSpiel's own PyTorch DQN, one agent per seat, over its rl_environment (which feeds
    agents the information-state tensor) for one full game: tiny settings, a bounded loop."""
    for module in ("torch", "tree"):
        pytest.importorskip(module)  # the openspiel-rl extra; `make py-install` installs it
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import dqn

    size = yutenv.Game().obs_size["compact"]
    env = rl_environment.Environment(yutenv.openspiel.load_game(), seed=0)
    assert env.observation_spec()["info_state"] == (size,)
    agents = [
        dqn.DQN(
            player_id=p,
            state_representation_size=size,
            num_actions=env.action_spec()["num_actions"],
            hidden_layers_sizes=[16],
            batch_size=4,
            replay_buffer_capacity=256,
            min_buffer_size_to_learn=4,
            learn_every=4,
            seed=p,  # learn_every > 2: its first learn() needs a transition
        )  # fmt: skip
        for p in range(2)
    ]
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
        agent.step(time_step)  # the terminal transition
    assert sorted(time_step.rewards) == [-1.0, 1.0]
    for agent in agents:
        assert agent.loss is not None and np.isfinite(float(agent.loss)), "each seat's network took updates"


_ALPHAZERO = """
import sys
import yutenv.openspiel
from open_spiel.python.algorithms.alpha_zero import alpha_zero

game = yutenv.openspiel.load_game()
alpha_zero.alpha_zero(alpha_zero.Config(
    game=yutenv.openspiel.GAME_NAME, path=sys.argv[1], learning_rate=0.01, weight_decay=1e-4,
    decouple_weight_decay=False, train_batch_size=16, replay_buffer_size=64, replay_buffer_reuse=1,
    max_steps=1, checkpoint_freq=1, actors=1, evaluators=1, evaluation_window=2,
    eval_levels=2,  # 2 or more: its learner divides by eval_levels - 1
    uct_c=2.0, max_simulations=4, policy_alpha=1.0, policy_epsilon=0.25, temperature=1.0,
    temperature_drop=10, nn_model="mlp", nn_width=16, nn_depth=1,
    observation_shape=game.observation_tensor_shape(), output_size=game.num_distinct_actions(),
    verbose=False, quiet=True,
))
"""


def test_openspiel_alphazero_trains_a_step_on_the_observation_tensor(tmp_path: Path) -> None:
    """OpenSpiel's own AlphaZero (the JAX/Flax one of open-spiel 2), its whole driver: an actor
    and an evaluator process play through ``observation_tensor`` (the game is pickled into
    them), its learner fills the replay buffer and takes one training step with a checkpoint.
    Tiny settings: 4 simulations, a 16-wide MLP, a 64-state buffer (the openspiel-rl extra).
    In a subprocess with a deadline: when its actors die, its learner waits forever."""
    for module in ("jax", "flax", "optax", "chex"):
        pytest.importorskip(module)  # the openspiel-rl extra; `make py-install` installs it
    # JAX's persistent compilation cache: the driver's actor, evaluator and learner processes
    # compile the same functions, and it is kept between runs as Go's build cache is (this test:
    # 41 s without it, 31 s with an empty one, 17 s with a warm one).
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "yutenv-tests" / "jax"
    env = {**os.environ, "YUTENV_BINARY": str(yutenv.binary_path()), "JAX_COMPILATION_CACHE_DIR": str(cache),
           "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}  # fmt: skip
    p = subprocess.Popen(
        [sys.executable, "-c", _ALPHAZERO, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # its actor and evaluator processes too
        out, err = p.communicate()
        pytest.fail("OpenSpiel's AlphaZero did not finish its step in 300 s:\n" + out[-3000:] + err[-3000:])
    assert p.returncode == 0, out[-3000:] + err[-3000:]
    steps = [json.loads(line) for line in (tmp_path / "learner.jsonl").read_text().splitlines()]
    assert [s["step"] for s in steps] == [1]
    assert steps[0]["total_states"] >= 64 and steps[0]["total_trajectories"] >= 1
    assert (tmp_path / "checkpoint-1").exists(), "the learner trained and saved its network"
    assert "Losses(total:" in (tmp_path / "log-learner.txt").read_text()
