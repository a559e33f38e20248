"""The PettingZoo AEC env: api_test, seed_test, repeated turns, rewards, illegal actions."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import yutenv.pettingzoo as ypz
from conftest import pick
from pettingzoo.test import api_test, render_test, seed_test

import yutenv


# api_test warns about any observation that is not a bare Box array; a Dict with
# "observation" and "action_mask" is PettingZoo's own convention for masked envs (its classic
# envs draw the same two warnings), so those two are expected here.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("rules", ["standard", "players=3,end=rank", "players=4"])
def test_api_test(srv: yutenv.Server, rules: str) -> None:
    env = ypz.env(server=srv, rules=rules)
    # api_test resets with options={"options": 1}; unknown options are ignored with a warning
    with pytest.warns(UserWarning, match="unknown reset options"):
        api_test(env, num_cycles=300)
    env.close()


def test_seed_test(srv: yutenv.Server) -> None:
    seed_test(lambda: ypz.env(server=srv), num_cycles=200)


def run_game(env: ypz.YutAECEnv, seed: int, rng: np.random.Generator) -> tuple[list[str], dict[str, float]]:
    env.reset(seed=seed)
    order: list[str] = []
    final: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            final[agent] = reward
            env.step(None)
            continue
        assert obs["action_mask"].sum() > 0
        # only the agent to move has a non-zero mask
        for other in env.agents:
            if other != agent:
                assert env.observe(other)["action_mask"].sum() == 0
        order.append(agent)
        env.step(pick(rng, obs["action_mask"]))
    return order, final


def test_repeated_turns_and_rewards(srv: yutenv.Server) -> None:
    env = ypz.raw_env(server=srv)
    rng = np.random.default_rng(0)
    repeats = 0
    for g in range(5):
        order, final = run_game(env, 10 + g, rng)
        repeats += sum(1 for a, b in zip(order, order[1:]) if a == b)
        assert sorted(final) == ["player_0", "player_1"]
        assert sorted(final.values()) == [-1.0, 1.0]
        assert env.agents == []
    # yut, mo, captures and several results in the pool give the same seat several decisions in a row
    assert repeats > 10
    env.close()


def test_rank_rewards_three_players(srv: yutenv.Server) -> None:
    env = ypz.raw_env(server=srv, rules="players=3,end=rank")
    _, final = run_game(env, 3, np.random.default_rng(1))
    assert sorted(final.values()) == [-1.0, 0.0, 1.0]
    env.close()


def test_aec_matches_engine_determinism(srv: yutenv.Server) -> None:
    a = ypz.raw_env(server=srv)
    b = ypz.raw_env(server=srv)
    oa = run_game(a, 99, np.random.default_rng(4))
    ob = run_game(b, 99, np.random.default_rng(4))
    assert oa == ob
    a.close()
    b.close()


def test_illegal_actions(srv: yutenv.Server) -> None:
    env = ypz.raw_env(server=srv)
    env.reset(seed=1)
    mask = env.observe(env.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(yutenv.IllegalActionError):
        env.step(bad)
    env.step(int(np.flatnonzero(mask)[0]))  # still usable after the refused action
    env.close()

    env = ypz.raw_env(server=srv, illegal="penalty")
    env.reset(seed=1)
    actor = env.agent_selection
    mask = env.observe(actor)["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(env.terminations.values())
    assert env.rewards[actor] == -1.0
    assert env.infos[actor]["illegal"] is True
    assert sum(env.rewards.values()) == -1.0
    env.close()

    wrapped = ypz.env(server=srv)
    wrapped.reset(seed=1)
    with pytest.raises(Exception):  # noqa: B017 - any error: the env refuses it
        wrapped.step(500)  # AssertOutOfBoundsWrapper
    wrapped.close()


def test_render(srv: yutenv.Server) -> None:
    env = ypz.raw_env(server=srv, render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str)
    env.close()


def test_render_rgb_array(srv: yutenv.Server) -> None:
    env = ypz.raw_env(server=srv, render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"]
    with pytest.raises(yutenv.ResetNeeded):
        env.render()
    env.reset(seed=0)
    first = env.render()
    assert isinstance(first, np.ndarray) and first.shape == (480, 720, 3) and first.dtype == np.uint8
    assert len(np.unique(first.reshape(-1, 3), axis=0)) > 10
    for _ in range(8):
        env.step(int(np.flatnonzero(env.action_mask())[0]))
    later = env.render()
    assert isinstance(later, np.ndarray) and not np.array_equal(first, later)
    env.close()


def test_progress_reward_reaches_every_step(srv: yutenv.Server) -> None:
    e = yutenv.pettingzoo.raw_env(server=srv, reward="progress")
    e.reset(seed=2)
    mid_game = 0
    totals = {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, r, term, trunc, _ = e.last()
        totals[agent] += r
        if r != 0 and not (term or trunc):
            mid_game += 1
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    e.close()
    assert mid_game > 0, "shaping arrives before the end"
    # Two seats: the potentials are opposite, so the returns stay zero-sum.
    assert sum(totals.values()) == pytest.approx(0.0, abs=1e-4)


def test_observe_every_agent_sees_its_own_view(srv: yutenv.Server) -> None:
    """observe(agent) of a waiting agent is its real, current view (not a stale one) and its
    mask is all zero exactly when it cannot act; in a two-seat game a waiting seat's view is
    the mover's with the two seat slots swapped."""
    env = ypz.raw_env(server=srv, tier="compact")
    env.reset(seed=5)
    space = env._batch.obs_space_info
    parts = {p["name"]: p for p in space["parts"]}
    hand = parts["hand"]
    rng = np.random.default_rng(2)
    checked = 0
    for agent in env.agent_iter(max_iter=200):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        other = next(a for a in env.possible_agents if a != agent)
        mine, theirs = env.observe(agent), env.observe(other)
        assert mine["action_mask"].sum() > 0
        assert theirs["action_mask"].sum() == 0
        off = hand["offset"]
        # hand[self] of the waiting agent is hand[opp1] of the mover, and the reverse
        assert theirs["observation"][off] == mine["observation"][off + 1]
        assert theirs["observation"][off + 1] == mine["observation"][off]
        assert not np.array_equal(theirs["observation"], np.zeros_like(theirs["observation"]))
        # each knows whose turn it is: the mover in its self slot, the
        # waiting agent in its opp1 slot
        tm = parts["to_move"]["offset"]
        assert list(mine["observation"][tm : tm + 4]) == [1, 0, 0, 0]
        assert list(theirs["observation"][tm : tm + 4]) == [0, 1, 0, 0]
        checked += 1
        env.step(pick(rng, obs["action_mask"]))
    assert checked > 20
    env.close()


def test_render_test(srv: yutenv.Server, capsys: pytest.CaptureFixture[str]) -> None:
    # PettingZoo's own render test: every mode of metadata["render_modes"], "human" among them
    # (render() returns None, the board is printed at every reset and step).
    assert ypz.env(server=srv).metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    render_test(functools.partial(ypz.env, server=srv))
    assert "A" in capsys.readouterr().out


def test_human_render_prints_every_reset_and_step(srv: yutenv.Server, capsys: pytest.CaptureFixture[str]) -> None:
    human = ypz.raw_env(server=srv, render_mode="human")
    ansi = ypz.raw_env(server=srv, render_mode="ansi")
    human.reset(seed=2)
    ansi.reset(seed=2)
    want = [str(ansi.render())]
    for _ in range(3):
        a = int(np.flatnonzero(human.action_mask())[0])
        human.step(a)
        ansi.step(a)
        want.append(str(ansi.render()))
    assert human.render() is None
    assert capsys.readouterr().out == "".join(w + ("" if w.endswith("\n") else "\n") + "\n" for w in want)
    human.close()
    ansi.close()
