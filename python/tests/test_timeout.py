"""A stopped server cannot hang a trainer, and a dropped env does not keep the shared server."""

from __future__ import annotations

import gc
import os
import signal
import time
from typing import Any, Callable

import pytest
from conftest import first_legal, wait_dead

import yutenv
from yutenv import server as server_mod


def stop(pid: int) -> None:
    """SIGSTOP the process and wait until every one of its threads is stopped (the signal is
    delivered asynchronously: a thread still running could answer one more request)."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except FileNotFoundError:
                continue
        if states and all(st in ("T", "t") for st in states):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not stop")


def test_default_timeout_is_on() -> None:
    assert yutenv.EnvConfig().timeout == yutenv.DEFAULT_TIMEOUT > 0
    with yutenv.Server() as s:
        env = yutenv.YutEnv(server=s)
        assert env._session.client.timeout == yutenv.DEFAULT_TIMEOUT
        env.close()
        env = yutenv.YutEnv(server=s, timeout=None)  # None: wait forever, when asked for
        assert env._session.client.timeout is None
        env.close()


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "5", True])
def test_bad_timeouts_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="timeout"):
        yutenv.EnvConfig(timeout=bad)  # type: ignore[arg-type]


def test_sigstopped_server_raises_timeout_error() -> None:
    with yutenv.Server() as s:
        env = yutenv.YutEnv(server=s, timeout=0.5)
        _, info = env.reset(seed=1)
        stop(s.pid)
        try:
            with pytest.raises(yutenv.YutTimeoutError) as ei:
                env.step(first_legal(info["action_mask"]))
            err = ei.value
            assert isinstance(err, yutenv.YutEnvError) and isinstance(err, TimeoutError)
            assert err.method == "step" and err.timeout == 0.5
            msg = str(err)
            assert msg.startswith("step: ") and "0.5 s" in msg and f"pid {s.pid}, stopped" in msg
            # The connection was closed (a late reply would be mistaken for the next one's).
            with pytest.raises(yutenv.ClosedError):
                env.step(first_legal(info["action_mask"]))
        finally:
            os.kill(s.pid, signal.SIGCONT)
        env.close()
        # The server itself is fine once it runs again: a new env is served.
        again = yutenv.YutEnv(server=s, timeout=10)
        again.reset(seed=1)
        again.close()


def test_sigstopped_server_times_out_the_vector_env_too() -> None:
    with yutenv.Server() as s:
        venv = yutenv.YutVectorEnv(4, server=s, timeout=0.5)
        venv.reset(seed=1)
        stop(s.pid)
        try:
            with pytest.raises(yutenv.YutTimeoutError, match="^step: .*0.5 s"):
                venv.step(venv.action_masks().argmax(axis=1))
        finally:
            os.kill(s.pid, signal.SIGCONT)
        venv.close()


MAKERS: dict[str, Callable[[], Any]] = {
    "YutEnv": lambda: yutenv.make(),
    "YutVectorEnv": lambda: yutenv.make(num_envs=3),
    "AEC": lambda: yutenv.pettingzoo.raw_env(),
}


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_dropped_env_releases_the_shared_server(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A shared server of its own: another test file of this worker may still hold the process's
    # one (the state API's session does by design, a doc block's env until it is collected).
    monkeypatch.setattr(server_mod, "_shared", None)
    env = MAKERS[kind]()
    env.reset(seed=1)
    shared = env._session.server
    assert shared is server_mod._shared and shared.close_when_unused
    assert shared._refs == 1, "precondition: the env is the shared server's only user"
    pid = shared.pid
    del env  # no close()
    gc.collect()
    assert wait_dead(pid, 10), "the shared server outlived its only env, which was dropped without close()"
    assert not shared.alive()
