"""The package build: a clear error when the Go toolchain is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]


def test_pip_build_without_go_fails_clearly(tmp_path: Path) -> None:
    if not (PYTHON_DIR.parent / "go.mod").is_file():
        pytest.skip("needs the repository checkout (python/.. holds go.mod)")
    env = dict(os.environ, YUTENV_GO="yutenv-no-such-go-toolchain")
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(PYTHON_DIR)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode != 0
    out = p.stdout + p.stderr
    assert "the Go toolchain ('yutenv-no-such-go-toolchain') was not found on PATH" in out
    assert "install Go" in out
    assert not list(tmp_path.glob("*.whl")), "no wheel is left behind"
