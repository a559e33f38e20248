"""EnvConfig: one set of options for every front end, validated in one place; what the server
already says (spaces, action count, frame limit) is read from it, not repeated."""

from __future__ import annotations

import dataclasses

import gymnasium
import numpy as np
import pytest

import yutenv
from yutenv import pettingzoo as ypz


@pytest.mark.parametrize(
    "bad, error",
    [
        ({"obs_type": "list"}, ValueError),
        ({"render_mode": "window"}, ValueError),
        ({"illegal": "ignore"}, ValueError),
        ({"reward": "score"}, ValueError),
        ({"seat": -1}, ValueError),
        ({"seat": "first"}, ValueError),
        ({"seat": True}, ValueError),
        ({"max_decisions": -3}, ValueError),
        ({"max_decisions": 2.5}, ValueError),
        ({"info": 1}, TypeError),
        ({"rules": 3}, TypeError),
        ({"opponent": None}, TypeError),
        ({"tier": 0}, TypeError),
        ({"server": "unix:/x"}, TypeError),
    ],
)
def test_bad_values_are_refused_before_connecting(bad: dict[str, object], error: type) -> None:
    name = next(iter(bad))
    with pytest.raises(error, match=name):
        yutenv.EnvConfig(**bad)  # type: ignore[arg-type]
    # every front end refuses the same way (no server is started for it)
    for make in (yutenv.YutEnv, lambda **kw: yutenv.YutVectorEnv(2, **kw), ypz.raw_env):
        with pytest.raises(error, match=name):
            make(**bad)


def test_unknown_option_is_named() -> None:
    with pytest.raises(TypeError, match="'oponent'"):
        yutenv.make(oponent="greedy")
    with pytest.raises(TypeError, match="'oponent'"):
        yutenv.YutVectorEnv(2, oponent="greedy")


def test_config_is_frozen_and_overridable() -> None:
    cfg = yutenv.EnvConfig(rules={"players": 3}, opponent="greedy")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.opponent = "random"  # type: ignore[misc]
    assert yutenv.EnvConfig.build(cfg) is cfg
    assert yutenv.EnvConfig.build(cfg, seat=1) == dataclasses.replace(cfg, seat=1)
    assert "secret" not in repr(yutenv.EnvConfig(token="secret"))


def test_one_config_for_every_front_end(srv: yutenv.Server) -> None:
    cfg = yutenv.EnvConfig(rules="players=3", tier="planes", reward="progress", server=srv)
    env = yutenv.make(config=cfg, opponent="greedy")
    venv = yutenv.make(4, cfg, seat=2)
    aec = ypz.raw_env(cfg)
    try:
        assert env.config == dataclasses.replace(cfg, opponent="greedy")
        assert venv.config.seat == 2 and venv.config.rules == "players=3"
        for e in (env, venv, aec):
            assert e.players == 3 and e.rules.startswith("players=3")
        assert env.tier == venv.tier == "planes"
        assert env.observation_space == venv.single_observation_space == aec.observation_space("player_0")["observation"]
        _, info = venv.reset(seed=1)
        assert (info["seat"] == 2).all()
    finally:
        env.close()
        venv.close()
        aec.close()
    with pytest.raises(ValueError, match="'opponent'"):
        ypz.raw_env(cfg, opponent="greedy")


def test_a_single_agent_config_makes_an_aec_env(srv: yutenv.Server) -> None:
    # python/README's Options example: one config for all three front ends, its opponent, seat
    # and info used by the single-agent ones only (keyword arguments are still refused above).
    cfg = yutenv.EnvConfig(rules="players=3", opponent="mc:20", seat=1, info=True, reward="progress", server=srv)
    aec = yutenv.pettingzoo.env(cfg)
    try:
        aec.reset(seed=0)
        assert aec.unwrapped.config == dataclasses.replace(cfg, opponent="random", seat=0, info=False)
        assert aec.possible_agents == ["player_0", "player_1", "player_2"]
    finally:
        aec.close()


def test_spaces_and_limits_come_from_the_server(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, tier="tactical")
    hello = env._session.hello
    assert env.action_space == gymnasium.spaces.Discrete(hello["actions"])
    assert env.num_actions == env._session.actions == hello["actions"]
    space = env._session.tiers["tactical"]
    assert env.observation_space.shape == (space["size"],)
    assert env._session.client.max_frame == hello["limits"]["max_frame"]
    env.close()


def test_gymnasium_make_passes_a_config(srv: yutenv.Server) -> None:
    env = gymnasium.make("yutenv/Yut-v0", config=yutenv.EnvConfig(server=srv, opponent="greedy"))
    assert env.unwrapped.opponent == "greedy"  # type: ignore[attr-defined]
    env.close()


def test_action_masks_through_gymnasium_make(srv: yutenv.Server) -> None:
    # gymnasium.make wraps the env (PassiveEnvChecker, OrderEnforcing): Gymnasium 1.x
    # wrappers do not forward attribute access, so env.action_masks() is not there. These are
    # the documented ways (python/README.md).
    env = gymnasium.make("yutenv/Yut-v0", server=srv, max_episode_steps=50)
    _, info = env.reset(seed=3)
    with pytest.raises(AttributeError):
        env.action_masks()  # type: ignore[attr-defined]
    m1 = env.unwrapped.action_masks()  # type: ignore[attr-defined]
    m2 = env.get_wrapper_attr("action_masks")()
    assert m1.dtype == np.bool_ and m1.shape == (180,) and m1.any()
    np.testing.assert_array_equal(m1, m2)
    np.testing.assert_array_equal(m1, info["action_mask"].astype(bool))
    _, _, _, _, info = env.step(int(np.flatnonzero(m1)[0]))
    np.testing.assert_array_equal(env.get_wrapper_attr("action_masks")(), info["action_mask"].astype(bool))
    env.close()
    # or in the observation itself
    env = gymnasium.make("yutenv/Yut-v0", server=srv, obs_type="dict")
    obs, info = env.reset(seed=3)
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
    env.close()


def test_numpy_scalars_are_their_python_values(srv: yutenv.Server) -> None:
    # A seat from rng.integers or a sweep's values are numpy scalars: taken as the Python
    # values everywhere a number is, in the config, in rules given as a map and in reset options.
    seat, players = np.int64(1), np.int64(3)
    cfg = yutenv.EnvConfig(seat=seat, max_decisions=np.int64(10), spin_us=np.int64(0), rules={"players": players})
    assert (cfg.seat, cfg.max_decisions, cfg.spin_us, cfg.rules) == (1, 10, 0, {"players": 3})
    assert type(cfg.seat) is int and type(cfg.rules["players"]) is int
    env = yutenv.make(config=cfg, server=srv, opponent="random")
    try:
        obs, info = env.reset(seed=np.uint64(5), options={"seat": np.int64(2), "start": np.int64(1)})
        assert info["seat"] == 2
        env.step(int(np.argmax(info["action_mask"])))
    finally:
        env.close()
    venv = yutenv.make(num_envs=2, server=srv, opponent="random")
    try:
        obs, info = venv.reset(seed=7, options={"start": np.int64(1)})
        assert obs.shape[0] == 2
    finally:
        venv.close()
