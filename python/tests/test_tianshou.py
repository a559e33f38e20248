"""yutenv.tianshou: the Tianshou vector env over one server batch, against real Tianshou 2.x."""

from __future__ import annotations

import os
import signal
from typing import Any

import gymnasium
import numpy as np
import pytest
from conftest import wait_dead

import yutenv
from yutenv.errors import ClosedError, IllegalActionError, ResetNeeded, ServerDiedError, UnsupportedError

pytest.importorskip("tianshou", reason="the tianshou extra is not installed")
torch = pytest.importorskip("torch", reason="the tianshou extra is not installed")

from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer  # noqa: E402
from tianshou.env import BaseVectorEnv, DummyVectorEnv  # noqa: E402
from tianshou.trainer import OffPolicyTrainerParams  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402
from yutenv.tianshou import YutClosedError, YutTianshouVectorEnv, gym_env, pettingzoo_env, policy_fn  # noqa: E402

from yutenv import AutoresetMode  # noqa: E402

# One torch thread: the server needs the other core.
torch.set_num_threads(1)


@pytest.fixture(scope="module")
def server() -> Any:
    s = yutenv.Server()
    yield s
    s.close()


def first_legal(mask: np.ndarray) -> np.ndarray:
    return np.argmax(mask, axis=1).astype(np.int64)


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    return np.argmax(rng.random(mask.shape) * mask, axis=1).astype(np.int64)


def masked_random() -> Any:
    """Tianshou's own masked random policy (it reads ``obs.mask``)."""
    return MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=gymnasium.spaces.Discrete(yutenv.NUM_ACTIONS))


def test_is_a_tianshou_vector_env_with_masked_observations(server: yutenv.Server) -> None:
    env = YutTianshouVectorEnv(4, server=server, opponent="greedy")
    try:
        assert isinstance(env, BaseVectorEnv)
        assert len(env) == env.env_num == 4 and not env.is_async
        obs, infos = env.reset()
        assert isinstance(obs, Batch)
        assert obs.obs.shape == (4, env.obs_size) and obs.obs.dtype == np.float32
        assert obs.mask.shape == (4, yutenv.NUM_ACTIONS) and obs.mask.dtype == np.bool_
        assert obs.mask.any(axis=1).all()
        assert infos.dtype == object and infos.shape == (4,) and all(i == {} for i in infos)
        # Tianshou reads the spaces through get_env_attr: a list, one per env
        assert len(env.action_space) == 4 and all(s.n == yutenv.NUM_ACTIONS for s in env.action_space)
        assert env.observation_space[0] == env.single_observation_space
        assert env.single_observation_space["obs"].contains(obs.obs[0])
        assert env.single_observation_space["mask"].contains(obs.mask[0])
        assert env.get_env_attr("rules") == ["standard"] * 4
        env.set_env_attr("note", "x", id=[1])
        assert env.get_env_attr("note", id=1) == ["x"]
        with pytest.raises(AttributeError, match="fixed"):
            env.set_env_attr("rules", "kata")
        # the action spaces sample legal actions of each env's current decision
        for i, space in enumerate(env.action_space):
            assert all(obs.mask[i, space.sample()] for _ in range(20))
    finally:
        env.close()


def test_same_games_as_yut_vector_env(server: yutenv.Server) -> None:
    """From the same seeds and actions, the door plays the games a YutVectorEnv with same-step
    autoreset plays: an ended episode's step returns its last observation, and reset(env_id)
    returns the first observation the server began next; later episodes included."""
    n, seed = 5, 99
    door = YutTianshouVectorEnv(n, server=server, opponent="random", seat="random")
    ref = yutenv.YutVectorEnv(n, server=server, opponent="random", seat="random", autoreset_mode=AutoresetMode.SAME_STEP)
    rng = np.random.default_rng(0)
    try:
        door.seed(seed)
        obs, _ = door.reset()
        r_obs, r_info = ref.reset(seed=seed)
        np.testing.assert_array_equal(obs.obs, r_obs)
        np.testing.assert_array_equal(obs.mask, r_info["action_mask"].astype(bool))
        episodes = 0
        for _ in range(600):
            a = random_legal(rng, obs.mask)
            obs, rew, term, trunc, _ = door.step(a)
            r_obs, r_rew, r_term, r_trunc, r_info = ref.step(a)
            np.testing.assert_array_equal(rew, r_rew)
            np.testing.assert_array_equal(term, r_term)
            np.testing.assert_array_equal(trunc, r_trunc)
            done = np.flatnonzero(term | trunc)
            live = np.flatnonzero(~(term | trunc))
            np.testing.assert_array_equal(obs.obs[live], r_obs[live])
            np.testing.assert_array_equal(obs.mask[live], r_info["action_mask"][live].astype(bool))
            for i in done:
                np.testing.assert_array_equal(obs.obs[i], r_info["final_obs"][i])
                assert not obs.mask[i].any()  # a finished game: no legal action
                assert abs(rew[i]) == 1.0
            if len(done):
                episodes += len(done)
                first, infos = door.reset(env_id=done)
                assert len(infos) == len(done)
                np.testing.assert_array_equal(first.obs, r_obs[done])
                np.testing.assert_array_equal(first.mask, r_info["action_mask"][done].astype(bool))
                obs[done] = first
        assert episodes >= 2 * n, "several episodes per env"
    finally:
        door.close()
        ref.close()


def test_truncated_episodes_end_with_every_action_open(server: yutenv.Server) -> None:
    env = YutTianshouVectorEnv(3, server=server, max_decisions=4)
    try:
        obs, _ = env.reset(seed=7)
        for step in range(1, 5):
            obs, rew, term, trunc, _ = env.step(first_legal(obs.mask))
            assert trunc.all() == (step == 4) and not term.any()
        assert trunc.all() and not term.any() and (rew == 0).all()
        assert obs.mask.all(), "Tianshou bootstraps a truncated episode from this observation"
        first, _ = env.reset(env_id=[0, 1, 2])
        assert first.mask.any(axis=1).all() and not first.mask.all(axis=1).any()
    finally:
        env.close()


def test_partial_steps_and_resets(server: yutenv.Server) -> None:
    env = YutTianshouVectorEnv(3, server=server, opponent="random")
    try:
        obs, _ = env.reset(seed=3)
        # a reset of a game in the middle is refused, and nothing changes
        obs, *_ = env.step(first_legal(obs.mask))
        before = env.action_masks()
        with pytest.raises(UnsupportedError, match="middle of an episode") as ei:
            env.reset(env_id=[1])
        assert "\n" not in str(ei.value)
        np.testing.assert_array_equal(env.action_masks(), before)
        # a partial step steps the envs named, in order; the one left out is parked
        o2, rew, term, trunc, infos = env.step(first_legal(obs.mask[[2, 0]]), id=[2, 0])
        assert o2.obs.shape[0] == len(rew) == len(infos) == 2
        np.testing.assert_array_equal(o2.mask, env.action_masks()[[2, 0]])  # row k is env id[k]
        with pytest.raises(ResetNeeded, match="env 1 was left out of a partial step"):
            env.step(np.array([0]), id=[1])
        with pytest.raises(ResetNeeded, match="env 1 was left out"):
            env.reset(env_id=[1])
        # a reset of every env, by env_id too, starts over
        again, _ = env.reset(env_id=[0, 1, 2])
        assert again.mask.any(axis=1).all()
        env.step(first_legal(again.mask))
    finally:
        env.close()


def test_collector_steps_resets_and_n_episode_collects(server: yutenv.Server) -> None:
    """Tianshou's Collector, as its trainers drive it: n_step collects (resets of ended envs),
    n_episode collects (envs left out near the end, then a full reset), random collects."""
    env = YutTianshouVectorEnv(4, server=server, opponent="random")
    buf = VectorReplayBuffer(20_000, 4)
    collector = Collector[CollectStats](masked_random(), env, buf)
    try:
        env.seed(11)
        collector.reset()
        stats = collector.collect(n_step=800)
        assert stats.n_collected_steps == 800 and stats.n_collected_episodes > 0
        stats = collector.collect(n_episode=7)
        assert stats.n_collected_episodes == 7
        assert set(np.abs(stats.returns).tolist()) == {1.0}
        stats = collector.collect(n_step=400, random=True)  # the action spaces sample legal actions
        assert stats.n_collected_steps == 400
        data = buf.sample(0)[0]
        assert data.obs.mask[np.arange(len(data)), data.act].all(), "every stored action was legal"
        ended = data.terminated
        assert not data.obs_next.mask[ended].any() and data.obs_next.mask[~ended].any(axis=1).all()
    finally:
        collector.close()


def test_tianshous_own_vector_envs_of_gym_env(server: yutenv.Server) -> None:
    env = DummyVectorEnv([lambda: gym_env(server=server, opponent="random") for _ in range(2)])
    collector = Collector[CollectStats](masked_random(), env, VectorReplayBuffer(2_000, 2))
    try:
        collector.reset()
        assert collector.collect(n_episode=3).n_collected_episodes == 3
    finally:
        collector.close()


def test_bad_input_is_refused_and_the_env_goes_on(server: yutenv.Server) -> None:
    env = YutTianshouVectorEnv(2, server=server, opponent="random")
    ref = YutTianshouVectorEnv(2, server=server, opponent="random")
    try:
        with pytest.raises(ResetNeeded, match="never reset"):
            env.step(np.array([0, 0]))
        obs, _ = env.reset(seed=5)
        ref.reset(seed=5)
        illegal = np.argmin(obs.mask, axis=1)
        cases: list[tuple[Any, type[Exception], str]] = [
            (illegal, IllegalActionError, "not legal"),
            (np.array([0, 180]), IllegalActionError, "out of range 0..179"),
            (np.array([-1, 0]), IllegalActionError, "out of range"),
            (np.array([0]), ValueError, "expected 2 actions"),
            (np.zeros((2, 1), dtype=np.int64), ValueError, "expected 2 actions"),
            (first_legal(obs.mask).astype(np.float32), TypeError, "integers"),
            (None, ValueError, "must not be None"),
        ]
        for action, cls, text in cases:
            with pytest.raises(cls, match=text) as ei:
                env.step(action)
            assert "\n" not in str(ei.value)
        assert issubclass(IllegalActionError, ValueError)
        for ids in ([0, 0], [2], [-1], [0.5]):
            with pytest.raises(ValueError, match="env ids"):
                env.step(np.array([0] * len(ids)), id=ids)
        with pytest.raises(ValueError, match="names no env"):
            env.step(np.array([], dtype=np.int64), id=[])
        with pytest.raises(ValueError, match="names no env"):
            env.reset(env_id=[])
        # nothing moved: the env plays on as one that never saw the bad calls
        a = torch.as_tensor(first_legal(obs.mask))  # a torch tensor is an action batch too
        got, want = env.step(a), ref.step(a.numpy())
        np.testing.assert_array_equal(got[0].obs, want[0].obs)
        np.testing.assert_array_equal(got[1], want[1])
    finally:
        env.close()
        ref.close()
    for call in (lambda: env.step(np.array([0, 0])), lambda: env.reset(), lambda: env.action_space):
        with pytest.raises(YutClosedError, match="the env is closed") as ce:
            call()
        assert isinstance(ce.value, ClosedError) and isinstance(ce.value, AssertionError)
    env.close()  # closing twice is fine


def test_illegal_penalty_sends_illegal_actions_to_the_server(server: yutenv.Server) -> None:
    env = YutTianshouVectorEnv(2, server=server, illegal="penalty")
    try:
        obs, _ = env.reset(seed=5)
        a = first_legal(obs.mask)
        a[1] = np.argmin(obs.mask[1])  # illegal for env 1
        obs, rew, term, trunc, _ = env.step(a)
        assert term.tolist() == [False, True] and rew[1] == -1.0 and not obs.mask[1].any()
    finally:
        env.close()


def test_a_server_that_died_is_a_clear_error() -> None:
    s = yutenv.Server()
    env = YutTianshouVectorEnv(2, server=s)
    try:
        obs, _ = env.reset(seed=1)
        os.kill(s.pid, signal.SIGKILL)
        assert wait_dead(s.pid)
        with pytest.raises(ServerDiedError) as ei:
            env.step(first_legal(obs.mask))
        assert "died" in str(ei.value).splitlines()[0]
    finally:
        env.close()
        s.close()


def dqn_for(env: YutTianshouVectorEnv, hidden: list[int]) -> DQN:
    net = Net(state_shape=env.obs_size, action_shape=yutenv.NUM_ACTIONS, hidden_sizes=hidden)
    policy = DiscreteQLearningPolicy(
        model=net,
        action_space=env.single_action_space,
        observation_space=env.single_observation_space,
        eps_training=0.2,
        eps_inference=0.0,
    )
    return DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99, target_update_freq=50)


def test_masked_dqn_trains_with_tianshous_trainer_and_is_rated(server: yutenv.Server) -> None:
    """A masked DQN trained by Tianshou's OffPolicyTrainer on the door (training and test
    collectors), then rated on the published scale through policy_fn."""
    torch.manual_seed(0)
    train = YutTianshouVectorEnv(8, server=server, opponent="random", seat="random", tier="compact")
    test = YutTianshouVectorEnv(4, server=server, opponent="random", seat="random", tier="compact")
    dqn = dqn_for(train, [64])
    train.seed(1)
    test.seed(2)
    train_collector = Collector[CollectStats](dqn, train, VectorReplayBuffer(5_000, 8), exploration_noise=True)
    test_collector = Collector[CollectStats](dqn, test)
    try:
        train_collector.reset()
        train_collector.collect(n_step=256, random=True)
        result = dqn.run_training(
            OffPolicyTrainerParams(
                training_collector=train_collector,
                test_collector=test_collector,
                max_epochs=2,
                epoch_num_steps=400,
                collection_step_num_env_steps=80,
                test_step_num_episodes=6,
                batch_size=64,
                update_step_num_gradient_steps_per_sample=0.25,
                show_progress=False,
                verbose=False,
            )
        )
        assert result.train_step >= 800 and result.update_step > 0 and result.test_episode > 0
        assert result.best_reward is not None
    finally:
        train_collector.close()
        test_collector.close()
    r = yutenv.evaluate(
        policy_fn(dqn), opponent="random", games=8, tier="compact", rating=True, anchors=["random", "greedy"], server=server
    )
    assert r.a == "DiscreteQLearningPolicy" and r.games == 8
    assert r.rating is not None and r.rating_low is not None and r.rating_low <= r.rating <= (r.rating_high or 0)
    assert set(r.rating_games) == {"random", "greedy"}


def test_self_play_through_pettingzoo_env(server: yutenv.Server) -> None:
    """One DQN for both seats (self-play) through Tianshou's PettingZooEnv wrapper and its
    multi-agent algorithm: a collect and a round of updates of the shared network."""
    torch.manual_seed(0)
    probe = pettingzoo_env(server=server, tier="compact")
    assert probe.agents == ["player_0", "player_1"]
    obs, _ = probe.reset(seed=0)
    assert set(obs) == {"agent_id", "obs", "mask"} and any(obs["mask"])
    net = Net(state_shape=probe.observation_space["observation"].shape, action_shape=yutenv.NUM_ACTIONS, hidden_sizes=[64])
    policy = DiscreteQLearningPolicy(model=net, action_space=probe.action_space, eps_training=0.2)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), target_update_freq=50)
    marl = MultiAgentOffPolicyAlgorithm(algorithms=[dqn, dqn], env=probe)
    envs = DummyVectorEnv([lambda: pettingzoo_env(server=server, tier="compact") for _ in range(2)])
    buf = VectorReplayBuffer(4_000, 2)
    collector = Collector[CollectStats](marl, envs, buf, exploration_noise=True)
    try:
        envs.seed(3)
        collector.reset()
        stats = collector.collect(n_step=400)
        assert stats.n_collected_steps == 400 and stats.n_collected_episodes > 0
        seats = set(buf.sample(0)[0].obs.agent_id.tolist())
        assert seats == {"player_0", "player_1"}
        before = [p.detach().clone() for p in net.parameters()]
        result = marl.run_training(
            OffPolicyTrainerParams(
                training_collector=collector,
                max_epochs=1,
                epoch_num_steps=100,
                collection_step_num_env_steps=20,
                batch_size=32,
                update_step_num_gradient_steps_per_sample=0.5,
                show_progress=False,
                verbose=False,
                multi_agent_return_reduction=lambda rews: rews[:, 0],
            )
        )
        assert result.update_step > 0
        assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters())), "the shared network learned"
    finally:
        collector.close()
        probe.close()
