"""YutEnv inside Gymnasium's own vectorizers: make_vec (sync, async) and AsyncVectorEnv (fork,
spawn), through many autoresets. Every info value must fit their info arrays: a game seed is
uniform over 0..2**64-1, which a Python int would overflow in Gymnasium's int64 arrays."""

from __future__ import annotations

import functools
from typing import Any

import gymnasium
import numpy as np
import pytest

import yutenv

STEPS = 60
MAX_DECISIONS = 6  # short episodes: many autoresets in few steps


def drive(envs: gymnasium.vector.VectorEnv[Any, Any, Any], steps: int = STEPS) -> dict[str, Any]:
    """Step ``envs`` with a random masked policy; return what was seen."""
    rng = np.random.default_rng(0)
    n = envs.num_envs
    obs, infos = envs.reset(seed=1)
    assert obs.shape == (n, *envs.single_observation_space.shape)
    seeds: list[int] = []
    ends = np.zeros(n, dtype=np.int64)
    for _ in range(steps):
        masks = infos["action_mask"]
        assert masks.shape == (n, 180) and masks.dtype == np.int8
        actions = np.zeros(n, dtype=np.int64)
        for i in range(n):
            legal = np.flatnonzero(masks[i])
            if len(legal):  # a terminal row has no legal action; the next step resets it
                actions[i] = legal[rng.integers(len(legal))]
        obs, rew, term, trunc, infos = envs.step(actions)
        assert obs in envs.observation_space
        ends += term | trunc
        if "seed" in infos:
            assert infos["seed"].dtype == np.uint64
            seeds += [int(s) for s in infos["seed"][infos["_seed"]]]
        for k, v in infos.items():
            assert isinstance(v, (np.ndarray, dict)), f"info {k!r} is {type(v)}"
    return {"seeds": seeds, "ends": ends}


def check(seen: dict[str, Any]) -> None:
    assert (seen["ends"] >= 3).all(), f"expected several autoresets per env, got {seen['ends']}"
    # Autoresets draw their game seed from np_random: about half of them are >= 2**63, which
    # is what overflowed before.
    assert any(s >= 2**63 for s in seen["seeds"]), seen["seeds"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec(srv: yutenv.Server, mode: str) -> None:
    envs = gymnasium.make_vec(
        "yutenv/Yut-v0",
        num_envs=2,
        vectorization_mode=mode,
        address=srv.address,  # async workers are other processes: they connect by address
        token=srv.token,  # (None on a Unix socket; the server's secret over TCP)
        max_decisions=MAX_DECISIONS,
        info=True,
    )
    try:
        check(drive(envs))
    finally:
        envs.close()


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_async_vector_env(srv: yutenv.Server, context: str) -> None:
    if context == "fork":
        # Each forked worker starts its own shared server (the parent's is not usable there).
        fn = functools.partial(yutenv.YutEnv, max_decisions=MAX_DECISIONS)
    else:
        fn = functools.partial(yutenv.YutEnv, address=srv.address, token=srv.token, max_decisions=MAX_DECISIONS, info=True)
    envs = gymnasium.vector.AsyncVectorEnv([fn, fn], context=context)
    try:
        check(drive(envs))
    finally:
        envs.close()


def test_sync_vector_env_same_step_autoreset(srv: yutenv.Server) -> None:
    fn = functools.partial(yutenv.YutEnv, server=srv, max_decisions=MAX_DECISIONS, info=True)
    envs = gymnasium.vector.SyncVectorEnv([fn, fn], autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    try:
        seen = drive(envs)
        check(seen)
    finally:
        envs.close()
