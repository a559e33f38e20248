"""Copies and saved states: deepcopy/pickle of YutEnv give a new env in the same state that
continues exactly like the original; load_state on every front end; clear errors otherwise."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest
from conftest import pick

import yutenv
from yutenv import pettingzoo as ypz


def run(env: yutenv.YutEnv, rng: np.random.Generator, steps: int) -> list[tuple[bytes, float, bool, bool, bytes]]:
    """Random legal steps (resetting without a seed when an episode ends), as bytes."""
    out = []
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(pick(rng, env.action_masks()))
        out.append((obs.tobytes(), r, term, trunc, info["action_mask"].tobytes()))
        if term or trunc:
            obs, info = env.reset()
            out.append((obs.tobytes(), 0.0, False, False, info["action_mask"].tobytes()))
    return out


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("opts", [{"opponent": "random"}, {"opponent": "greedy", "seat": "random", "max_decisions": 30}])
def test_copy_continues_exactly(srv: yutenv.Server, how: str, opts: dict[str, object]) -> None:
    env = yutenv.YutEnv(server=srv, **opts)
    env.reset(seed=21)
    run(env, np.random.default_rng(5), 7)  # mid-game, opponents' generators advanced
    twin = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    try:
        assert isinstance(twin, yutenv.YutEnv) and twin is not env
        assert twin._session is not env._session  # its own server session
        assert twin.save_state() == env.save_state()
        np.testing.assert_array_equal(twin.action_masks(), env.action_masks())
        if how == "deepcopy":
            assert twin.config == env.config and twin.config.server is srv
        else:  # another process could not use this Server object: it connects by address
            assert twin.config == dataclasses.replace(env.config, address=srv.address, token=srv.token)
        assert twin.seat == env.seat
        # Same actions, same results, through the end of this game and later seedless resets
        # (the copy's np_random continues the original's seed stream).
        a, b = run(env, np.random.default_rng(9), 300), run(twin, np.random.default_rng(9), 300)
        assert a == b
        assert sum(t[2] or t[3] for t in a) >= 2, "expected episodes to end and restart"
    finally:
        twin.close()
        env.close()


def test_copy_of_a_fresh_and_of_an_ended_env(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv)
    fresh = copy.deepcopy(env)  # never reset: a new env, still to reset
    with pytest.raises(yutenv.ResetNeeded):
        fresh.step(0)
    fresh.close()
    env.reset(seed=2)
    while True:
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        if term or trunc:
            break
    ended = copy.deepcopy(env)
    with pytest.raises(yutenv.ResetNeeded):
        ended.step(0)
    o1, _ = env.reset()
    o2, _ = ended.reset()
    np.testing.assert_array_equal(o1, o2)
    ended.close()
    env.close()
    with pytest.raises(yutenv.ClosedError, match="closed YutEnv cannot be copied"):
        copy.deepcopy(env)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("kwargs", ["server", "config"])
def test_copy_through_gymnasium_make(srv: yutenv.Server, how: str, kwargs: str) -> None:
    import gymnasium

    if kwargs == "server":
        env = gymnasium.make("yutenv/Yut-v0", server=srv)
    else:
        env = gymnasium.make("yutenv/Yut-v0", config=yutenv.EnvConfig(server=srv))
    env.reset(seed=4)
    twin = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    assert twin.unwrapped.save_state() == env.unwrapped.save_state()  # type: ignore[attr-defined]
    twin.close()
    env.close()


def test_load_state_round_trip(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, opponent="greedy")
    other = yutenv.YutEnv(server=srv, opponent="greedy")
    obs, info = env.reset(seed=13)
    rng = np.random.default_rng(2)
    run(env, rng, 5)
    state = env.save_state()
    obs2, info2 = other.load_state(state)  # never reset: reset first, then loaded
    assert other.save_state() == state
    np.testing.assert_array_equal(info2["action_mask"], env.action_masks())
    np.testing.assert_array_equal(other.action_masks(), env.action_masks())
    assert obs2 in other.observation_space
    # Into the same env, after it moved on: back to the saved position.
    run(env, rng, 3)
    env.load_state(state)
    assert env.save_state() == state
    env.close()
    other.close()


def test_load_state_refuses_damaged_states(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv)
    env.reset(seed=3)
    good = env.save_state()
    mask = env.action_masks().copy()
    for bad in (b"", b"\x00" * 8, good[: len(good) // 2], bytes(b ^ 0x5A for b in good)):
        with pytest.raises(yutenv.BadStateError) as ei:
            env.load_state(bad)
        assert isinstance(ei.value, yutenv.YutEnvError) and ei.value.code == "bad_state"
    with pytest.raises(TypeError, match="bytes of save_state"):
        env.load_state("not bytes")  # type: ignore[arg-type]
    # a state of other rules
    three = yutenv.YutEnv(server=srv, rules="players=3")
    three.reset(seed=1)
    with pytest.raises(yutenv.BadStateError, match="rules"):
        env.load_state(three.save_state())
    three.close()
    # nothing changed
    assert env.save_state() == good
    np.testing.assert_array_equal(env.action_masks(), mask)
    env.close()


def test_vector_env_load_state_and_copy_error(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(3, server=srv)
    v.reset(seed=1)
    s0 = v.save_state(0)
    assert v.save_state(1) != s0
    obs, info = v.load_state(2, s0)
    assert v.save_state(2) == s0
    np.testing.assert_array_equal(v.action_masks()[2], v.action_masks()[0])
    np.testing.assert_array_equal(info["action_mask"], v.action_masks()[0].astype(np.int8))
    v.step(v.action_masks().argmax(axis=1))  # still steps
    with pytest.raises(yutenv.BadStateError):
        v.load_state(1, b"junk")
    with pytest.raises(IndexError):
        v.save_state(3)
    for f in (copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match=r"YutVectorEnv\(env.num_envs, env.config\)"):
            f(v)
    v.close()


def test_aec_env_load_state_and_copy_error(srv: yutenv.Server) -> None:
    e = ypz.raw_env(server=srv, rules="players=3")
    e.reset(seed=5)
    for _ in range(10):
        e.step(int(np.flatnonzero(e.action_mask())[0]))
    state = e.save_state()
    sel = e.agent_selection
    f = ypz.raw_env(server=srv, rules="players=3")
    f.reset(seed=99)
    f.load_state(state)
    assert f.save_state() == state and f.agent_selection == sel
    np.testing.assert_array_equal(f.action_mask(), e.action_mask())
    with pytest.raises(yutenv.BadStateError):
        f.load_state(b"\x01\x02")
    for fn in (copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="save_state"):
            fn(e)
    e.close()
    f.close()


def _continue_in_child(blob: bytes, action_seed: int, steps: int) -> list[tuple[bytes, float, bool, bool, bytes]]:
    env = pickle.loads(blob)
    try:
        return run(env, np.random.default_rng(action_seed), steps)
    finally:
        env.close()


def test_pickled_env_continues_in_another_process(srv: yutenv.Server) -> None:
    import multiprocessing

    env = yutenv.YutEnv(server=srv, opponent="random")
    env.reset(seed=77)
    run(env, np.random.default_rng(1), 5)
    blob = pickle.dumps(env)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        theirs = pool.apply(_continue_in_child, (blob, 3, 120))
    assert run(env, np.random.default_rng(3), 120) == theirs
    env.close()
