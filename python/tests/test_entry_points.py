"""Every ``python -m yutenv...`` entry point answers ``--help`` with a description and a help
text for each option, and refuses bad counts before doing any work."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_main

import yutenv
from yutenv import distributed
from yutenv.az import report


def _parsers(p: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    out = [(p.prog, p)]
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub in a.choices.values():
                out.extend(_parsers(sub))
    return out


@pytest.mark.parametrize("parser", [distributed.parser()], ids=["distributed"])
def test_every_option_has_help(parser: argparse.ArgumentParser) -> None:
    for prog, p in _parsers(parser):
        assert p.description, f"{prog} has no description"
        for a in p._actions:
            if a.option_strings and a.help != argparse.SUPPRESS:
                assert a.help, f"{prog} {a.option_strings[0]} has no help"


@pytest.mark.parametrize(
    "argv",
    [
        ["yutenv.distributed", "selfplay", "--help"],
        ["yutenv.distributed", "eval", "--help"],
    ],
    ids=lambda a: " ".join(a),
)
def test_help_exits_zero(argv: list[str]) -> None:
    r = run_main(*argv)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: python -m ")
    assert len(r.stdout.splitlines()) > 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["selfplay", "--out", "x", "--games", "0"], "--games: 0 must be at least 1"),
        (["selfplay", "--out", "x", "--shard-games", "-3"], "--shard-games: -3 must be at least 1"),
        (["eval", "--a", "random", "--b", "greedy", "--chunk-games", "0"], "--chunk-games: 0 must be at least 1"),
        (["eval", "--a", "random", "--b", "greedy", "--games", "many"], "--games: 'many' is not an integer"),
    ],
)
def test_distributed_refuses_bad_counts_early(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        distributed.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_report_of_a_missing_folder_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        report.main(["/nonexistent/run"])
    assert e.value.code == 2
    assert "/nonexistent/run: no such folder" in capsys.readouterr().err


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    ("argv", "message", "real"),
    [
        (["--eval-every", "0"], "--eval-every must be at least 1, got 0", True),  # once looped for ever
        (["--n-envs", "-1"], "--n-envs must be at least 1, got -1", False),
        (["--minutes", "0"], "--minutes must be positive, got 0.0", False),
    ],
)
def test_maskable_ppo_example_refuses_bad_arguments(argv: list[str], message: str, real: bool) -> None:
    """The first case runs the script's real process; the others call its main(argv) in this
    process (an interpreter and torch starting cost some 5 s a case)."""
    pytest.importorskip("sb3_contrib")
    script = EXAMPLES / "train_maskable_ppo.py"
    if real:
        r = subprocess.run([sys.executable, str(script), *argv], capture_output=True, text=True, timeout=120)
    else:
        r = run_main(script, *argv)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr


def _entry_points() -> list[str]:
    """Every module of the installed package that runs as ``python -m``: those with a
    ``__main__`` guard (by the module's own name; yutenv._moved keeps older names working)."""
    root = Path(yutenv.__file__).parent
    return [
        ".".join(("yutenv", *f.relative_to(root).with_suffix("").parts))
        for f in sorted(root.rglob("*.py"))
        if 'if __name__ == "__main__":' in f.read_text(encoding="utf-8")
    ]


# yutenv.tools.cli is the `yutenv` command itself: the Go binary's flags (test_cli.py).
MODULES = [m for m in _entry_points() if m != "yutenv.tools.cli"]


def test_the_entry_points_are_found() -> None:
    assert {"yutenv.tools.bench_envs", "yutenv.az.train", "yutenv.recipes", "yutenv.az.golden"} <= set(MODULES), MODULES


def _undocumented(help_text: str) -> list[str]:
    """The options of an argparse --help without a help text: an option line with nothing after
    its signature, not followed by an indented description line."""
    lines = help_text.splitlines()
    bad = []
    for i, line in enumerate(lines):
        if not line.startswith("  -"):
            continue
        has_text = len(re.split(r"\s{2,}", line.strip(), maxsplit=1)) == 2
        follows = i + 1 < len(lines) and lines[i + 1].startswith(" " * 6) and not lines[i + 1].lstrip().startswith("-")
        if not (has_text or follows):
            bad.append(line.strip())
    return [b for b in bad if not b.startswith("-h, --help")]


@pytest.mark.parametrize("module", MODULES)
def test_every_module_entry_point_documents_every_option(module: str) -> None:
    if module.endswith("bench_sb3"):
        pytest.importorskip("sb3_contrib")
    if module.endswith("bench_tianshou"):
        pytest.importorskip("tianshou")
    r = run_main(module, "--help")  # `python -m` itself runs in the docs' blocks
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: ")
    description = r.stdout.split("\n\n")[1]
    assert not description.lstrip().startswith(("options:", "positional")), f"{module} --help has no description"
    assert _undocumented(r.stdout) == [], f"{module}: options without help"
