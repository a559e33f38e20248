"""The CleanRL-style PPO loop (python/examples/cleanrl_ppo.py) trains on YutVectorEnv for real."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="torch comes with the sb3 extra").set_num_threads(1)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cleanrl_ppo.py"


def test_cleanrl_style_ppo_runs(capsys: pytest.CaptureFixture[str]) -> None:
    main = runpy.run_path(str(EXAMPLE))["main"]
    last = main(["--num-envs", "16", "--num-steps", "32", "--total-timesteps", "1024", "--hidden", "32"])
    assert last["iteration"] == 2 and last["timesteps"] == 1024
    assert last["games"] > 0 and -1.0 <= last["mean_return"] <= 1.0  # finished games were seen
    assert math.isfinite(last["loss"])
    assert "iteration 2/2" in capsys.readouterr().out
