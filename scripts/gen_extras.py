#!/usr/bin/env python3
"""Writes the table of the package's extras into README.md's "Install" section.

The one list of extras is python/pyproject.toml: what each installs is its
[project.optional-dependencies] entry, what it is for the one line of [tool.yutenv.extras].
Run this after changing either (python/tests/test_docs.py fails while README.md is stale, or
while an extra has no line):

    python3 scripts/gen_extras.py
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PYPROJECT = REPO / "python" / "pyproject.toml"
BEGIN = "<!-- BEGIN GENERATED extras: python3 scripts/gen_extras.py, from python/pyproject.toml -->"
END = "<!-- END GENERATED extras -->"


def table(pyproject: dict) -> str:  # type: ignore[type-arg]
    """The Markdown table of the extras, in pyproject.toml's order."""
    extras = pyproject["project"]["optional-dependencies"]
    about = pyproject["tool"]["yutenv"]["extras"]
    missing = sorted(set(extras) ^ set(about))
    if missing:
        raise SystemExit(f"python/pyproject.toml: every extra needs one line in [tool.yutenv.extras] and no other: {missing}")
    rows = ["| extra | for | installs |", "|---|---|---|"]
    for name, reqs in extras.items():
        rows.append(f"| `{name}` | {about[name]} | {', '.join(f'`{r}`' for r in reqs)} |")
    return "\n".join(rows) + "\n"


def render(readme: str, pyproject: dict) -> str:  # type: ignore[type-arg]
    """README.md's text with the table between the markers made current."""
    head, sep, rest = readme.partition(BEGIN + "\n")
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"README.md has no {BEGIN!r} ... {END!r} markers")
    return head + sep + table(pyproject) + sep2 + tail


def main() -> int:
    pyproject = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    text = README.read_text(encoding="utf-8")
    new = render(text, pyproject)
    if new != text:
        README.write_text(new, encoding="utf-8")
        print("README.md: the extras table rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
