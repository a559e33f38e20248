"""docs/ENVIRONMENTS.md, the env cards: their generated tables and pictures are fresh, every
``make()`` keyword is in the arguments table, and what the page says of ``gymnasium.make`` holds.

(The cards' usage loops run, and their shown output is checked, in test_docs.py.)"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import env_cards
import pytest
from test_docs import Block, blocks, matches

import yutenv
from yutenv import _protocol
from yutenv.envs.config import EnvConfig

HOW = "run: .venv/bin/python python/tests/env_cards.py --update"


def test_the_generated_tables_are_fresh() -> None:
    page = env_cards.PAGE.read_text(encoding="utf-8")
    assert env_cards.render(page) == page, f"docs/ENVIRONMENTS.md's generated tables are stale; {HOW}"


@pytest.mark.parametrize(("name", "rules", "agents", "seed", "position"), env_cards.BOARDS)
def test_the_board_pictures_are_fresh(name: str, rules: str, agents: str, seed: int, position: int) -> None:
    path = env_cards.REPO / "docs" / "img" / name
    assert path.read_bytes() == env_cards.board_svg(rules, agents, seed, position), f"docs/img/{name} is stale; {HOW}"
    assert f"(img/{name})" in env_cards.PAGE.read_text(encoding="utf-8"), f"docs/ENVIRONMENTS.md does not show {name}"


def test_every_make_keyword_is_in_the_arguments_table() -> None:
    table = env_cards.arguments()
    names = [f.name for f in dataclasses.fields(EnvConfig)] + ["autoreset_mode", "copy"]
    for name in names:
        assert f"| `{name}` |" in table, name
    assert table.count("\n| `") == len(names), "a row for each keyword, and no other"


def test_an_undocumented_option_stops_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    # A new EnvConfig field without a line in its docstring cannot reach the page undocumented.
    monkeypatch.setattr(EnvConfig, "__doc__", (EnvConfig.__doc__ or "").replace("        seat: ", "        seats: "))
    with pytest.raises(SystemExit, match="EnvConfig.seat has no entry"):
        env_cards.arguments()


def test_the_docstring_reader_joins_continued_lines() -> None:
    doc = textwrap.dedent(
        """\
        Head.

        Attributes:
            rules: a rules string
                or a mapping.
            seat: the seat.
        """
    )
    doc = textwrap.indent(doc, "    ")
    assert env_cards._doc_entries(doc) == {"rules": "a rules string or a mapping.", "seat": "the seat."}


def _fresh_python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    # A new interpreter, away from the tests' imports: nothing has imported yutenv.
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=dict(os.environ)
    )


def test_gymnasium_make_needs_yutenv_imported_or_named(tmp_path: Path) -> None:
    # Gymnasium 1.x loads no plugins: the id alone is unknown until yutenv is imported ...
    r = _fresh_python(
        "import gymnasium, sys\n"
        "try:\n    gymnasium.make('yutenv/Yut-v0')\n"
        "except gymnasium.error.NamespaceNotFound:\n    print('not found', 'yutenv' in sys.modules)\n",
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "not found False"
    # ... and the module prefix imports it (what the card says to write in a configuration file).
    r = _fresh_python(
        "import gymnasium\n"
        f"env = gymnasium.make('yutenv:{yutenv.ENV_ID}', opponent='greedy')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(env.spec.id, type(env.unwrapped).__name__, int(info['action_mask'].sum()) > 0)\n"
        "env.close()\n",
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{yutenv.ENV_ID} YutEnv True"


@pytest.mark.parametrize("block", [b for b in blocks(env_cards.PAGE) if b.lang == "python"], ids=lambda b: b.id)
def test_every_card_block_runs_alone(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # test_docs.py runs the page's blocks in one namespace, in order; a card's loop must also run
    # as pasted into a new session, with nothing defined before it.
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.code, block.id, "exec"), {"__name__": "__card__"})
    if block.output is not None:
        assert matches(block.output, out.getvalue()), f"{block.id} printed:\n{out.getvalue()}"


def test_the_cards_prose_quotes_the_engines_numbers() -> None:
    # The prose around the generated tables names the action codec and the board; each phrase is
    # built here from yutenv._protocol, so a change of the engine's numbers fails until the page follows.
    p = _protocol
    throws = ", ".join(f"`{t}`" for t in p.THROWS)
    want = [
        f"board of {p.NUM_STATIONS} stations",
        f"the {p.NUM_ACTIONS} actions) or `planes` (planes over the {p.NUM_STATIONS} stations",
        f"One of {p.NUM_ACTIONS} ids, `action = throw * {p.NUM_SOURCES} + source`",
        f"({throws}: 0 to {p.NUM_THROWS - 1}) on which stack (its station, 0 to {p.NUM_STATIONS - 1}) or {p.ENTER_SOURCE}",
        f'"action_mask": int8[{p.NUM_ACTIONS}]',
        f"0 to N-1, or {p.ENTER_SOURCE} to",
    ]
    gae, yut = p.THROWS.index("gae"), p.THROWS.index("yut")
    want.append(
        f"({gae} * {p.NUM_SOURCES} + {p.ENTER_SOURCE} = {gae * p.NUM_SOURCES + p.ENTER_SOURCE} and "
        f"{yut} * {p.NUM_SOURCES} + {p.ENTER_SOURCE} = {yut * p.NUM_SOURCES + p.ENTER_SOURCE})"
    )
    text = " ".join(env_cards.PAGE.read_text(encoding="utf-8").split())
    missing = [w for w in want if w not in text]
    assert not missing, missing
