"""yutenv.evaluate against real server-side baselines."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import numpy as np
import pytest
from yutenv.evaluate import EvalResult, elo_diff, evaluate, wilson

import yutenv
from yutenv.evaluation.stats import Z95, control_variate, luck_adjusted


def first_legal(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return mask.argmax(axis=1)


def random_policy(seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.array([rng.choice(np.flatnonzero(m)) for m in mask])

    return act


def check(r: EvalResult, games: int) -> None:
    assert r.games == games
    assert r.wins_a + r.wins_b == games
    assert r.win_rate_a == pytest.approx(r.wins_a / games)
    assert r.win_rate_a_low <= r.win_rate_a <= r.win_rate_a_high
    assert r.decisions_per_game == pytest.approx(r.a_decisions_per_game + r.b_decisions_per_game)
    assert r.a_decisions_per_game > 3 and r.b_decisions_per_game > 3
    assert r.ms_per_decision_a > 0 and r.ms_per_decision_b > 0
    assert sum(g for g, _ in r.per_seat.values()) == games
    assert sum(w for _, w in r.per_seat.values()) == r.wins_a


def check_luck(r: EvalResult, value: str) -> None:
    """``r`` carries a luck-adjusted result measured with ``value``: an interval around its
    score no wider than the raw outcomes' (from their sample variance), the two folds'
    coefficients (both 0: the raw result), and the line that prints it."""
    assert r.luck == value
    assert r.luck_adjusted_score_a is not None and r.mean_luck_a is not None
    assert r.luck_adjusted_score_a_low is not None and r.luck_adjusted_score_a_high is not None
    assert r.luck_adjusted_score_a_low < r.luck_adjusted_score_a < r.luck_adjusted_score_a_high
    assert r.luck_coefficients is not None and len(r.luck_coefficients) == 2
    if r.luck_coefficients == (0.0, 0.0):
        assert abs((1 + r.mean_outcome_a) / 2 - r.luck_adjusted_score_a) < 1e-9
    assert r.luck_variance_ratio is not None and r.luck_variance_ratio >= 1
    raw_var = (1 - r.mean_outcome_a**2) * r.games / (r.games - 1)  # two seats: outcomes of +1 or -1
    raw_half = Z95 * (raw_var / r.games) ** 0.5 / 2
    assert (r.luck_adjusted_score_a_high - r.luck_adjusted_score_a_low) / 2 <= raw_half + 1e-12
    assert f"luck-adjusted (value {value}): {r.a} scores" in str(r)
    assert "luck coefficients " in str(r)


def test_weak_policy_loses_to_greedy(srv: yutenv.Server) -> None:
    r = evaluate(first_legal, opponent="greedy", games=60, num_envs=8, server=srv, progress=False)
    check(r, 60)
    assert r.b == "greedy" and r.a == "first_legal"
    assert r.per_seat == {0: (30, r.per_seat[0][1]), 1: (30, r.per_seat[1][1])}
    assert r.win_rate_a < 0.4, "always playing the first legal move is weak"
    assert r.elo_diff is not None and r.elo_diff < 0
    assert r.mean_outcome_a == pytest.approx(2 * r.win_rate_a - 1), "two seats: outcomes are +1 or -1"
    assert "95% Wilson" in str(r) and "first_legal" in str(r)
    json.dumps(r.as_dict())


def test_matches_the_cli(srv: yutenv.Server) -> None:
    """A random Python policy against random scores what `yutenv eval` says random scores: about half."""
    r = evaluate(
        random_policy(1), opponent="random", games=200, num_envs=16, server=srv, progress=False, name="pyrandom", luck="off"
    )
    check(r, 200)
    assert r.a == "pyrandom"
    assert 0.35 < r.win_rate_a < 0.65
    out = subprocess.run(
        [str(yutenv.binary_path()), "eval", "--a", "random", "--b", "random", "--games", "200", "--json", "--quiet"],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    cli = json.loads(out)
    assert set(EvalResult.__dataclass_fields__) >= set(cli) - {"workers", "version", "seconds", "rules", "seed"}
    assert cli["decisions_per_game"] == pytest.approx(r.decisions_per_game, rel=0.15)


def test_reproducible(srv: yutenv.Server) -> None:
    a = evaluate(first_legal, opponent="mc:3", games=20, num_envs=4, seed=7, server=srv, progress=False)
    b = evaluate(first_legal, opponent="mc:3", games=20, num_envs=4, seed=7, server=srv, progress=False)
    assert (a.wins_a, a.decisions_per_game) == (b.wins_a, b.decisions_per_game)


def test_one_by_one_and_dict_observations(srv: yutenv.Server) -> None:
    def one(obs: Any, mask: np.ndarray) -> int:
        assert isinstance(obs, dict) and obs["observation"].ndim == 1 and mask.shape == (180,)
        return int(np.flatnonzero(mask)[-1])

    r = evaluate(one, opponent="random", games=10, num_envs=3, batched=False, obs_type="dict", server=srv, progress=False)
    check(r, 10)


class MaskedModel:
    """Duck-types an sb3-contrib MaskablePPO: predict(obs, action_masks=..., deterministic=...)."""

    def __init__(self) -> None:
        self.calls = 0

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = False,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, None]:
        assert action_masks is not None and deterministic
        self.calls += 1
        return action_masks.argmax(axis=1), None


def test_sb3_style_model(srv: yutenv.Server) -> None:
    m = MaskedModel()
    r = evaluate(m, opponent="random", games=10, num_envs=5, server=srv, progress=False)
    check(r, 10)
    assert r.a == "MaskedModel" and m.calls > 0


def test_three_seats(srv: yutenv.Server) -> None:
    r = evaluate(first_legal, opponent="random", games=10, rules="players=3", num_envs=4, server=srv, progress=False)
    assert r.games == 12, "rounded up to a multiple of the seats"
    assert set(r.per_seat) == {0, 1, 2}
    assert r.chance_rate == pytest.approx(1 / 3) and r.elo_diff is None
    check(r, 12)


def test_progress_bar(srv: yutenv.Server, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    evaluate(first_legal, opponent="random", games=4, num_envs=2, server=srv, progress=True)
    assert "first_legal vs random" in capsys.readouterr().err


def test_errors(srv: yutenv.Server) -> None:
    def illegal(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return (mask == 0).argmax(axis=1)

    with pytest.raises(yutenv.IllegalActionError, match="which its mask forbids"):
        evaluate(illegal, opponent="random", games=2, server=srv, progress=False)
    with pytest.raises(yutenv.InvalidArgumentError):
        evaluate(first_legal, opponent="alphazero", games=2, server=srv, progress=False)
    with pytest.raises(ValueError, match="games must be at least 1"):
        evaluate(first_legal, games=0)
    with pytest.raises(TypeError, match="sets 'seat' itself"):
        evaluate(first_legal, seat=1)
    with pytest.raises(TypeError, match="policy must be a callable"):
        evaluate(42, games=2, server=srv, progress=False)


def test_wilson_and_elo() -> None:
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.40383, abs=1e-4) and hi == pytest.approx(0.59617, abs=1e-4)
    assert wilson(0, 10)[0] == 0.0
    assert elo_diff(0.75) == pytest.approx(190.85, abs=0.01)
    assert elo_diff(1.0) is None and elo_diff(0.0) is None


def test_no_progress_bar_into_a_pipe_by_default(srv: yutenv.Server, capsys: pytest.CaptureFixture[str]) -> None:
    # pytest's captured stderr is not a terminal: the default (None) draws no bar there.
    evaluate(first_legal, opponent="random", games=4, num_envs=2, server=srv)
    assert "first_legal vs random" not in capsys.readouterr().err


def test_evaluate_spec_reports_the_luck_adjusted_result() -> None:
    """A policy given as an agent spec gets yutenv eval's luck-adjusted figures, named by their value."""
    check_luck(evaluate("greedy", opponent="random", games=20, luck="progress"), "progress")
    off = evaluate("greedy", opponent="random", games=4, luck="off")
    assert off.luck is None and off.luck_adjusted_score_a is None
    assert "luck-adjusted" not in str(off)


def test_python_policy_gets_the_luck_adjusted_result(srv: yutenv.Server) -> None:
    """A Python policy's games are valued by the server as they are played (az's value by
    default under the standard rules), and the luck changes no game."""
    kw: dict[str, Any] = {"opponent": "greedy", "games": 40, "num_envs": 8, "server": srv, "progress": False}
    r = evaluate(random_policy(2), **kw)
    check_luck(r, "az")
    assert r.luck_adjusted_elo_diff is not None
    p = evaluate(random_policy(2), luck="progress", **kw)
    off = evaluate(random_policy(2), luck="off", **kw)
    assert p.luck == "progress" and p.mean_luck_a != r.mean_luck_a
    assert off.luck is None and off.luck_adjusted_score_a is None
    assert r.wins_a == p.wins_a == off.wins_a and r.decisions_per_game == off.decisions_per_game
    with pytest.raises(yutenv.InvalidArgumentError, match="az values only the rules"):
        evaluate(first_legal, opponent="random", games=2, rules="kata", luck="az", server=srv, progress=False)
    with pytest.raises(ValueError, match="luck must be one of"):
        evaluate(first_legal, games=2, luck="nope", server=srv, progress=False)


def test_luck_valued_by_a_network_file(srv: yutenv.Server, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """luck="net:PATH" values the throws with a network file's value head, for a policy given
    as an agent spec (yutenv eval --luck) and for a Python policy (the server's env option),
    a relative PATH read from this process's folder; a file of other rules is refused."""
    subprocess.run([yutenv.binary_path(), "net", "az", "--out", str(tmp_path / "v.ynet")], check=True)
    monkeypatch.chdir(tmp_path)
    check_luck(evaluate("greedy", opponent="random", games=20, luck="net:v.ynet"), "net:v.ynet")
    kw: dict[str, Any] = {"opponent": "greedy", "games": 16, "num_envs": 8, "server": srv, "progress": False}
    r = evaluate(random_policy(2), luck="net:v.ynet", **kw)
    az = evaluate(random_policy(2), luck="az", **kw)
    check_luck(r, "net:" + str(tmp_path / "v.ynet"))
    assert r.mean_luck_a == pytest.approx(az.mean_luck_a), "az's network from a file values as az does"
    with pytest.raises(yutenv.InvalidArgumentError, match="rules the network was not trained for"):
        evaluate(first_legal, opponent="random", games=2, rules="kata", luck="net:v.ynet", server=srv, progress=False)
    with pytest.raises(ValueError, match="luck must be one of .*'net:PATH'"):
        evaluate(first_legal, games=2, luck="net:", server=srv, progress=False)


def test_env_luck_info(srv: yutenv.Server) -> None:
    """The env option luck puts every seat's luck over the episode into the info: for two seats
    one seat's luck is the other's negation, and the env names its value function."""
    env = yutenv.YutVectorEnv(4, opponent="random", info=True, luck="progress", server=srv)
    try:
        assert env.luck == "progress"
        obs, infos = env.reset(seed=3)
        ended = 0
        while ended < 8:
            mask = infos["action_mask"].astype(bool)
            obs, _, term, trunc, infos = env.step(mask.argmax(axis=1).astype(np.int64))
            for i in np.flatnonzero(term | trunc):
                luck = np.asarray(infos["luck"][i], dtype=np.float64)
                assert luck.shape == (2,) and abs(luck.sum()) < 1e-9 and luck[0] != 0
                ended += 1
    finally:
        env.close()
    plain = yutenv.YutVectorEnv(2, opponent="random", info=True, server=srv)
    try:
        assert plain.luck == "off"
        _, infos = plain.reset(seed=3)
        assert "luck" not in infos
    finally:
        plain.close()


@pytest.mark.parametrize("outcomes", [[1, 1, -1], [-1, -1, 1]], ids=["high", "low"])
def test_luck_adjusted_interval_is_a_score(outcomes: list[int]) -> None:
    """Over a few games the normal interval reaches past a score's range: it is reported within
    [0, 1] (as Go's eval does), the estimate as it is."""
    folds = [g % 2 for g in range(len(outcomes))]
    e = control_variate(outcomes, [0.0] * len(outcomes), folds, Z95)
    assert e is not None and (e.low < -1 or e.high > 1)  # the precondition: the raw interval reaches past
    r = luck_adjusted(outcomes, [0.0] * len(outcomes), folds, True)
    assert r["luck_adjusted_score_a"] == pytest.approx((1 + e.mean) / 2)
    low, high = r["luck_adjusted_score_a_low"], r["luck_adjusted_score_a_high"]
    assert isinstance(low, float) and isinstance(high, float)
    assert 0.0 <= low <= high <= 1.0
