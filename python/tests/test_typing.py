"""The package is typed (py.typed): mypy --strict passes on its sources."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parents[1]


def test_mypy_strict() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "mypy", "yutenv"],  # settings in pyproject.toml: strict
        cwd=PYTHON_DIR,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout + p.stderr  # "No module named mypy": pip install './python[test]'
