"""The package's rooms keep every documented import path working.

The paths are found, not listed: every ``yutenv.X.Y`` name, ``from yutenv.X import a, b`` line,
``import yutenv.X`` and ``python -m yutenv.X`` command in README.md, python/README.md, docs/*.md
and python/examples, the console scripts of python/pyproject.toml and the Gymnasium
registration. A path that stops importing (a module moved without its old name in
``yutenv._moved.MOVED``, a name renamed) fails here, with the file that documents it.
"""

from __future__ import annotations

import importlib
import importlib.util
import pickle
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import gymnasium
import pytest

import yutenv
from yutenv._moved import MOVED
from yutenv.errors import MissingExtraError

PYTHON_DIR = Path(__file__).resolve().parents[1]
ROOT = PYTHON_DIR.parent

#: Words that look like dotted yutenv names in the docs but are file names.
NOT_PYTHON = {"yutenv.sock", "yutenv.exe"}

_DOTTED = re.compile(r"\byutenv(?:\.[A-Za-z_]\w*)+")
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
    """The object a dotted name names: the longest importable module prefix, then attributes."""
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
        obj = _import(module)
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


DOTTED = {k: v for k, v in _found(_DOTTED).items() if k not in NOT_PYTHON}
FROM = _found(_FROM)
RUN = _found(_RUN)


def test_the_docs_name_paths() -> None:
    # The scan itself works: these are documented today (a doc rewrite may change them).
    assert "yutenv.pettingzoo.env" in DOTTED and "yutenv.sb3.vec_env" in DOTTED
    assert any(line.startswith("from yutenv.evaluate import") for line in FROM)
    assert "python -m yutenv.bench" in RUN


@pytest.mark.parametrize("dotted", sorted(DOTTED))
def test_documented_name_resolves(dotted: str) -> None:
    try:
        _resolve(dotted)
    except (ImportError, AttributeError) as e:
        pytest.fail(f"{dotted} (named in {DOTTED[dotted]}) does not resolve: {e!r}")


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
#: What each lower room may import from the package (besides itself): the wire knows only the
#: protocol and the errors, the connection only the wire, and no front end, position or dataset
#: module reaches up into training, tools or integrations.
MAY_IMPORT = {
    "_wire": {"_protocol", "errors"},
    "connection": {"_protocol", "_meta", "errors", "_wire"},
    "envs": {"_protocol", "_layout", "errors", "_wire", "connection"},
    "positions": {"_protocol", "_progress", "errors", "_wire", "connection", "envs"},
    "data": {"_protocol", "_extras", "_files", "_layout", "_meta", "errors"},
}


def _imports(path: Path) -> list[str]:
    """The yutenv rooms a module imports at run time (not under ``if TYPE_CHECKING``)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = path.relative_to(PACKAGE).with_suffix("").parts
    pkg = list(rel[:-1])
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.level:
            base = pkg[: len(pkg) - (node.level - 1)]
            target = [*base, *(node.module.split(".") if node.module else [])]
            rooms = [target[0]] if target else [a.name for a in node.names]
            out += rooms
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            out += [n.split(".")[1] for n in names if n.startswith("yutenv.")]
    return out


@pytest.mark.parametrize("room", sorted(MAY_IMPORT))
def test_rooms_import_only_the_layers_below(room: str) -> None:
    allowed = MAY_IMPORT[room] | {room}
    for path in sorted((PACKAGE / room).rglob("*.py")):
        for imported in _imports(path):
            assert imported in allowed, f"{path.relative_to(PYTHON_DIR)} imports yutenv.{imported}; {room}/ may use {sorted(allowed)}"


def test_one_wire_and_one_connection_model() -> None:
    """Only the wire opens sockets and frames messages; only a Session makes a Client."""
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(PACKAGE).as_posix()
        if not name.startswith("_wire/"):
            assert "socket.socket(" not in text and "import socket" not in text, f"{name} opens a socket"
        if name != "connection/session.py":
            assert not re.search(r"\bClient\(", text), f"{name} makes its own Client: use yutenv.connection.Session"
