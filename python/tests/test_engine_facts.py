"""The package copies no engine fact by hand: it reads them from the generated ``yutenv._protocol``.

The Go engine declares the throw, route and phase names, the action encoding and the packed
state's layout once; ``go generate ./cmd/genpy`` writes them into ``yutenv/_protocol.py``,
and a Go test fails when that file is stale. A copy typed into another module goes stale
silently: the route list of ``yutenv.positions.state`` once lacked ``LINE``, so a line board's
stack given by route id 5 was refused. This test reads the package's code (docstrings aside) and
fails, naming file and line, on

* a literal tuple, list, set or dict keys of two or more throw, route or phase names;
* a string spelling the throw back-do (``"back-do"`` alone or in a message, ``"backdo"``);
* a phase name compared with, or chosen by a conditional expression;
* the number of actions or a packed state's size (NUM_ACTIONS, PACKED_STATE_SIZE,
  PACKED_STATE_V1_SIZE), except as a shift or power;
* the number of sources, the enter source or the number of stations (NUM_SOURCES,
  ENTER_SOURCE, NUM_STATIONS) in action arithmetic: ``%``, ``//``, ``*``, ``divmod`` or a comparison;
* the number of throws, or the last throw id, compared with, ranged over or repeating a list,
  in a function (or module statement) that speaks of throws or the pool;
* a module constant named after a packed field (``_SEAT``, ``_HAND``...) or ``PACKED`` set
  from a number;
* the ``players`` option's bounds given to a keyword ``min_num_players``, ``max_players`` and the like.

The docs are held to the same constants where they quote them: a packed state's size and
version in prose, and docs/FORMATS.md's table of its fields.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import yutenv
from yutenv import _protocol

PACKAGE = Path(yutenv.__file__).parent
GENERATED = PACKAGE / "_protocol.py"


def _norm(s: str) -> str:
    return s.lower().replace("-", "").replace("_", "")


NAME_SETS = {
    "throw": ("THROW_NAMES", {_norm(n) for n in _protocol.THROW_NAMES}),
    "route": ("ROUTES", {_norm(n) for n in _protocol.ROUTES}),
    "phase": ("PHASES", {_norm(n) for n in _protocol.PHASES}),
}


def _numbers(*names: str) -> dict[int, str]:
    """The values of these constants of yutenv._protocol -> the names of each."""
    out: dict[int, str] = {}
    for name in names:
        v = getattr(_protocol, name)
        out[v] = f"{out[v]} or {name}" if v in out else name
    return out


#: Numbers distinctive enough to flag anywhere in code.
NUMBERS = _numbers("NUM_ACTIONS", "PACKED_STATE_SIZE", "PACKED_STATE_V1_SIZE")
#: Numbers flagged in action arithmetic only (``a % 30``, ``a // 30``, ``t * 30``, ``divmod(a, 30)``,
#: ``src == 29``): elsewhere 30 is as often a timeout.
SOURCE_NUMBERS = _numbers("NUM_SOURCES", "ENTER_SOURCE", "NUM_STATIONS")
THROW_COUNTS = {_protocol.NUM_THROWS: "NUM_THROWS", _protocol.NUM_THROWS - 1: "NUM_THROWS - 1"}
#: A module constant holds a packed offset or size when its name's words are a packed field's name
#: or "packed", with only these words besides ("version" and "start" alone are too common).
PACKED_WORDS = {"packed", *_protocol.PACKED_FIELDS} - {"version", "start"}
PACKED_EXTRA = {"version", "start", "offset", "off", "size", "bytes", "len", "v1", "v2"}
PLAYERS = next(o for o in _protocol.RULE_OPTIONS if o.key == "players")


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _words(node: ast.AST) -> set[str]:
    """The normalized identifiers and strings of a subtree."""
    out: set[str] = set()
    for n in ast.walk(node):
        for w in (*(getattr(n, a, None) for a in ("id", "attr", "arg", "name")), _str(n)):
            if isinstance(w, str):
                out.add(_norm(w))
    return out


def _speaks_of_throws(words: set[str]) -> bool:
    throws = NAME_SETS["throw"][1]
    return any("throw" in w or "pool" in w or w in throws for w in words)


def _packed_name(name: str) -> bool:
    words = {w.lower() for w in name.split("_") if w}
    return bool(words & PACKED_WORDS) and words <= PACKED_WORDS | PACKED_EXTRA


def copies(source: str, name: str) -> list[str]:
    """``name:line: what`` for every hand copy of an engine fact in ``source``."""
    tree = ast.parse(source, name)
    parent: dict[ast.AST, ast.AST] = {}
    scope: dict[ast.AST, ast.AST] = {}  # node -> its innermost function, or its module statement

    def visit(node: ast.AST, sc: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            parent[child] = node
            s = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else sc or child
            scope[child] = s
            visit(child, s)

    visit(tree, None)
    docstrings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Expr) and _str(n.value) is not None}
    found: list[tuple[int, str]] = []

    def flag(node: ast.AST, what: str) -> None:
        found.append((getattr(node, "lineno", 0), what))

    for node in ast.walk(tree):
        if node in docstrings:
            continue
        # Name lists: tuples, lists, sets and dict keys of names.
        items: list[ast.expr | None] = []
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = list(node.keys)
        strs = [_str(e) for e in items]
        if len(strs) >= 2 and all(s is not None for s in strs):
            for kind, (const, names) in NAME_SETS.items():
                if all(_norm(s) in names for s in strs if s is not None):
                    flag(node, f"a hand copy of {kind} names {strs}: use yutenv._protocol.{const}")
        s = _str(node)
        if s is not None and ("back-do" in s.lower() or s.lower() == "backdo"):
            flag(node, f"the throw name back-do written out in {s!r}: use yutenv._protocol.THROW_NAMES")
        up = parent.get(node)
        if s is not None and _norm(s) in NAME_SETS["phase"][1]:  # noqa: SIM102
            if isinstance(up, ast.Compare) or (isinstance(up, ast.IfExp) and node is not up.test):
                flag(node, f"the phase name {s!r} written out: use yutenv._protocol.PHASES")
        if isinstance(node, ast.Constant) and type(node.value) is int:
            v = node.value
            shift = isinstance(up, ast.BinOp) and isinstance(up.op, (ast.LShift, ast.RShift, ast.Pow))
            if v in NUMBERS and not shift:
                flag(node, f"{v} written out: use yutenv._protocol.{NUMBERS[v]} (or what it derives from)")
            arithmetic = isinstance(up, ast.BinOp) and isinstance(up.op, (ast.Mod, ast.FloorDiv, ast.Mult))
            divmod_ = isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id == "divmod"
            if v in SOURCE_NUMBERS and (arithmetic or divmod_ or isinstance(up, ast.Compare)):
                flag(node, f"{v} written out: use yutenv._protocol.{SOURCE_NUMBERS[v]}")
            if v in THROW_COUNTS and _speaks_of_throws(_words(scope[node])):
                ranged = isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id == "range"
                repeats = isinstance(up, ast.BinOp) and isinstance(up.op, ast.Mult) and isinstance(up.left, ast.List)
                if isinstance(up, ast.Compare) or ranged or repeats:
                    flag(node, f"{v} written out where throws are counted: use yutenv._protocol.{THROW_COUNTS[v]}")
            bound = isinstance(up, ast.keyword) and re.fullmatch(r"(min|max)_(num_)?players", up.arg or "")
            if bound and v in (PLAYERS.min, PLAYERS.max):
                flag(node, f"a bound on the seats, {v}, written out: use the players option of yutenv._protocol.RULE_OPTIONS")
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and scope.get(node) is node and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            ids = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            packed = [i for i in ids if i.lstrip("_").isupper() and _packed_name(i)]
            if packed and any(_is_int(n) for n in ast.walk(node.value)):
                flag(node, f"{', '.join(packed)} set from numbers: use yutenv._protocol.PACKED_FIELDS")
    return [f"{name}:{line}: {what}" for line, what in sorted(found)]


def _files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != GENERATED)


def test_the_scan_finds_hand_copies() -> None:
    # Each line marked "# copy" is a hand copy the scan must find; the derived forms are not.
    bad = """
ROUTES = ("OUTER", "C1", "C2", "CENTRE/C1", "CENTRE/C2")  # copy
THROWS = ["back-do", "do", "gae"]  # copy
PHASE_OF = {"throw": 0, "move": 1, "over": 2}  # copy
name = k.replace("backdo", "back-do")  # copy
ok = s.phase == "over"  # copy
ph = "move" if pool else "throw"  # copy
src = action % 30  # copy
throw, src = divmod(action, 30)  # copy
enter = src == 29  # copy
legal = 0 <= a < 180  # copy
_SEAT, _PHASE = 1, 2  # copy
_PLACE = _HAND + 4 + 4  # copy
_PACKED_V1_SIZE = 104  # copy
BACK_DO, DO, GAE, GEOL, YUT, MO = range(6)  # copy
def apply_throw(t):
    if not 0 <= t <= 5:  # copy
        counts = [0] * 6  # copy
info = GameType(max_num_players=4, min_num_players=2)  # copy
"""
    want = {i for i, line in enumerate(bad.split("\n"), start=1) if line.endswith("# copy")}
    found = copies(bad, "bad.py")
    assert {int(f.split(":")[1]) for f in found} == want, "\n".join(found)
    good = '''
"""Throws are ("back-do", "do", "gae", "geol", "yut", "mo"); actions throw*30 + source < 180."""
from ._protocol import ENTER_SOURCE, NUM_SOURCES, PACKED_FIELDS, ROUTES, THROW_NAMES
_SEAT = PACKED_FIELDS["seat"].offset
_THROW, _MOVE, _OVER = PHASES
MAX_BYTES = 1 << 30
timeout = 30.0
q.get(timeout=30)
opts = ("on", "off")
info = GameType(max_num_players=_MAX_PLAYERS, num_players=2)
SEAT_WIDTH = 12
START = 3
def grow(files):
    return len(files) > 5
'''
    assert copies(good, "good.py") == []


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_engine_fact_is_copied_by_hand(path: Path) -> None:
    found = copies(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))
    assert not found, "engine facts copied by hand (generate them into yutenv/_protocol.py instead):\n" + "\n".join(found)


def test_the_package_and_its_server_have_one_version() -> None:
    """The wheel's version (pyproject.toml reads yutenv/_meta.py) is the server's: a release bumps
    ``cmd/yutenv.Version`` and ``yutenv._meta.__version__`` together, and this fails on a bump of one."""
    import subprocess

    import yutenv
    from yutenv.connection.server import binary_path

    out = subprocess.run([str(binary_path()), "version"], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["yutenv", yutenv.__version__]
    import importlib.metadata

    assert importlib.metadata.version("yutenv") == yutenv.__version__


# The docs quote the packed state's size and layout in prose; each quote is checked against the
# generated constants (python/README.md once said 104 bytes after version 2 made it 108).
REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", REPO / "python" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: How the docs quote a packed state's size: (pattern, the constant its group must equal).
PACKED_QUOTES = [
    (r"(\d+) packed bytes", "PACKED_STATE_SIZE"),
    (r"\((?:N|\d+), (\d+)\)`?(?: uint8)?(?: array| arrays)? of packed states", "PACKED_STATE_SIZE"),
    (r"\(\d+, (\d+)\) uint8", "PACKED_STATE_SIZE"),
    (r"`env\.PackedSize` = (\d+) bytes", "PACKED_STATE_SIZE"),
    (r"`state_size` bytes, (\d+) today", "PACKED_STATE_SIZE"),
    (r"packed state \| version \d+, (\d+) bytes", "PACKED_STATE_SIZE"),
    (r"packed state \| version (\d+),", "PACKED_STATE_VERSION"),
    (r"Packed state \(`State\.AppendPacked`, `State\.Unpack`\), version (\d+)", "PACKED_STATE_VERSION"),
    (r"`env\.PackedSizeV1` = (\d+) bytes", "PACKED_STATE_V1_SIZE"),
    (r"version 1 \((\d+) bytes\)", "PACKED_STATE_V1_SIZE"),
]


def packed_quotes(text: str) -> list[tuple[int, str, int]]:
    """(line, constant, the number quoted) of every quote of a packed state's size or version."""
    return [
        (n, const, int(m.group(1)))
        for n, line in enumerate(text.split("\n"), 1)
        for pat, const in PACKED_QUOTES
        for m in re.finditer(pat, line)
    ]


def test_docs_quote_the_packed_state_as_the_engine_packs_it() -> None:
    quotes = [(p, n, c, v) for p in DOCS if p.name != "RESEARCH.md" for n, c, v in packed_quotes(p.read_text(encoding="utf-8"))]
    assert len({(p.name, c) for p, _, c, _ in quotes}) >= 8, f"the scan finds the quotes it is for: {quotes}"
    wrong = [
        f"{p.relative_to(REPO)}:{n}: {v}, but {c} is {getattr(_protocol, c)}"
        for p, n, c, v in quotes
        if v != getattr(_protocol, c)
    ]
    assert not wrong, "a doc quotes a packed state's size or version the engine does not write:\n" + "\n".join(wrong)


def test_the_packed_layout_table_is_the_engines() -> None:
    # docs/FORMATS.md's table of the packed state: its offsets and sizes are PACKED_FIELDS's.
    text = (REPO / "docs" / "FORMATS.md").read_text(encoding="utf-8")
    section = text.split("## Packed state", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (\d+)(?: x (\d+))? \|", section, re.M)
    got = [(int(o), int(a) * int(b or 1)) for o, a, b in rows]
    assert got == [(f.offset, f.size) for f in _protocol.PACKED_FIELDS.values()]


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("it holds the engine's 104 packed bytes", [("PACKED_STATE_SIZE", 104)]),
        ("over an `(N, 104)` uint8 array of packed states", [("PACKED_STATE_SIZE", 104)]),
        ("initial_states(1024, seed=0)  # (1024, 104) uint8", [("PACKED_STATE_SIZE", 104)]),
        ("| packed state | version 2, 108 bytes (docs/FORMATS.md) | its first byte | version 1 (104 bytes) is read",
         [("PACKED_STATE_SIZE", 108), ("PACKED_STATE_VERSION", 2), ("PACKED_STATE_V1_SIZE", 104)]),
        ("one packed state of about 100 bytes in", []),
    ],
)  # fmt: skip
def test_the_packed_quote_scan_reads_what_it_should(text: str, quoted: list[tuple[str, int]]) -> None:
    assert sorted((c, v) for _, c, v in packed_quotes(text)) == sorted(quoted)
