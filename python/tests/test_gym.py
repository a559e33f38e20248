"""YutEnv: Gymnasium conformance, masks, determinism, illegal actions, errors."""

from __future__ import annotations

import re
import warnings

import gymnasium
import numpy as np
import pytest
from conftest import assert_readonly_view, pick
from gymnasium.utils.env_checker import check_env

import yutenv


def play(env: yutenv.YutEnv, seed: int, steps: int, action_seed: int = 0) -> list[tuple[bytes, float, bool, bool, bytes]]:
    """Play up to ``steps`` random legal actions from reset(seed); return every transition as bytes."""
    rng = np.random.default_rng(action_seed)
    obs, info = env.reset(seed=seed)
    out = [(obs.tobytes(), 0.0, False, False, info["action_mask"].tobytes())]
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(pick(rng, info["action_mask"]))
        out.append((obs.tobytes(), r, term, trunc, info["action_mask"].tobytes()))
        if term or trunc:
            obs, info = env.reset()
            out.append((obs.tobytes(), 0.0, False, False, info["action_mask"].tobytes()))
    return out


def test_check_env_raw(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, illegal="penalty")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker's warnings are failures here
        check_env(env, skip_render_check=True)
    env.close()


def test_check_env_registered_all_render_modes(srv: yutenv.Server) -> None:
    # Through gymnasium.make the env has a spec, so the checker also builds it once per
    # render mode and checks close() twice.
    env = gymnasium.make("yutenv/Yut-v0", server=srv, illegal="penalty", render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def test_check_env_dict_obs(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, illegal="penalty", obs_type="dict")
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert set(obs) == {"observation", "action_mask"}
    assert obs in env.observation_space
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
    env.close()


def test_spaces_and_masks(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv)
    assert env.action_space == gymnasium.spaces.Discrete(180)
    assert isinstance(env.observation_space, gymnasium.spaces.Box)
    assert env.observation_space.dtype == np.float32
    obs, info = env.reset(seed=11)
    assert obs in env.observation_space
    mask = info["action_mask"]
    assert mask.shape == (180,) and mask.dtype == np.int8 and mask.sum() >= 1
    am = env.action_masks()
    assert am.dtype == np.bool_ and am.shape == (180,)
    np.testing.assert_array_equal(am, mask.astype(bool))
    rng = np.random.default_rng(0)
    for _ in range(50):
        obs, r, term, trunc, info = env.step(pick(rng, env.action_masks()))
        np.testing.assert_array_equal(env.action_masks(), info["action_mask"].astype(bool))
        if term or trunc:
            assert info["action_mask"].sum() == 0
            break
        assert info["action_mask"].sum() >= 1
    env.close()


def test_arrays_belong_to_the_caller(srv: yutenv.Server) -> None:
    # Over the socket: read-only views of each reply's own bytes. Over shared memory: copies
    # of the region's rows (the next step overwrites the region). Either way a step never
    # changes what an earlier one returned.
    for transport in ("socket", "shared") if srv.transport == "unix" else ("socket",):
        env = yutenv.YutEnv(server=srv, transport=transport)
        obs, info = env.reset(seed=1)
        kept = obs.copy()
        if transport == "socket":
            assert_readonly_view(obs)
            assert_readonly_view(info["action_mask"])
        obs2, _, _, _, info2 = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if transport == "socket":
            assert_readonly_view(obs2)
        assert not np.shares_memory(obs, obs2)
        assert np.array_equal(obs, kept)
        env.close()


def test_seed_determinism_same_server(srv: yutenv.Server) -> None:
    a = yutenv.YutEnv(server=srv)
    b = yutenv.YutEnv(server=srv)
    assert play(a, 42, 300) == play(b, 42, 300)
    # reset(seed); reset() is reproducible too (the next seed comes from np_random)
    a.reset(seed=5)
    o1, _ = a.reset()
    a.reset(seed=5)
    o2, _ = a.reset()
    np.testing.assert_array_equal(o1, o2)
    a.close()
    b.close()


def test_determinism_across_two_servers() -> None:
    with yutenv.Server() as s1, yutenv.Server() as s2:
        assert s1.pid != s2.pid
        a = yutenv.YutEnv(server=s1, opponent="greedy", seat="random")
        b = yutenv.YutEnv(server=s2, opponent="greedy", seat="random")
        ta, tb = play(a, 2024, 400, action_seed=9), play(b, 2024, 400, action_seed=9)
        assert ta == tb
        assert any(t[2] for t in ta), "expected at least one finished game in 400 steps"
        # and different seeds give different games
        assert play(a, 2025, 50) != play(b, 2024, 50)
        a.close()
        b.close()


def test_full_game_rewards(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, opponent="random")
    rng = np.random.default_rng(1)
    outcomes = []
    for g in range(6):
        obs, info = env.reset(seed=100 + g)
        total, steps = 0.0, 0
        while True:
            obs, r, term, trunc, info = env.step(pick(rng, info["action_mask"]))
            steps += 1
            total += r
            if term or trunc:
                break
            assert r == 0.0
        assert term and not trunc
        assert r in (-1.0, 1.0)
        outcomes.append(r)
        assert 1 < steps < 500
    env.close()


def test_max_decisions_truncates(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, max_decisions=3)
    obs, info = env.reset(seed=4)
    for _ in range(3):
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term:
            pytest.skip("game ended before the limit")
    assert trunc and not term and r == 0.0
    env.close()


def test_illegal_action_error_policy_changes_nothing(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv)
    twin = yutenv.YutEnv(server=srv)
    obs, info = env.reset(seed=8)
    twin.reset(seed=8)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(yutenv.IllegalActionError) as ei:
        env.step(illegal)
    assert ei.value.code == "illegal_action"
    assert str(illegal) in str(ei.value) or "illegal" in str(ei.value)
    with pytest.raises(yutenv.IllegalActionError):
        env.step(180)
    with pytest.raises(yutenv.IllegalActionError):
        env.step(-1)
    # the failed steps changed nothing: the env continues exactly like its twin
    a = int(np.flatnonzero(info["action_mask"])[0])
    r1 = env.step(a)
    r2 = twin.step(a)
    np.testing.assert_array_equal(r1[0], r2[0])
    assert r1[1:4] == r2[1:4]
    env.close()
    twin.close()


def test_illegal_action_penalty_policy(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, illegal="penalty")
    obs, info = env.reset(seed=8)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, r, term, trunc, info = env.step(illegal)
    assert term and not trunc and r == -1.0 and info["illegal"] is True
    with pytest.raises(yutenv.ResetNeeded):
        env.step(0)
    env.close()


def test_step_before_reset_and_after_close(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv)
    with pytest.raises(yutenv.ResetNeeded):
        env.step(0)
    env.close()
    env.close()  # idempotent
    with pytest.raises(yutenv.ClosedError):
        env.reset()


def test_bad_arguments_map_to_exceptions(srv: yutenv.Server) -> None:
    with pytest.raises(yutenv.InvalidRulesError) as ei:
        yutenv.YutEnv(server=srv, rules="players=9")
    assert "players" in str(ei.value)
    with pytest.raises(yutenv.InvalidArgumentError):
        yutenv.YutEnv(server=srv, opponent="no-such-agent")
    with pytest.raises(yutenv.InvalidArgumentError):
        yutenv.YutEnv(server=srv, tier="no-such-tier")
    with pytest.raises(ValueError):
        yutenv.YutEnv(server=srv, render_mode="window")
    env = yutenv.YutEnv(server=srv)
    with pytest.raises(ValueError):
        env.reset(options={"nope": 1})
    env.close()


def test_reset_options_seat_and_start(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv)
    _, info = env.reset(seed=3, options={"seat": 1})
    assert info["seat"] == 1 and env.seat == 1
    _, info = env.reset(seed=3, options={"seat": 0, "start": 0})
    assert info["seat"] == 0
    env.close()


def test_rules_variants_and_tiers(srv: yutenv.Server) -> None:
    for rules in ("players=3,end=rank", {"players": 4, "pieces": 2}, "back_do=off,flat_prob=0.5"):
        env = yutenv.YutEnv(server=srv, rules=rules)
        obs, info = env.reset(seed=1)
        assert obs in env.observation_space
        env.close()
    sizes = {}
    for tier in ("compact", "tactical", "planes"):
        env = yutenv.YutEnv(server=srv, tier=tier)
        obs, _ = env.reset(seed=1)
        assert env.tier == tier and obs in env.observation_space
        sizes[tier] = obs.shape[0]
        env.close()
    assert len(set(sizes.values())) == 3


def test_render_ansi(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    assert isinstance(text, str) and len(text) > 20
    env.close()


def test_make_helpers(srv: yutenv.Server) -> None:
    e = yutenv.make(server=srv, opponent="greedy")
    assert isinstance(e, yutenv.YutEnv) and e.opponent == "greedy"
    e.close()
    v = yutenv.make(num_envs=3, server=srv)
    assert isinstance(v, yutenv.YutVectorEnv) and v.num_envs == 3
    v.close()
    g = gymnasium.make("yutenv/Yut-v0", server=srv)
    assert isinstance(g.unwrapped, yutenv.YutEnv)
    g.close()


def test_server_info_passthrough(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, info=True)
    _, info = env.reset(seed=3)
    assert info["seed"] == 3 and "events" in info
    rng = np.random.default_rng(0)
    while True:
        _, r, term, trunc, info = env.step(pick(rng, info["action_mask"]))
        assert isinstance(info["events"], list) and info["events"]
        if term or trunc:
            break
    assert info["winner"] in (0, 1) and (info["winner"] == info["seat"]) == (r > 0)
    env.close()


def test_obs_part(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, tier="tactical")
    obs, info = env.reset(seed=4)
    feats = env.obs_part(obs, "actions")
    assert feats.shape == (180, 10)
    # feature 0 is "legal": it must equal the mask
    np.testing.assert_array_equal(feats[:, 0] > 0, env.action_masks())
    with pytest.raises(KeyError, match="no observation part"):
        env.obs_part(obs, "nope")
    env.close()


def test_demo_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from yutenv import demo

    rc = demo.main(["--games", "3", "--vector-games", "32", "--num-envs", "8", "--eval-games", "8", "--baselines", "random,mc:5"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "YutVectorEnv(8)" in out and re.search(r"^features +mc:5 +8 ", out, re.M), out
    assert "the server was stopped on exit" in out


def test_render_rgb_array(srv: yutenv.Server) -> None:
    env = yutenv.YutEnv(server=srv, render_mode="rgb_array")
    env.reset(seed=2)
    frame = env.render()
    assert isinstance(frame, np.ndarray)
    assert frame.shape == (480, 720, 3) and frame.dtype == np.uint8
    # The board is drawn: not one flat colour, and the same state gives the same pixels.
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 10
    env.reset(seed=2)
    again = env.render()
    assert isinstance(again, np.ndarray)
    np.testing.assert_array_equal(frame, again)
    env.close()


def test_record_video(srv: yutenv.Server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(
        gymnasium.make("yutenv/Yut-v0", server=srv, render_mode="rgb_array"),
        video_folder=str(tmp_path / "videos"),
        episode_trigger=lambda ep: ep == 0,
        disable_logger=True,
    )
    _, info = env.reset(seed=5)
    done = False
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[0])
        _, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000


def test_progress_reward_is_shaping(srv: yutenv.Server) -> None:
    # The same seed and actions under both schemes: the progress rewards are dense, and with the
    # learner starting (every piece in hand at its first decision) they sum to the win reward.
    returns = {}
    for scheme in ("win", "progress"):
        env = yutenv.YutEnv(server=srv, reward=scheme)
        _, info = env.reset(seed=11, options={"start": 0})
        rewards = []
        done = False
        while not done:
            _, r, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            rewards.append(r)
            done = terminated or truncated
        returns[scheme] = rewards
        env.close()
    assert len(returns["win"]) == len(returns["progress"])
    assert sum(1 for r in returns["progress"][:-1] if r != 0) > 0
    assert sum(returns["progress"]) == pytest.approx(sum(returns["win"]), abs=1e-4)


@pytest.mark.parametrize("action", [1.7, "3", True, np.float32(2.0), None])
def test_step_refuses_non_integer_actions(srv: yutenv.Server, action: object) -> None:
    env = yutenv.YutEnv(server=srv)
    env.reset(seed=1)
    with pytest.raises(TypeError, match="an action must be an integer"):
        env.step(action)
    legal = int(np.flatnonzero(env.action_masks())[0])
    env.step(np.array(legal, dtype=np.int64))  # a 0-d integer array is an integer
    env.close()


@pytest.mark.parametrize("seed, error", [(2**64, ValueError), (-1, ValueError), (1.5, TypeError), ("7", TypeError)])
def test_reset_refuses_bad_seeds_before_changing_anything(srv: yutenv.Server, seed: object, error: type) -> None:
    env = yutenv.YutEnv(server=srv)
    env.reset(seed=5)
    state = env.np_random.bit_generator.state
    with pytest.raises(error, match="seed must be"):
        env.reset(seed=seed)  # type: ignore[arg-type]
    assert env.np_random.bit_generator.state == state
    env.close()


def test_check_env_human_render_mode(srv: yutenv.Server) -> None:
    # The checker's render checks (not skipped): metadata["render_modes"] and render_fps, and
    # render() returning None in human mode, for every declared mode through the spec.
    env = gymnasium.make("yutenv/Yut-v0", server=srv, illegal="penalty", render_mode="human")
    assert env.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def test_human_render_prints_every_reset_and_step(srv: yutenv.Server, capsys: pytest.CaptureFixture[str]) -> None:
    # Gymnasium's human mode: reset and step draw the live board, render() returns None.
    # Each printed board is the "ansi" render of the same position.
    human = yutenv.YutEnv(server=srv, render_mode="human")
    ansi = yutenv.YutEnv(server=srv, render_mode="ansi")
    _, info = human.reset(seed=5)
    ansi.reset(seed=5)
    want = [ansi.render()]
    rng = np.random.default_rng(0)
    for _ in range(3):
        a = pick(rng, info["action_mask"])
        _, _, term, trunc, info = human.step(a)
        ansi.step(a)
        want.append(ansi.render())
        if term or trunc:
            break
    assert human.render() is None
    out = capsys.readouterr().out
    assert out == "".join(str(w) + ("" if str(w).endswith("\n") else "\n") + "\n" for w in want)
    human.close()
    ansi.close()
