"""A KeyboardInterrupt in the middle of a step (Ctrl-C in a notebook) leaves an env that says to
reset, and that works again after the reset: on every transport, single and vector."""

from __future__ import annotations

import os
import signal
from types import FrameType
from typing import Any

import numpy as np
import pytest

import yutenv
from yutenv import ClosedError, ResetNeeded


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _inside_yutenv(e: BaseException) -> bool:
    """Whether the interrupt was raised inside the package (not between its calls)."""
    tb = e.__traceback__
    while tb is not None:
        if f"{os.sep}yutenv{os.sep}" in tb.tb_frame.f_code.co_filename:
            return True
        tb = tb.tb_next
    return False


def _actions(info: dict[str, Any], vector: bool) -> Any:
    mask = info["action_mask"]
    return np.argmax(mask, axis=1) if vector else int(np.argmax(mask))


@pytest.mark.parametrize("transport", ["socket", "auto"])
@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_an_interrupted_step_asks_for_a_reset_and_the_env_works_after_it(transport: str, vector: bool) -> None:
    # A slow opponent (tens of milliseconds a step) so that the timer's interrupt lands while a
    # step waits on the server: then the step's reply is still to come when the next call is made.
    kw: dict[str, Any] = {"opponent": "mcts:2000", "transport": transport, "seat": 0}
    env: Any = yutenv.make(num_envs=2, **kw) if vector else yutenv.make(**kw)
    old = signal.signal(signal.SIGALRM, _interrupt)
    landed = 0
    try:
        for trial in range(8):
            obs, info = env.reset(seed=trial)
            in_step = False
            signal.setitimer(signal.ITIMER_REAL, 0.03 + 0.011 * trial)
            try:
                for _ in range(200):
                    obs, reward, term, trunc, info = env.step(_actions(info, vector))
                    if not vector and (term or trunc):
                        break
            except KeyboardInterrupt as e:
                in_step = _inside_yutenv(e)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            if not in_step:
                continue  # between the package's calls: nothing of it was cut short
            try:
                env.step(_actions(info, vector))  # what the caller saw last is still the game
            except ResetNeeded as e:  # the step was sent: where the game stands is unknown
                assert "interrupted" in str(e)
                landed += 1
            # The reset's reply is the reset's, not the interrupted step's; the game it starts
            # is the seed's, and its steps are legal.
            obs, info = env.reset(seed=100)
            again = yutenv.make(num_envs=2, **kw) if vector else yutenv.make(**kw)
            try:
                obs2, info2 = again.reset(seed=100)
                for _ in range(10):
                    np.testing.assert_array_equal(info["action_mask"], info2["action_mask"])
                    obs, _, term, trunc, info = env.step(_actions(info, vector))
                    obs2, _, _, _, info2 = again.step(_actions(info2, vector))
                    np.testing.assert_array_equal(obs if vector else np.asarray(obs), obs2)
                    if not vector and (term or trunc):
                        break
            finally:
                again.close()
    finally:
        signal.signal(signal.SIGALRM, old)
        env.close()
    assert landed >= 2, "the interrupt never landed inside a step after it was sent"


@pytest.mark.parametrize("transport", ["socket", "auto"])
def test_interrupts_at_any_moment_leave_a_reset_that_starts_the_seeds_game(transport: str) -> None:
    # Interrupts at random moments of step_async/step_wait, many times: whatever was cut short
    # (a frame half read, a ring half sent, a step the server still serves from the shared
    # region), the reset that follows starts the seed's game and nothing lands after it. Or,
    # rarely (an interrupt between a read and its bookkeeping, which Python cannot exclude), the
    # env says its connection is closed and a new one is made: never a wrong game.
    rng = np.random.default_rng(1)
    kw: dict[str, Any] = {"opponent": "mcts:200", "transport": transport, "seat": 0}
    env: Any = yutenv.make(num_envs=4, **kw)
    ref: Any = yutenv.make(num_envs=4, **kw)
    old = signal.signal(signal.SIGALRM, _interrupt)
    trials, closed = 150, 0
    try:
        for trial in range(trials):
            obs, info = env.reset(seed=trial)
            signal.setitimer(signal.ITIMER_REAL, float(rng.uniform(0.0005, 0.02)))
            try:
                for _ in range(100):
                    env.step_async(_actions(info, True))
                    obs, _, _, _, info = env.step_wait()
            except KeyboardInterrupt:
                pass
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            try:
                obs, info = env.reset(seed=1000 + trial)
            except ClosedError as e:
                assert "make a new env" in str(e)
                closed += 1
                env.close()
                env = yutenv.make(num_envs=4, **kw)
                obs, info = env.reset(seed=1000 + trial)
            obs2, info2 = ref.reset(seed=1000 + trial)
            for _ in range(3):
                np.testing.assert_array_equal(obs, obs2)
                np.testing.assert_array_equal(info["action_mask"], info2["action_mask"])
                obs, *_, info = env.step(_actions(info, True))
                obs2, *_, info2 = ref.step(_actions(info2, True))
    finally:
        signal.signal(signal.SIGALRM, old)
        env.close()
        ref.close()
    assert closed <= trials // 10, f"{closed} of {trials} interrupts cost the connection"
