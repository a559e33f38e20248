"""The package build: a clear error when the Go toolchain is missing."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]


def test_pip_build_without_go_fails_clearly(tmp_path: Path) -> None:
    if not (PYTHON_DIR.parent / "go.mod").is_file():
        pytest.skip("needs the repository checkout (python/.. holds go.mod)")
    env = dict(os.environ, YUTENV_GO="yutenv-no-such-go-toolchain")
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(PYTHON_DIR)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode != 0
    out = p.stdout + p.stderr
    assert "the Go toolchain ('yutenv-no-such-go-toolchain') was not found on PATH" in out
    assert "install Go" in out
    assert not list(tmp_path.glob("*.whl")), "no wheel is left behind"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """An sdist of the package, and the wheel pip builds from that sdist."""
    if not (PYTHON_DIR.parent / "go.mod").is_file():
        pytest.skip("needs the repository checkout (python/.. holds go.mod)")
    tmp_path = tmp_path_factory.mktemp("build")
    sdist_dir, wheel_dir = tmp_path / "sdist", tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(sdist_dir)],
                   cwd=PYTHON_DIR, check=True, capture_output=True, timeout=300)  # fmt: skip
    (sdist,) = sdist_dir.glob("yutenv-*.tar.gz")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheel_dir), str(sdist)],
                   check=True, capture_output=True, timeout=600)  # fmt: skip
    (wheel,) = wheel_dir.glob("yutenv-*.whl")
    return sdist, wheel


def test_license_ships_in_sdist_and_wheel(built: tuple[Path, Path]) -> None:
    """The repository's LICENSE is in the sdist, and in the wheel built from that sdist
    (PEP 639: ``.dist-info/licenses/LICENSE``, ``License-Expression: MIT``). python/LICENSE
    is the package's copy of the repository's LICENSE; this test fails if they differ."""
    license_text = (PYTHON_DIR.parent / "LICENSE").read_bytes()
    assert (PYTHON_DIR / "LICENSE").read_bytes() == license_text, "python/LICENSE must be a copy of LICENSE"
    sdist, wheel = built
    with tarfile.open(sdist) as tf:
        member = tf.getmember(f"{sdist.name.removesuffix('.tar.gz')}/LICENSE")
        assert member.isfile()
        f = tf.extractfile(member)
        assert f is not None and f.read() == license_text
    with zipfile.ZipFile(wheel) as zf:
        (lic,) = [n for n in zf.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert zf.read(lic) == license_text
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = zf.read(meta).decode()
    assert "License-Expression: MIT" in metadata
    assert "License-File: LICENSE" in metadata


def test_every_room_ships(built: tuple[Path, Path]) -> None:
    """Every module of every subpackage, and ``py.typed``, is in the sdist and the wheel."""
    sources = {
        p.relative_to(PYTHON_DIR).as_posix()
        for p in (PYTHON_DIR / "yutenv").rglob("*")
        if p.is_file() and p.suffix in (".py", ".typed") and "_bin" not in p.parts and "__pycache__" not in p.parts
    }
    assert "yutenv/py.typed" in sources and "yutenv/envs/batch.py" in sources
    sdist, wheel = built
    with tarfile.open(sdist) as tf:
        prefix = sdist.name.removesuffix(".tar.gz") + "/"
        in_sdist = {n.removeprefix(prefix) for n in tf.getnames()}
    with zipfile.ZipFile(wheel) as zf:
        in_wheel = set(zf.namelist())
    assert sources - in_sdist == set()
    assert sources - in_wheel == set()


def test_the_long_description_keeps_no_relative_link(built: tuple[Path, Path]) -> None:
    """The PyPI page is README.md with its relative links (files of the repository, which lead
    nowhere on a package index) made plain text: the wheel's METADATA holds the text, not the
    link (hatch_build.py, ReadmeHook)."""
    _, wheel = built
    with zipfile.ZipFile(wheel) as zf:
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = zf.read(meta).decode()
    readme = (PYTHON_DIR / "README.md").read_text(encoding="utf-8")
    assert "](../docs/RULES.md)" in readme, "the test needs README.md to link a file of the repository"
    assert "Description-Content-Type: text/markdown" in metadata
    assert "](../" not in metadata
    assert "- the rules, docs/RULES.md;" in metadata


def test_pypi_readme_drops_relative_links_only() -> None:
    sys.path.insert(0, str(PYTHON_DIR))
    try:
        from hatch_build import pypi_readme
    finally:
        sys.path.remove(str(PYTHON_DIR))
    text = "[docs/RULES.md](../docs/RULES.md#options), [`make`](../docs/api/toplevel.md#yutenv.make), [web](https://x.org/a), [here](#use)"
    assert pypi_readme(text) == "docs/RULES.md, `make`, [web](https://x.org/a), [here](#use)"
