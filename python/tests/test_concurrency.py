"""Envs used concurrently from threads and from processes give the same games as alone."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading

import numpy as np
import pytest
from conftest import pick

import yutenv


def trajectory(
    seed: int, steps: int = 120, address: str | None = None, server: yutenv.Server | None = None, token: str | None = None
) -> bytes:
    """A digest-free record (all bytes) of a seeded game with seeded random legal actions."""
    env = yutenv.YutEnv(address=address, token=token, server=server, opponent="greedy")
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = [obs.tobytes()]
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(pick(rng, info["action_mask"]))
        out += [obs.tobytes(), np.float32(r).tobytes(), bytes([term, trunc])]
        if term or trunc:
            obs, info = env.reset()
            out.append(obs.tobytes())
    env.close()
    return b"".join(out)


def test_threads_share_a_server(srv: yutenv.Server) -> None:
    seeds = [1, 2, 3, 4, 5, 6]
    alone = {s: trajectory(s, server=srv) for s in seeds}
    results: dict[int, bytes] = {}
    errors: list[BaseException] = []

    def worker(s: int) -> None:
        try:
            results[s] = trajectory(s, server=srv)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert results == alone


def test_threads_default_shared_server() -> None:
    # each thread calls yutenv.make() with no server: they share the process-wide one
    results: dict[int, bytes] = {}
    errors: list[BaseException] = []

    def worker(s: int) -> None:
        try:
            results[s] = trajectory(s, steps=40)
        except BaseException as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert results == {s: trajectory(s, steps=40) for s in range(4)}


def _proc_worker(args: tuple[int, str | None, str | None]) -> tuple[int, bytes]:
    seed, address, token = args
    return os.getpid(), trajectory(seed, address=address, token=token)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_processes_own_servers(method: str) -> None:
    """Each worker process starts its own bundled server; results equal the in-process run."""
    ctx = mp.get_context(method)
    with ctx.Pool(2) as pool:
        out = pool.map(_proc_worker, [(s, None, None) for s in (11, 12, 13)])
    assert len({pid for pid, _ in out}) >= 1
    assert [t for _, t in out] == [trajectory(s) for s in (11, 12, 13)]


def test_processes_share_one_server_by_address(srv: yutenv.Server) -> None:
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        out = pool.map(_proc_worker, [(s, srv.address, srv.token) for s in (21, 22)])
    assert [t for _, t in out] == [trajectory(s, server=srv) for s in (21, 22)]


def _use_inherited(env: yutenv.YutEnv, q: mp.Queue[str]) -> None:
    try:
        env.reset(seed=1)
        q.put("no error")
    except yutenv.YutEnvError as e:
        q.put(str(e))


def test_forked_child_cannot_use_parent_env(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv)
    env.reset(seed=1)
    ctx = mp.get_context("fork")
    q: mp.Queue[str] = ctx.Queue()
    p = ctx.Process(target=_use_inherited, args=(env, q))
    p.start()
    msg = q.get(timeout=30)
    p.join(30)
    assert "forked child" in msg
    # the parent's env and server are untouched by the child's exit
    assert srv.alive()
    env.reset(seed=2)
    env.close()
