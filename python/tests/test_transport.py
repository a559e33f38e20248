"""The TCP transport of a package-started server (the default on Windows, where it is the
only one): a free loopback port and a random token, presented by every session the package
opens, refused to anyone without it."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from yutenv.client import Client
from yutenv.server import default_transport

import yutenv
from yutenv.errors import ServerStartError, UnauthorizedError


@pytest.fixture(scope="module")
def tcp() -> yutenv.Server:
    s = yutenv.Server(transport="tcp")
    yield s
    s.close()


def test_listens_on_loopback_with_a_private_token(tcp: yutenv.Server) -> None:
    assert tcp.address.startswith("tcp://127.0.0.1:") and int(tcp.address.rsplit(":", 1)[1]) > 0
    assert tcp.token is not None and len(tcp.token) == 32
    assert tcp.token not in " ".join(tcp.command), "the token is not on the command line (ps shows it)"
    token_file = tcp.command[tcp.command.index("--token-file") + 1]
    assert not os.path.exists(token_file), "the server read the token: its file is gone"
    assert not os.path.exists(os.path.dirname(token_file)), "and the private folder made for it"


def test_the_token_file_is_private_until_read(tmp_path: Path) -> None:
    # A stand-in for the server that reports the modes of the token file and its folder.
    fake = tmp_path / "fake-yutenv"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import os, stat, sys\n"
        "tf = sys.argv[sys.argv.index('--token-file') + 1]\n"
        "modes = [oct(stat.S_IMODE(os.stat(p).st_mode)) for p in (tf, os.path.dirname(tf))]\n"
        "print('modes', *modes, file=sys.stderr, flush=True)\n"
        "sys.exit(3)\n"
    )
    fake.chmod(0o755)
    with pytest.raises(ServerStartError) as e:
        yutenv.Server(binary=fake, transport="tcp")
    assert "modes 0o600 0o700" in (e.value.log or "")


def test_envs_play_through_it(tcp: yutenv.Server) -> None:
    env = yutenv.make(server=tcp, opponent="greedy")
    obs, info = env.reset(seed=3)
    for _ in range(50):
        mask = env.action_masks()
        obs, _, term, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
        if term or trunc:
            obs, info = env.reset()
    env.close()
    venv = yutenv.make(4, server=tcp, opponent="random")
    venv.reset(seed=1)
    venv.close()
    r = yutenv.evaluate(lambda o, m: m.argmax(axis=1), opponent="random", games=4, server=tcp, progress=False)
    assert r.games == 4


def test_a_pickled_env_reconnects_with_the_token(tcp: yutenv.Server) -> None:
    env = yutenv.make(server=tcp)
    env.reset(seed=5)
    copy = pickle.loads(pickle.dumps(env))
    copy.reset(seed=5)
    copy.close()
    env.close()


def test_no_token_no_entry(tcp: yutenv.Server) -> None:
    for token in (None, "0" * 32):
        c = Client(tcp.address, timeout=10)
        try:
            params = {"protocol": 1, "client": "intruder"} | ({"token": token} if token else {})
            with pytest.raises(UnauthorizedError):
                c.call("hello", params)
        finally:
            c.close()


def test_transport_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("YUTENV_TRANSPORT", raising=False)
    assert default_transport() == ("tcp" if sys.platform == "win32" else "unix")
    monkeypatch.setenv("YUTENV_TRANSPORT", "TCP")
    assert default_transport() == "tcp"
    monkeypatch.setenv("YUTENV_TRANSPORT", "pigeon")
    with pytest.raises(ServerStartError, match="YUTENV_TRANSPORT='pigeon': want unix or tcp"):
        default_transport()


def test_shared_server_over_tcp_in_a_fresh_interpreter() -> None:
    # The shared server (what yutenv.make starts when given nothing) follows YUTENV_TRANSPORT.
    code = (
        "import yutenv\n"
        "env = yutenv.make(opponent='random')\n"
        "env.reset(seed=0)\n"
        "print(env.unwrapped.server_address)\n"
        "env.close()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, YUTENV_TRANSPORT="tcp"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith("tcp://127.0.0.1:")


def _exited(pid: int) -> bool:
    """Whether process pid is gone (or a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and /proc")
def test_kill_9_of_the_trainer_leaves_no_token_behind() -> None:
    # A trainer on the TCP transport, killed by SIGKILL (no atexit, no finalizer runs): its
    # server exits as its stdin closes, and the token it was given is nowhere on disk.
    code = (
        "import json, time, yutenv\n"
        "from yutenv.connection import server\n"
        "env = yutenv.make(opponent='random')\n"
        "env.reset(seed=0)\n"
        "s = server._shared\n"
        "tf = s.command[s.command.index('--token-file') + 1]\n"
        "print(json.dumps({'pid': s.pid, 'token_file': tf}), flush=True)\n"
        "time.sleep(120)\n"
    )
    trainer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                               env=dict(os.environ, YUTENV_TRANSPORT="tcp"))  # fmt: skip
    try:
        assert trainer.stdout is not None
        line = trainer.stdout.readline()
        assert line, "the trainer did not start its server"
        info = json.loads(line)
    finally:
        trainer.kill()
        trainer.wait(10)
        assert trainer.stdout is not None
        trainer.stdout.close()
    deadline = time.monotonic() + 15
    while not _exited(info["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _exited(info["pid"]), "the server outlived its trainer"
    assert not os.path.exists(info["token_file"]), "the token file stayed"
    assert not os.path.exists(os.path.dirname(info["token_file"])), "its private folder stayed"
