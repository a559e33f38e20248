"""Every optional module, imported without its extra, names the extra and the pip command.

The extras are installed in the test venv, so their absence is made real in a child
interpreter: a finder at the front of ``sys.meta_path`` refuses to find the extra's top-level
modules, exactly as an interpreter without them would (``ModuleNotFoundError``).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import yutenv
from yutenv._extras import import_extra
from yutenv.errors import MissingExtraError, YutEnvError

# Installs a finder that makes the modules named in argv[1] (comma-separated) not installed,
# then runs argv[2] as `python -m` would, with the remaining arguments (or, for "-c", the
# code in argv[3]).
_RUNNER = """
import runpy, sys
blocked = set(sys.argv[1].split(","))
class Missing:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Missing)
module = sys.argv[2]
if module == "-c":
    exec(sys.argv[3])
else:
    sys.argv = [module] + sys.argv[3:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def _run_without(blocked: tuple[str, ...], module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _RUNNER, ",".join(blocked), module, *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


CASES = [
    # (module run or imported, the extra's modules made missing, the extra named)
    ("yutenv.sb3", ("stable_baselines3", "sb3_contrib"), "sb3"),
    ("yutenv.bench_sb3", ("stable_baselines3", "sb3_contrib"), "sb3"),
    ("yutenv.rllib", ("ray",), "rllib"),
    ("yutenv.tianshou", ("tianshou",), "tianshou"),
    ("yutenv.tools.bench_tianshou", ("tianshou",), "tianshou"),
    ("yutenv.openspiel", ("pyspiel", "open_spiel"), "openspiel"),
    ("yutenv.az.train", ("torch",), "az"),
    ("yutenv.az.bench_net", ("torch",), "az"),
    ("yutenv.az.net", ("torch",), "az"),
]


@pytest.mark.parametrize(("module", "blocked", "extra"), CASES, ids=[c[0] for c in CASES])
def test_missing_extra_names_it(module: str, blocked: tuple[str, ...], extra: str) -> None:
    r = _run_without(blocked, module, "--help")
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("yutenv.errors.MissingExtraError: "), r.stderr
    assert f"pip install 'yutenv[{extra}]' (in a yutenv checkout: pip install './python[{extra}]')" in last
    assert "ModuleNotFoundError" not in last
    assert r.stderr.count("Traceback (most recent call last)") == 1, "one traceback, not a chain:\n" + r.stderr


def test_distributed_without_ray_names_the_extra() -> None:
    # yutenv.distributed imports without Ray (its lazy imports need the extra only when used);
    # its command line needs Ray and says so.
    r = _run_without(("ray", "fsspec"), "yutenv.distributed", "selfplay", "--games", "2", "--out", "unused")
    assert r.returncode != 0
    assert "pip install 'yutenv[ray]'" in r.stderr, r.stderr
    assert "ModuleNotFoundError: No module named" not in r.stderr.strip().splitlines()[-1]


def test_missing_extra_error_is_an_import_error() -> None:
    with pytest.raises(ImportError) as info:
        import_extra("yutenv_no_such_module", "sb3", "yutenv.sb3")
    e = info.value
    assert isinstance(e, MissingExtraError) and isinstance(e, YutEnvError)
    assert e.extra == "sb3" and e.name == "yutenv_no_such_module"
    assert str(e) == (
        "yutenv.sb3 needs the 'sb3' extra ('yutenv_no_such_module' is not installed): pip install 'yutenv[sb3]'"
        " (in a yutenv checkout: pip install './python[sb3]')"
    )
    assert e.__cause__ is None and e.__suppress_context__
    assert yutenv.MissingExtraError is MissingExtraError


def test_report_plot_without_matplotlib_names_the_extra() -> None:
    code = "from yutenv.az import report\nreport.plot([{'generation': 0, 'eval': {}}], 'x.png')\n"
    r = _run_without(("matplotlib",), "-c", code)
    assert r.returncode != 0
    assert "pip install 'yutenv[az]'" in r.stderr.strip().splitlines()[-1], r.stderr


LAZY = [
    # (code run, the extra's modules made missing, the extra named): the dataset exports and
    # streams import their packages when used, and name their extra then.
    ("from yutenv import datasets; datasets.to_parquet('ds', 'out')", ("pyarrow",), "parquet"),
    ("from yutenv import datasets; datasets.to_minari('ds', 'yutenv/ds-v0')", ("minari",), "minari"),
    ("from yutenv.datasets import torch", ("torch",), "torch"),
]


@pytest.mark.parametrize(("code", "blocked", "extra"), LAZY, ids=[c[2] for c in LAZY])
def test_dataset_exports_name_their_extra(code: str, blocked: tuple[str, ...], extra: str) -> None:
    r = _run_without(blocked, "-c", code)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("yutenv.errors.MissingExtraError: "), r.stderr
    assert f"pip install 'yutenv[{extra}]'" in last
    r = _run_without(
        (),
        "-c",
        "import yutenv.datasets, sys; sys.exit('torch' in sys.modules or 'pyarrow' in sys.modules or 'minari' in sys.modules)",
    )
    assert r.returncode == 0, "importing yutenv.datasets imports none of them"
