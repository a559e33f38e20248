"""README.md as a front door: it names the env, opens with the three jobs' quickstarts (short,
run by the docs' tests, each showing what it prints) and lists every page of the docs.

(test_docs.py runs the blocks and checks their shown output; this checks the shape.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_docs import Block, blocks

import yutenv

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
QUICKSTARTS = ("Train", "Evaluate", "Offline RL")
MAX_LINES = 15
# Not a user's page: the research log (how the software got where it is) is linked from the pages
# that quote it, not listed among the guides.
NOT_LISTED = {"RESEARCH.md"}


def _sections(text: str, level: str) -> dict[str, str]:
    """The text of each section of a heading level (``"##"``), by heading."""
    out: dict[str, str] = {}
    parts = re.split(rf"^{level} (.+)$", text, flags=re.M)
    for title, body in zip(parts[1::2], parts[2::2]):
        out[title.strip()] = re.split(rf"^#{{1,{len(level)}}} ", body, flags=re.M)[0]
    return out


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def test_the_readme_names_the_env_before_its_quickstarts() -> None:
    text = _readme()
    assert f"`{yutenv.ENV_ID}`" in text[: text.index("## Quickstart")]
    assert text.index("## Install") < text.index("## Quickstart") < text.index("## Documentation")


def _quickstart_blocks() -> dict[str, list[Block]]:
    """The Python and shell blocks of each ### section of the README's Quickstart, by job."""
    lines = _readme().split("\n")
    begin = lines.index("## Quickstart") + 1
    end = next(i for i in range(begin, len(lines)) if lines[i].startswith("## "))
    heads = [(i, lines[i][4:]) for i in range(begin, end) if lines[i].startswith("### ")]
    out: dict[str, list[Block]] = {}
    for job in QUICKSTARTS:
        at = [k for k, (_, title) in enumerate(heads) if title.startswith(job)]
        assert at, f"README's Quickstart has no ### {job} section (it has {[t for _, t in heads]})"
        lo = heads[at[0]][0]
        hi = heads[at[0] + 1][0] if at[0] + 1 < len(heads) else end
        out[job] = [b for b in blocks(README) if lo < b.line - 1 < hi and b.lang in ("python", "sh")]
    return out


@pytest.mark.parametrize("job", QUICKSTARTS)
def test_each_quickstart_is_short_runs_and_shows_its_output(job: str) -> None:
    found = _quickstart_blocks()[job]
    assert found, f"the {job} quickstart has no Python or shell block"
    for b in found:
        n = len(b.code.strip("\n").split("\n"))
        assert n < MAX_LINES, f"{b.id}: {n} lines; a quickstart block stays under {MAX_LINES}"
        assert not b.skip, f"{b.id}: a quickstart runs in the docs' tests"
        assert b.output, f"{b.id}: a quickstart shows what it prints (<!-- doc: output --> and a text block)"


def test_the_offline_quickstart_is_marked_and_makes_its_own_data() -> None:
    (b,) = _quickstart_blocks()["Offline RL"]
    assert b.extras == ["offline"], "it runs in the venv that has d3rlpy (the extra 'offline')"
    assert "selfplay" in b.code and "--out data" in b.code and 'transitions("data"' in b.code, (
        "the block writes the dataset it reads: it runs alone"
    )
    assert "DiscreteCQL" in b.code


def test_the_documentation_section_lists_every_page() -> None:
    section = _sections(_readme(), "##")["Documentation"]
    rows = re.findall(r"^\| \[([^\]]+)\]\(([^)]+)\) \| (.+) \|$", section, flags=re.M)
    listed = {target for _, target, _ in rows}
    pages = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md") if p.name not in NOT_LISTED}
    pages |= {"python/README.md", "CHANGELOG.md", "docs/api/index.md"}  # the API reference's index stands for its pages
    assert sorted(pages - listed) == [], "pages the README's Documentation section does not list"
    assert sorted(listed - pages) == [], "the Documentation section lists pages that are not user pages"
    for name, target, what in rows:
        assert name == target and len(what.split()) >= 4, f"{target}: one line on what the page is for"
