"""yutenv.rllib: real PPO training iterations (new API stack) on a local Ray, both envs."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest

# make test runs these in RLlib's own venv (its third run: `-m rllib`), against RLlib's Gymnasium pin.
pytestmark = pytest.mark.rllib

pytest.importorskip("ray.rllib", reason="the rllib extra is not installed", exc_type=ImportError)
pytest.importorskip("torch", reason="the rllib extra is not installed").set_num_threads(1)

import ray  # noqa: E402
import yutenv.rllib  # noqa: E402
from ray.rllib.algorithms.ppo import PPOConfig  # noqa: E402
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec  # noqa: E402
from ray.rllib.utils.metrics import (  # noqa: E402
    ENV_RUNNER_RESULTS,
    EPISODE_RETURN_MEAN,
    LEARNER_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_EPISODES_LIFETIME,
)  # noqa: E402
from yutenv.rllib import YutRLlibEnv, YutRLlibMultiEnv, YutRLlibVectorEnv  # noqa: E402

import yutenv  # noqa: E402


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yutenv.rllib.register()
    yield
    ray.shutdown()


def _small(config: Any) -> Any:
    return (
        config.framework("torch")
        .env_runners(num_env_runners=1, num_envs_per_env_runner=2, rollout_fragment_length=64, num_cpus_per_env_runner=0)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=256, minibatch_size=64, num_epochs=1, lr=3e-4)
        .debugging(seed=0)
    )


def _first_legal(obs: dict[str, np.ndarray]) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


def test_single_env_masked_observations() -> None:
    env = YutRLlibEnv({"opponent": "greedy", "max_decisions": 8})
    try:
        obs, info = env.reset(seed=3)
        assert env.observation_space.contains(obs)
        assert obs["action_mask"].dtype == np.float32
        np.testing.assert_array_equal(obs["action_mask"] > 0, env.action_masks())
        assert isinstance(info["seed"], np.uint64)  # no int64 overflow in Gymnasium's vector infos
        done = False
        while not done:
            obs, r, term, trunc, info = env.step(_first_legal(obs))
            assert env.observation_space.contains(obs)
            done = term or trunc
        assert trunc or term
    finally:
        env.close()
    with pytest.raises(ValueError, match="obs_type"):
        YutRLlibEnv({"obs_type": "dict"})


def test_multi_env_turns() -> None:
    env = YutRLlibMultiEnv({"rules": "players=3"})
    try:
        obs, infos = env.reset(seed=5)
        assert len(obs) == 1
        actors: set[str] = set()
        for _ in range(5000):
            (agent,) = obs
            actors.add(agent)
            assert env.observation_spaces[agent].contains(obs[agent])
            assert obs[agent]["action_mask"].any()
            obs, rewards, terms, truncs, _ = env.step({agent: _first_legal(obs[agent])})
            assert set(rewards) <= actors | set(obs)
            if terms["__all__"]:
                break
            assert len(obs) == 1
        assert terms["__all__"] and not truncs["__all__"]
        assert set(obs) == actors == set(env.possible_agents)
        assert sorted(rewards.values())[-1] == 1.0  # the winner
    finally:
        env.close()


def test_ppo_single_agent(local_ray: None) -> None:
    config = _small(
        PPOConfig()
        .environment(yutenv.rllib.ENV_NAME, env_config={"opponent": "random", "seat": "random"})
        .rl_module(rl_module_spec=yutenv.rllib.module_spec(hiddens=(32,)))
    )
    algo = config.build_algo()
    try:
        result = algo.train()
        assert result[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME] >= 256
        assert "default_policy" in result[LEARNER_RESULTS]  # the module was updated
        # the trained module plays masked actions only: compute actions on a fresh env
        module = algo.get_module()
        env = YutRLlibEnv()
        try:
            import torch

            obs, _ = env.reset(seed=0)
            batch = {"obs": {k: torch.as_tensor(v)[None] for k, v in obs.items()}}
            out = module.forward_inference(batch)
            logits = out["action_dist_inputs"][0].detach().numpy()
            assert obs["action_mask"][int(np.argmax(logits))] == 1.0
        finally:
            env.close()
    finally:
        algo.stop()


def test_ppo_single_agent_one_batch_per_env_runner(local_ray: None) -> None:
    """gym_env_vectorize_mode="vector_entry_point": the env runner's games are one server batch."""
    config = _small(
        PPOConfig()
        .environment(yutenv.rllib.ENV_NAME, env_config={"opponent": "random", "seat": "random"})
        .rl_module(rl_module_spec=yutenv.rllib.module_spec(hiddens=(32,)))
    ).env_runners(
        num_env_runners=0, num_envs_per_env_runner=8, rollout_fragment_length=32, gym_env_vectorize_mode="vector_entry_point"
    )
    algo = config.build_algo()
    try:
        env = algo.env_runner.env
        assert isinstance(env.unwrapped, YutRLlibVectorEnv) and env.num_envs == 8
        result = algo.train()
        runner = result[ENV_RUNNER_RESULTS]
        assert runner[NUM_ENV_STEPS_SAMPLED_LIFETIME] >= 256
        assert runner[NUM_EPISODES_LIFETIME] > 0  # games ended and were reset by the server
        assert -1.0 <= runner[EPISODE_RETURN_MEAN] <= 1.0
        assert "default_policy" in result[LEARNER_RESULTS]
    finally:
        algo.stop()


def test_vector_env_masks_and_next_step_autoreset() -> None:
    env = YutRLlibVectorEnv(3, {"max_decisions": 2})
    try:
        obs, _ = env.reset(seed=1)
        assert env.observation_space.contains(obs)
        for _ in range(2):
            obs, rew, term, trunc, _ = env.step(np.argmax(obs["action_mask"], axis=1))
        assert trunc.all()
        obs, rew, term, trunc, _ = env.step(np.zeros(3, dtype=np.int64))  # the reset step: action ignored
        assert not (term.any() or trunc.any()) and (rew == 0).all()
        assert env.observation_space.contains(obs)
    finally:
        env.close()


def test_ppo_multi_agent_self_play(local_ray: None) -> None:
    config = _small(
        PPOConfig()
        .environment(yutenv.rllib.MULTI_ENV_NAME, env_config={"rules": "players=2"})
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": yutenv.rllib.module_spec(hiddens=(32,))}))
    )
    algo = config.build_algo()
    try:
        result = algo.train()
        assert result[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME] >= 256
        assert "shared" in result[LEARNER_RESULTS]  # one policy learned from both seats
    finally:
        algo.stop()
