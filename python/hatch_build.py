"""Hatchling hooks: compile the Go server and ship it inside the wheel; the package's long
description (the PyPI page) from README.md.

`pip install ./python` (or `python -m build ./python`) runs this hook. It finds the
Go module `github.com/yutenv/yutenv` (the repository root, `python/..`, or the copy
of the Go sources carried inside an sdist under `_go/`), runs

    go build -trimpath -o <out> ./cmd/yutenv

(static: CGO off; stripped: `-ldflags "-s -w"`) and puts the binary at
`yutenv/_bin/yutenv` (`yutenv.exe` on Windows) in the wheel, which is tagged as a
platform wheel (`py3-none-<platform>`): the binary is native code, the Python is
not version specific. Go cross-compiles, so one machine builds the wheels of every
platform in TARGETS (`make wheels`).

Environment variables:
  YUTENV_GO        the go command to use (default: `go` on PATH)
  YUTENV_GO_ROOT   the Go module root to build from (default: found as above)
  YUTENV_TARGET    the platform to build for, a key of TARGETS such as `linux-arm64`
                   (default: Go's own GOOS-GOARCH, the machine's unless GOOS/GOARCH say)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.metadata.plugin.interface import MetadataHookInterface

MODULE = "github.com/yutenv/yutenv"
# Top-level entries of the Go module copied into an sdist (directories that hold Go code).
GO_FILES = ("go.mod", "go.sum")
GO_EXCLUDE_DIRS = {"python", "docs", ".git", ".venv", "bin", "testdata", ".ci", "node_modules"}


class GoBuildError(RuntimeError):
    """The Go server could not be built."""


def _is_module_root(d: Path) -> bool:
    gm = d / "go.mod"
    if not gm.is_file():
        return False
    for line in gm.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "module":
            return parts[1] == MODULE
    return False


def find_go_root(project_root: Path) -> Path:
    env = os.environ.get("YUTENV_GO_ROOT")
    if env:
        d = Path(env).resolve()
        if not _is_module_root(d):
            raise GoBuildError(f"YUTENV_GO_ROOT={env} does not hold the Go module {MODULE} (no matching go.mod)")
        return d
    for d in (project_root / "_go", project_root.parent):
        if _is_module_root(d):
            return d.resolve()
    raise GoBuildError(
        f"cannot find the Go module {MODULE}: looked for go.mod in {project_root.parent} "
        f"and {project_root / '_go'}. Build from a checkout of the yutenv repository "
        "(pip install ./python) or set YUTENV_GO_ROOT."
    )


def find_go() -> str:
    name = os.environ.get("YUTENV_GO", "go")
    go = shutil.which(name)
    if go is None:
        raise GoBuildError(
            f"the Go toolchain ({name!r}) was not found on PATH. Building the yutenv package "
            "compiles its server from Go sources: install Go (https://go.dev/dl/, the version "
            "named in go.mod or newer) and retry, or set YUTENV_GO to the go binary."
        )
    return go


# The platforms a wheel is built for: GOOS-GOARCH -> the wheel's platform tag. The binary is
# static (no libc, CGO off), so the Linux wheels satisfy the oldest manylinux policy that
# pip's on these architectures know; Go 1.26 binaries need macOS 12 or newer.
TARGETS = {
    "linux-amd64": "manylinux_2_17_x86_64.manylinux2014_x86_64",
    "linux-arm64": "manylinux_2_17_aarch64.manylinux2014_aarch64",
    "darwin-amd64": "macosx_12_0_x86_64",
    "darwin-arm64": "macosx_12_0_arm64",
    "windows-amd64": "win_amd64",
}


def platform_tag() -> str:
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def go_target(go: str, root: Path) -> str:
    """The GOOS-GOARCH to build for: $YUTENV_TARGET, or Go's own."""
    t = os.environ.get("YUTENV_TARGET", "").strip()
    if t:
        if t not in TARGETS:
            raise GoBuildError(f"YUTENV_TARGET={t!r}: want one of {', '.join(TARGETS)}")
        return t
    res = subprocess.run([go, "env", "GOOS", "GOARCH"], cwd=root, capture_output=True, text=True)
    if res.returncode != 0:
        raise GoBuildError(f"`go env GOOS GOARCH` failed: {res.stderr.strip()}")
    goos, goarch = res.stdout.split()
    return f"{goos}-{goarch}"


def go_build(go: str, root: Path, out: Path, target: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["CGO_ENABLED"] = "0"
    env["GOOS"], env["GOARCH"] = target.split("-", 1)
    cmd = [go, "build", "-trimpath", "-ldflags=-s -w", "-o", str(out), "./cmd/yutenv"]
    print(f"yutenv build hook: GOOS={env['GOOS']} GOARCH={env['GOARCH']} {' '.join(cmd)} (in {root})", file=sys.stderr)
    try:
        res = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    except OSError as e:
        raise GoBuildError(f"cannot run {go}: {e}") from e
    if res.returncode != 0:
        raise GoBuildError(f"`go build ./cmd/yutenv` failed in {root} (exit {res.returncode}):\n{res.stdout}{res.stderr}")


class GoBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        project = Path(self.root)
        if self.target_name == "sdist":
            # Carry the Go module along so that a wheel can be built from the sdist.
            root = find_go_root(project)
            for name in GO_FILES:
                build_data["force_include"][str(root / name)] = f"_go/{name}"
            for d in sorted(root.iterdir()):
                if d.is_dir() and d.name not in GO_EXCLUDE_DIRS and not d.name.startswith("."):  # noqa: SIM102
                    if any(d.rglob("*.go")):
                        build_data["force_include"][str(d)] = f"_go/{d.name}"
            return
        if self.target_name != "wheel":
            return
        root = find_go_root(project)
        go = find_go()
        target = go_target(go, root)
        exe = "yutenv.exe" if target.startswith("windows-") else "yutenv"
        if version == "editable":
            # An editable install imports yutenv from the source tree: put the binary there.
            out = project / "yutenv" / "_bin" / exe
            go_build(go, root, out, target)
        else:
            out = project / "build" / "go" / target / exe
            go_build(go, root, out, target)
            build_data["force_include"][str(out)] = f"yutenv/_bin/{exe}"
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{TARGETS.get(target) or platform_tag()}"


# A Markdown link whose target is a relative path: [text](../docs/RULES.md#options).
_RELATIVE_LINK = re.compile(r"\[([^\]]+)\]\((?![a-zA-Z][a-zA-Z0-9+.-]*:|#)[^)\s]+\)")


def pypi_readme(text: str) -> str:
    """README.md as the package's long description: a relative link, which leads to a file of
    the repository beside it and to nothing on a package index's page, keeps its text alone
    (README.md's link texts name the files they lead to)."""
    return _RELATIVE_LINK.sub(r"\1", text)


class ReadmeHook(MetadataHookInterface):
    """The long description: README.md through :func:`pypi_readme` (pyproject.toml lists
    ``readme`` as dynamic)."""

    PLUGIN_NAME = "custom"

    def update(self, metadata: dict[str, Any]) -> None:
        text = (Path(self.root) / "README.md").read_text(encoding="utf-8")
        metadata["readme"] = {"content-type": "text/markdown", "text": pypi_readme(text)}
