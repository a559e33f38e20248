"""Every request the package sends names a method, and params, that the server declares.

The server's method declarations (protocol.Methods, in Go) are generated into
``yutenv._protocol.METHODS``; this test reads the package's source and checks every call site
that names its method with a literal against them, so a renamed or removed method or param
fails here rather than on a user's machine.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import yutenv
from yutenv._protocol import METHODS

# The functions that send one request: the client's, the state module's (which adds ``game``).
SENDERS = {"call", "call_packed", "_call"}


def _calls() -> list[tuple[str, int, str, set[str] | None]]:
    """(file, line, method, literal param keys or None) of every request sent with a literal method."""
    root = Path(yutenv.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            first = node.args[0]
            if name not in SENDERS or not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            keys: set[str] | None = None
            if len(node.args) > 1 and isinstance(node.args[1], ast.Dict):
                keys = {k.value for k in node.args[1].keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            found.append((str(path.relative_to(root)), node.lineno, first.value, keys))
    return found


CALLS = _calls()


def test_the_scan_finds_the_package_requests() -> None:
    sent = {method for _, _, method, _ in CALLS}
    # The package speaks most of the protocol; a scan that finds little is broken.
    assert {"hello", "make", "reset", "step", "game", "apply", "query", "selfplay_next"} <= sent


@pytest.mark.parametrize(("path", "line", "method", "keys"), CALLS, ids=[f"{p}:{n}" for p, n, _, _ in CALLS])
def test_every_sent_method_and_param_is_declared(path: str, line: int, method: str, keys: set[str] | None) -> None:
    assert method in METHODS, f"{path}:{line} sends {method!r}, which protocol.Methods does not declare"
    if keys is not None:
        unknown = keys - set(METHODS[method].params)
        assert not unknown, f"{path}:{line}: {method} has no params {sorted(unknown)} (it takes {METHODS[method].params})"


def test_methods_match_the_server() -> None:
    # The hello of a running server lists the methods it serves, in the declared order.
    from yutenv.core import Session

    with Session() as s:
        assert list(s.hello["methods"]) == list(METHODS)
