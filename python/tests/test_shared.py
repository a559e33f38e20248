"""The shared-memory data plane (docs/PROTOCOL.md, ``share``): the same bytes as the socket, its
doorbell both ways (the server's poll and the socket ring), its faults (a killed server, a killed
client, garbage actions, another connection) and what is left behind (nothing)."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from contextlib import closing
from typing import Any

import gymnasium
import numpy as np
import pytest
from conftest import pick_batch, wait_dead

import yutenv
from yutenv._protocol import TIERS, VARIANTS
from yutenv.connection.session import Session
from yutenv.envs.batch import Batch
from yutenv.envs.shared import STEP, Region

pytestmark = pytest.mark.skipif(not sys.platform.startswith(("linux", "darwin")), reason="shared memory: Linux and macOS")


@pytest.fixture(scope="module")
def srv() -> Any:
    """A server on a Unix socket, whatever transport the suite's own servers use."""
    s = yutenv.Server(transport="unix")
    yield s
    s.close()


ROWS = ("obs", "mask", "reward", "terminated", "truncated", "to_move", "final_obs", "final_mask", "final_to_move")


def _batch(srv: yutenv.Server, transport: str, spin_us: int = 0, **make: Any) -> Batch:
    s = Session(address=srv.address, server=srv)
    return Batch(s, transport=transport, spin_us=spin_us, **make)


def _rows(r: Any) -> dict[str, bytes]:
    return {k: bytes(np.ascontiguousarray(getattr(r, k))) for k in ROWS if getattr(r, k, None) is not None}


def _play(b: Batch, seed: int, steps: int, info: bool) -> list[Any]:
    """Every row of a reset and ``steps`` steps of random legal actions, as bytes."""
    rng = np.random.default_rng(seed)
    r = b.reset(seed=seed, info=info)
    out: list[Any] = [_rows(r), r.info]
    mask = r.mask.copy()
    for _ in range(steps):
        acts = pick_batch(rng, mask)
        s = b.step(acts, info=info)
        out += [_rows(s), s.info]
        mask = s.mask.copy()
    return out


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_same_bytes_as_the_socket_for_every_variant_and_tier(srv: yutenv.Server, variant: str) -> None:
    # Every tier, both modes, both autoresets; the region's poll (spin, no info) and its ring
    # (info asked for) each against the socket.
    for i, tier in enumerate(TIERS):
        mode, autoreset = ("single", "same_step") if i % 2 == 0 else ("multi", "next_step")
        make = {"n": 3, "rules": VARIANTS[variant], "tier": tier, "mode": mode, "autoreset": autoreset}
        if mode == "single":
            make["opponent"] = "greedy"
        for info, spin in ((False, 200), (True, 0)):
            sock, shm = _batch(srv, "socket", **make), _batch(srv, "shared", spin, **make)
            try:
                assert sock.region is None and shm.region is not None
                assert _play(shm, 11 + i, 25, info) == _play(sock, 11 + i, 25, info), (variant, tier, info)
            finally:
                for b in (sock, shm):
                    b.close()
                    b.session.close()


def test_a_mixture_with_a_python_policy_and_opponent_step(srv: yutenv.Server) -> None:
    def first(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.argmax(mask, axis=1)

    make = {"n": 4, "mode": "single", "seat": 1, "opponent": [first, "greedy"]}
    sock, shm = _batch(srv, "socket", **make), _batch(srv, "shared", 100, **make)
    try:
        assert _play(shm, 5, 40, False) == _play(sock, 5, 40, False)
    finally:
        for b in (sock, shm):
            b.close()
            b.session.close()


def test_the_poll_serves_without_the_socket(srv: yutenv.Server) -> None:
    b = _batch(srv, "shared", 2000, n=1, opponent="random")
    try:
        assert b.region is not None and b.region.spin_us == 2000
        r = b.reset(seed=1)
        rings = 0
        send = b.session.client.send_packed

        def counted(*a: Any) -> None:
            nonlocal rings
            rings += 1
            send(*a)

        b.session.client.send_packed = counted  # type: ignore[method-assign]
        mask = r.mask.copy()
        # Step until the poll serves one: how many it serves depends on the machine's load (on
        # a loaded machine the server's thread may miss whole stretches of the client's steps).
        steps, deadline = 0, time.monotonic() + 30
        while steps < 200 or (rings == steps and time.monotonic() < deadline):
            s = b.step(np.array([np.flatnonzero(mask[0])[0] if mask[0].any() else 0]))
            mask = s.mask.copy()
            steps += 1
        if b.region.poll:  # x86: the poll serves steps
            assert rings < steps, f"all {steps} steps rang the socket"
    finally:
        b.close()
        b.session.close()


def test_views_are_overwritten_by_the_next_step_copies_are_not(srv: yutenv.Server) -> None:
    with closing(yutenv.YutVectorEnv(4, server=srv, copy=False)) as views, closing(yutenv.YutVectorEnv(4, server=srv)) as copies:
        for v in (views, copies):
            obs, info = v.reset(seed=3)
            kept, before = obs, obs.copy()
            rng = np.random.default_rng(0)
            for _ in range(5):
                obs, *_, info = v.step(pick_batch(rng, info["action_mask"]))
            if v is views:
                assert not obs.flags.writeable and np.shares_memory(obs, kept)
                assert not np.array_equal(kept, before), "a view shows the newest rows"
            else:
                assert obs.flags.writeable and np.array_equal(kept, before), "a copy keeps its rows"


def test_garbage_actions_get_an_error_naming_the_env_and_the_env_goes_on(srv: yutenv.Server) -> None:
    b = _batch(srv, "shared", 500, n=3, opponent="random")
    try:
        r = b.reset(seed=2)
        assert b.region is not None
        for garbage in (np.int32(-7), np.int32(2**31 - 1), np.int32(180)):
            b.region.actions[:] = 0
            b.region.actions[1] = garbage
            with pytest.raises(yutenv.YutEnvError, match=r"actions\[1\] = .* out of range"):
                b.region.request(STEP)
        # The env is intact: a legal step still works, and the rows are the socket's.
        acts = np.array([np.flatnonzero(m)[0] for m in r.mask], dtype=np.int32)
        b.step(acts)
    finally:
        b.close()
        b.session.close()


def test_a_ring_with_a_stale_seq_or_actions_is_refused(srv: yutenv.Server) -> None:
    b = _batch(srv, "shared", 0, n=1, opponent="random")
    try:
        b.reset(seed=1)
        c = b.session.client
        with pytest.raises(yutenv.YutEnvError, match="params.seq"):
            c.call("step", {"handle": b.handle, "shared": True, "seq": 12345})
        with pytest.raises(yutenv.YutEnvError, match="takes its actions from the region"):
            c.call("step", {"handle": b.handle, "shared": True, "seq": 0, "actions": b"\0\0\0\0"})
        with pytest.raises(yutenv.YutEnvError, match="already shared"):
            Region(c, b.handle)
    finally:
        b.close()
        b.session.close()


def test_another_connection_cannot_share_a_handle_it_does_not_own(srv: yutenv.Server) -> None:
    b = _batch(srv, "socket", n=2)
    other = Session(address=srv.address, server=srv)
    try:
        with pytest.raises(yutenv.YutEnvError, match="no handle"):
            Region(other.client, b.handle)
    finally:
        other.close()
        b.close()
        b.session.close()


def test_tcp_keeps_the_socket_and_shared_is_refused_there() -> None:
    with yutenv.Server(transport="tcp") as s:
        with yutenv.YutEnv(server=s) as env:
            assert env._batch.region is None  # auto: the socket path
            env.reset(seed=1)
        with pytest.raises(yutenv.YutEnvError, match="Unix socket"):
            yutenv.YutEnv(server=s, transport="shared")


def _shared_objects() -> set[str]:
    """Every named shared-memory object or temporary file a region could have left."""
    names: set[str] = set()
    for d in ("/dev/shm", os.environ.get("TMPDIR", "/tmp")):
        if os.path.isdir(d):
            names |= {f"{d}/{n}" for n in os.listdir(d) if "yutenv-shared" in n}
    return names


def _mapped_regions(pid: int) -> int:
    """The server's mappings of regions (memfds named yutenv-shared); -1 where /proc is absent."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            return sum("yutenv-shared" in line for line in f)
    except FileNotFoundError:
        return -1


def test_a_killed_client_leaves_nothing_behind() -> None:
    before = _shared_objects()
    with yutenv.Server(transport="unix") as s:
        child = textwrap.dedent(f"""
            import sys, yutenv
            v = yutenv.YutVectorEnv(16, address={s.address!r}, transport="shared")
            v.reset(seed=1)
            print("ready", flush=True)
            sys.stdin.read()
        """)
        p = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
            if _mapped_regions(s.pid) >= 0:
                assert _mapped_regions(s.pid) == 1
            p.send_signal(signal.SIGKILL)
            p.wait(10)
        finally:
            p.kill()
            p.wait(10)
            for f in (p.stdin, p.stdout):
                if f is not None:
                    f.close()
        # The server drops the region with the connection, and is still serving.
        deadline = time.monotonic() + 10
        while _mapped_regions(s.pid) > 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _mapped_regions(s.pid) <= 0
        with yutenv.YutEnv(server=s) as env:
            env.reset(seed=1)
    assert _shared_objects() == before


@pytest.mark.parametrize("spin_us", [0, 2000])
def test_a_killed_server_is_a_clear_error_not_a_hang(spin_us: int) -> None:
    before = _shared_objects()
    s = yutenv.Server(transport="unix")
    b = _batch(s, "shared", spin_us, n=2, opponent="random")
    b.session.client.timeout = 10.0
    r = b.reset(seed=1)
    os.kill(s.pid, signal.SIGKILL)
    assert wait_dead(s.pid)
    acts = np.array([np.flatnonzero(m)[0] for m in r.mask], dtype=np.int32)
    t0 = time.monotonic()
    with pytest.raises(yutenv.ServerDiedError):
        b.step(acts)
    assert time.monotonic() - t0 < 10, "the error came within the timeout"
    b.close()
    b.session.close()
    s.close()
    assert _shared_objects() == before


def test_fork_spawn_pickle_and_deepcopy_keep_their_rules(srv: yutenv.Server) -> None:
    # Gymnasium's AsyncVectorEnv makes each env in its worker (spawn and fork): each worker's
    # env shares its own region with the server.
    address = srv.address
    for ctx in ("spawn", "fork"):
        with closing(
            gymnasium.vector.AsyncVectorEnv([lambda: yutenv.YutEnv(opponent="random", address=address)] * 2, context=ctx)
        ) as v:
            obs, info = v.reset(seed=1)
            obs, *_ = v.step(np.array([np.flatnonzero(m)[0] for m in info["action_mask"]]))
            assert obs.shape[0] == 2
    env = yutenv.YutEnv(server=srv)
    try:
        env.reset(seed=1)
        assert env._batch.region is not None
        clone = pickle.loads(pickle.dumps(env))  # a YutEnv pickles as its config and history
        clone.close()
    finally:
        env.close()


def test_a_forked_child_cannot_step_the_parents_region(srv: yutenv.Server) -> None:
    # The child inherits the map; a step from it would drive the parent's games unseen.
    env = yutenv.YutEnv(server=srv)
    obs, info = env.reset(seed=1)
    assert env._batch.region is not None
    a = int(np.flatnonzero(info["action_mask"])[0])
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what a step does, then leave at once
        os.close(r)
        try:
            env.step(a)
            msg = b"stepped"
        except yutenv.YutEnvError as e:
            msg = str(e).encode()[:200]
        os.write(w, msg)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        said = f.read().decode()
    os.waitpid(pid, 0)
    assert "forked child" in said
    env.step(a)  # the parent's env is untouched and goes on
    env.close()


def test_env_pool_returns_groups_as_they_are_ready(srv: yutenv.Server) -> None:
    with yutenv.YutEnvPool(8, batch_size=4, server=srv, opponent="random") as pool:
        pool.async_reset(seed=1)
        seen: list[int] = []
        for _ in range(20):
            obs, rew, term, trunc, info = pool.recv()
            assert obs.shape == (4, pool.obs_size) and info["action_mask"].shape == (4, pool.num_actions)
            seen.append(int(info["env_id"][0]))
            pool.send(np.argmax(info["action_mask"], axis=1).astype(np.int32), info["env_id"])
        assert set(seen) == {0, 4}
        with pytest.raises(ValueError, match="env_id"):
            pool.send(np.zeros(4, np.int32), np.array([1, 2, 3, 4]))
        obs, info = pool.reset(seed=2)
        assert obs.shape == (8, pool.obs_size) and list(info["env_id"]) == list(range(8))


@pytest.mark.parametrize("transport", ["auto", "socket"])
def test_env_pool_serves_ready_groups_in_the_order_they_were_sent(srv: yutenv.Server, transport: str) -> None:
    # With every group's step done, recv returns the earliest sent first (EnvPool's order), not
    # the lowest group: a policy slower than the server would otherwise starve the later groups.
    with yutenv.YutEnvPool(12, batch_size=4, server=srv, opponent="random", transport=transport) as pool:
        pool.async_reset(seed=3)
        got = {}
        for _ in range(3):
            obs, rew, term, trunc, info = pool.recv()
            got[int(info["env_id"][0]) // 4] = (info["env_id"], np.argmax(info["action_mask"], axis=1).astype(np.int32))
        for order in ([2, 0, 1], [1, 2, 0]):
            for g in order:
                ids, acts = got[g]
                pool.send(acts, ids)
            time.sleep(0.2)  # every group is served by now: only the order of sending decides
            served = []
            for _ in order:
                obs, rew, term, trunc, info = pool.recv()
                g = int(info["env_id"][0]) // 4
                served.append(g)
                got[g] = (info["env_id"], np.argmax(info["action_mask"], axis=1).astype(np.int32))
            assert served == order


def test_env_pool_plays_the_vector_envs_games(srv: yutenv.Server) -> None:
    # One group per game seed block: the pool's games are the vector env's, step for step.
    with (
        yutenv.YutEnvPool(4, batch_size=2, server=srv, opponent="greedy") as pool,
        closing(yutenv.YutVectorEnv(2, server=srv, opponent="greedy")) as v,
    ):
        pool.async_reset(seed=10)
        vo, vi = v.reset(seed=12)
        for _ in range(30):
            got = None
            while got is None:
                obs, rew, term, trunc, info = pool.recv()
                acts = np.argmax(info["action_mask"], axis=1).astype(np.int32)
                if info["env_id"][0] == 2:
                    got = (obs, rew, info["action_mask"])
                pool.send(acts, info["env_id"])
            assert np.array_equal(got[0], vo) and np.array_equal(got[2], vi["action_mask"])
            vo, vr, *_, vi = v.step(np.argmax(vi["action_mask"], axis=1).astype(np.int32))


def test_step_async_overlaps_and_step_wait_collects(srv: yutenv.Server) -> None:
    with closing(yutenv.YutVectorEnv(8, server=srv)) as a, closing(yutenv.YutVectorEnv(8, server=srv, transport="socket")) as b:
        oa, ia = a.reset(seed=4)
        ob, ib = b.reset(seed=4)
        for _ in range(10):
            acts = np.argmax(ia["action_mask"], axis=1).astype(np.int32)
            a.step_async(acts)
            b.step_async(acts)
            with pytest.raises(yutenv.YutEnvError, match="not received"):
                a.step_async(acts)
            oa, ra, *_, ia = a.step_wait()
            ob, rb, *_, ib = b.step_wait()
            assert np.array_equal(oa, ob) and np.array_equal(ra, rb)


def test_no_region_file_while_envs_share(srv: yutenv.Server) -> None:
    # Linux shares a memfd (no file anywhere); elsewhere a 0600 file removed at once.
    with closing(yutenv.YutVectorEnv(2, server=srv)) as v:
        v.reset(seed=1)
        assert v._batch.region is not None
        assert not _shared_objects()


def test_a_client_cannot_shrink_its_region_and_crash_a_shared_server(srv: yutenv.Server) -> None:
    """The region a client maps is sealed to its size (Linux): a client that tries to shrink it
    gets EPERM, and the server's writes into it go on; where a region cannot be sealed, the write
    that meets the shrunk region ends that client's connection only. Either way the other client on
    the same server goes on stepping."""
    bad = Session(address=srv.address, server=srv)
    other = _batch(srv, "shared", n=4, opponent="greedy")
    try:
        h = bad.client.call("make", {"n": 4, "opponent": "greedy"})["handle"]
        _, fd = bad.client.call_fd("share", {"handle": h})
        try:
            os.ftruncate(fd, 0)
        except PermissionError:
            shrunk = False
        else:
            shrunk = True
        finally:
            os.close(fd)
        assert shrunk == (not sys.platform.startswith("linux")), "Linux seals the region's size"
        if shrunk:
            with pytest.raises(yutenv.YutEnvError, match="memory fault"):
                bad.client.call("reset", {"handle": h, "shared": True})
        else:
            bad.client.call("reset", {"handle": h, "shared": True})
        rng = np.random.default_rng(0)
        mask = other.reset(seed=3).mask.copy()
        for _ in range(50):
            mask = other.step(pick_batch(rng, mask)).mask.copy()
        assert srv.alive()
    finally:
        bad.close()
        other.close()
        other.session.close()
