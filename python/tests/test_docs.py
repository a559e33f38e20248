"""Every Python and shell block of README.md, python/README.md and docs/*.md runs.

The blocks of one file run in order in one scratch folder, the Python blocks in one namespace
(like a notebook), the shell blocks with ``bash``; the commands they name (``yutenv``,
``bin/yutenv``, ``python``, ``pip``, ``make``) are the installed package's and the checkout's.

What a block may say about itself, in an HTML comment right before it (invisible on GitHub):

- ``<!-- doc: setup ... -->``: Python that runs (hidden) before the block, for the names an
  excerpt takes for granted (a policy, a dataset, states to analyse).
- ``<!-- doc: output -->``: the ```text block after this one is its exact output (``...``
  stands for any text); without it, numbers in comments are illustrative.
- ``<!-- doc: full -->``: it runs as written even in the small mode (a cheap block whose
  shown output is checked).
- ``<!-- doc: extra NAME -->``: it needs the optional extra NAME (runs where it is installed;
  the ``offline`` blocks also run on their own in the offline extra's venv, where a missing
  d3rlpy fails: :func:`test_offline_blocks_run`).
- ``<!-- doc: skip REASON -->``: not run, for REASON (only the two commands that run this very
  suite are).

Heavy blocks run small. One switch, ``YUTENV_DOCS_FULL=1``, runs them as written; without it
(as in ``make test``) :func:`shrink` lowers the sizes (games, generations, simulations, envs,
training steps) and turns cluster addresses and bucket URIs into a local run.

The same files are also checked as text: every relative link names a file of the checkout and
every ``#anchor`` a heading (the research log, research/LOG.md, included), the user docs hold no
issue numbers, commit hashes or work-log notes, and they link to the research log once; no doc
holds a Go format error (``%!``); README.md's table of the extras is python/pyproject.toml's, and
every other page adds an extra one way (``pip install 'yutenv[EXTRA]'``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tomllib

import yutenv
from yutenv.errors import MissingExtraError

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", REPO / "python" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# The research log: the experiments' history, dated, outside the user docs' folder. Its links are
# checked with the docs'; it has no blocks to run and is exempt from the work-log check.
RESEARCH_LOG = REPO / "research" / "LOG.md"
FULL = os.environ.get("YUTENV_DOCS_FULL") == "1"
RUNS = {"python", "sh"}
EXTRA_MODULES = {
    "sb3": "sb3_contrib",
    "rllib": "ray.rllib",
    "ray": "ray",
    "az": "torch",
    "openspiel": "pyspiel",
    "parquet": "datasets",
    "offline": "d3rlpy",
    "tianshou": "tianshou",
}
#: Extras whose blocks must run here: a missing one fails instead of skipping (the offline
#: extra's lane sets YUTENV_REQUIRE_EXTRAS=offline).
REQUIRED_EXTRAS = set(filter(None, os.environ.get("YUTENV_REQUIRE_EXTRAS", "").split(",")))


@dataclass
class Block:
    path: Path
    line: int
    lang: str
    code: str
    setup: str = ""
    skip: str = ""
    extras: list[str] = field(default_factory=list)
    output: str | None = None
    full: bool = False

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


_FENCE = re.compile(r"^```(\S*)\s*$")
_DIRECTIVE = re.compile(r"<!--\s*doc:\s*(\w+)\s*(.*?)-->", re.S)


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file with the directives before each."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out: list[Block] = []
    pending = ""  # the text since the last block: its directives belong to the next one
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            pending += lines[i] + "\n"
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        lang = {"bash": "sh", "shell": "sh", "py": "python"}.get(m.group(1), m.group(1))
        b = Block(path, i + 1, lang, "\n".join(lines[i + 1 : j]) + "\n")
        for d in _DIRECTIVE.finditer(pending):
            kind, arg = d.group(1), d.group(2)
            if kind == "setup":
                b.setup += textwrap.dedent(arg).strip("\n") + "\n"
            elif kind == "skip":
                b.skip = arg.strip() or "no reason given"
            elif kind == "extra":
                b.extras += arg.split()
            elif kind == "output":
                b.output = ""  # filled from the next text block
            elif kind == "full":
                b.full = True
            else:
                raise AssertionError(f"{path}:{i + 1}: unknown doc directive {kind!r}")
        if out and out[-1].output == "" and lang in ("text", ""):
            out[-1].output = b.code
        else:
            out.append(b)
        pending = ""
        i = j + 1
    return out


# (pattern, replacement) pairs applied to a block's text unless YUTENV_DOCS_FULL=1.
def _cap(n: int):  # type: ignore[no-untyped-def]
    def f(m: re.Match[str]) -> str:
        return m.group(1) + str(min(int(m.group(2).replace("_", "")), n))

    return f


SHRINK = [
    (r"(--games[ =])(\d[\d_]*)", _cap(4)),
    (r"(\bgames=)(\d[\d_]*)", _cap(4)),
    (r"(--generations[ =])(\d+)", _cap(2)),
    (r"(\bgenerations=)(\d+)", _cap(2)),
    (r"(gen-00)(\d\d)", lambda m: m.group(1) + "02"),  # the last generation of a shrunk run
    (r"(--(?:search-)?sims[ =])(\d+)", _cap(4)),
    (r"(\bsims=)(\d+)", _cap(4)),
    (r"(\b(?:mcts|mc):)(\d+)", _cap(8)),
    (r"(--every[ =])(\d+)", _cap(1)),
    (r"(--regret-games[ =])(\d+)", _cap(4)),
    (r"(--epochs[ =])(\d+)", _cap(1)),
    # az.train evaluates every generation against its default opponents (100 games each): 4.
    (r"(python -m yutenv\.az\.train\b)(?![^\n]*--eval-games)", lambda m: m.group(1) + " --eval-games 4"),
    (r"(\bnum_envs=)(\d+)", _cap(8)),
    (r"(\bmake\(num_envs=)(\d+)", _cap(8)),
    (r"(\bvec_env\()(\d+)", _cap(4)),
    (r"(\bgames_in_flight=)(\d+)", _cap(4)),
    (r"(\bmax_batch=)(\d+)", _cap(4)),
    (r"(\.learn\()(\d[\d_]*)", _cap(256)),
    # d3rlpy: fit(dataset, n_steps=N, n_steps_per_epoch=M) takes a few gradient steps.
    (r"(\.fit\([^)]*?\bn_steps=)(\d[\d_]*)", _cap(20)),
    (r"(\bn_steps_per_epoch=)(\d[\d_]*)", _cap(20)),
    (r"(\bbatch_size=)(\d+)", _cap(64)),
    (r"(\bnum_env_runners=)(\d+)", _cap(0)),
    (r"(\bfor _ in range\()(\d+)", _cap(1)),
    (r"(\binitial_states\()(\d+)", _cap(64)),
    (r"(\byutenv\.make\()(\d+)", _cap(8)),
    (r"(\bYutVectorEnv\()(\d+)", _cap(8)),
    (r"(--n[ =])(\d+)", _cap(64)),
    (r"(\bdistributed\.selfplay\([^,]+,\s*)(\d[\d_]*)", _cap(4)),
    (r"(\byutenv bench)\b", lambda m: m.group(1) + " --time 100ms"),
    # Solving two pieces a seat on the cross takes minutes and GiBs: one piece, the same commands.
    (r"(\bpieces=)2\b", lambda m: m.group(1) + "1"),
    (r"(--minutes[ =])(\d+(?:\.\d+)?)", lambda m: m.group(1) + "0.05"),
    (r"(--rat(?:e|ing)-games[ =]|\brate_games=)(\d+)", _cap(4)),
    (r"(\bsnapshot_every=)(\d[\d_]*)", _cap(128)),
    # Tianshou: one short epoch on a few envs.
    (r"(\bYutTianshouVectorEnv\()(\d+)", _cap(4)),
    (r"(\bmax_epochs=)(\d+)", _cap(1)),
    (r"(\bepoch_num_steps=)(\d[\d_]*)", _cap(160)),
    (r"(\btest_step_num_episodes=)(\d+)", _cap(4)),
    # RLlib: one small iteration (what python/tests/test_rllib.py trains with).
    (
        r"\.build_algo\(\)",
        ".env_runners(num_env_runners=1, num_envs_per_env_runner=2, rollout_fragment_length=64, "
        "num_cpus_per_env_runner=0).learners(num_learners=0).training(train_batch_size_per_learner=256, minibatch_size=64, "
        "num_epochs=1).build_algo()",
    ),
    (r"\s*--address auto", ""),
    (r'address="auto"', "address=None"),
    (r"s3://bucket/", "bucket/"),  # a local folder for the bucket
]


def shrink(code: str) -> str:
    """The block at test size (see the module's docs)."""
    if FULL:
        return code
    for pat, rep in SHRINK:
        code = re.sub(pat, rep, code)  # type: ignore[arg-type]
    return code


def _shell_prelude(scratch: Path) -> str:
    # `make X` builds in the checkout; `pip install` is checked (doc_pip_install.py: installing
    # would replace the package under test); long-running servers must start and keep running.
    return textwrap.dedent(
        f"""
        set -euo pipefail
        make() {{ command make --no-print-directory -C {REPO} "$@" >/dev/null; }}
        pip() {{ if [ "$1" = install ]; then shift; command python {Path(__file__).parent / "doc_pip_install.py"} "$@"; else command python -m pip "$@"; fi; }}
        yutenv_daemon() {{ timeout 3 "$@" </dev/null >/dev/null || [ $? -eq 124 ]; }}
        yutenv_play() {{ "$@" <{scratch}/ones >/dev/null; }}
        """
    )


# Servers (view, serve, play --web) must start and keep running; `play` plays a whole game, its
# person choosing the first legal move every time.
_DAEMONS = re.compile(r"^(\s*)((?:bin/)?yutenv (view|serve|play)\b.*?)(\s+#.*)?$", re.M)


def run_shell(b: Block, scratch: Path) -> str:
    (scratch / "ones").write_text("1\n" * 5000)
    code = b.code if b.full else shrink(b.code)
    code = _DAEMONS.sub(
        lambda m: f"{m.group(1)}yutenv_{'play' if m.group(3) == 'play' and '--web' not in m.group(2) else 'daemon'} {m.group(2)}",
        code,
    )
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    r = subprocess.run(["bash", "-c", _shell_prelude(scratch) + code], cwd=scratch, env=env,
                       capture_output=True, text=True, timeout=1200)  # fmt: skip
    assert r.returncode == 0, (
        f"{b.id}: exit {r.returncode}\n{code}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
    )
    return r.stdout


def run_python(b: Block, ns: dict[str, object]) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        if b.setup:
            exec(compile(b.setup, f"{b.id} (setup)", "exec"), ns)
        exec(compile(b.code if b.full else shrink(b.code), b.id, "exec"), ns)
    return buf.getvalue()


def matches(expected: str, got: str) -> bool:
    """Whether got is expected, where ``...`` in expected stands for any text."""
    parts = [re.escape(p) for p in expected.strip().split("...")]
    return re.fullmatch(r"(?s)" + ".*?".join(parts), got.strip()) is not None


def _scratch(tmp: Path) -> Path:
    # What the blocks expect around them: the checkout's python/ (pip install ./python, the
    # examples) and bin/ (bin/yutenv after `make build`).
    (tmp / "python").symlink_to(REPO / "python")
    (REPO / "bin").mkdir(exist_ok=True)
    if not (REPO / "bin" / "yutenv").exists():
        shutil.copy(yutenv.binary_path(), REPO / "bin" / "yutenv")
    (tmp / "bin").symlink_to(REPO / "bin")
    return tmp


def _doc_param(path: Path) -> object:
    # A file with an RLlib block runs whole in RLlib's venv (the `rllib` mark), which sees the main
    # venv's other extras too: its blocks run once, in order, against the Gymnasium RLlib pins.
    rllib = any("rllib" in b.extras for b in blocks(path))
    return pytest.param(path, id=str(path.relative_to(REPO)), marks=[pytest.mark.rllib] if rllib else [])


@pytest.mark.parametrize("path", [_doc_param(p) for p in DOCS])
def test_every_block_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = _scratch(tmp_path)
    monkeypatch.chdir(scratch)
    ns: dict[str, object] = {"__name__": "__doc__", "REPO": REPO, "shrink": shrink}  # for hidden setups
    ran = skipped = 0
    for b in blocks(path):
        if b.lang not in RUNS:
            continue
        if b.skip:
            skipped += 1
            continue
        missing = [x for x in b.extras if not _has(EXTRA_MODULES.get(x, x))]
        assert not REQUIRED_EXTRAS & set(missing), f"{b.id}: the extras {missing} are not installed in the lane that must run it"
        if missing:
            skipped += 1
            continue
        out = run_python(b, ns) if b.lang == "python" else run_shell(b, scratch)
        if b.output is not None:
            assert matches(b.output, out), f"{b.id}: the shown output is not what it prints:\n{out}"
        ran += 1
    assert ran or skipped or not any(b.lang in RUNS for b in blocks(path))
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():  # a file's blocks started Ray: the next file starts its own
        ray.shutdown()


OFFLINE_DOCS = [p for p in DOCS if any("offline" in b.extras for b in blocks(p))]


@pytest.mark.offline
@pytest.mark.parametrize("path", OFFLINE_DOCS, ids=[str(p.relative_to(REPO)) for p in OFFLINE_DOCS])
def test_offline_blocks_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The blocks marked `<!-- doc: extra offline -->` of a page, alone, in order, in one namespace:
    # each makes what it uses (its own small dataset), so that it runs as pasted into a fresh
    # environment with the offline extra. Run by `make py-test-offline` in that extra's venv,
    # where a missing d3rlpy fails; the main run skips these blocks (d3rlpy is not there).
    scratch = _scratch(tmp_path)
    monkeypatch.chdir(scratch)
    ns: dict[str, object] = {"__name__": "__doc__", "REPO": REPO, "shrink": shrink}
    ran = 0
    for b in blocks(path):
        if b.lang not in RUNS or "offline" not in b.extras or b.skip:
            continue
        missing = [x for x in b.extras if not _has(EXTRA_MODULES.get(x, x))]
        if missing and not REQUIRED_EXTRAS & set(missing):
            pytest.skip(f"{b.id}: needs the extras {missing}")
        assert not missing, f"{b.id}: the extras {missing} are not installed in the lane that must run it"
        out = run_python(b, ns) if b.lang == "python" else run_shell(b, scratch)
        if b.output is not None:
            assert matches(b.output, out), f"{b.id}: the shown output is not what it prints:\n{out}"
        ran += 1
    assert ran


def test_some_docs_have_offline_blocks() -> None:
    # The offline lane runs something: the offline-RL example of docs/DATASETS.md at least.
    assert REPO / "docs" / "DATASETS.md" in OFFLINE_DOCS


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (["./python", "-U", "./python[sb3,openspiel-rl]", "yutenv[az]", "numpy>=1.20"], []),
        (["./python[nope]"], ["yutenv has no extra 'nope'"]),
        (["./elsewhere"], ["not the yutenv project folder"]),
        (["surely-not-a-package-here"], ["not installed by make test"]),
        (["dist/yutenv-*manylinux*x86_64.whl", "dist/yutenv-*win_amd64.whl"], []),
        (["dist/yutenv-*.whl"], ["of the wheels make wheels builds"]),
        (["dist/yutenv-*-manylinux_2_17_x86_64.whl"], ["matches 0 of the wheels"]),
    ],
)
def test_a_docs_pip_install_is_checked_without_the_network(tmp_path: Path, args: list[str], refused: list[str]) -> None:
    from doc_pip_install import problems

    found = problems(args, _scratch(tmp_path))
    assert len(found) == len(refused), found
    for line, want in zip(found, refused):
        assert want in line


def _has(module: str) -> bool:
    try:
        __import__(module)
    except (ImportError, MissingExtraError):
        return False
    return True


def test_directives_are_known_and_skips_are_rare() -> None:
    skips = [b for p in DOCS for b in blocks(p) if b.skip]
    assert [(b.path.name, b.code.split()[:4]) for b in skips] == [("README.md", ["make", "demo", "#", "builds"])], (
        "only the two commands that run this very suite (make demo, make test) are not run"
    )
    for p in DOCS:
        for b in blocks(p):
            assert b.lang in {"python", "sh", "text", "", "json", "go", "toml", "yaml", "mermaid", "svg"}, f"{b.id}: {b.lang}"


def test_compatibility_table_states_the_current_numbers() -> None:
    # docs/COMPATIBILITY.md's numbers are the ones the code writes (a layout or format bump that
    # forgets the promise fails here).
    from yutenv import _protocol

    text = (REPO / "docs" / "COMPATIBILITY.md").read_text(encoding="utf-8")
    sizes = _protocol.TIER_SIZES
    assert (
        f"| {_protocol.OBS_LAYOUT} (compact {sizes['compact']}, tactical {sizes['tactical']}, planes {sizes['planes']} values)"
        in text
    )
    assert f"| version {_protocol.PACKED_STATE_VERSION}, {_protocol.PACKED_STATE_SIZE} bytes" in text
    assert f"| {_protocol.NUM_ACTIONS} actions" in text
    assert f"| {yutenv.core.PROTOCOL} (docs/PROTOCOL.md)" in text
    assert f"`{yutenv.ENV_ID}`" in text
    assert f"| dataset | `{_protocol.DATASET_FORMAT}` version {_protocol.DATASET_VERSION}," in text
    assert f"| network file | `yutenv-net` version {_protocol.NET_VERSION} (" in text


def test_no_doc_holds_a_go_format_error() -> None:
    # Go prints a verb without its argument as %!d(MISSING) and an argument without a verb as
    # %!(EXTRA int=2): a generated page (docs/RULES.md, OBSERVATIONS.md, the generated tables of
    # PROTOCOL.md, ...) that holds one is stale-checked against the same wrong text, so only
    # this finds it. No doc has a reason to write "%!".
    found = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in DOCS
             for n, line in enumerate(p.read_text(encoding="utf-8").split("\n"), 1) if "%!" in line]  # fmt: skip
    assert not found, "a Go format error in a doc (fix the generator's format or its arguments):\n" + "\n".join(found)


def _gen_extras():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_extras", REPO / "scripts" / "gen_extras.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_extras_table_is_generated_from_pyproject() -> None:
    # README.md's table of the extras is the one list of them, written by scripts/gen_extras.py
    # from python/pyproject.toml (each extra's requirements, and its line in [tool.yutenv.extras]).
    gen = _gen_extras()
    pyproject = tomllib.loads((REPO / "python" / "pyproject.toml").read_text(encoding="utf-8"))
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert gen.render(readme, pyproject) == readme, "README.md's table of the extras is stale: run python3 scripts/gen_extras.py"
    for extra in pyproject["project"]["optional-dependencies"]:
        assert f"| `{extra}` |" in readme


def _install_section(readme: str) -> str:
    return readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]


def test_one_install_story() -> None:
    # README.md's "Install" shows both ways once (a clone: `pip install ./python`; a wheel
    # `make wheels` built: `pip install dist/yutenv-...whl`) and the extras; every other page
    # adds an extra the one way that works for both, `pip install 'yutenv[EXTRA]'`, naming an
    # extra the package declares, and lists no extras of its own (it links to README.md's
    # table). No page installs `yutenv` by name from the index: it is not published there.
    declared = set(
        tomllib.loads((REPO / "python" / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    )
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    install = _install_section(readme)
    assert "pip install dist/yutenv-" in install and "pip install ./python" in install and "python[" in install
    wrong = []
    for p in USER_DOCS + sorted((REPO / "python" / "examples").glob("*.py")):
        text = p.read_text(encoding="utf-8")
        if p == REPO / "README.md":
            text = text.replace(install, "")
        for n, line in enumerate(text.split("\n"), 1):
            where = f"{p.relative_to(REPO)}:{n}"
            if re.search(r"pip install yutenv\b(?!\[)", line):
                wrong.append(f"{where}: 'pip install yutenv' fetches from PyPI, where yutenv is not published")
            if re.search(r"\./python\[", line):
                wrong.append(f"{where}: an extra from the clone ('./python[...]'): write 'yutenv[EXTRA]', which works for both")
            for extras in re.findall(r"\byutenv\[([\w,-]+)\]", line):
                wrong += [f"{where}: no extra {x!r} in python/pyproject.toml" for x in extras.split(",") if x not in declared]
        listed = re.findall(r"(?m)^pip install '?yutenv\[", text)
        if len(listed) > 2:
            wrong.append(f"{p.relative_to(REPO)}: a list of {len(listed)} extras: link to README.md's table instead")
    assert not wrong, "\n".join(wrong)


def test_relative_links_resolve_inside_the_repository() -> None:
    # A user has only this repository: every link that is not a web address or an anchor names a
    # file or folder of the checkout that exists (a renamed document, or a link to a sibling
    # folder outside the repository, fails here).
    link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
    broken = []
    for p in [*DOCS, RESEARCH_LOG]:
        for target in link.findall(p.read_text(encoding="utf-8")):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            path = (p.parent / target.split("#", 1)[0]).resolve()
            if not path.is_relative_to(REPO) or not path.exists():
                broken.append(f"{p.relative_to(REPO)}: {target}")
    assert not broken, broken


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file: lower case, punctuation but '-'
    and '_' dropped, spaces made '-', a repeated one suffixed -1, -2, ..."""
    out: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return out


def _api_anchor(page: Path, anchor: str) -> bool:
    """Whether an anchor of an API reference page is an object it renders: the dotted path of a
    module of its '::: module' lines or of a name in one (make docs checks the name itself)."""
    mods = re.findall(r"^::: (\S+)", page.read_text(encoding="utf-8"), re.M)
    return any(anchor == m or anchor.startswith(m + ".") for m in mods)


def test_anchor_links_name_a_heading() -> None:
    # A link to a section (file.md#section, or #section in the same file) names a heading that
    # exists: moving or renaming a section fails here until its links follow.
    link = re.compile(r"\[[^\]]*\]\(([^)\s]*#[^)\s]+)\)")
    broken = []
    for p in [*DOCS, RESEARCH_LOG]:
        for target in link.findall(p.read_text(encoding="utf-8")):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue
            file, anchor = target.split("#", 1)
            doc = (p.parent / file).resolve() if file else p
            if doc.parent == REPO / "docs" / "api" and _api_anchor(doc, anchor):
                continue
            if doc.suffix == ".md" and doc.is_file() and anchor not in _anchors(doc):
                broken.append(f"{p.relative_to(REPO)}: {target}")
    assert not broken, broken


# A user doc says what the software is and does now. Issue numbers, commit hashes and notes on who
# ran what beside whom belong to the project's history: experiments, dated, go to the research
# log research/LOG.md (docs/DEVELOPING.md, "User docs and the research log"), which is not a
# user doc.
USER_DOCS = DOCS
_HEX = r"[0-9a-f]{7,40}"
NOT_FOR_USERS = [
    ("an issue reference", re.compile(r"\b(?:issues?|pull requests?|PRs?)\s+#?\d+", re.I)),
    # '#12' alone; not an HTML entity (&#124;) nor an anchor of a dated heading (#2026-11-27-...).
    ("an issue reference", re.compile(r"(?<![\w&#/])#\d+(?![\w-])")),
    ("a commit hash", re.compile(rf"\bcommits?\s+{_HEX}\b", re.I)),
    # A word of 7 to 40 lowercase hex digits with a letter and a digit in it: a hash. Not a part of
    # a number (1.0809242156060622e-7: a dot before it, a sign after) nor of a longer run of hex (a
    # SHA-256 digest has 64 digits), and a word of digits alone is a number.
    ("a commit hash", re.compile(rf"(?<![\w.+-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9]){_HEX}(?![\w.+-])")),
    (
        "a work-log note",
        re.compile(
            r"\bother engineers?\b|\bworktrees?\b|\bwt-[\w-]+"
            r"|\b(?:this|that|another|other|previous)\s+sessions?\b",
            re.I,
        ),
    ),
]


def not_for_users(text: str) -> list[tuple[int, str, str]]:
    """(line number, what, the text) of every issue reference, hash and work-log note in text,
    each once ('issue #12' is not also reported as '#12')."""
    found: list[tuple[int, str, str]] = []
    for n, line in enumerate(text.split("\n"), 1):
        spans: list[tuple[int, int]] = []
        for what, pat in NOT_FOR_USERS:
            for m in pat.finditer(line):
                if not any(a <= m.start() and m.end() <= b for a, b in spans):
                    spans.append(m.span())
                    found.append((n, what, m.group(0)))
    return found


@pytest.mark.parametrize(
    ("text", "caught"),
    [
        ("as issue 12 asks", ["issue 12"]),
        ("see issue #12 and issues 12 and 14", ["issue #12", "issues 12"]),
        ("fixed in #12.", ["#12"]),
        ("the binary of commit 7934867", ["commit 7934867"]),
        ("main (ba9d437) against the branch", ["ba9d437"]),
        ("3f9c2e1d0b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e", ["3f9c2e1d0b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e"]),
        ("while other engineers' builds ran", ["other engineers"]),
        ("in the worktree of branch wt-docs", ["worktree", "wt-docs"]),
        ("a run of this session", ["this session"]),
        # What stays: numbers, digests, entities, dated anchors, servers' sessions.
        ('"sha256":"636df9d66e5510507024103d85a3f4175fa897f2a1a2bcc971e36bed3439ee2c"', []),
        ('"allocs_per_decision":1.0809242156060622e-7', []),
        ("owner << 4 &#124; route id; 20000000 games; seat 1", []),
        ("[a run](RESEARCH.md#2026-11-27-the-shipped-az) [b](#2026-11-27-distilling)", []),
        ("its own server session; a deadbeef value", []),
    ],
)
def test_the_work_log_check_catches_what_it_should(text: str, caught: list[str]) -> None:
    assert [t for _, _, t in not_for_users(text)] == caught


def test_user_docs_hold_no_issue_numbers_hashes_or_work_log_notes() -> None:
    found = [f"{p.relative_to(REPO)}:{n}: {what}: {t!r}" for p in USER_DOCS
             for n, what, t in not_for_users(p.read_text(encoding="utf-8"))]  # fmt: skip
    assert not found, (
        "user docs describe the software as it is; move experiment history to research/LOG.md and "
        "drop issue numbers, hashes and work-log notes:\n" + "\n".join(found)
    )


def test_sources_name_no_issues() -> None:
    # A comment says why in its own words: the tracker's numbers mean nothing to a reader of a
    # clone (this file's own examples of what is caught excepted).
    issue = NOT_FOR_USERS[0][1]
    files = subprocess.run(
        ["git", "ls-files", "*.go", "*.py", "*.sh", "Makefile", "*.mk", "*.inc"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found = [f"{f}:{n}: {m.group(0)!r}" for f in files if Path(f).name != "test_docs.py"
             for n, line in enumerate((REPO / f).read_text(encoding="utf-8").split("\n"), 1)
             for m in issue.finditer(line)]  # fmt: skip
    assert not found, "say what the code does and why, not which issue asked for it:\n" + "\n".join(found)


def test_the_research_log_is_linked_once() -> None:
    # The user docs describe the software as it is; the history is one link away, from one place
    # (docs/DEVELOPING.md), not a reference sprinkled through every page.
    link = re.compile(r"\[[^\]]*\]\(([^)\s#]+)(?:#[^)\s]*)?\)")
    links = [f"{p.relative_to(REPO)}: {t}" for p in USER_DOCS for t in link.findall(p.read_text(encoding="utf-8"))
             if (p.parent / t).resolve() == RESEARCH_LOG]  # fmt: skip
    assert len(links) == 1, f"the user docs link to research/LOG.md {len(links)} times, not once: {links}"
