"""The API reference (docs/api/, built by ``make docs``) documents every public name of the package.

Public, as the reference renders it (mkdocs.yml: ``filters: public``): a module whose dotted path
has no part starting with an underscore; its public names are its ``__all__``, or without one the
names it defines (not imports) that do not start with an underscore. The package is read as the
reference reads it, by griffe with the site's extension (python/mkdocs_hooks.py: ``#:`` comments
are the docstrings of the attributes below them).

The checks of the source run everywhere; the check of the built site (its inventory,
``objects.inv``) runs where ``YUTENV_DOCS_SITE`` names it, as make test's docs lane does after
``make docs``. The hooks that publish the site (README as the home page, links out of docs/, the
navigation) are tested here too, on small made-up trees.
"""

from __future__ import annotations

import importlib.util
import os
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import yutenv

griffe = pytest.importorskip("griffe", reason="the docs extra (make py-install installs it) renders the reference")

REPO = Path(__file__).resolve().parents[2]
API = REPO / "docs" / "api"
DIRECTIVE = re.compile(r"^::: (\S+)", re.M)


def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("yutenv_mkdocs_hooks", REPO / "python" / "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def package() -> Any:
    ext = griffe.load_extensions(f"{REPO / 'python' / 'mkdocs_hooks.py'}:SphinxRoles")
    return griffe.load(
        "yutenv", search_paths=[str(REPO / "python")], resolve_aliases=True, resolve_external=False, extensions=ext
    )


def public_modules(mod: Any) -> Iterator[Any]:
    """The package's public modules: no part of the path starts with an underscore."""
    yield mod
    for name, sub in mod.members.items():
        if not name.startswith("_") and not sub.is_alias and sub.is_module:
            yield from public_modules(sub)


def public_names(mod: Any) -> Iterator[tuple[str, Any]]:
    """(name, object) of a module's public names; an imported name is its final target."""
    for name, obj in mod.members.items():
        if not obj.is_public:
            continue
        target = obj.final_target if obj.is_alias else obj
        if not target.is_module:
            yield name, target


def directives() -> dict[str, str]:
    """Every ``::: path`` of the reference's pages -> the page."""
    out: dict[str, str] = {}
    for page in sorted(API.glob("*.md")):
        for path in DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            out[path] = page.name
    return out


def test_every_public_module_has_a_reference_entry(package: Any) -> None:
    have = directives()
    missing = [m.path for m in public_modules(package) if m.path not in have]
    assert not missing, f"public modules with no '::: module' entry in docs/api/*.md: {missing}"
    assert len(have) == len(set(have)), "a module is rendered on two pages"


def test_every_public_name_has_a_docstring(package: Any) -> None:
    bare = []
    for mod in public_modules(package):
        for name, obj in public_names(mod):
            if obj.package.name == "yutenv" and not (obj.docstring and obj.docstring.value.strip()):
                bare.append(f"{obj.filepath.relative_to(REPO)}:{obj.lineno}: {mod.path}.{name}")
    assert not bare, "public names without a docstring (or a '#:' comment above an attribute):\n" + "\n".join(sorted(set(bare)))


def test_top_level_exports_are_all_in_its_page() -> None:
    # docs/api/toplevel.md renders the names the top level defines and links the others to the
    # module that defines them: each name of yutenv.__all__ is one or the other.
    text = (API / "toplevel.md").read_text(encoding="utf-8")
    members = re.search(r"members: \[([^\]]*)\]", text)
    assert members is not None
    rendered = {m.strip() for m in members.group(1).split(",")}
    linked = set(re.findall(r"\[`yutenv\.(\w+)`\]\[", text))
    missing = sorted(set(yutenv.__all__) - rendered - linked)
    assert not missing, f"names of yutenv.__all__ neither rendered nor linked in docs/api/toplevel.md: {missing}"
    stale = sorted((rendered | linked) - set(yutenv.__all__))
    assert not stale, f"docs/api/toplevel.md names what yutenv.__all__ does not: {stale}"


def inventory(site: Path) -> set[str]:
    """The Python objects of a built site's objects.inv (Sphinx's inventory format, version 2)."""
    raw = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = raw.index(b"\n", header_end) + 1
    names = set()
    for line in zlib.decompress(raw[header_end:]).decode().splitlines():
        name, domain = line.split(" ", 2)[:2]
        if domain.startswith("py:"):
            names.add(name)
    return names


def test_the_built_site_renders_every_public_name(package: Any) -> None:
    site = os.environ.get("YUTENV_DOCS_SITE")
    if not site:
        pytest.skip("YUTENV_DOCS_SITE is not set: make test's docs lane runs this after make docs")
    have = inventory(Path(site))
    missing = []
    for mod in public_modules(package):
        if mod.path not in have:
            missing.append(mod.path)
        for _, obj in public_names(mod):
            if obj.package.name == "yutenv" and obj.path not in have:
                missing.append(obj.path)
    assert not missing, f"public names the built reference does not render: {sorted(set(missing))}"


def test_the_inventory_check_sees_a_missing_name(tmp_path: Path) -> None:
    # The inventory reader finds what an objects.inv lists, and nothing else.
    body = "yutenv.make py:function 1 api/yutenv/#$ -\nRULES std:label -1 RULES/#rules -\n"
    header = b"# Sphinx inventory version 2\n# Project: yutenv\n# Version: 0.0\n# The remainder of this file is compressed using zlib.\n"
    (tmp_path / "objects.inv").write_bytes(header + zlib.compress(body.encode()))
    assert inventory(tmp_path) == {"yutenv.make"}


def test_links_out_of_docs_go_where_the_site_has_the_file(tmp_path: Path) -> None:
    h = hooks()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "GUIDE.md").write_text("# Guide\n")
    (tmp_path / "docs" / "LOG.md").write_text("# Log\n")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "x.py").write_text("print(1)\n")
    (tmp_path / "CHANGELOG.md").write_text("# Changes\n")
    (tmp_path / "README.md").write_text("# Home\n")
    site = h.Site(tmp_path, "docs", {"GUIDE.md"})  # LOG.md is left out of the guides

    guide = "[ex](../examples/x.py) [log](LOG.md#a) [c](../CHANGELOG.md) [home](../README.md#x) [web](https://example.org) [g](GUIDE.md)\n```\n[no](../examples/x.py)\n```"
    assert site.rewrite(guide, "GUIDE.md").split("\n") == [
        "[ex](source/examples/x.py) [log](source/docs/LOG.md#a) [c](source/CHANGELOG.md) [home](index.md#x) [web](https://example.org) [g](GUIDE.md)",
        "```",
        "[no](../examples/x.py)",  # code is left alone
        "```",
    ]
    # README, the home page, links into docs/ as GitHub sees it.
    assert site.rewrite("[g](docs/GUIDE.md#s) [e](examples/)", "index.md") == "[g](GUIDE.md#s) [e](source/examples/index.md)"
    # What a page links is published: a file as itself, a folder as a list of its files.
    assert site.publish("examples") == ["source/examples/index.md", "source/examples/x.py"]
    assert site.publish("docs/LOG.md") == ["source/docs/LOG.md"]
    assert site.publish("docs/GUIDE.md") == [] and site.publish("nowhere.md") == []
    # Code spans are left alone too.
    assert (
        site.rewrite("`[c](../CHANGELOG.md)` [c](../CHANGELOG.md)", "GUIDE.md")
        == "`[c](../CHANGELOG.md)` [c](source/CHANGELOG.md)"
    )
    # A reference definition, and an HTML link, the same way.
    assert site.rewrite('[c]: ../CHANGELOG.md "Changes"', "GUIDE.md") == '[c]: source/CHANGELOG.md "Changes"'
    assert site.rewrite('<img src="../examples/x.py">', "GUIDE.md") == '<img src="source/examples/x.py">'
    # A link that names no file is left as written (strict mode fails on it).
    assert site.rewrite("[x](../nowhere.md)", "GUIDE.md") == "[x](../nowhere.md)"


def test_the_navigation_follows_readme_and_names_what_it_misses() -> None:
    h = hooks()
    readme = "# x\n[r](docs/B.md)\n## Documentation\n- [b](docs/B.md)\n- [a](docs/A.md)\n## Other\n[c](docs/C.md)\n"
    api_index = "- [y](yutenv.md)\n"
    nav, missing = h.nav_order(readme, api_index, ["A.md", "B.md", "C.md"], ["api/index.md", "api/yutenv.md", "api/z.md"], "docs")
    assert nav == [{"Home": "index.md"}, "B.md", "A.md", "C.md", {"API reference": ["api/index.md", "api/yutenv.md", "api/z.md"]}]
    assert missing == [
        "docs/C.md is not linked from README.md's Documentation section (the site's navigation follows it): add it there",
        "docs/api/z.md is not linked from docs/api/index.md (the reference's navigation follows it): add it there",
    ]
    # Without a Documentation section, the order of README's links.
    nav, missing = h.nav_order("[c](docs/C.md) [a](docs/A.md)", "", ["A.md", "C.md"], [], "docs")
    assert nav == [{"Home": "index.md"}, "C.md", "A.md"] and not missing


def test_sphinx_roles_become_cross_references(package: Any) -> None:
    h = hooks()
    envs = package["envs"]
    got = h.convert_roles(
        ":class:`~.batch.Batch`, :func:`yutenv.evaluate`, :mod:`yutenv._protocol`, :class:`numpy.ndarray`, :func:`no_such_name`",
        envs,
    )
    assert got == (
        "[`Batch`][yutenv.envs.batch.Batch], [`yutenv.evaluate()`][yutenv.evaluation.evaluate.evaluate], "
        "`yutenv._protocol`, `numpy.ndarray`, [`no_such_name()`][no_such_name]"
    )
    assert h.markdown_blocks(">>> 1 + 1\n2\n\nText::\n\n    code") == "```pycon\n>>> 1 + 1\n2\n```\n\nText:\n\n    code"
