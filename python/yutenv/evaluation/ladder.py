"""Rate agents on yutenv's fixed Elo scale (``random`` = 0): ``yutenv ladder`` from Python.

>>> from yutenv.evaluation.ladder import ladder, published
>>> r = ladder(["random", "greedy"], games=20, seed=2)
>>> [x.agent for x in r.ratings], r.rating("random").elo
(['greedy', 'random'], 0.0)
>>> r.rating("greedy").low < r.rating("greedy").elo < r.rating("greedy").high
True
>>> published().rating("random").elo                  # the scale docs/BASELINES.md publishes
0.0

The agents given as spec strings (``random``, ``greedy``, ``mc:N``, ``mcts:N``,
``net:PATH``...) play their round robin inside the bundled binary (``yutenv ladder``:
seats balanced, the same game seeds for every pair, resumable through ``state``). A Python
policy (anything :func:`yutenv.evaluate` accepts: a callable ``(obs, mask) -> actions`` or
a Stable-Baselines3 model) joins the ladder by playing every spec agent through the
server with :func:`yutenv.evaluate`; Python policies do not play each other (two policies
would need two learner seats of one env, which :func:`~yutenv.evaluate` does not drive),
so they are rated through the spec agents. Every rating comes from one Bradley-Terry fit
of all the games (:func:`yutenv.evaluation.stats.bradley_terry`, the same fit as the binary's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError
from .scale import PUBLISHED_FILE, LadderPair, LadderRating, LadderResult, published
from .stats import Z95, Rating, bradley_terry

__all__ = ["LadderPair", "LadderRating", "LadderResult", "PUBLISHED_FILE", "ladder", "published"]


def _rules_text(rules: str | Mapping[str, Any]) -> str:
    if isinstance(rules, str):
        return rules
    return ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in rules.items())


def _run_ladder(args: list[str], progress: bool | None) -> dict[str, Any]:
    """``yutenv ladder ARGS --json TMP`` with the bundled binary; its JSON."""
    from ..connection.server import binary_path

    show = sys.stderr.isatty() if progress is None else progress
    with tempfile.TemporaryDirectory(prefix="yutenv-ladder-") as tmp:
        out = Path(tmp) / "ladder.json"
        cmd = [str(binary_path()), "ladder", "--json", str(out), "--progress", "always" if show else "never", *args]
        # With a bar the binary's stderr is the user's (the bar, and any error message).
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=None if show else subprocess.PIPE, text=True, check=False)
        if p.returncode != 0:
            raise InvalidArgumentError((p.stderr or "").strip() or f"yutenv ladder exited with {p.returncode}", method="ladder")
        data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return data


def ladder(
    agents: Sequence[Any] | None = None,
    games: int = 400,
    *,
    rules: str | Mapping[str, Any] = "standard",
    seed: int = 1,
    anchor: str = "random",
    anchor_elo: float = 0.0,
    workers: int | None = None,
    state: str | os.PathLike[str] | None = None,
    png: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    names: Sequence[str] | None = None,
) -> LadderResult:
    """Play a round robin and rate the agents on the Elo scale (``anchor`` = ``anchor_elo``).

    Args:
        agents: agent specs (strings) and Python policies; ``None`` is the built-in scale
            (the binary's default list). At least two spec agents, one of them ``anchor``.
        games: games per pair (rounded up to even: each game seed in both seatings).
        rules, seed: as ``yutenv ladder --rules --seed`` (two-seat rules only).
        workers: games the binary plays at once (default: every core).
        state: a state file that makes the spec agents' round robin resumable (rerun with
            the same arguments to continue; a state file of another ladder is refused).
        png: also plot the spec agents' ratings to this PNG file.
        progress: the binary's progress bar: ``None`` on a terminal only, True, False.
        names: names of the Python policies in the result (default: their function or
            class names).

    Returns:
        A :class:`LadderResult`. With Python policies, its ratings come from one fit of the
        spec agents' round robin and every policy's games against each spec agent.

    Raises:
        InvalidArgumentError: the binary refused the arguments (an unknown agent, rules
            of more than two seats, a state file of another ladder); its message says why.
    """
    specs = [a for a in (agents or []) if isinstance(a, str)]
    policies = [a for a in (agents or []) if not isinstance(a, str)]
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    if png is not None and policies:
        raise ValueError("png= plots the spec agents' ladder only; leave it out with Python policies")
    args = [
        "--games",
        str(games),
        "--rules",
        _rules_text(rules),
        "--seed",
        str(seed),
        "--anchor",
        anchor,
        "--anchor-elo",
        repr(float(anchor_elo)),
        "--state",
        "" if state is None else os.fspath(state),
        "--luck",
        "off",  # the result holds the raw fit only: no luck accounting
    ]
    if specs:
        args += ["--agents", ";".join(specs)]
    if workers is not None:
        args += ["--workers", str(workers)]
    if png is not None:
        args += ["--png", os.fspath(png)]
    rep = LadderResult.from_json(_run_ladder(args, progress))
    if not policies:
        return rep
    return _with_policies(rep, policies, names, games, rules, seed)


def _with_policies(
    rep: LadderResult, policies: list[Any], names: Sequence[str] | None, games: int, rules: str | Mapping[str, Any], seed: int
) -> LadderResult:
    """The ladder ``rep`` refitted with every policy's games against its spec agents."""
    from .evaluate import evaluate

    if names is not None and len(names) != len(policies):
        raise ValueError(f"{len(names)} names for {len(policies)} Python policies")
    specs = list(rep.raw["agents"])
    pairs = [LadderPair(p.a, p.b, p.games, p.wins_a, p.wins_b) for p in rep.pairs]
    labels: list[str] = []
    for k, pol in enumerate(policies):
        label = names[k] if names is not None else getattr(pol, "__name__", type(pol).__name__)
        if label in specs or label in labels:
            label = f"{label}#{k}"
        labels.append(label)
        for s in specs:
            r = evaluate(pol, opponent=s, games=games, rules=rules, seed=seed, progress=False, name=label, luck="off")
            pairs.append(LadderPair(label, s, r.games, r.wins_a, r.wins_b))
    everyone = specs + labels
    ratings = _fit(everyone, pairs, everyone.index(rep.anchor), rep.anchor_elo)
    ms = {r.agent: r.ms_per_decision for r in rep.ratings}
    ratings = [LadderRating(**{**asdict(r), "ms_per_decision": ms.get(r.agent, 0.0)}) for r in ratings]
    return LadderResult(ratings, pairs, rep.anchor, rep.anchor_elo, rep.rules, rep.seed, rep.games_per_pair, rep.interval, {})


def _fit(agents: list[str], pairs: Sequence[LadderPair], anchor: int, anchor_elo: float) -> list[LadderRating]:
    """Ratings of ``agents`` from the pairs' games, one virtual draw per pair (the binary's fit)."""
    k = len(agents)
    at = {a: i for i, a in enumerate(agents)}
    wins = [0.0] * k
    games = [[0.0] * k for _ in range(k)]
    played = [0] * k
    won = [0] * k
    for p in pairs:
        i, j = at[p.a], at[p.b]
        wins[i] += p.wins_a + 0.5
        wins[j] += p.wins_b + 0.5
        games[i][j] += p.games + 1
        games[j][i] += p.games + 1
        played[i] += p.games
        played[j] += p.games
        won[i] += p.wins_a
        won[j] += p.wins_b
    fit: list[Rating] = bradley_terry(wins, games, anchor, anchor_elo, Z95)
    out = [
        LadderRating(a, r.elo, r.low, r.high, r.se, played[i], won[i], won[i] / max(played[i], 1))
        for i, (a, r) in enumerate(zip(agents, fit))
    ]
    return sorted(out, key=lambda r: -r.elo)
