"""The bundled server's lifecycle: start, stop, never left behind, death, addresses, tokens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import pid_alive, wait_dead

import yutenv
from yutenv import server as server_mod


def run_py(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("YUTENV_ADDRESS", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout, env=env)


def test_bundled_binary_is_installed() -> None:
    p = yutenv.binary_path()
    assert p.is_file() and os.access(p, os.X_OK)
    assert p.parent.name == "_bin" or "YUTENV_BINARY" in os.environ
    out = subprocess.run([str(p), "version"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0 and "yutenv" in out.stdout


def test_start_and_close_removes_everything() -> None:
    s = yutenv.Server(transport="unix")
    assert s.alive() and s.ready["listening"] == s.address
    assert s.socket_path is not None and Path(s.socket_path).exists()
    assert oct(os.stat(os.path.dirname(s.socket_path)).st_mode & 0o777) == "0o700"
    with yutenv.Session(server=s) as sess:
        assert sess.hello["actions"] == yutenv.core.NUM_ACTIONS == 180
        # nothing hand-written in the package disagrees with the server's layout and sizes
        assert sess.hello["obs_layout"] == yutenv.core.OBS_LAYOUT
        assert {t["tier"]: t["size"] for t in sess.hello["tiers"]} == yutenv.core.TIER_SIZES
        sess.ping()
    s.close()
    assert not s.alive()
    assert wait_dead(s.pid, 5)
    assert not os.path.exists(os.path.dirname(s.socket_path))
    s.close()  # idempotent


def test_shared_server_lives_as_long_as_its_envs() -> None:
    a = yutenv.make()
    b = yutenv.make()
    sa, sb = a._session.server, b._session.server
    assert sa is sb and sa is not None and sa.close_when_unused
    a.close()
    assert sa.alive()
    b.reset(seed=1)
    b.close()
    assert wait_dead(sa.pid, 5)
    c = yutenv.make()  # a new shared server after the old one stopped
    assert c._session.server is not sa and c._session.server.alive()
    c.close()


def test_stopped_at_interpreter_exit_without_close() -> None:
    out = run_py(
        """
        import yutenv
        env = yutenv.make()
        env.reset(seed=1)
        mine = yutenv.Server()
        print(env._session.server.pid, mine.pid, flush=True)
        # no close(): atexit must stop both
        """
    )
    assert out.returncode == 0, out.stderr
    pids = [int(x) for x in out.stdout.split()]
    for pid in pids:
        assert wait_dead(pid, 10), f"server {pid} outlived its interpreter"


def test_stopped_when_parent_is_sigkilled() -> None:
    code = textwrap.dedent(
        """
        import sys, time, yutenv
        env = yutenv.make()
        env.reset(seed=1)
        print(env._session.server.pid, flush=True)
        time.sleep(60)
        """
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        pid = int(p.stdout.readline())
        assert pid_alive(pid)
        p.send_signal(signal.SIGKILL)  # no atexit, no finalizers: only the stdin pipe closes
        p.wait(10)
        assert wait_dead(pid, 10), "server survived a kill -9 of its parent"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if p.stdout is not None:
            p.stdout.close()


def test_socket_folder_removed_when_parent_is_sigkilled() -> None:
    """The private folder of a Unix-socket server (``/tmp/yutenv-XXXX``) is removed by the server
    itself after a kill -9 of the process that made it (which runs no finalizer)."""
    code = textwrap.dedent(
        """
        import os, sys, time, yutenv
        s = yutenv.Server(transport="unix")
        print(s.pid, os.path.dirname(s.socket_path), flush=True)
        time.sleep(60)
        """
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        pid_text, folder = p.stdout.readline().split()
        assert os.path.isdir(folder) and os.listdir(folder) == ["yutenv.sock"]
        p.send_signal(signal.SIGKILL)
        p.wait(10)
        assert wait_dead(int(pid_text), 20), "server survived a kill -9 of its parent"
        deadline = time.monotonic() + 20
        while os.path.exists(folder) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not os.path.exists(folder), f"{folder} left behind"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if p.stdout is not None:
            p.stdout.close()


def test_server_death_raises_with_log_lines() -> None:
    s = yutenv.Server(args=["--log-level", "debug"])
    env = yutenv.YutEnv(server=s)
    obs, info = env.reset(seed=1)
    os.kill(s.pid, signal.SIGKILL)
    assert wait_dead(s.pid, 5)
    with pytest.raises(yutenv.ServerDiedError) as ei:
        env.step(int(np.flatnonzero(info["action_mask"])[0]))
    err = ei.value
    assert err.returncode == -signal.SIGKILL
    assert "died" in str(err) and "signal 9" in str(err)
    assert err.log, "expected the server's last log lines"
    assert "last server log lines" in str(err)
    # the env stays broken with a clear error, and closing it is fine
    with pytest.raises(yutenv.YutEnvError):
        env.reset(seed=2)
    env.close()
    s.close()


def test_start_failure_reports_exit_status_and_log(tmp_path: Path) -> None:
    fake = tmp_path / "fake-yutenv"
    fake.write_text("#!/bin/sh\necho 'cannot listen: something is wrong' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(yutenv.ServerStartError) as ei:
        yutenv.Server(binary=fake)
    assert ei.value.returncode == 3
    assert "something is wrong" in str(ei.value)
    with pytest.raises(yutenv.ServerStartError):
        yutenv.Server(binary=tmp_path / "does-not-exist")


def test_start_timeout(tmp_path: Path) -> None:
    fake = tmp_path / "silent"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    t = time.monotonic()
    with pytest.raises(yutenv.ServerStartError, match="did not report ready"):
        yutenv.Server(binary=fake, start_timeout=0.5)
    assert time.monotonic() - t < 10


def test_missing_binary_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("YUTENV_BINARY", str(tmp_path / "nope"))
    with pytest.raises(yutenv.ServerStartError, match="YUTENV_BINARY"):
        yutenv.binary_path()


def test_connect_by_address_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    with yutenv.Server() as s:
        monkeypatch.setenv("YUTENV_ADDRESS", s.address)
        if s.token is not None:  # over TCP
            monkeypatch.setenv("YUTENV_TOKEN", s.token)
        env = yutenv.make()
        assert env.server_address == s.address
        assert env._session.server is None  # nothing was spawned
        env.reset(seed=1)
        env.close()
        assert s.alive()  # an external server is never stopped by its clients


def test_token(tmp_path: Path) -> None:
    tok = tmp_path / "token"
    tok.write_text("s3cret\n")
    with yutenv.Server(args=["--token-file", str(tok)]) as s:
        with pytest.raises(yutenv.UnauthorizedError):
            yutenv.YutEnv(address=s.address)
        with pytest.raises(yutenv.UnauthorizedError):
            yutenv.YutEnv(address=s.address, token="wrong")
        env = yutenv.YutEnv(address=s.address, token="s3cret")
        env.reset(seed=1)
        env.close()


def test_tcp_address() -> None:
    # a TCP server on loopback, port chosen by the kernel
    binary = str(yutenv.binary_path())
    p = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--exit-on-stdin-eof"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout is not None
        ready = json.loads(p.stdout.readline())
        env = yutenv.YutEnv(address="tcp://" + ready["listening"])
        env.reset(seed=1)
        env.close()
    finally:
        assert p.stdin is not None
        p.stdin.close()  # --exit-on-stdin-eof
        p.wait(10)
        p.stdout.close()


def test_bad_address() -> None:
    with pytest.raises(ValueError):
        yutenv.YutEnv(address="not an address")
    with pytest.raises(yutenv.ServerDiedError, match="cannot connect"):
        yutenv.YutEnv(address="unix:/nonexistent/yutenv.sock")


def test_limit_exceeded(srv: yutenv.Server) -> None:
    with pytest.raises(yutenv.LimitExceededError):
        yutenv.YutVectorEnv(100_000, server=srv)


def test_server_not_picklable(srv: yutenv.Server) -> None:
    import copy
    import pickle

    assert copy.deepcopy(srv) is srv
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(srv)


def test_no_live_servers_leak_from_closed_envs() -> None:
    before = {s.pid for s in list(server_mod._live)}
    for _ in range(3):
        e = yutenv.make()
        e.reset(seed=0)
        e.close()
    after = {s.pid for s in list(server_mod._live) if s.alive()}
    assert after <= before


def test_a_connection_refused_at_hello_gets_the_servers_reason() -> None:
    """The server's final error on a connection it will not serve (no request id to answer) is
    raised as that error, not as a reply-id mismatch."""
    with yutenv.Server(args=["--max-conns", "1"]) as s:
        first = yutenv.make(server=s)
        try:
            with pytest.raises(yutenv.LimitExceededError, match=r"already serves 1 connections \(--max-conns\)"):
                yutenv.make(server=s)
        finally:
            first.close()
