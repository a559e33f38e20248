"""The package's layers keep every documented import path working, and point one way.

The paths are found, not listed: every ``yutenv.X.Y`` name, ``from yutenv.X import a, b`` line,
``import yutenv.X`` and ``python -m yutenv.X`` command in README.md, python/README.md, docs/*.md
and python/examples, the console scripts of python/pyproject.toml and the Gymnasium
registration. A path that stops importing (a module moved without its old name in
``yutenv._moved.MOVED``, a name renamed) fails here, with the file that documents it. A dotted
name resolves as a user's code reaches it, attribute by attribute from the package, and a doc
names each module by its home, not by an old path that ``yutenv._moved`` still answers.
"""

from __future__ import annotations

import importlib
import importlib.util
import pickle
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium
import pytest
import tomllib

import yutenv
from yutenv._moved import MOVED
from yutenv.errors import MissingExtraError

PYTHON_DIR = Path(__file__).resolve().parents[1]
ROOT = PYTHON_DIR.parent

#: Words that look like dotted yutenv names in the docs but are file names.
NOT_PYTHON = {"yutenv.sock", "yutenv.exe"}

# Not after a dot: ``tool.yutenv.extras`` (a pyproject table) names no Python object.
_DOTTED = re.compile(r"(?<![\w.])yutenv(?:\.[A-Za-z_]\w*)+")
_FROM = re.compile(r"^[ \t]*from (yutenv(?:\.\w+)*) import \(?([\w ,]+)\)?", re.M)
_RUN = re.compile(r"python -m (yutenv(?:\.\w+)+)")


def _documents() -> list[Path]:
    docs = [ROOT / "README.md", PYTHON_DIR / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return docs + sorted((PYTHON_DIR / "examples").glob("*.py"))


def _found(pattern: re.Pattern[str]) -> dict[str, str]:
    """Each match of ``pattern`` in the documents -> the first document naming it."""
    out: dict[str, str] = {}
    for doc in _documents():
        for m in pattern.finditer(doc.read_text(encoding="utf-8")):
            out.setdefault(m.group(0), str(doc.relative_to(ROOT)))
    return out


def _import(module: str) -> Any:
    """Import ``module``; an extra that is not installed counts as found when the module is."""
    try:
        return importlib.import_module(module)
    except MissingExtraError:
        assert importlib.util.find_spec(module) is not None, module
        pytest.skip(f"{module}: its extra is not installed")


def _resolve(dotted: str) -> Any:
    """The object a dotted name names, as a user's code reaches it: the longest importable module
    prefix is imported (``import yutenv.a.b`` binds its submodules), then every part is an
    attribute from the package down. So ``yutenv.evaluate.evaluate`` fails as it does for a user:
    ``yutenv.evaluate`` is the function, even though ``import yutenv.evaluate`` finds the module."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            spec = None
        except MissingExtraError:  # a parent module needs an extra that is not installed
            pytest.skip(f"{module}: its extra is not installed")
        if spec is None:
            continue
        _import(module)
        obj = importlib.import_module(parts[0])
        for name in parts[1:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


def _home_module(new: str) -> Any:
    try:
        return importlib.import_module(new)
    except MissingExtraError:
        return None


DOTTED = {k: v for k, v in _found(_DOTTED).items() if k not in NOT_PYTHON}
FROM = _found(_FROM)
RUN = _found(_RUN)


def test_the_docs_name_paths() -> None:
    # The scan itself works: these are documented today (a doc rewrite may change them).
    assert "yutenv.pettingzoo.env" in DOTTED and "yutenv.integrations.sb3.vec_env" in DOTTED
    assert any(line.startswith("from yutenv.az import") for line in FROM)
    assert "python -m yutenv.tools.bench_envs" in RUN


@pytest.mark.parametrize("dotted", sorted(DOTTED))
def test_documented_name_resolves(dotted: str) -> None:
    try:
        _resolve(dotted)
    except (ImportError, AttributeError) as e:
        pytest.fail(f"{dotted} (named in {DOTTED[dotted]}) does not resolve: {e!r}")


#: The old paths that are also the package's public names for the same module
#: (``yutenv.pettingzoo``, ``yutenv.datasets``): what users write, so the docs may too.
FACADE = {
    old
    for old, new in MOVED.items()
    if old.count(".") == 1 and old.split(".")[1] in yutenv.__all__ and getattr(yutenv, old.split(".")[1]) is _home_module(new)
}


def _old_path(name: str, module: bool = False) -> str | None:
    """The canonical spelling of a dotted name that goes through an old path of :data:`MOVED`, or
    None when it is canonical. A name that is exactly one of the package's public names
    (``yutenv.evaluate``, the function) is canonical, unless it is imported or run as a module
    (``from yutenv.evaluate import ...``, ``python -m yutenv.bench``)."""
    for old in sorted(MOVED, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            public = name == old and old.count(".") == 1 and old.split(".")[1] in yutenv.__all__
            if old in FACADE or (public and not module):
                return None
            return MOVED[old] + name[len(old) :]
    return None


_IMPORT = re.compile(r"^[ \t]*import (yutenv(?:\.\w+)+)", re.M)


_PARAGRAPH = re.compile(r"\n\s*\n")


def old_paths(text: str) -> list[tuple[int, str, str]]:
    """(line, name, its canonical spelling) of every old path a document names. A paragraph that
    names ``yutenv._moved`` is about the old paths and may list them."""
    found: list[tuple[int, str, str]] = []
    start = 0
    for para in _PARAGRAPH.split(text):
        start = text.index(para, start)
        if "yutenv._moved" not in para:
            for pattern in (_DOTTED, _RUN, _FROM, _IMPORT):
                for m in pattern.finditer(para):
                    name = m.group(0) if pattern is _DOTTED else m.group(1)
                    new = _old_path(name, module=pattern is not _DOTTED)
                    if new is not None and name not in NOT_PYTHON:
                        found.append((text.count("\n", 0, start + m.start(0 if pattern is _DOTTED else 1)) + 1, name, new))
        start += len(para)
    return sorted(set(found))


def test_docs_name_the_canonical_paths() -> None:
    # The old paths still import (yutenv._moved), but a doc teaches the module's home: one name
    # for one module, the one the API reference and tracebacks show. The research log records
    # the commands as they were run, and is left as it is.
    found = [
        f"{doc.relative_to(ROOT)}:{n}: {name} -> {new}"
        for doc in _documents()
        if doc.name != "RESEARCH.md"
        for n, name, new in old_paths(doc.read_text(encoding="utf-8"))
    ]
    assert not found, "docs name old module paths; name their homes:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("from yutenv.sb3 import vec_env", [(1, "yutenv.sb3", "yutenv.integrations.sb3")]),
        ("see\n`yutenv.evaluate.RATING_ANCHORS`", [(2, "yutenv.evaluate.RATING_ANCHORS", "yutenv.evaluation.evaluate.RATING_ANCHORS")]),
        ("python -m yutenv.bench --help", [(1, "yutenv.bench", "yutenv.tools.bench_envs")]),
        ("x\nfrom yutenv.evaluate import evaluate", [(2, "yutenv.evaluate", "yutenv.evaluation.evaluate")]),
        ("import yutenv.evaluate", [(1, "yutenv.evaluate", "yutenv.evaluation.evaluate")]),
        ("from yutenv import evaluate; from yutenv.pettingzoo import env", []),
        ("python -m yutenv.tools.bench_envs; yutenv.evaluate(policy); yutenv.pettingzoo.env()", []),
        ("yutenv.datasets.transitions and yutenv.evaluation.evaluate.RATING_ANCHORS", []),
        ("Old names (`yutenv.sb3`,\n`yutenv.state`) are answered by `yutenv._moved`.\n\nyutenv.state.Game", [(4, "yutenv.state.Game", "yutenv.positions.state.Game")]),
    ],
)  # fmt: skip
def test_the_old_path_scan_finds_what_it_should(text: str, found: list[tuple[int, str, str]]) -> None:
    assert old_paths(text) == found


@pytest.mark.parametrize("line", sorted(FROM))
def test_documented_from_import_works(line: str) -> None:
    m = _FROM.match(line)
    assert m is not None
    module = _import(m.group(1))
    for name in (n.split(" as ")[0].strip() for n in m.group(2).split(",")):
        if name:
            assert hasattr(module, name) or importlib.util.find_spec(f"{m.group(1)}.{name}"), (
                f"{line.strip()} ({FROM[line]}): no {name}"
            )


@pytest.mark.parametrize("command", sorted(RUN))
def test_documented_module_runs(command: str) -> None:
    module = command.split()[-1]
    spec = importlib.util.find_spec(module)
    assert spec is not None, f"{command} ({RUN[command]}): no module {module}"
    if module in MOVED:  # the old name runs the moved module as __main__
        r = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=300)
        if "MissingExtraError" in r.stderr or "pip install" in r.stderr:
            pytest.skip(f"{module}: its extra is not installed")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("usage: "), r.stdout


def test_console_scripts_and_registration_resolve() -> None:
    project = tomllib.loads((PYTHON_DIR / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for name, target in project["scripts"].items():
        module, _, attr = target.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), f"console script {name} = {target}"
    spec = gymnasium.registry[yutenv.ENV_ID]
    for ep in (spec.entry_point, spec.vector_entry_point):
        assert isinstance(ep, str)
        module, _, attr = ep.partition(":")
        assert isinstance(getattr(importlib.import_module(module), attr), type), ep


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_old_path_is_the_same_module(old: str, new: str) -> None:
    try:
        o, n = importlib.import_module(old), importlib.import_module(new)
    except MissingExtraError:
        pytest.skip(f"{new}: its extra is not installed")
    assert o is n  # not a copy: one class identity, monkeypatching the old name patches the module
    assert n.__name__ == new and n.__spec__ is not None and n.__spec__.name == new


def test_old_pickles_load() -> None:
    # What an earlier version pickled names the flat modules: a pickle of the class by its old path.
    for old, cls in [("yutenv.config", yutenv.EnvConfig), ("yutenv.state", yutenv.Game), ("yutenv.core", yutenv.Batch)]:
        assert pickle.loads(f"c{old}\n{cls.__qualname__}\n.".encode()) is cls


@pytest.mark.parametrize("name", sorted(n for n in yutenv.__all__ if isinstance(getattr(yutenv, n), type)))
def test_public_classes_pickle_by_their_home(name: str) -> None:
    cls = getattr(yutenv, name)
    assert getattr(importlib.import_module(cls.__module__), cls.__qualname__) is cls
    assert pickle.loads(pickle.dumps(cls)) is cls


PACKAGE = PYTHON_DIR / "yutenv"
ROOT_LAYER = "yutenv"  # the package's own __init__.py, the facade: it may use any layer below it

#: Every subpackage and top-level module of the package (a layer), bottom first, with the layers
#: it may import besides itself. A layer may list only layers above it in this table, so the
#: table has no cycle: the wire knows only the protocol and the errors, the connection only the
#: wire, no front end, position, dataset or evaluation module reaches up into training, and
#: nothing imports the package root. A new module is placed here, or the test fails.
LAYERS: list[tuple[str, set[str]]] = [
    ("_protocol", set()),
    ("errors", set()),
    ("_meta", set()),
    ("_files", {"errors"}),
    ("_progress", set()),
    ("_moved", set()),
    ("_specs", {"_protocol"}),
    ("_extras", {"errors"}),
    ("_layout", {"_protocol"}),
    ("_wire", {"_protocol", "errors"}),
    ("connection", {"_protocol", "_meta", "errors", "_wire"}),
    ("envs", {"_protocol", "_layout", "_specs", "errors", "_wire", "connection"}),
    ("positions", {"_protocol", "_progress", "errors", "_wire", "connection", "envs"}),
    ("data", {"_extras", "_files", "_meta", "_layout", "_progress", "_protocol", "errors"}),
    ("evaluation", {"_progress", "_protocol", "errors", "connection", "envs"}),
    ("imitation", {"_progress", "data"}),
    (
        "az",
        {
            "_extras",
            "_files",
            "_layout",
            "_progress",
            "_protocol",
            "_specs",
            "errors",
            "connection",
            "envs",
            "data",
            "evaluation",
        },
    ),
    ("nets", {"_extras", "_files", "_protocol", "errors", "az"}),
    ("league", {"_files", "_protocol", "_specs", "errors", "evaluation", "nets"}),
    ("integrations", {"_extras", "_files", "_protocol", "errors", "envs", "positions", "league"}),
    ("recipes", {"_progress", "_specs", "evaluation", "imitation", "integrations", "league"}),
    ("tools", {"_extras", "_protocol", "errors", "connection", "envs", "evaluation", "integrations"}),
    (ROOT_LAYER, {"_meta", "_moved", "_protocol", "errors", "connection", "envs", "positions", "data", "evaluation", "nets"}),
]
MAY_IMPORT = dict(LAYERS)


def _module_name(path: Path) -> str:
    """``yutenv/az/train.py`` -> ``az.train``; a package's ``__init__.py`` is the package ("" for the root)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    return module.split(".")[0] if module else ROOT_LAYER


def _is_module(module: str) -> bool:
    p = PACKAGE.joinpath(*module.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _home(full: str) -> str | None:
    """A ``yutenv`` module's name inside the package, an old path answered by its new home; None
    for a name outside the package."""
    full = MOVED.get(full, full)
    if full == "yutenv":
        return ""
    return full.removeprefix("yutenv.") if full.startswith("yutenv.") else None


def _imports(path: Path) -> set[str]:
    """The package's modules ``path`` imports: at the top, in functions, under ``if TYPE_CHECKING``
    (a type is a dependency too) and through ``importlib.import_module("...")`` with a literal
    name; ``from X import name`` counts ``X.name`` when that is a module."""
    import ast

    me = _module_name(path)
    package = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    package = [p for p in package if p]

    def absolute(name: str, level: int) -> str:
        base = package[: len(package) - (level - 1)] if level else []
        return ".".join(["yutenv", *base, *([name] if name else [])]) if level else name

    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = absolute(node.module or "", node.level)
            for a in node.names:
                sub = f"{module}.{a.name}"
                home = _home(sub)
                names.append(sub if sub in MOVED or (home is not None and _is_module(home)) else module)
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            name = node.args[0].value
            names = [absolute(name.lstrip("."), len(name) - len(name.lstrip(".")))]
        out.update(h for h in map(_home, names) if h is not None)
    out.discard(me)
    return out


GRAPH = {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_the_layers_are_a_table() -> None:
    """Each layer once, each allowed import a layer below it, and every module in a layer."""
    rank = {name: i for i, (name, _) in enumerate(LAYERS)}
    assert len(rank) == len(LAYERS), "a layer is listed twice"
    for i, (name, may) in enumerate(LAYERS):
        for m in may:
            assert rank.get(m, len(LAYERS)) < i, f"LAYERS: {name} may import {m}, which is not a layer below it"
    missing = sorted({_layer(m) for m in GRAPH} - set(rank))
    assert not missing, f"not in LAYERS (place each in its layer): {missing}"


@pytest.mark.parametrize("layer", [name for name, _ in LAYERS])
def test_layers_import_only_the_layers_below(layer: str) -> None:
    allowed = MAY_IMPORT[layer] | {layer}
    for module, imported in sorted(GRAPH.items()):
        if _layer(module) != layer:
            continue
        for target in sorted(imported):
            assert _layer(target) in allowed, (
                f"yutenv.{module} imports yutenv.{target or '(the package root)'}; {layer} may use {sorted(allowed)}"
            )


def test_no_import_cycle() -> None:
    """No module imports, however indirectly, one that imports it back: not between layers, and
    not between the modules of one layer (the table cannot see those)."""
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[str] = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in sorted(GRAPH.get(n, ())):
            if state.get(m) == 1:
                cycles.append(" -> ".join(stack[stack.index(m) :] + [m]))
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(GRAPH):
        if n not in state:
            visit(n)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_graph_sees_hidden_imports() -> None:
    # The scan reads what a plain top-level scan misses: a function's import, importlib with a
    # literal name, an old path; were it blind to them, the cycle test would pass for nothing.
    assert "az.cluster" in GRAPH["az.train"]  # importlib.import_module(".cluster", __package__)
    assert "evaluation.evaluate" in GRAPH["evaluation.ladder"]  # inside a function
    assert "data.datasets" in GRAPH["az.diagnose"]


def test_one_wire_and_one_connection_model() -> None:
    """Only the wire opens sockets and frames messages; only a Session makes a Client."""
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(PACKAGE).as_posix()
        if not name.startswith("_wire/"):
            assert "socket.socket(" not in text and "import socket" not in text, f"{name} opens a socket"
        if name != "connection/session.py":
            assert not re.search(r"\bClient\(", text), f"{name} makes its own Client: use yutenv.connection.Session"


#: The most lines a hand-written module may have: a longer one holds several concerns, to be split
#: into modules by concern (the public names re-exported from the original path). Tests and the
#: generated ``_protocol.py`` ("Code generated ... DO NOT EDIT." on its first line) are exempt; the
#: Go files are held to the same rule by layout_test.go.
MAX_LINES = 600


def test_no_hand_written_module_over_max_lines() -> None:
    files = [*PACKAGE.rglob("*.py"), *(PYTHON_DIR / "examples").glob("*.py"), PYTHON_DIR / "hatch_build.py"]
    for path in sorted(files):
        text = path.read_text(encoding="utf-8")
        if text.startswith("# Code generated ") and "DO NOT EDIT" in text.splitlines()[0]:
            continue
        n = text.count("\n")
        name = path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else path.name
        assert n <= MAX_LINES, f"{path.relative_to(PYTHON_DIR)} ({name}) has {n} lines (at most {MAX_LINES}): split it by concern"
