"""The kata's one-dimensional Yut (``rules="kata"``) through the real server: every front end."""

from __future__ import annotations

import warnings

import numpy as np
import yutenv.pettingzoo as ypz
from conftest import pick, pick_batch
from gymnasium.utils.env_checker import check_env

import yutenv


def test_make_kata_plays_whole_games() -> None:
    # yutenv.make starts (and close() stops) its own server.
    env = yutenv.make(rules="kata", opponent="greedy", render_mode="rgb_array")
    std = yutenv.make()
    try:
        assert env.rules == "kata"
        assert env.observation_space.shape == std.observation_space.shape, "every tier keeps its size"
        assert env.action_space.n == 180
        rng = np.random.default_rng(0)
        rewards = []
        for seed in range(5):
            obs, info = env.reset(seed=seed)
            done = False
            while not done:
                mask = info["action_mask"]
                # A line of 15 spaces: only stations 0..14 and entering can be sources.
                sources = {int(a) % 30 for a in np.flatnonzero(mask)}
                assert sources <= set(range(15)) | {29}
                obs, reward, term, trunc, info = env.step(pick(rng, mask))
                done = term or trunc
            rewards.append(reward)
            frame = env.render()
            assert frame is not None and frame.shape == (480, 720, 3)
        assert set(rewards) <= {-1.0, 1.0}
    finally:
        std.close()
        env.close()


def test_kata_checkers_and_front_ends(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, rules="kata,finish=wrap,obstacles=4:skip+9:back3", illegal="penalty")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)
    env.close()

    venv = yutenv.make(num_envs=4, server=srv, rules="kata", opponent="random")
    rng = np.random.default_rng(1)
    obs, info = venv.reset(seed=3)
    ended = 0
    for _ in range(300):
        obs, rew, term, trunc, info = venv.step(pick_batch(rng, info["action_mask"]))
        ended += int(np.sum(term | trunc))
    assert ended > 0
    venv.close()

    aec = ypz.env(server=srv, rules="kata,players=3")
    aec.reset(seed=2)
    for _ in aec.agent_iter(max_iter=2000):
        obs, _, term, trunc, _ = aec.last()
        aec.step(None if term or trunc else pick(rng, obs["action_mask"]))
    assert not aec.agents, "the game ran to its end"
    aec.close()
