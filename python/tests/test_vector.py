"""YutVectorEnv: conventions, equivalence with single envs, autoreset semantics."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from conftest import assert_readonly_view, pick, pick_batch

import yutenv
from yutenv import AutoresetMode


def test_spaces_metadata_and_masks(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(5, server=srv)
    assert v.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert v.num_envs == 5
    assert v.single_action_space == gymnasium.spaces.Discrete(180)
    assert v.action_space == gymnasium.spaces.MultiDiscrete([180] * 5)
    obs, infos = v.reset(seed=1)
    assert obs.shape == (5,) + v.single_observation_space.shape and obs.dtype == np.float32
    assert obs in v.observation_space
    m = v.action_masks()
    assert m.shape == (5, 180) and m.dtype == np.bool_
    np.testing.assert_array_equal(m, infos["action_mask"].astype(bool))
    assert infos["_action_mask"].all()
    assert list(infos["seed"]) == [1, 2, 3, 4, 5]
    obs, rew, term, trunc, infos = v.step(pick_batch(np.random.default_rng(0), m))
    assert rew.shape == (5,) and term.dtype == np.bool_ and trunc.dtype == np.bool_
    v.close()


def test_copy_false_gives_read_only_views_and_the_default_writable_copies(srv: yutenv.Server) -> None:
    # Gymnasium's vector envs copy by default; copy=False returns views of the rows (the
    # shared region's or the reply's), with no copy at all.
    v = yutenv.YutVectorEnv(2, server=srv)
    obs, infos = v.reset(seed=1)
    assert obs.flags.writeable
    obs, rew, term, trunc, infos = v.step(pick_batch(np.random.default_rng(0), v.action_masks()))
    assert obs.flags.writeable and rew.flags.writeable and term.flags.writeable
    v.close()
    v = yutenv.YutVectorEnv(2, server=srv, copy=False)
    v.reset(seed=1)
    obs, rew, term, trunc, infos = v.step(pick_batch(np.random.default_rng(0), v.action_masks()))
    for a in (obs, rew, term, trunc, infos["action_mask"]):
        assert_readonly_view(a)
    v.close()


def test_make_vec_uses_the_server_batch(srv: yutenv.Server) -> None:
    v = gymnasium.make_vec("yutenv/Yut-v0", num_envs=4, server=srv, autoreset_mode=AutoresetMode.SAME_STEP)
    assert isinstance(v.unwrapped, yutenv.YutVectorEnv)
    assert v.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    v.reset(seed=0)
    v.close()


def test_vector_equals_single_envs(srv: yutenv.Server) -> None:
    """Env i of a vector env reset with seed s plays exactly like YutEnv.reset(seed=s+i)."""
    n = 4
    v = yutenv.YutVectorEnv(n, server=srv, opponent="greedy")
    singles = [yutenv.YutEnv(server=srv, opponent="greedy") for _ in range(n)]
    vobs, vinfo = v.reset(seed=77)
    live = [True] * n
    for i, e in enumerate(singles):
        o, inf = e.reset(seed=77 + i)
        np.testing.assert_array_equal(o, vobs[i])
        np.testing.assert_array_equal(inf["action_mask"], vinfo["action_mask"][i])
    rng = np.random.default_rng(3)
    steps = 0
    while any(live):
        acts = pick_batch(rng, v.action_masks())
        vobs, vrew, vterm, vtrunc, vinfo = v.step(acts)
        steps += 1
        for i, e in enumerate(singles):
            if not live[i]:
                continue
            o, r, t, tr, inf = e.step(int(acts[i]))
            np.testing.assert_array_equal(o, vobs[i])
            np.testing.assert_array_equal(inf["action_mask"], vinfo["action_mask"][i])
            assert (r, t, tr) == (float(vrew[i]), bool(vterm[i]), bool(vtrunc[i]))
            if t or tr:
                live[i] = False
    assert steps > 5
    v.close()
    for e in singles:
        e.close()


def test_same_seed_same_batch_across_servers() -> None:
    """Many episodes with autoresets: identical bit for bit on two servers."""
    with yutenv.Server() as s1, yutenv.Server() as s2:
        runs = []
        for s in (s1, s2):
            v = yutenv.YutVectorEnv(16, server=s, seat="random", opponent="random")
            rng = np.random.default_rng(5)
            obs, _ = v.reset(seed=123)
            h = [obs.tobytes()]
            ends = 0
            for _ in range(150):
                obs, rew, term, trunc, _ = v.step(pick_batch(rng, v.action_masks()))
                h += [obs.tobytes(), rew.tobytes(), term.tobytes()]
                ends += int(term.sum())
            runs.append(h)
            assert ends > 16
            v.close()
        assert runs[0] == runs[1]


def test_next_step_autoreset_semantics(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(8, server=srv)
    rng = np.random.default_rng(2)
    v.reset(seed=9)
    seen = 0
    pending: np.ndarray = np.zeros(8, dtype=bool)
    for _ in range(400):
        prev_mask = v.action_masks().copy()
        obs, rew, term, trunc, infos = v.step(pick_batch(rng, prev_mask))
        # rows that ended on the previous step were reset by this one
        for i in np.flatnonzero(pending):
            assert rew[i] == 0.0 and not term[i] and not trunc[i]
            assert infos["action_mask"][i].sum() > 0
            seen += 1
        for i in np.flatnonzero(term):
            assert rew[i] in (-1.0, 1.0)
            assert infos["action_mask"][i].sum() == 0  # terminal row: all-zero mask
        pending = np.logical_or(term, trunc)
    assert seen >= 3
    v.close()


def test_same_step_matches_next_step(srv: yutenv.Server) -> None:
    """SAME_STEP gives at once (final_obs + next episode) what NEXT_STEP gives over two steps."""
    n = 6
    nxt = yutenv.YutVectorEnv(n, server=srv, autoreset_mode=AutoresetMode.NEXT_STEP)
    same = yutenv.YutVectorEnv(n, server=srv, autoreset_mode="SameStep")
    assert same.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    o1, _ = nxt.reset(seed=31)
    o2, _ = same.reset(seed=31)
    np.testing.assert_array_equal(o1, o2)
    rng = np.random.default_rng(8)
    for _ in range(500):
        acts = pick_batch(rng, same.action_masks())
        so, sr, st, stt, sinfo = same.step(acts)
        no, nr, nt, ntt, _ = nxt.step(acts)
        np.testing.assert_array_equal(sr, nr)
        np.testing.assert_array_equal(st, nt)
        np.testing.assert_array_equal(stt, ntt)
        ended = np.logical_or(st, stt)
        for i in range(n):
            if ended[i]:
                assert sinfo["_final_obs"][i] and sinfo["_final_info"][i]
                np.testing.assert_array_equal(sinfo["final_obs"][i], no[i])  # the terminal row
                assert sinfo["final_info"]["action_mask"][i].sum() == 0
            else:
                np.testing.assert_array_equal(so[i], no[i])
        if ended.any():
            assert not sinfo["_final_obs"][~ended].any()
            assert all(sinfo["final_obs"][i] is None for i in np.flatnonzero(~ended))
            # NEXT_STEP's following step resets the ended rows (their actions are ignored):
            # it shows the first observation SAME_STEP already returned.
            no2, nr2, nt2, ntt2, _ = nxt.step(np.where(ended, 0, pick_batch(rng, nxt.action_masks())))
            for i in np.flatnonzero(ended):
                np.testing.assert_array_equal(no2[i], so[i])
                assert nr2[i] == 0.0 and not nt2[i] and not ntt2[i]
            break
    else:
        pytest.fail("no episode ended in 500 steps")
    nxt.close()
    same.close()


def test_same_step_final_obs_then_continues(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(4, server=srv, autoreset_mode=AutoresetMode.SAME_STEP)
    rng = np.random.default_rng(4)
    v.reset(seed=3)
    finals = 0
    for _ in range(300):
        obs, rew, term, trunc, infos = v.step(pick_batch(rng, v.action_masks()))
        assert v.action_masks().any(axis=1).all(), "SAME_STEP never shows a terminal row"
        if term.any():
            for i in np.flatnonzero(term):
                assert infos["final_obs"][i].shape == obs[i].shape
                assert rew[i] in (-1.0, 1.0)
                finals += 1
    assert finals >= 3
    v.close()


def test_vector_illegal_action_changes_no_env(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(3, server=srv)
    twin = yutenv.YutVectorEnv(3, server=srv)
    _, infos = v.reset(seed=50)
    twin.reset(seed=50)
    m = infos["action_mask"]
    acts = pick_batch(np.random.default_rng(0), m)
    bad = acts.copy()
    bad[1] = int(np.flatnonzero(m[1] == 0)[0])
    with pytest.raises(yutenv.IllegalActionError) as ei:
        v.step(bad)
    assert "1" in str(ei.value)
    with pytest.raises(yutenv.IllegalActionError):
        v.step(np.array([0, 0, 999]))
    # Out of range at either end, in any integer type: never wrapped into a legal action.
    for out in (
        np.array([0, -1, 0]),
        np.array([0, 0, 2**32 + int(acts[2])], dtype=np.int64),
        np.array([0, 0, 255], dtype=np.uint8),
        np.array([0, 0, -1], dtype=np.int8),
        np.array([0, -(2**31), 0], dtype=">i4"),
    ):
        with pytest.raises(yutenv.IllegalActionError, match="out of range"):
            v.step(out)
    with pytest.raises(ValueError):
        v.step(np.array([0, 0]))
    a = v.step(acts.astype(">i8"))  # big-endian actions are the same actions
    b = twin.step(acts)
    for x, y in zip(a[:4], b[:4]):
        np.testing.assert_array_equal(x, y)
    v.close()
    twin.close()


def test_vector_penalty_policy(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(2, server=srv, illegal="penalty")
    _, infos = v.reset(seed=50)
    acts = pick_batch(np.random.default_rng(0), infos["action_mask"])
    acts[0] = int(np.flatnonzero(infos["action_mask"][0] == 0)[0])
    _, rew, term, trunc, _ = v.step(acts)
    assert term[0] and rew[0] == -1.0
    v.close()


def test_reset_seed_forms(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(3, server=srv)
    o1, i1 = v.reset(seed=[10, 20, 30])
    assert list(i1["seed"]) == [10, 20, 30]
    single = yutenv.YutEnv(server=srv)
    o, _ = single.reset(seed=20)
    np.testing.assert_array_equal(o, o1[1])
    v.reset(seed=4)
    a, _ = v.reset()
    v.reset(seed=4)
    b, _ = v.reset()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):
        v.reset(seed=[1, 2])
    with pytest.raises(ValueError):
        v.reset(options={"reset_mask": np.array([True, False, True])})
    with pytest.raises(ValueError):
        yutenv.YutVectorEnv(2, server=srv, autoreset_mode=AutoresetMode.DISABLED)
    single.close()
    v.close()


def test_dict_obs_vector(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(3, server=srv, obs_type="dict")
    obs, infos = v.reset(seed=1)
    assert obs in v.observation_space
    np.testing.assert_array_equal(obs["action_mask"], infos["action_mask"])
    v.close()


def test_render_vector(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(2, server=srv, render_mode="ansi")
    v.reset(seed=1)
    frames = v.render()
    assert isinstance(frames, tuple) and len(frames) == 2 and all(isinstance(f, str) and f for f in frames)
    v.close()


def test_render_vector_rgb_array(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(3, server=srv, render_mode="rgb_array")
    assert "rgb_array" in v.metadata["render_modes"]
    v.reset(seed=[7, 7, 8])
    frames = v.render()
    assert isinstance(frames, tuple) and len(frames) == 3
    for f in frames:
        assert isinstance(f, np.ndarray) and f.shape == (480, 720, 3) and f.dtype == np.uint8
        assert len(np.unique(f.reshape(-1, 3), axis=0)) > 10  # a drawn board, not a flat colour
    np.testing.assert_array_equal(frames[0], frames[1])  # same seed, same position
    assert not np.array_equal(frames[0], frames[2])  # another game looks different
    # the picture follows the game
    for _ in range(6):
        v.step(v.action_masks().argmax(axis=1))
    assert not np.array_equal(v.render()[0], frames[0])  # type: ignore[index]
    v.close()


def test_pick_helper_sanity() -> None:
    rng = np.random.default_rng(0)
    m = np.zeros(180, dtype=np.uint8)
    m[[3, 7]] = 1
    assert {pick(rng, m) for _ in range(50)} == {3, 7}


def test_same_step_server_final_info(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(4, server=srv, info=True, autoreset_mode=AutoresetMode.SAME_STEP)
    v.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(500):
        _, rew, term, trunc, infos = v.step(pick_batch(rng, v.action_masks()))
        if term.any():
            i = int(np.flatnonzero(term)[0])
            fi = infos["final_info"]
            assert fi["_winner"][i] and fi["winner"][i] in (0, 1)
            assert (fi["winner"][i] == fi["seat"][i]) == (rew[i] > 0)
            assert infos["episode"][i] >= 1  # the row already shows the next episode
            break
    else:
        pytest.fail("no episode ended")
    v.close()


def test_reset_with_seed_list_seeds_np_random(srv: yutenv.Server) -> None:
    v = yutenv.YutVectorEnv(2, server=srv)
    v.reset(seed=[3, 4])
    _, first = v.reset()
    v.reset(seed=[3, 4])
    _, again = v.reset()
    np.testing.assert_array_equal(first["seed"], again["seed"])
    with pytest.raises(ValueError, match="seed must be"):
        v.reset(seed=[3, 2**64])
    v.close()


def test_human_render_mode_is_for_one_game(srv: yutenv.Server) -> None:
    # "human" prints one board per step: a vector env refuses it and does not declare it.
    with pytest.raises(ValueError, match="human"):
        yutenv.YutVectorEnv(2, server=srv, render_mode="human")
    v = yutenv.YutVectorEnv(1, server=srv)
    assert "human" not in v.metadata["render_modes"]
    v.close()


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "4"])
def test_num_envs_is_checked_by_its_name(srv: yutenv.Server, bad: object) -> None:
    # The user wrote num_envs; the error says num_envs (not the wire's "n"), before any server work.
    with pytest.raises(ValueError, match=r"^num_envs must be an integer >= 1, got "):
        yutenv.make(num_envs=bad, server=srv)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match=r"^num_envs must be an integer >= 1, got "):
        yutenv.YutVectorEnv(bad, server=srv)  # type: ignore[arg-type]


def test_autoreset_mode_is_gymnasiums_where_it_has_one() -> None:
    """``yutenv.AutoresetMode`` is Gymnasium's enum (1.1 on); on Gymnasium 1.0, which has none, a
    stand-in with the same members and values, so code that names a mode runs on both."""
    import gymnasium.vector

    theirs = getattr(gymnasium.vector, "AutoresetMode", None)
    if theirs is not None:
        assert yutenv.AutoresetMode is theirs
    assert [(m.name, m.value) for m in yutenv.AutoresetMode] == [
        ("NEXT_STEP", "NextStep"),
        ("SAME_STEP", "SameStep"),
        ("DISABLED", "Disabled"),
    ]
    v = yutenv.YutVectorEnv(2, autoreset_mode=yutenv.AutoresetMode.SAME_STEP)
    try:
        assert v.metadata["autoreset_mode"] is yutenv.AutoresetMode.SAME_STEP
    finally:
        v.close()
