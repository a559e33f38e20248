"""yutenv.pettingzoo_parallel: the Parallel API for a turn-based game, and the conversions."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test
from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec, turn_based_aec_to_parallel
from yutenv.pettingzoo_parallel import YutParallelEnv, parallel_env

import yutenv


@pytest.fixture(scope="module")
def server() -> Any:
    s = yutenv.Server()
    yield s
    s.close()


@pytest.mark.parametrize("rules", ["standard", "players=3,end=rank"])
def test_parallel_api_test(server: yutenv.Server, rules: str) -> None:
    env = parallel_env(rules=rules, server=server)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="yutenv: ignoring unknown reset options")
            parallel_api_test(env, num_cycles=3000)
    finally:
        env.close()


def test_only_the_acting_agent_matters(server: yutenv.Server) -> None:
    """Two envs, same seed: one gets junk actions for the waiting agents, the other none at
    all; the games are the same, and every step exactly one agent acts."""
    a = YutParallelEnv(rules="players=3", server=server)
    b = YutParallelEnv(rules="players=3", server=server)
    try:
        oa, ia = a.reset(seed=11)
        ob, ib = b.reset(seed=11)
        steps = 0
        while a.agents:
            acting = [ag for ag in a.agents if ia[ag]["acting"]]
            assert acting == [a.agent_selection] and ia[acting[0]]["active_agent"] == acting[0]
            for ag in a.agents:
                assert oa[ag]["action_mask"].any() == (ag in acting)  # waiting agents: nothing legal
            actor = acting[0]
            move = int(np.flatnonzero(oa[actor]["action_mask"])[-1])
            junk = {ag: 179 for ag in a.agents if ag != actor}
            oa, ra, ta, ua, ia = a.step({actor: move, **junk})
            ob, rb, tb, ub, ib = b.step({actor: move})
            assert set(oa) == set(ra) == set(ta) == set(ua) == set(ia)
            for ag in oa:
                np.testing.assert_array_equal(oa[ag]["observation"], ob[ag]["observation"])
            assert ra == rb and ta == tb and ua == ub
            steps += 1
        assert not b.agents
        assert all(ta.values()) and sorted(ra.values())[-1] == 1.0
        assert all(i["active_agent"] is None and not i["acting"] for i in ia.values())
        assert steps > 10
        with pytest.raises(yutenv.IllegalActionError, match="reset"):
            a.step({})
        a.reset(seed=1)
        with pytest.raises(yutenv.IllegalActionError, match="agent to move"):
            a.step({})
    finally:
        a.close()
        b.close()


# api_test's advice for Dict observations and zero observations (see test_pettingzoo.py)
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.filterwarnings("ignore:Observation numpy array is all zeros")
def test_parallel_to_aec_passes_api_test(server: yutenv.Server) -> None:
    env = parallel_to_aec(parallel_env(server=server))
    try:
        with pytest.warns(UserWarning, match="unknown reset options"):  # api_test's options={"options": 1}
            api_test(env, num_cycles=1000)
    finally:
        env.close()


def test_aec_to_parallel_is_refused_for_a_reason(server: yutenv.Server) -> None:
    """aec_to_parallel assumes one action per agent per cycle, in order; a yut or a capture
    gives the same agent another decision, so the AEC env says it is not parallelizable."""
    aec = yutenv.pettingzoo.env(server=server)
    try:
        assert aec.metadata["is_parallelizable"] is False
        with pytest.raises(AssertionError, match="is_parallelizable"):
            aec_to_parallel(aec)
    finally:
        aec.close()


def test_turn_based_conversion_plays_the_same_game(server: yutenv.Server) -> None:
    """PettingZoo's turn_based_aec_to_parallel over the AEC env gives the same game as
    YutParallelEnv: it is the supported conversion of the AEC env."""
    conv = turn_based_aec_to_parallel(yutenv.pettingzoo.env(server=server))
    ours = parallel_env(server=server)
    try:
        oc, _ = conv.reset(seed=5)
        oo, _ = ours.reset(seed=5)
        while ours.agents:
            actor = ours.agent_selection
            move = int(np.flatnonzero(oo[actor]["action_mask"])[0])
            np.testing.assert_array_equal(oc[actor]["action_mask"], oo[actor]["action_mask"])
            oc, rc, tc, uc, _ = conv.step({ag: move for ag in conv.agents})
            oo, ro, to, uo, _ = ours.step({actor: move})
            assert rc == ro and tc == to and uc == uo
        assert not conv.agents
    finally:
        conv.close()
        ours.close()


def test_rgb_array_shows_the_game(server: yutenv.Server) -> None:
    env = parallel_env(server=server, render_mode="rgb_array")
    obs, infos = env.reset(seed=4)
    first = env.render()
    assert isinstance(first, np.ndarray) and first.shape == (480, 720, 3) and first.dtype == np.uint8
    for _ in range(6):  # a few moves put pieces on the board
        actor = next(a for a in env.agents if infos[a]["acting"])
        actions = {a: int(np.flatnonzero(obs[a]["action_mask"])[0]) if a == actor else 0 for a in env.agents}
        obs, _, term, trunc, infos = env.step(actions)
        if any(term.values()) or any(trunc.values()):
            break
    later = env.render()
    assert isinstance(later, np.ndarray) and not np.array_equal(first, later)
    env.close()


def test_human_render_mode(server: yutenv.Server, capsys: pytest.CaptureFixture[str]) -> None:
    # Human mode: reset and every step print the live board (one AEC step each), render() is None.
    env = parallel_env(server=server, render_mode="human")
    assert env.metadata["render_modes"] == ["human", "ansi", "rgb_array"] and env.metadata["render_fps"] > 0
    ansi = parallel_env(server=server, render_mode="ansi")
    obs, infos = env.reset(seed=4)
    ansi.reset(seed=4)
    want = [str(ansi.render())]
    for _ in range(3):
        actor = next(a for a in env.agents if infos[a]["acting"])
        actions = {a: int(np.flatnonzero(obs[a]["action_mask"])[0]) if a == actor else 0 for a in env.agents}
        obs, _, _, _, infos = env.step(actions)
        ansi.step(actions)
        want.append(str(ansi.render()))
    assert env.render() is None
    assert capsys.readouterr().out == "".join(w + ("" if w.endswith("\n") else "\n") + "\n" for w in want)
    env.close()
    ansi.close()
