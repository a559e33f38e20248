"""Opponents beyond one spec: mixtures drawn per episode, Python policies as opponents
(callables, SB3 models, torch modules), and what a failing policy gets. Real servers, real SB3."""

from __future__ import annotations

import fractions
import threading
import time
from typing import Any, Iterator

import gymnasium
import numpy as np
import numpy.typing as npt
import pytest
from gymnasium.utils.env_checker import check_env

import yutenv
from yutenv._protocol import NUM_ACTIONS, TIER_SIZES
from yutenv.envs.opponents import PolicyOpponent, mixture


@pytest.fixture(scope="module")
def server() -> Iterator[yutenv.Server]:
    s = yutenv.Server()
    yield s
    s.close()


def first_legal(obs: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    return mask.argmax(axis=1)


def play(venv: yutenv.YutVectorEnv, steps: int, seed: int = 1) -> list[Any]:
    """Step ``venv`` with the first legal actions; return each step's opponent names."""
    _, infos = venv.reset(seed=seed)
    seen = [list(infos["opponent"])]
    for _ in range(steps):
        _, _, _, _, infos = venv.step(venv.action_masks().argmax(axis=1).astype(np.int64))
        seen.append(list(infos["opponent"]))
    return seen


def test_a_mixture_is_drawn_per_episode_from_its_seed(server: yutenv.Server) -> None:
    mix = [("greedy", 2), "random", ("mc:5", 1)]
    a = yutenv.make(num_envs=16, opponent=mix, server=server)
    b = yutenv.make(num_envs=16, opponent=mix, server=server)
    try:
        sa, sb = play(a, 150), play(b, 150)
        assert sa == sb, "the same seeds draw the same opponents"
        assert {n for row in sa for n in row} == {"greedy", "random", "mc:5"}
        assert sa != play(a, 150, seed=99), "other seeds draw others"
        stats = a.opponent_stats()
        assert set(stats) == {"greedy", "random", "mc:5"}
        assert sum(int(s["episodes"]) for s in stats.values()) > 16
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize(
    "opponent, copy, transport",
    [("greedy", False, "shared"), ("greedy", True, "socket"), (["greedy", "random"], False, "shared")],
    ids=["one-views", "one-socket", "mixture"],
)
def test_opponent_stats_count_every_episode_the_steps_returned(
    server: yutenv.Server, opponent: Any, copy: bool, transport: str
) -> None:
    """The per-opponent counts equal those of the episodes the steps returned, up to the last
    step (whose episodes are counted while the server works on the next one, or when asked)."""
    venv = yutenv.make(num_envs=32, opponent=opponent, server=server, copy=copy, transport=transport, max_decisions=30)
    try:
        _, infos = venv.reset(seed=3)
        want: dict[str, dict[str, float]] = {}
        names = list(infos["opponent"]) if "opponent" in infos else ["greedy"] * 32
        for step in range(120):
            _, rew, term, trunc, infos = venv.step(venv.action_masks().argmax(axis=1))
            for i in np.flatnonzero(term | trunc):
                w = want.setdefault(names[i], {"episodes": 0, "wins": 0, "losses": 0, "draws": 0, "truncated": 0, "reward": 0.0})
                w["episodes"] += 1
                if trunc[i] and not term[i]:
                    w["truncated"] += 1
                else:
                    w["reward"] += float(rew[i])
                    w["wins" if rew[i] > 0 else "losses" if rew[i] < 0 else "draws"] += 1
            if "opponent" in infos:
                names = list(infos["opponent"])
            if step in (40, 119):  # asked mid-run and right after the last step
                got = venv.opponent_stats()
                assert set(got) == set(want)
                for name, w in want.items():
                    for k in ("episodes", "wins", "losses", "draws", "truncated"):
                        assert got[name][k] == w[k], (name, k)
                    assert got[name]["mean_reward"] == pytest.approx(w["reward"] / w["episodes"])
        assert sum(w["truncated"] for w in want.values()) > 0 and sum(w["wins"] for w in want.values()) > 0
    finally:
        venv.close()


def test_weights_decide_the_draw(server: yutenv.Server) -> None:
    venv = yutenv.make(num_envs=64, opponent={"greedy": 1.0, "random": 1e-12}, server=server)
    try:
        _, infos = venv.reset(seed=5)
        assert set(infos["opponent"]) == {"greedy"}
    finally:
        venv.close()


@pytest.mark.parametrize(
    "opponent",
    [
        {"greedy": np.float32(2), "random": 1},
        [("greedy", np.int64(2)), ("random", np.float16(1))],
        {"greedy": fractions.Fraction(2), "random": 1.0},
    ],
)
def test_numpy_and_other_real_weights_are_weights(opponent: Any, server: yutenv.Server) -> None:
    m = mixture(opponent)
    assert m.specs == ("greedy", "random") and m.weights == (2.0, 1.0)
    assert all(type(w) is float for w in m.weights)
    venv = yutenv.make(num_envs=4, opponent=opponent, server=server)
    try:
        venv.set_opponents(opponent)
        _, infos = venv.reset(seed=1)
        assert set(infos["opponent"]) <= {"greedy", "random"}
    finally:
        venv.close()


@pytest.mark.parametrize(
    "opponent, match",
    [
        ({"greedy": True}, r"opponent entry 0: weight True is a bool"),
        ({"greedy": np.True_}, r"opponent entry 0: weight .*True.* is a bool"),
        ([("greedy", np.float64("nan"))], r"opponent entry 0: weight .*nan.*; want a finite number > 0"),
        ({"random": 1, "greedy": np.float32("inf")}, r"opponent entry 1: weight .*inf.*; want a finite number > 0"),
        ({"greedy": np.int8(-1)}, r"opponent entry 0: weight .*-1.*; want a finite number > 0"),
        ({"greedy": 0}, r"opponent entry 0: weight 0; want a finite number > 0"),
        ({"greedy": "2"}, r"opponent entry 0: weight '2' is a str; want a finite number > 0"),
        ({"greedy": 1j}, r"opponent entry 0: weight 1j is a complex"),
    ],
)
def test_weights_that_are_not_positive_real_numbers_are_refused(opponent: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        mixture(opponent)


def test_a_mixture_plays_the_same_games_as_its_entry_alone(server: yutenv.Server) -> None:
    """An env whose first episode drew "greedy" plays exactly the game a greedy env of the same seed plays."""
    mixed = yutenv.make(num_envs=12, opponent=["greedy", "random"], server=server)
    alone = yutenv.make(num_envs=12, opponent="greedy", server=server)
    try:
        o1, i1 = mixed.reset(seed=3)
        o2, _ = alone.reset(seed=3)
        g = np.flatnonzero(i1["opponent"] == "greedy")
        assert len(g) > 0
        np.testing.assert_array_equal(o1[g], o2[g])
        for _ in range(20):
            o1, _, t1, _, _ = mixed.step(mixed.action_masks().argmax(axis=1).astype(np.int64))
            o2, _, t2, _, _ = alone.step(alone.action_masks().argmax(axis=1).astype(np.int64))
            np.testing.assert_array_equal(o1[g], o2[g])
            np.testing.assert_array_equal(t1[g], t2[g])
            g = g[~t1[g]]  # the next episodes draw again
    finally:
        mixed.close()
        alone.close()


def test_a_python_opponent_sees_its_own_seat_once_per_round_for_every_waiting_env(server: yutenv.Server) -> None:
    """The policy is called once per round with every env whose opponent is to move (never once
    per env), and each row is the opponent seat's own observation and mask."""
    venv = yutenv.make(num_envs=16, opponent=first_legal, seat=1, server=server)
    batch = venv._batch
    calls: list[int] = []

    def watched(obs: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_]) -> Any:
        o0, m0 = batch.observe(0)  # what seat 0, the opponent, sees now
        waiting = np.flatnonzero(m0.any(axis=1))
        assert len(waiting) == len(obs), "every env whose opponent is to move, in one call"
        np.testing.assert_array_equal(obs, o0[waiting])
        np.testing.assert_array_equal(mask, m0[waiting].astype(bool))
        calls.append(len(obs))
        return first_legal(obs, mask)

    batch.mixture.policies[0].policy = watched  # type: ignore[union-attr]
    try:
        venv.reset(seed=2, options={"start": 0})
        assert calls[0] == 16, "seat 0 begins: one call for all 16 envs"
        assert all(c < 16 for c in calls[1:]), "then the envs whose throw earned another decision"
        for _ in range(60):
            before = len(calls)
            venv.step(venv.action_masks().argmax(axis=1).astype(np.int64))
            rounds = len(calls) - before
            assert rounds <= 8, "a round per consecutive opponent decision, not per env"
        assert sum(calls) > 100 and len(calls) < sum(calls) / 3
    finally:
        venv.close()


def test_the_one_env_and_a_mixture_with_a_policy(server: yutenv.Server) -> None:
    env = yutenv.make(opponent=[first_legal, "greedy"], server=server, reward="progress", illegal="penalty")
    try:
        check_env(env, skip_render_check=True)
        names = set()
        for seed in range(12):
            _, info = env.reset(seed=seed)
            names.add(info["opponent"])
            done = False
            while not done:
                _, _, term, trunc, info = env.step(int(env.action_masks().argmax()))
                done = term or trunc
                assert info["opponent"] in ("first_legal", "greedy")
        assert names == {"first_legal", "greedy"}
    finally:
        env.close()


@pytest.mark.parametrize("autoreset", list(gymnasium.vector.AutoresetMode)[:2], ids=lambda m: m.value)
def test_set_opponents_applies_to_the_next_episodes(server: yutenv.Server, autoreset: Any) -> None:
    venv = yutenv.make(num_envs=8, opponent=["random", first_legal], server=server, autoreset_mode=autoreset)
    try:
        _, infos = venv.reset(seed=4)
        running = list(infos["opponent"])
        assert venv.set_opponents(["greedy", first_legal, "mc:3"]) == ["greedy", "first_legal", "mc:3"]
        live = np.ones(8, bool)
        for _ in range(200):
            _, _, term, trunc, infos = venv.step(venv.action_masks().argmax(axis=1).astype(np.int64))
            now = list(infos["opponent"])
            for i in np.flatnonzero(~live):
                assert now[i] in ("greedy", "first_legal", "mc:3")
            for i in np.flatnonzero(live):  # the first episodes keep the opponent they drew
                if autoreset is gymnasium.vector.AutoresetMode.SAME_STEP and (term[i] or trunc[i]):
                    assert infos["final_info"]["opponent"][i] == running[i]
                    live[i] = False
                else:
                    assert now[i] == running[i]
                    live[i] = not (term[i] or trunc[i])
        stats = venv.opponent_stats()
        assert set(stats) <= {"random", "first_legal", "greedy", "mc:3"} and "greedy" in stats
        with pytest.raises(ValueError, match="one opponent spec"):
            one = yutenv.make(num_envs=2, opponent="random", server=server)
            try:
                one.set_opponents(["greedy"])
            finally:
                one.close()
    finally:
        venv.close()


def test_evaluate_against_a_mixture_breaks_the_result_down(server: yutenv.Server) -> None:
    r = yutenv.evaluate(first_legal, opponent=["greedy", first_legal], games=60, server=server, num_envs=8)
    assert set(r.per_opponent) == {"greedy", "first_legal"}
    assert sum(g for g, _ in r.per_opponent.values()) == r.games
    assert sum(w for _, w in r.per_opponent.values()) == r.wins_a
    assert "against each opponent" in str(r)


@pytest.mark.parametrize(
    "policy, error, match",
    [
        (
            lambda o, m: (_ for _ in ()).throw(RuntimeError("boom")),
            yutenv.OpponentError,
            r"opponent 'policy' raised RuntimeError for envs? [0-9].*: boom",
        ),
        (lambda o, m: np.zeros(len(o) + 1, np.int64), yutenv.OpponentError, r"returned actions of shape \(\d+,\) for \d+ envs"),
        (lambda o, m: np.full(len(o), 200), yutenv.OpponentError, r"returned action 200 for env \d+, which is not legal"),
        (lambda o, m: (~m).argmax(axis=1), yutenv.OpponentError, r"which is not legal there \(legal: \["),
        (lambda o, m: ["x"] * len(o), yutenv.OpponentError, r"want integers"),
    ],
    ids=["raises", "wrong-shape", "out-of-range", "illegal", "not-ints"],
)
def test_a_bad_python_opponent_gets_one_clear_error_and_the_env_goes_on(
    server: yutenv.Server, policy: Any, error: type, match: str
) -> None:
    vector = yutenv.make(num_envs=4, opponent=policy, seat=1, server=server)
    one = yutenv.make(opponent=policy, seat=1, server=server)
    try:
        for env, noop in ((vector, np.zeros(4, np.int64)), (one, 0)):
            with pytest.raises(error, match=match):
                env.reset(seed=1, options={"start": 0})  # seat 0, the opponent, begins
            with pytest.raises(yutenv.ResetNeeded):
                env.step(noop)
            env.set_opponents([first_legal])  # a working policy in the same entry
            env.reset(seed=1, options={"start": 0})
            env.step(env.action_masks().argmax(axis=-1))
    finally:
        vector.close()
        one.close()


def test_a_hanging_opponent_times_out(server: yutenv.Server) -> None:
    release = threading.Event()

    def hangs(obs: Any, mask: Any) -> Any:
        release.wait(30)
        return first_legal(obs, mask)

    venv = yutenv.make(num_envs=2, opponent=PolicyOpponent(hangs, name="sleepy", timeout=0.3), seat=1, server=server)
    try:
        t0 = time.monotonic()
        with pytest.raises(yutenv.OpponentTimeoutError, match=r"opponent 'sleepy' did not answer within 0.3 s for envs 0, 1"):
            venv.reset(seed=1, options={"start": 0})
        assert time.monotonic() - t0 < 10
        release.set()
        venv.set_opponents([first_legal])
        venv.reset(seed=1, options={"start": 0})
    finally:
        release.set()
        venv.close()


def test_bad_mixtures_are_refused_before_the_server(server: yutenv.Server) -> None:
    for bad, err in [
        ([], ValueError),
        ([("greedy", 0)], ValueError),
        ([("greedy", float("nan"))], ValueError),
        (["client"], ValueError),
        ([3], TypeError),
        (["greedy"] * 65, ValueError),
    ]:
        with pytest.raises(err):
            yutenv.make(opponent=bad, server=server)
    with pytest.raises(yutenv.InvalidArgumentError, match=r"params.opponents\[1\]"):
        yutenv.make(opponent=["greedy", "nosuchagent"], server=server)


def test_sb3_models_and_torch_modules_play_as_opponents(server: yutenv.Server) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from yutenv.sb3 import vec_env

    torch.set_num_threads(1)
    venv = vec_env(8, seed=0, opponent=["greedy", first_legal], tier="compact", server=server)
    try:
        model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, policy_kwargs={"net_arch": [32]})
        model.learn(256)
        stats = venv.opponent_stats()
        assert set(stats) <= {"greedy", "first_legal"} and stats
    finally:
        venv.close()
    module = torch.nn.Sequential(torch.nn.Linear(model.observation_space.shape[0], 16), torch.nn.Tanh(), torch.nn.Linear(16, 180))
    vs = yutenv.make(num_envs=8, opponent=[model, module], tier="compact", server=server)
    try:
        seen = {n for row in play(vs, 80) for n in row}
        assert seen == {"MaskablePPO", "Sequential"}
    finally:
        vs.close()


def test_relative_net_names_are_the_callers_files(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server the package started in another folder plays ``net:NAME`` from the caller's folder."""
    from pathlib import Path

    net = Path(__file__).resolve().parents[2] / "nnet" / "testdata" / "go-tiny.ynet"
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    with yutenv.Server() as srv:  # started in "elsewhere"
        work = tmp_path / "work"
        work.mkdir()
        (work / "mine.ynet").write_bytes(net.read_bytes())
        (work / "a,b").mkdir()
        (work / "a,b" / "c, d.ynet").write_bytes(net.read_bytes())
        monkeypatch.chdir(work)
        for opponent in ("net:mine.ynet", ["net:mine.ynet,sims=2", "greedy"], "net:a,b/c, d.ynet,sims=2", "net:a,b/c, d.ynet"):
            env = yutenv.make(opponent=opponent, server=srv, tier="compact")
            try:
                _, info = env.reset(seed=1)
                assert info.get("opponent", "net:mine.ynet") in ("net:mine.ynet", "net:mine.ynet,sims=2", "greedy")
                env.step(int(info["action_mask"].argmax()))  # the network plays
            finally:
                env.close()


def test_a_policy_built_for_another_tier_is_named_before_any_game(srv: yutenv.Server) -> None:
    # A model trained on one tier and played on another: one ValueError naming both tiers, from
    # evaluate, make and set_opponents, instead of torch's shape error mid-game.
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Linear(TIER_SIZES["compact"], 16), torch.nn.Tanh(), torch.nn.Linear(16, NUM_ACTIONS))
    want = r"takes observations of 213 values \(those of tier 'compact': pass tier='compact'\), but this env's tier 'tactical' gives 2042"
    with pytest.raises(ValueError, match=want):
        yutenv.evaluate(net, "random", games=2, tier="tactical", server=srv)
    with pytest.raises(ValueError, match="opponent 'Sequential' " + want):
        yutenv.make(num_envs=2, opponent=["random", net], tier="tactical", server=srv)
    venv = yutenv.make(num_envs=2, opponent=["random"], tier="tactical", server=srv)
    with pytest.raises(ValueError, match=want):
        venv.set_opponents(["random", net])
    venv.reset(seed=1)  # still usable
    venv.close()
    ok = yutenv.evaluate(net, "random", games=2, tier="compact", server=srv)
    assert ok.games == 2


class _FailsOnce:
    """A policy whose first call fails (raises, answers an illegal action, or hangs past its
    timeout) and whose later calls play the first legal action."""

    def __init__(self, how: str) -> None:
        self.how, self.calls = how, 0
        self.release = threading.Event()

    def __call__(self, obs: Any, mask: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            if self.how == "raise":
                raise RuntimeError("boom")
            if self.how == "illegal":
                return (~mask).argmax(axis=1)
            self.release.wait(30)
        return first_legal(obs, mask)


@pytest.mark.parametrize("transport", ["socket", "shared"])
@pytest.mark.parametrize("how", ["raise", "illegal", "timeout"])
def test_the_first_reset_after_an_opponent_error_gives_a_clean_batch(server: yutenv.Server, how: str, transport: str) -> None:
    """After a Python opponent fails in any way, the reset its error asks for works at once, on the
    socket and on the shared-memory path, and whole episodes follow with every mask honest (an
    action taken from it is legal). Seat 1 is the learner, so the opponent moves first in the
    games seat 0 begins and the learner first in the others: both kinds of env are reset."""
    if transport == "shared" and server.transport != "unix":
        pytest.skip("shared memory needs the Unix-socket transport")
    policy = _FailsOnce(how)
    opponent = PolicyOpponent(policy, name="flaky", timeout=0.3)
    venv = yutenv.make(num_envs=4, opponent=[opponent], seat=1, server=server, transport=transport)
    try:
        with pytest.raises(yutenv.OpponentError):
            venv.reset(seed=1)
        policy.release.set()
        venv.reset(seed=2)
        episodes, ended = 0, np.zeros(4, np.bool_)
        for _ in range(2000):
            mask = venv.action_masks()
            assert mask[~ended].any(axis=1).all(), "every running env's row has a legal action"
            _, _, terminated, truncated, _ = venv.step(mask.argmax(axis=1).astype(np.int64))
            ended = terminated | truncated  # next_step autoreset: their next row is the ended game's
            episodes += int(np.sum(ended))
            if episodes >= 8:
                break
        assert episodes >= 8
    finally:
        policy.release.set()
        venv.close()
