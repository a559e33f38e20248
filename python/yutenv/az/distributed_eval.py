"""Evaluations fanned out on Ray: agents against agents (``yutenv eval`` ranges on the workers)
and a Python policy against an agent, their results merged into one
:class:`~yutenv.evaluation.evaluate.EvalResult`. Importable as ``yutenv.distributed`` too (:mod:`.distributed`).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import fields
from typing import Any, Mapping, Sequence

from .._protocol import RULE_OPTIONS
from ..evaluation.evaluate import EvalResult
from ..evaluation.stats import elo_diff, wilson

__all__ = ["evaluate_agents", "evaluate_policy", "merge_results"]

from .ray_tasks import WorkerCrash, _ray_init, _run_tasks, _run_yutenv


def merge_results(results: Sequence[EvalResult | Mapping[str, Any]]) -> EvalResult:
    """Merge the results of chunks of one evaluation (same agents and rules) into one,
    with the Wilson interval and Elo difference of all games. Accepts
    :class:`EvalResult` objects or ``yutenv eval --json`` objects."""
    rs = [r if isinstance(r, EvalResult) else _from_json(r) for r in results]
    if not rs:
        raise ValueError("no results to merge")
    a, b, rules = rs[0].a, rs[0].b, rs[0].rules
    for r in rs[1:]:
        if (r.a, r.b, r.rules) != (a, b, rules):
            raise ValueError(f"cannot merge {r.a} vs {r.b} ({r.rules}) into {a} vs {b} ({rules})")
    n = sum(r.games for r in rs)
    wins = sum(r.wins_a for r in rs)

    def mean(attr: str) -> float:
        return float(sum(getattr(r, attr) * r.games for r in rs)) / n

    def per_decision(ms: str, per_game: str) -> float:
        d = sum(getattr(r, per_game) * r.games for r in rs)
        return float(sum(getattr(r, ms) * getattr(r, per_game) * r.games for r in rs)) / d if d else 0.0

    lo, hi = wilson(wins, n)
    rate = wins / n
    two = rs[0].chance_rate == 0.5
    per_seat: dict[int, tuple[int, int]] = {}
    for r in rs:
        for seat, (g, w) in r.per_seat.items():
            pg, pw = per_seat.get(seat, (0, 0))
            per_seat[seat] = (pg + g, pw + w)
    return EvalResult(
        a=a, b=b, games=n, wins_a=wins, wins_b=sum(r.wins_b for r in rs),
        win_rate_a=rate, win_rate_a_low=lo, win_rate_a_high=hi, chance_rate=rs[0].chance_rate,
        elo_diff=elo_diff(rate) if two else None, elo_diff_low=elo_diff(lo) if two else None,
        elo_diff_high=elo_diff(hi) if two else None,
        mean_outcome_a=mean("mean_outcome_a"), decisions_per_game=mean("decisions_per_game"),
        a_decisions_per_game=mean("a_decisions_per_game"), b_decisions_per_game=mean("b_decisions_per_game"),
        ms_per_decision_a=per_decision("ms_per_decision_a", "a_decisions_per_game"),
        ms_per_decision_b=per_decision("ms_per_decision_b", "b_decisions_per_game"),
        rules=rules, seed=rs[0].seed, truncated=sum(r.truncated for r in rs),
        seconds=max(r.seconds for r in rs), per_seat=per_seat,
    )  # fmt: skip


def _from_json(d: Mapping[str, Any]) -> EvalResult:
    names = {f.name for f in fields(EvalResult)}
    kw = {k: v for k, v in d.items() if k in names}
    kw["per_seat"] = {int(k): (int(v[0]), int(v[1])) for k, v in dict(d.get("per_seat") or {}).items()}
    return EvalResult(**kw)


#: ``yutenv eval`` plays a pair's games in groups of one game per seat (seat orders balanced),
#: so a chunk of an agents' evaluation starts on a multiple of every seat count (2, 3, 4: the range
#: of the ``players`` option), 12.
SEAT_GROUPS = next(
    math.lcm(*range(int(o.min), int(o.max) + 1))
    for o in RULE_OPTIONS
    if o.key == "players" and o.min is not None and o.max is not None
)


def _chunks(games: int, chunk_games: int, align: int = 1) -> list[tuple[int, int]]:
    """(first game, games) of each chunk; every chunk but the last holds a multiple of ``align``."""
    if games < 1 or chunk_games < 1:
        raise ValueError(f"games ({games}) and chunk_games ({chunk_games}) must be at least 1")
    size = -(-chunk_games // align) * align
    return [(g, min(size, games - g)) for g in range(0, games, size)]


def _eval_agents_chunk(a: str, b: str, first: int, games: int, seed: int, rules: str, threads: int) -> dict[str, Any]:
    # The chunks are merged by their wins: no luck-adjusted figures to pay for (--luck off).
    args = ["eval", "--json", "--quiet", "--a", a, "--b", b, "--games", str(games), "--first-game", str(first),
            "--seed", str(seed), "--rules", rules, "--workers", str(threads), "--luck", "off"]  # fmt: skip
    d: dict[str, Any] = json.loads(_run_yutenv(args, f"yutenv eval {a} vs {b}", ValueError))
    d["rules"], d["seed"] = rules, seed  # rules as given, so that every chunk agrees
    return d


def evaluate_agents(
    a: str,
    b: str,
    games: int = 2000,
    *,
    seed: int = 1,
    rules: str = "standard",
    chunk_games: int = 200,
    address: str | None = None,
    num_cpus: int | None = None,
    threads_per_task: int = 1,
    max_retries: int = 3,
    max_tasks: int | None = None,
) -> EvalResult:
    """Built-in agent ``a`` against ``b`` (agent specs, as ``yutenv eval --a/--b``) on
    Ray: ``games`` games in chunks of ``chunk_games`` (rounded up to a multiple of
    :data:`SEAT_GROUPS`), each a ``yutenv eval --seed SEED --first-game G`` run on one worker,
    merged by :func:`merge_results`; at most ``max_tasks`` chunks at once (None: as many as
    the cluster runs). The chunks play exactly the games of one ``yutenv eval --seed SEED``
    run (the one seed scheme), so the merged result is that run's."""
    ray = _ray_init(address, num_cpus)
    run = ray.remote(_eval_agents_chunk).options(
        num_cpus=threads_per_task, max_retries=max_retries, retry_exceptions=[WorkerCrash]
    )
    submit = [
        lambda g=g, n=n: run.remote(a, b, g, n, seed, rules, threads_per_task)
        for g, n in _chunks(games, chunk_games, SEAT_GROUPS)
    ]
    t0 = time.perf_counter()
    res = merge_results(_run_tasks(ray, submit, max_tasks, lambda k, r: None))
    res.seed, res.seconds = seed, time.perf_counter() - t0
    return res


def _eval_policy_chunk(policy: Any, opponent: str, games: int, seed: int, kwargs: Mapping[str, Any]) -> EvalResult:
    from ..evaluation.evaluate import evaluate

    return evaluate(policy, opponent, games, seed=seed, progress=False, **kwargs)


def evaluate_policy(
    policy: Any,
    opponent: str = "mcts:200",
    games: int = 1000,
    *,
    seed: int = 0,
    chunk_games: int = 200,
    address: str | None = None,
    num_cpus: int | None = None,
    max_retries: int = 3,
    max_tasks: int | None = None,
    **evaluate_kwargs: Any,
) -> EvalResult:
    """:func:`yutenv.evaluation.evaluate.evaluate` of a Python ``policy`` on Ray, in chunks.

    The policy (a callable or a Stable-Baselines3 model, with its weights) is put once
    in Ray's object store and sent to the worker of every chunk; each chunk starts its
    own yutenv server and plays ``chunk_games`` games, the chunk starting at game ``G``
    with the seed ``seed + G`` (its env ``i`` plays the game seed ``seed + G + i`` first: the
    one seed scheme, so chunks never share a first game while ``num_envs <= chunk_games``), at
    most ``max_tasks`` chunks at once. The
    chunks are merged by :func:`merge_results`. ``evaluate_kwargs`` go to ``evaluate``
    (``rules``, ``tier``, ``num_envs``, ``deterministic``, ``batched``, ``name``, ...).
    """
    ray = _ray_init(address, num_cpus)
    ref = ray.put(policy)
    run = ray.remote(_eval_policy_chunk).options(max_retries=max_retries)
    submit = [lambda g=g, n=n: run.remote(ref, opponent, n, seed + g, evaluate_kwargs) for g, n in _chunks(games, chunk_games)]
    t0 = time.perf_counter()
    res = merge_results(_run_tasks(ray, submit, max_tasks, lambda k, r: None))
    res.seed, res.seconds = seed, time.perf_counter() - t0
    return res
