"""yutenv.sb3: the SB3 VecEnv over one server-side batch, against real SB3 and sb3-contrib."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yutenv

pytest.importorskip("stable_baselines3", reason="the sb3 extra is not installed")
sb3_contrib = pytest.importorskip("sb3_contrib", reason="the sb3 extra is not installed")

from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecMonitor, VecNormalize  # noqa: E402
from yutenv.sb3 import YutSB3VecEnv, vec_env  # noqa: E402

# One torch thread: the server needs the other core, and two threads on a busy 2-core machine
# made the small updates below several times slower.
pytest.importorskip("torch").set_num_threads(1)


def first_legal(masks: np.ndarray) -> np.ndarray:
    return np.argmax(masks, axis=1).astype(np.int64)


@pytest.fixture(scope="module")
def server() -> Any:
    s = yutenv.Server()
    yield s
    s.close()


def test_is_a_vecenv_with_masks(server: yutenv.Server) -> None:
    venv = YutSB3VecEnv(4, server=server, opponent="greedy")
    try:
        assert isinstance(venv, VecEnv)
        assert venv.num_envs == 4
        assert venv.observation_space == venv.venv.single_observation_space
        assert is_masking_supported(venv)
        obs = venv.reset()
        assert obs.shape == (4, venv.observation_space.shape[0])
        assert obs.dtype == np.float32 and obs.flags.writeable
        masks = get_action_masks(venv)
        assert masks.shape == (4, yutenv.NUM_ACTIONS) and masks.dtype == np.bool_
        assert masks.any(axis=1).all()
        np.testing.assert_array_equal(masks, venv.action_masks())
    finally:
        venv.close()


def test_same_games_as_dummy_vec_env(server: yutenv.Server) -> None:
    """Seeded alike, SB3's DummyVecEnv of YutEnvs and YutSB3VecEnv play the same games: same
    observations, rewards, dones, masks, and the same terminal observations at the end of each
    env's first episode (later episodes are seeded differently by the two)."""
    n, seed = 6, 1234
    dummy = sb3_make_vec_env(yutenv.YutEnv, n_envs=n, seed=seed, env_kwargs={"server": server, "opponent": "random"})
    ours = vec_env(n, seed=seed, server=server, opponent="random")
    try:
        o1, o2 = dummy.reset(), ours.reset()
        np.testing.assert_array_equal(o1, o2)
        assert [i["seed"] for i in ours.reset_infos] == [seed + i for i in range(n)]
        first_done = np.zeros(n, dtype=bool)
        for _ in range(2000):
            m1, m2 = get_action_masks(dummy), get_action_masks(ours)
            live = ~first_done
            np.testing.assert_array_equal(m1[live], m2[live])
            # after its first game an env plays different games in the two: own legal actions
            o1, r1, d1, i1 = dummy.step(first_legal(m1))
            o2, r2, d2, i2 = ours.step(first_legal(m2))
            np.testing.assert_array_equal(d1[live], d2[live])
            np.testing.assert_array_equal(r1[live], r2[live])
            for i in np.flatnonzero(live):
                if d2[i]:
                    np.testing.assert_array_equal(i1[i]["terminal_observation"], i2[i]["terminal_observation"])
                    assert i2[i]["TimeLimit.truncated"] is False
                    assert abs(r2[i]) == 1.0
                    # the returned observation is the next episode's first one
                    assert not np.array_equal(o2[i], i2[i]["terminal_observation"])
                else:
                    np.testing.assert_array_equal(o1[i], o2[i])
                    assert "terminal_observation" not in i2[i]
            first_done |= d2
            if first_done.all():
                break
        assert first_done.all(), "every env should have finished a game"
    finally:
        dummy.close()
        ours.close()


def test_truncation_is_timelimit_truncated(server: yutenv.Server) -> None:
    venv = YutSB3VecEnv(3, server=server, max_decisions=5)
    try:
        venv.seed(7)
        venv.reset()
        ends = 0
        for step in range(1, 11):
            obs, rew, dones, infos = venv.step(first_legal(venv.action_masks()))
            for i in np.flatnonzero(dones):
                ends += 1
                term_obs = infos[i]["terminal_observation"]
                assert term_obs.shape == obs[i].shape
                # a game of 5 decisions cannot have ended: it was cut
                assert infos[i]["TimeLimit.truncated"] is True
            if step % 5 == 0:
                assert dones.all()
            else:
                assert not dones.any()
        assert ends == 6
    finally:
        venv.close()


def test_seed_reset_and_options(server: yutenv.Server) -> None:
    venv = YutSB3VecEnv(3, server=server)
    try:
        assert venv.seed(100) == [100, 101, 102]
        a = venv.reset()
        assert [i["seed"] for i in venv.reset_infos] == [100, 101, 102]
        b = venv.reset()  # seeds were used once, as SB3 specifies: new games now
        assert [i["seed"] for i in venv.reset_infos] != [100, 101, 102]
        venv.seed(100)
        np.testing.assert_array_equal(venv.reset(), a)
        assert not np.array_equal(a, b)
        venv.set_options({"start": 1})
        venv.reset()
        venv.set_options([{"start": 0}, {"start": 1}, {"start": 0}])
        with pytest.raises(ValueError, match="one set of reset options"):
            venv.reset()
    finally:
        venv.close()


def test_attrs_and_methods(server: yutenv.Server) -> None:
    venv = YutSB3VecEnv(3, server=server, opponent="greedy", render_mode="ansi")
    try:
        venv.reset()
        assert venv.render_mode == "ansi"
        assert venv.get_attr("opponent") == ["greedy"] * 3
        assert venv.get_attr("rules", indices=[0, 2]) == [venv.venv.rules] * 2
        assert venv.has_attr("action_masks") and not venv.has_attr("no_such_thing")
        masks = venv.env_method("action_masks", indices=[2])
        np.testing.assert_array_equal(masks[0], venv.action_masks()[2])
        text = venv.env_method("render", indices=1)
        assert isinstance(text[0], str) and text[0]
        venv.set_attr("note", "x", indices=[1])
        assert venv.get_attr("note", indices=1) == ["x"]
        with pytest.raises(AttributeError):
            venv.get_attr("note", indices=0)
        with pytest.raises(AttributeError, match="fixed"):
            venv.set_attr("opponent", "random")
        with pytest.raises(AttributeError, match="whole batch"):
            venv.env_method("reset")
        assert venv.env_is_wrapped(VecMonitor) == [False] * 3
        with pytest.warns(UserWarning, match="rgb_array"):
            assert venv.get_images() == [None] * 3  # not rgb_array: SB3's warning and no images
    finally:
        venv.close()
    venv.close()  # twice is fine


def test_dict_observations(server: yutenv.Server) -> None:
    venv = YutSB3VecEnv(2, server=server, obs_type="dict", max_decisions=3)
    try:
        obs = venv.reset()
        assert set(obs) == {"observation", "action_mask"}
        for _ in range(3):
            obs, _, dones, infos = venv.step(first_legal(venv.action_masks()))
        assert dones.all()
        assert set(infos[0]["terminal_observation"]) == {"observation", "action_mask"}
    finally:
        venv.close()


def test_single_env_passes_sb3_check_env(server: yutenv.Server) -> None:
    # SB3's checker samples unmasked actions: the penalty mode ends the episode instead of raising.
    env = yutenv.YutEnv(server=server, illegal="penalty")
    try:
        check_env(env, warn=True)
    finally:
        env.close()


def test_maskable_ppo_learns_for_real(server: yutenv.Server) -> None:
    """A real MaskablePPO run: rollouts, masked sampling, updates, VecMonitor episodes, VecNormalize."""
    venv = VecNormalize(VecMonitor(YutSB3VecEnv(16, server=server, opponent="random", seat="random")), norm_reward=False)
    try:
        model = MaskablePPO(
            "MlpPolicy",
            venv,
            n_steps=64,
            batch_size=256,
            n_epochs=2,
            policy_kwargs={"net_arch": [32]},
            seed=0,
            device="cpu",
        )
        model.learn(total_timesteps=3072)
        assert model.num_timesteps >= 3072
        assert len(model.ep_info_buffer) > 0  # finished games were seen through VecMonitor
        assert all(abs(ep["r"]) == 1.0 for ep in model.ep_info_buffer)
        # masked deterministic play through SB3's own evaluate loop
        from sb3_contrib.common.maskable.evaluation import evaluate_policy

        mean, _ = evaluate_policy(model, venv, n_eval_episodes=16, warn=False)
        assert -1.0 <= mean <= 1.0
    finally:
        venv.close()


def test_maskable_ppo_on_dummy_vec_env(server: yutenv.Server) -> None:
    """The other way: plain YutEnvs in SB3's DummyVecEnv (YutEnv.action_masks() serves sb3-contrib)."""
    venv = sb3_make_vec_env(yutenv.YutEnv, n_envs=4, seed=0, env_kwargs={"server": server, "seat": "random"})
    try:
        assert isinstance(venv, DummyVecEnv) and is_masking_supported(venv)
        model = MaskablePPO(
            "MlpPolicy", venv, n_steps=128, batch_size=128, n_epochs=1, policy_kwargs={"net_arch": [32]}, seed=0, device="cpu"
        )
        model.learn(total_timesteps=1024)
        assert model.num_timesteps >= 1024 and len(model.ep_info_buffer) > 0
    finally:
        venv.close()


def test_make_vec_env_is_the_deprecated_name_of_vec_env(server: yutenv.Server) -> None:
    # It shares its name with SB3's make_vec_env(env_id, n_envs, env_kwargs=...), not its
    # arguments: the old name warns, and SB3's way of calling it is a TypeError naming both.
    import yutenv.sb3 as ysb3

    with pytest.warns(DeprecationWarning, match="yutenv.sb3.vec_env"):
        venv = ysb3.make_vec_env(2, seed=0, server=server)
    assert isinstance(venv, YutSB3VecEnv) and venv.num_envs == 2
    venv.close()
    with pytest.raises(TypeError, match="not SB3's make_vec_env"):
        ysb3.make_vec_env("yutenv/Yut-v0", n_envs=2)  # type: ignore[arg-type]
