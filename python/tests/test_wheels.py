"""``make wheels``: a wheel per platform, correctly tagged, each with a stripped server binary of
the right format and architecture; the Linux x86_64 wheel installs into a fresh venv with no Go
on PATH and plays and evaluates games; the Linux aarch64 wheel's server plays under user-mode
emulation (qemu). ``twine check`` and ``auditwheel show`` run inside ``make wheels``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# target -> (the wheel's platform tag, what `file` says of its binary)
TARGETS = {
    "linux-amd64": (
        "manylinux_2_17_x86_64.manylinux2014_x86_64",
        ("ELF 64-bit LSB executable, x86-64", "statically linked", "stripped"),
    ),
    "linux-arm64": (
        "manylinux_2_17_aarch64.manylinux2014_aarch64",
        ("ELF 64-bit LSB executable, ARM aarch64", "statically linked", "stripped"),
    ),
    "darwin-amd64": ("macosx_12_0_x86_64", ("Mach-O 64-bit x86_64 executable",)),
    "darwin-arm64": ("macosx_12_0_arm64", ("Mach-O 64-bit arm64 executable",)),
    "windows-amd64": ("win_amd64", ("PE32+ executable", "x86-64")),
}
MAX_BINARY = 14 << 20  # stripped: 11-12.6 MB, 1.9 MB of it the shipped network az (nnet/shipped)


def _require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        msg = f"{tool} is not installed (scripts/install-test-tools.sh installs it)"
        if os.environ.get("YUTENV_REQUIRE_TOOLS") == "1":
            pytest.fail(msg + "; YUTENV_REQUIRE_TOOLS=1 makes this a failure")
        pytest.skip(msg)
    return path


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (REPO / "go.mod").is_file() or shutil.which("make") is None:
        pytest.skip("needs the repository checkout and make")
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run(["make", "--no-print-directory", "wheels", f"DIST={out}", f"PY={sys.executable}"],
                       cwd=REPO, capture_output=True, text=True, timeout=1800)  # fmt: skip
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert r.stdout.count("PASSED") == len(TARGETS) + 1, "twine check --strict passed every file: " + r.stdout
    assert r.stdout.count("requires no external shared libraries") == 2, "auditwheel show, both Linux wheels"
    return out


def wheel(dist: Path, target: str) -> Path:
    (w,) = dist.glob(f"yutenv-*-py3-none-{TARGETS[target][0]}.whl")
    return w


def binary(dist: Path, target: str, into: Path) -> Path:
    exe = "yutenv.exe" if target.startswith("windows") else "yutenv"
    with zipfile.ZipFile(wheel(dist, target)) as zf:
        out = Path(zf.extract(f"yutenv/_bin/{exe}", into))
    out.chmod(0o755)
    return out


def test_one_wheel_per_platform_and_an_sdist(dist: Path) -> None:
    names = sorted(p.name for p in dist.iterdir())
    assert len(names) == len(TARGETS) + 1 and sum(n.endswith(".tar.gz") for n in names) == 1, names
    for target, (tag, _) in TARGETS.items():
        with zipfile.ZipFile(wheel(dist, target)) as zf:
            meta = next(n for n in zf.namelist() if n.endswith(".dist-info/WHEEL"))
            assert f"Tag: py3-none-{tag.split('.')[0]}" in zf.read(meta).decode()
            assert any(n.endswith(".dist-info/licenses/LICENSE") for n in zf.namelist())


@pytest.mark.parametrize("target", list(TARGETS))
def test_binary_format_and_architecture(dist: Path, target: str, tmp_path: Path) -> None:
    file_cmd = _require("file")
    exe = binary(dist, target, tmp_path)
    assert exe.stat().st_size < MAX_BINARY
    what = subprocess.run([file_cmd, "-b", str(exe)], capture_output=True, text=True, check=True).stdout
    for part in TARGETS[target][1]:
        assert part in what, what
    assert "not stripped" not in what, what


def _without_go(extra: Path) -> dict[str, str]:
    dirs = [str(extra), "/usr/bin", "/bin"]
    dirs = [d for d in dirs if not os.path.exists(os.path.join(d, "go"))]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GO", "YUTENV_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(dirs)
    assert shutil.which("go", path=env["PATH"]) is None
    return env


PLAY = """
import numpy as np, yutenv
env = yutenv.make(opponent="greedy")
obs, info = env.reset(seed=1)
done, steps = False, 0
while not done:
    obs, r, term, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    done, steps = term or trunc, steps + 1
env.close()
res = yutenv.evaluate(lambda o, m: m.argmax(axis=1), opponent="random", games=8, num_envs=4, progress=False)
print(steps, res.games, str(yutenv.binary_path()))
"""


def test_linux_wheel_installs_and_plays_without_go(dist: Path, tmp_path: Path) -> None:
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        pytest.skip("the Linux x86_64 wheel runs on Linux x86_64")
    home = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(home)
    py, bindir = home / "bin" / "python", home / "bin"
    env = _without_go(bindir)
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel(dist, "linux-amd64"))],
                       env=env, capture_output=True, text=True, timeout=900)  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(py), "-c", PLAY], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    steps, games, exe = r.stdout.split()
    assert int(steps) > 0 and int(games) == 8 and exe.startswith(str(home))
    r = subprocess.run(["yutenv", "eval", "--a", "greedy", "--b", "random", "--games", "4", "--json"],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["games"] == 4


def test_aarch64_server_plays_under_emulation(dist: Path, tmp_path: Path) -> None:
    qemu = _require("qemu-aarch64-static")
    exe = binary(dist, "linux-arm64", tmp_path)
    r = subprocess.run([qemu, str(exe), "version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("yutenv "), r.stderr
    r = subprocess.run([qemu, str(exe), "eval", "--a", "greedy", "--b", "random", "--games", "4", "--json"],
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["games"] == 4 and m["wins_a"] + m["wins_b"] <= 4
