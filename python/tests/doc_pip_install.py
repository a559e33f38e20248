"""What a doc's ``pip install ARGS`` asks for exists, checked without the network.

test_docs.py runs the docs' shell blocks with ``pip install`` standing for this script: the
package's own folder (``./python``, ``./python[EXTRA,...]``) must be the checkout's, a wheel
file (``dist/yutenv-*manylinux*x86_64.whl``) a pattern matching exactly one of the wheels ``make
wheels`` builds (the platform tags of python/hatch_build.py), each extra one the package declares (the installed package's metadata, which ``make test`` has just built
from this checkout), and any other requirement a distribution this venv has (so ``make test``
installed it, resolved from the index). A resolution against the index for every block (pip's
``--dry-run``) cost the suite a minute and a half of network and builds, and checked nothing
that ``make test``'s own installs of every extra do not.

Exit 0, or 1 with one line per refused argument.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

# A local folder with extras (``./python[sb3]``), which packaging's Requirement does not read.
_FOLDER = re.compile(r"^(?P<name>\.{0,2}/?[^\[\]]*/?[^\[\]]*)(?:\[(?P<extras>[^\]]*)\])?$")


_HATCH_BUILD = Path(__file__).resolve().parents[1] / "hatch_build.py"


def built_wheels() -> list[str]:
    """The file names ``make wheels`` gives its wheels, from the platform tags the build declares."""
    tree = ast.parse(_HATCH_BUILD.read_text(encoding="utf-8"))
    targets = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TARGETS" for t in n.targets)
    )
    version = metadata.version("yutenv")
    return [f"yutenv-{version}-py3-none-{tag}.whl" for tag in targets.values()]


def problems(args: list[str], cwd: Path) -> list[str]:
    """Why each argument of ``pip install ARGS`` would not install, as one line each."""
    out: list[str] = []
    declared = {canonicalize_name(x) for x in metadata.metadata("yutenv").get_all("Provides-Extra") or []}
    for arg in args:
        if arg.startswith("-"):
            continue  # options (-U, --upgrade, ...)
        if arg.endswith(".whl"):
            wheels = built_wheels()
            hits = [w for w in wheels if fnmatch.fnmatchcase(w, Path(arg).name)]
            if len(hits) != 1:
                out.append(f"{arg!r}: matches {len(hits)} of the wheels make wheels builds ({', '.join(wheels)}), not one")
            continue
        if "/" in arg or arg.startswith("."):
            m = _FOLDER.match(arg)
            name, raw = (m.group("name"), m.group("extras") or "") if m else (arg, "")
            extras = [canonicalize_name(x) for x in raw.split(",") if x.strip()]
        else:
            try:
                req = Requirement(arg)
            except InvalidRequirement:
                out.append(f"{arg!r}: not a requirement pip reads")
                continue
            name, extras = req.name, [canonicalize_name(x) for x in req.extras]
        if "/" in name or name.startswith("."):
            project = cwd / name / "pyproject.toml"
            own = project.is_file() and re.search(r'(?m)^name = "yutenv"$', project.read_text(encoding="utf-8")) is not None
            if not own:
                out.append(f"{arg!r}: {name} is not the yutenv project folder")
        else:
            own = canonicalize_name(name) == "yutenv"
            if not own:
                try:
                    metadata.distribution(name)
                except metadata.PackageNotFoundError:
                    out.append(f"{arg!r}: {name} is not installed by make test, so nothing checks it resolves")
        if own:
            out += [
                f"{arg!r}: yutenv has no extra {x!r} (it has {', '.join(sorted(declared))})" for x in extras if x not in declared
            ]
    return out


if __name__ == "__main__":
    found = problems(sys.argv[1:], Path.cwd())
    for line in found:
        print(f"pip install: {line}", file=sys.stderr)
    sys.exit(1 if found else 0)
