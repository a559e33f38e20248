"""The lowest versions pyproject.toml allows are the ones this run has (``make lowest-lane``).

``make test`` installs the package into ``.venv-lowest`` with uv's ``--resolution lowest-direct``
(every direct dependency at the lowest version its bound allows that has a wheel for this
Python) and runs the env tests there with ``YUTENV_LOWEST=1``. These tests check that the lane
is what it says: each dependency is at its bound (the same release, up to the bound's
precision: numpy 1.23.2 is ``numpy>=1.23``'s lowest wheel for Python 3.11), and ``import
yutenv`` works in a fresh interpreter. Elsewhere those two are skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
LOWEST = os.environ.get("YUTENV_LOWEST") == "1"
lane = pytest.mark.skipif(not LOWEST, reason="the lowest-direct lane's own check (YUTENV_LOWEST=1)")

#: The packages the lane takes as wheels only (the Makefile's LOWEST_WHEELS): the lowest release
#: with a wheel for this Python, which is the bound's own on Python 3.10 only. They are held to
#: the bound's major version.
WHEELS_ONLY = set(filter(None, os.environ.get("YUTENV_LOWEST_WHEELS", "").split(",")))

DEPENDENCIES = [Requirement(r) for r in tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]]


def lower_bound(req: Requirement) -> Version:
    """The version a ``>=`` bound names."""
    bounds = [Version(s.version) for s in req.specifier if s.operator == ">="]
    assert len(bounds) == 1, f"{req}: one lower bound"
    return bounds[0]


def at_bound(installed: Version, bound: Version) -> bool:
    """Whether installed is the bound's release, to the bound's precision (1.23.2 is at 1.23)."""
    return installed.release[: len(bound.release)] == bound.release


@pytest.mark.parametrize(
    ("installed", "bound", "at"),
    [("1.23.2", "1.23", True), ("1.0.0", "1.0", True), ("1.26.4", "1.23", False), ("2.0", "1.0", False)],
)
def test_at_bound_reads_the_bounds_precision(installed: str, bound: str, at: bool) -> None:
    assert at_bound(Version(installed), Version(bound)) is at


@lane
@pytest.mark.parametrize("req", DEPENDENCIES, ids=str)
def test_each_dependency_is_at_its_lower_bound(req: Requirement) -> None:
    installed, bound = Version(metadata.version(req.name)), lower_bound(req)
    assert installed in req.specifier
    if req.name in WHEELS_ONLY:
        assert installed.major == bound.major, f"{req.name} {installed}: not the lowest wheel {req} allows"
    else:
        assert at_bound(installed, bound), f"{req.name} {installed} is not the lowest {req} allows"


@lane
def test_import_yutenv_in_a_fresh_interpreter() -> None:
    code = "import gymnasium, yutenv; env = gymnasium.make(yutenv.ENV_ID); env.reset(seed=0); env.close(); print(gymnasium.__version__)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert at_bound(Version(r.stdout.strip()), lower_bound(next(d for d in DEPENDENCIES if d.name == "gymnasium")))
