"""python -m yutenv.bench: every configuration runs and reports a measured rate."""

from __future__ import annotations

import json
import sys

import pytest

from yutenv import bench


def test_bench_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc = bench.main(["--seconds", "0.2", "--warmup", "0.05", "--rounds", "1", "--sizes", "8", "--pool", "8", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    names = [r["name"] for r in out["rows"]]
    # Only what the package measures for real: no pure-Python row (the reference engine is a
    # test oracle and is not shipped). Every transport this machine has, both copy settings.
    kinds = ["shared", "socket"] if sys.platform.startswith(("linux", "darwin")) else ["socket"]
    want = [f"YutEnv, {k}" for k in kinds]
    want += [f"YutVectorEnv(8), {k}, copy={c}" for k in kinds for c in (False, True)]
    want += [f"YutEnvPool(8), 2 groups, {kinds[0]}"]
    assert names == want
    for r in out["rows"]:
        assert r["steps_per_s"] > 0 and r["us_per_step_call"] > 0


def test_reference_engine_not_shipped() -> None:
    import importlib.util

    assert importlib.util.find_spec("yutenv.reference") is None
