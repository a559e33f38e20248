"""The ``yutenv`` console script installed by ``pip install ./python`` runs the bundled binary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yutenv

SCRIPT = Path(sys.executable).parent / "yutenv"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_script_is_installed_next_to_the_interpreter() -> None:
    assert SCRIPT.is_file(), f"pip did not install the yutenv console script at {SCRIPT}"


def test_help_and_version_are_the_bundled_binary() -> None:
    got = run("--help")
    assert got.returncode == 0, got.stderr
    want = subprocess.run([str(yutenv.binary_path()), "--help"], capture_output=True, text=True, timeout=60)
    assert got.stdout == want.stdout and "selfplay" in got.stdout
    v = run("version")
    assert v.returncode == 0 and v.stdout.startswith("yutenv ")


def test_exit_status_passes_through() -> None:
    got = run("no-such-command")
    want = subprocess.run([str(yutenv.binary_path()), "no-such-command"], capture_output=True, text=True, timeout=60)
    assert got.returncode == want.returncode != 0
    assert "unknown command" in got.stderr


def test_a_small_subcommand(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    p = run("selfplay", "--games", "3", "--seed", "7", "--out", str(out), "--quiet")
    assert p.returncode == 0, p.stderr
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    assert len(records) == 3
    r = run("replay", "--check", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
