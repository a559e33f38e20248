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


def test_bench_against_go_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    """--go steps the same games in process (yutenv bench --batch) in every round: a Go row per
    size, and each Python row's paired ratio to the Go row of as many envs."""
    rc = bench.main(
        [
            "--seconds",
            "0.4",
            "--warmup",
            "0.05",
            "--rounds",
            "2",
            "--sizes",
            "8",
            "--pool",
            "8",
            "--copies",
            "false",
            "--go",
            "--json",
        ]
    )
    assert rc == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert {"Go in process, batch of 1", "Go in process, batch of 8"} <= set(rows)
    for name, r in rows.items():
        assert r["steps_per_s"] > 0 and r["us_per_step_call"] > 0
        if name.startswith("Go "):
            assert r["vs_go"] is None
        else:
            assert r["vs_go"] > 0, name
    # The time ratio is Python's time per call over Go's, from the same rounds.
    one = rows["YutEnv, socket"]
    assert one["vs_go"] == pytest.approx(one["us_per_step_call"] / rows["Go in process, batch of 1"]["us_per_step_call"], rel=1.0)
    capsys.readouterr()
    assert (
        bench.main(
            [
                "--seconds",
                "0.2",
                "--warmup",
                "0.02",
                "--rounds",
                "1",
                "--sizes",
                "",
                "--pool",
                "",
                "--transports",
                "socket",
                "--go",
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert "vs Go in process" in table and "Go in process, batch of 1" in table
