"""Shared fixtures. Every test talks to a real ``yutenv serve`` (the binary bundled in the
installed package); nothing is mocked."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.util
import io
import multiprocessing
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

import yutenv
from yutenv import server as server_mod

# Each pytest process (every xdist worker) keeps Ray's files, and the address file through which
# ray.init() without an address joins a Ray already running on the machine, in a folder of its
# own. Otherwise a block or test that starts Ray (RLlib's algorithms call ray.init()) joins the
# cluster that another worker, or the suite run beside this one in make test, has started, and
# fails when that one stops. Short, under /tmp: Ray's socket paths must fit in 107 bytes.
#
# Stable-Baselines3's logger makes a folder for every learn() (/tmp/SB3-<date> unless told one):
# the suite's trainers, and the doc blocks' processes, which inherit this, use one of their own.
#
# A test module's `from conftest import ...` imports this file a second time in the same process,
# under another name, and a multiprocessing child (a spawned vector env's worker) imports it to
# unpickle what it runs, then is terminated without running its atexit handlers: the folders are
# made once per pytest process (the marker says which process made them), and such a child uses
# its parent's.
_reuse = multiprocessing.parent_process() is not None and "RAY_TMPDIR" in os.environ and "SB3_LOGDIR" in os.environ
if _reuse or os.environ.get("YUTENV_TEST_FOLDERS_PID") == str(os.getpid()):
    _RAY_TMPDIR, _SB3_LOGDIR = os.environ["RAY_TMPDIR"], os.environ["SB3_LOGDIR"]
else:
    _RAY_TMPDIR = tempfile.mkdtemp(prefix="yr", dir="/tmp" if os.path.isdir("/tmp") else None)
    _SB3_LOGDIR = tempfile.mkdtemp(prefix="yutenv-sb3-")
    os.environ.update(RAY_TMPDIR=_RAY_TMPDIR, SB3_LOGDIR=_SB3_LOGDIR, YUTENV_TEST_FOLDERS_PID=str(os.getpid()))
    atexit.register(shutil.rmtree, _RAY_TMPDIR, ignore_errors=True)
    atexit.register(shutil.rmtree, _SB3_LOGDIR, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove this process's folders when its tests end: an xdist worker exits without running
    atexit handlers."""
    for d in (_RAY_TMPDIR, _SB3_LOGDIR):
        shutil.rmtree(d, ignore_errors=True)


def pid_alive(pid: int) -> bool:
    """True if the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def wait_dead(pid: int, timeout: float = 10.0) -> bool:
    """Wait until the process is gone (a bound on waiting, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.02)
    return False


@pytest.fixture(scope="session")
def srv() -> Iterator[yutenv.Server]:
    """One private server for the tests that do not need their own."""
    s = yutenv.Server()
    yield s
    s.close()
    assert not pid_alive(s.pid)


@pytest.fixture(autouse=True, scope="module")
def close_the_shared_game_session() -> Iterator[None]:
    """yutenv.Game's connection (it holds the shared server) ends with each test module, so a
    module that checks the shared server's lifetime does not see another module's games."""
    yield
    yutenv.state.close_shared_session()


@pytest.fixture(autouse=True, scope="session")
def sb3_logs_in_the_session_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Stable-Baselines3 makes a log folder in the system's temp folder at every ``learn()``
    (``SB3-<date>``) unless ``SB3_LOGDIR`` names one: the suite's go with its other files."""
    old = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3-logs"))
    yield
    if old is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = old


@pytest.fixture(autouse=True, scope="session")
def no_server_left_behind() -> Iterator[None]:
    yield
    # After the whole session every server this process started must be gone.
    with server_mod._live_lock:
        live = [s for s in server_mod._live if s.pid]
    for s in live:
        s.close()
    for s in live:
        assert not pid_alive(s.pid), f"server {s.pid} still running"


def run_main(module: str | Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` (or ``python SCRIPT ARGS``, for a path) run in this process,
    through the module's ``main(argv)``, and reported as ``subprocess.run`` reports the command:
    its exit code and what it printed. For tests of what a command refuses and prints, without
    an interpreter and torch starting for each (some 4 s apiece). An exception that escapes
    ``main`` fails the test, as a traceback on the real command's stderr would. Each command
    keeps a test of its real process."""
    if isinstance(module, Path):
        spec = importlib.util.spec_from_file_location(module.stem, module)
        assert spec is not None and spec.loader is not None, module
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        cmd = ["python", str(module), *args]
    else:
        mod = importlib.import_module(module)
        cmd = ["python", "-m", module, *args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = mod.main(list(args))
        except SystemExit as e:  # argparse: --help exits 0, a usage error 2
            code = e.code
    if not isinstance(code, int):
        code = 0 if code is None else 1
    return subprocess.CompletedProcess(cmd, code, out.getvalue(), err.getvalue())


def selfplay(out: Path, *args: str) -> None:
    """``yutenv selfplay --quiet --out OUT ARGS...``: a dataset written by the bundled binary."""
    cmd = [str(yutenv.binary_path()), "selfplay", "--quiet", "--out", str(out), *args]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)


def first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def pick(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A uniformly random legal action (mask may be uint8 or bool)."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def pick_batch(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One random legal action per row; rows with no legal action (terminal rows) get 0."""
    out = np.zeros(len(masks), dtype=np.int32)
    for i, m in enumerate(masks):
        legal = np.flatnonzero(m)
        if len(legal):
            out[i] = legal[rng.integers(len(legal))]
    return out


@pytest.fixture(autouse=True)
def _no_env_address(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests decide themselves where envs connect.
    monkeypatch.delenv("YUTENV_ADDRESS", raising=False)
    monkeypatch.delenv("YUTENV_TOKEN", raising=False)
    monkeypatch.delenv("YUTENV_TOKEN_FILE", raising=False)


def assert_readonly_view(a: np.ndarray) -> None:
    assert not a.flags.writeable
    base = a
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    assert isinstance(base, (bytes, memoryview)), f"expected a view of the reply bytes, got base {type(base)}"


__all__ = ["pid_alive", "wait_dead", "first_legal", "pick", "pick_batch", "assert_readonly_view", "os"]
