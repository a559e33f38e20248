"""yutenv.datasets.transitions: every seat's view of a self-play dataset's games, checked by
replaying every game through ``YutEnv`` with the same seed, seat, opponent, tier and reward:
every transition equal to the env's step."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from yutenv.datasets import DatasetError

import yutenv
from yutenv import datasets
from yutenv._protocol import THROWS

GAMES = 4


def selfplay(out: Path, *args: str) -> None:
    cmd = [str(yutenv.binary_path()), "selfplay", "--quiet", "--out", str(out), *args]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Two different agents, so that each seat has its own opponent; two shards.
    d = tmp_path_factory.mktemp("tr") / "data"
    selfplay(d, "--tier", "compact", "--games", str(GAMES), "--shard-games", "3", "--agents", "mcts:8;greedy", "--seed", "11")
    return d


def replay(made: Path, seat: int, reward: str, max_decisions: int = 0) -> list[dict[str, object]]:
    """Every step of ``seat``'s episodes of the dataset's games, played again by the env."""
    m = datasets.read_manifest(made)
    other = m["agents"][1 - seat]
    env = yutenv.make(rules=m["rules_text"], tier=m["tier"], opponent=other, seat=seat, reward=reward,
                      max_decisions=max_decisions, info=True)  # fmt: skip
    steps: list[dict[str, object]] = []
    try:
        t = datasets.transitions(made, seat=seat, reward=reward, max_decisions=max_decisions)
        for g in range(GAMES):
            rows = np.flatnonzero(t.game == g)
            obs, info = env.reset(seed=m["seed"] + g)
            assert int(t.seed[rows[0]]) == m["seed"] + g
            for i in rows:
                # The env shows the row's observation and mask before the row's action...
                np.testing.assert_array_equal(obs, t.obs[i])
                np.testing.assert_array_equal(info["action_mask"], t.mask[i].astype(np.int8))
                obs, r, term, trunc, info = env.step(int(t.action[i]))
                # ...and the row's reward, next observation, next mask and end flags after it.
                throws = [(ev["seat"], THROWS.index(ev["throw"])) for ev in info["events"] if ev["kind"] == "throw"]
                steps.append({"i": int(i), "reward": r, "terminated": term, "truncated": trunc, "obs": np.array(obs),
                              "mask": np.array(info["action_mask"]), "throws": throws})  # fmt: skip
            assert term or trunc, "the game's last transition ends the env's episode"
    finally:
        env.close()
    return steps


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("reward", ["win", "progress"])
def test_every_transition_is_the_envs(made: Path, seat: int, reward: str) -> None:
    t = datasets.transitions(made, seat=seat, reward=reward)
    steps = replay(made, seat, reward)
    assert len(steps) == len(t) > 0
    for s in steps:
        i = int(s["i"])  # type: ignore[call-overload]
        assert s["reward"] == t.reward[i], f"row {i}: the reward, to the bit"
        assert s["terminated"] == t.terminated[i] and s["truncated"] == t.truncated[i]
        np.testing.assert_array_equal(s["obs"], t.next_obs[i])
        np.testing.assert_array_equal(s["mask"], t.next_mask[i].astype(np.int8))
        assert s["throws"] == t.throws_of(i)
    assert t.terminated.sum() == GAMES and not t.truncated.any()
    if reward == "progress":
        # Potential-based shaping telescopes: an episode's return is the outcome minus the
        # potential at its first decision.
        ds = datasets.load(made, arrays=["game", "decision", "potential"])
        for lo, hi in zip(t.episodes()[:-1], t.episodes()[1:]):
            phi0 = ds.potential[(ds.game == t.game[lo]) & (ds.decision == t.decision[lo])]
            assert t.reward[lo:hi].sum() == pytest.approx(t.value[lo] - phi0[0], abs=1e-5)


def test_truncation_is_the_envs(made: Path) -> None:
    t = datasets.transitions(made, seat=0, reward="progress", max_decisions=5)
    steps = replay(made, 0, "progress", max_decisions=5)
    assert len(steps) == len(t) == 5 * GAMES
    for s in steps:
        i = int(s["i"])  # type: ignore[call-overload]
        assert s["reward"] == t.reward[i]
        assert (s["terminated"], s["truncated"]) == (t.terminated[i], t.truncated[i])
        np.testing.assert_array_equal(s["obs"], t.next_obs[i])
        np.testing.assert_array_equal(s["mask"], t.next_mask[i].astype(np.int8))
    assert t.truncated.sum() == GAMES and (t.step < 5).all()


def test_columns_and_every_seat(made: Path) -> None:
    ds = datasets.load(made)
    both = datasets.transitions(made)
    assert len(both) == len(ds), "every decision is one transition of its seat's view"
    assert set(both.arrays()) == set(datasets.transitions.__globals__["COLUMNS"])
    # Episodes in game order, then seat order, each one seat's steps 0, 1, 2, ...
    keys = both.game * 2 + both.seat
    assert (np.diff(keys) >= 0).all()
    ep = both.episodes()
    assert len(ep) - 1 == 2 * GAMES
    for lo, hi in zip(ep[:-1], ep[1:]):
        assert (both.step[lo:hi] == np.arange(hi - lo)).all()
        assert both.terminated[hi - 1] and not both.terminated[lo : hi - 1].any()
        assert (both.next_obs[lo : hi - 1] == both.obs[lo + 1 : hi]).all()
        assert (both.next_mask[hi - 1] == 0).all()
        g, s = int(both.game[lo]), int(both.seat[lo])
        np.testing.assert_array_equal(both.next_obs[hi - 1], ds.final_obs[g, s])
    # The search's policy and value where the agent searched: mcts:8 in seat 0, unless forced.
    forced = both.mask.sum(axis=1) == 1
    assert (both.searched == ((both.seat == 0) & ~forced)).all()
    assert (both.search_value[~both.searched & (both.seat == 1)] == 0).all()
    one_hot = np.zeros_like(both.policy)
    one_hot[np.arange(len(both)), both.action] = 1
    assert (both.policy[~both.searched] == one_hot[~both.searched]).all()
    # The throws: every throw of a game after a seat's first decision is in one of its transitions.
    recs = [json.loads(line) for f in sorted(made.glob("*.records.jsonl")) for line in f.read_text().splitlines()]
    assert sum(len(r["steps"]) for r in recs) > len(both.throws) > 0
    with pytest.raises(ValueError, match="reward must be one of 'win', 'progress'"):
        datasets.transitions(made, reward="shaped")
    with pytest.raises(ValueError, match="seat must be a seat"):
        datasets.transitions(made, seat=2)


def test_iter_transitions_is_transitions_by_shard(made: Path) -> None:
    parts = list(datasets.iter_transitions(made, seat=1, reward="progress"))
    whole = datasets.transitions(made, seat=1, reward="progress")
    assert len(parts) == 2
    for name in ("obs", "next_obs", "reward", "terminated", "game", "throws"):
        np.testing.assert_array_equal(np.concatenate([p[name] for p in parts]), whole[name])
    assert whole.throws_of(len(whole) - 1) == parts[-1].throws_of(len(parts[-1]) - 1)


def test_version1_is_refused_with_one_line(made: Path, tmp_path: Path) -> None:
    """A dataset of format version 1 has no potentials or final observations: transitions
    refuse it naming why and what to do; load still reads it."""
    import shutil

    d = tmp_path / "v1"
    shutil.copytree(made, d)
    m = json.loads((d / "manifest.json").read_text())
    m["version"] = 1
    m["arrays"] = [a for a in m["arrays"] if a["name"] not in ("potential", "searched")]
    del m["game_arrays"]
    (d / "manifest.json").write_text(json.dumps(m))
    ds = datasets.load(d)
    assert ds.potential is None and ds.final_obs is None and len(ds) == m["decisions"]
    with pytest.raises(DatasetError, match="format version 1") as e:
        datasets.transitions(d)
    assert "write the dataset again" in str(e.value) and "\n" not in str(e.value)


def test_records_that_do_not_match_are_refused(made: Path, tmp_path: Path) -> None:
    import hashlib
    import shutil

    d = tmp_path / "bad"
    shutil.copytree(made, d)
    m = json.loads((d / "manifest.json").read_text())
    rec = d / m["shards"][0]["records"]
    lines = rec.read_text().splitlines()
    r = json.loads(lines[0])
    r["steps"] = r["steps"][:-2]  # a game's last throw and action lost
    lines[0] = json.dumps(r)
    rec.write_text("\n".join(lines) + "\n")
    m["shards"][0]["records_bytes"] = rec.stat().st_size
    m["shards"][0]["records_sha256"] = hashlib.sha256(rec.read_bytes()).hexdigest()
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(DatasetError, match="the records do not match the arrays"):
        datasets.transitions(d)
    rec.write_bytes(b"\xff\xfe" + rec.read_bytes()[2:])
    with pytest.raises(DatasetError, match="does not match the manifest's"):
        datasets.transitions(d)
