"""Grade an agent's decisions against a reference search: its per-move error rate.

>>> from yutenv import grade
>>> r = grade("greedy", games=4, reference="mc:10")     # default reference: the binary's (az with a search)
>>> r.agent, r.games, r.decisions > 0, 0 <= r.error_rate <= 1
('greedy', 4, True, True)
>>> r.worst[0].loss == r.max_loss
True

At every decision of the graded agent the reference (an agent spec that values every
move: ``az,sims=N``, ``mcts:N``, ``mc:N``, ``optimal:PATH``) searches the state before the
move; the decision's loss is the best move's value minus the chosen move's, both the
reference's estimate of the mover's outcome in [-1, 1] (0 when the choice is the
reference's best; with two seats a loss of 0.02 is one percentage point of winning
chances). Forced decisions (one legal move) are counted apart (``forced``) and left out of
every figure. This runs ``yutenv grade --json`` with the bundled binary, so the figures and
their names are that command's (docs/BASELINES.md, "Grading decisions").

Only agent specs are graded by playing: a Python policy sees observations, not the states
a reference searches. Recorded games (``records=``, yutenv's record files) and self-play
datasets (``dataset=``) are graded as they were played.

The mean loss comes with its 95% interval, clustered by game (``mean_loss_low``,
``mean_loss_high``, ``mean_loss_se``), and :func:`separation` says whether two agents' mean
losses are separated and roughly how many games each would separate them (``yutenv grade
--compare`` ranks saved reports the same way).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from os import PathLike
from typing import Any, Mapping

from .stats import Z95

__all__ = ["GradeResult", "GradedDecision", "LossBin", "Separation", "grade", "separation"]


@dataclass
class LossBin:
    """One bin of the losses' histogram: ``low <= loss < high`` (``high`` None for the last
    bin; ``low == high == 0`` for the losses of exactly 0), ``count`` decisions, ``share`` of
    all graded ones."""

    low: float
    high: float | None
    label: str
    count: int
    share: float


@dataclass
class GradedDecision:
    """One of the costliest decisions: where (``game``, ``decision``: every seat's decisions
    counted, as ``yutenv analyse --decision`` counts them, ``seat``), the move chosen and the
    reference's best (names and action ids), their values and the loss, and ``position``,
    the state before the move as a readable position (docs/FORMATS.md): written to a JSON
    file, ``yutenv analyse --position FILE`` searches it again."""

    game: int
    decision: int
    seat: int
    move: str
    action: int
    best_move: str
    best_action: int
    value: float
    best_value: float
    loss: float
    position: dict[str, Any]


@dataclass
class GradeResult:
    """What :func:`grade` found; fields as in ``yutenv grade --json``.

    ``decisions`` counts the graded decisions and ``forced`` those left out. The losses'
    ``mean_loss``, ``median_loss``, ``p90_loss`` and ``max_loss``; ``best_rate`` the share of
    decisions that chose the reference's best, ``error_rate`` and ``blunder_rate`` those
    losing more than ``error_loss`` and ``blunder_loss``. ``quantile_error`` bounds the
    relative error of the median and p90: 0 when they are exact, 0.001 past 1,048,576 graded
    decisions (the binary keeps a bounded memory of the losses).

    ``mean_loss_se`` is the standard error of ``mean_loss`` clustered by game (a game's
    decisions are not independent: each game is one unit of its summed loss ``L`` and graded
    decisions ``D``, and the mean ``sum(L) / sum(D)`` has the delta-method variance
    ``G/(G-1) * sum((L - mean_loss*D)**2) / sum(D)**2`` over ``G`` games); ``mean_loss_low``
    and ``mean_loss_high`` bound its 95% interval, ``mean_loss ± 1.96 * mean_loss_se`` with
    the low end raised to 0. All three are None without two games holding a graded decision
    each: one game says nothing of how games vary.
    """

    reference: str
    rules: str
    seed: int
    source: str
    games: int
    decisions: int
    forced: int
    mean_loss: float
    median_loss: float
    p90_loss: float
    max_loss: float
    best: int
    best_rate: float
    error_loss: float
    blunder_loss: float
    errors: int
    blunders: int
    error_rate: float
    blunder_rate: float
    seconds: float
    quantile_error: float = 0.0
    mean_loss_se: float | None = None
    mean_loss_low: float | None = None
    mean_loss_high: float | None = None
    agent: str | None = None
    opponent: str | None = None
    seat: int | None = None
    histogram: list[LossBin] = field(default_factory=list)
    worst: list[GradedDecision] = field(default_factory=list)
    version: str = ""

    @classmethod
    def from_json(cls, m: Mapping[str, Any]) -> GradeResult:
        """The result of ``yutenv grade --json``'s object."""
        fields = {k: m[k] for k in cls.__dataclass_fields__ if k in m}
        fields["histogram"] = [LossBin(**b) for b in m.get("histogram") or []]
        fields["worst"] = [GradedDecision(**w) for w in m.get("worst") or []]
        return cls(**fields)


def grade(
    agent: str | None = None,
    *,
    opponent: str = "greedy",
    games: int = 200,
    reference: str | None = None,
    rules: str | Mapping[str, Any] = "standard",
    seed: int = 1,
    workers: int | None = None,
    worst: int = 5,
    records: str | PathLike[str] | None = None,
    dataset: str | PathLike[str] | None = None,
    seat: int | None = None,
    png: str | PathLike[str] | None = None,
    quiet: bool = True,
) -> GradeResult:
    """Grade every decision of ``agent`` (an agent spec) in ``games`` games against
    ``opponent``, or the decisions of recorded games (``records``: a record file or a folder
    of them; ``dataset``: a self-play dataset's folder; ``seat``: only that seat's, or with
    ``agent`` the agent in that seat only), against
    ``reference`` (an agent spec that values every move; None: the binary's default).

    ``png`` also plots the histogram of the losses. Without ``quiet`` the progress bar goes
    to stderr.

    Raises:
        TypeError: ``agent`` is not an agent spec (a Python policy cannot be graded by
            playing: the reference searches states, and a policy sees observations).
        ValueError: neither ``agent`` nor ``records``/``dataset`` given, or both.
        InvalidArgumentError: an argument the binary refused (a bad spec, records of other
            rules, a reference that is no search), with its one-line message.
    """
    from .evaluate import run_eval_json

    if agent is not None and not isinstance(agent, str):
        raise TypeError(
            "grade grades agent specs ('greedy', 'mcts:400', 'net:PATH,sims=N', ...); a Python policy "
            f"cannot be graded by playing, got {type(agent).__name__}"
        )
    from_files = records is not None or dataset is not None
    if (agent is None) == (not from_files):
        raise ValueError("give an agent spec, or records= or dataset= (not both)")
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    rules_text = (
        rules
        if isinstance(rules, str)
        else ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in rules.items())
    )
    args = ["--rules", rules_text, "--seed", str(seed), "--worst", str(worst)]
    if agent is not None:
        args += ["--agent", agent, "--opponent", opponent, "--games", str(games)]
    if records is not None:
        args += ["--records", str(records)]
    if dataset is not None:
        args += ["--dataset", str(dataset)]
    if seat is not None:
        args += ["--seat", str(seat)]
    if reference is not None:
        args += ["--reference", reference]
    if workers is not None:
        args += ["--workers", str(workers)]
    if png is not None:
        args += ["--png", str(png)]
    t0 = time.perf_counter()
    m = run_eval_json(args, quiet=quiet, method="grade", command="grade")
    m.setdefault("seconds", time.perf_counter() - t0)
    return GradeResult.from_json(m)


@dataclass
class Separation:
    """Two agents' mean losses compared by :func:`separation`, fields as in a pair of
    ``yutenv grade --compare --json``.

    ``difference`` is the second's mean loss minus the first's, ``difference_low`` and
    ``difference_high`` bound its 95% interval (``difference ± 1.96 * sqrt(se_a**2 +
    se_b**2)``: the agents are graded in their own games, independent samples), and
    ``separated`` says whether it leaves out 0. ``games_to_separate`` is roughly how many
    games each would need for a difference of this size to be separated: the least ``n`` (at
    least 2) with ``1.96 * sqrt((se_a**2 * games_a + se_b**2 * games_b) / n) <= |difference|``
    (an agent's se over ``n`` games being its se times ``sqrt(games / n)``); None for a tie
    or past 2**31 - 1. If the true difference is the one measured, that many games separate
    the two about half the time, four times as many nearly always.
    """

    difference: float
    difference_low: float
    difference_high: float
    separated: bool
    games_to_separate: int | None


def separation(a: GradeResult, b: GradeResult) -> Separation:
    """Compare the mean losses of two grades by the same reference and rules (each agent in
    its own games).

    >>> from yutenv import grade
    >>> from yutenv.evaluation.grade import separation
    >>> a, b = grade("greedy", games=20, reference="mc:10"), grade("random", games=20, reference="mc:10")
    >>> s = separation(a, b)
    >>> s.difference == b.mean_loss - a.mean_loss, s.difference_low < s.difference < s.difference_high
    (True, True)

    Raises:
        ValueError: either has no interval (``mean_loss_se`` None: fewer than two games with a
            graded decision), or they differ in reference or rules.
    """
    for r in (a, b):
        if r.mean_loss_se is None:
            raise ValueError(
                f"no interval of the mean loss: {r.games} games, {r.decisions} graded decisions "
                "(it takes two games with a graded decision each)"
            )
    if (a.reference, a.rules) != (b.reference, b.rules):
        raise ValueError(
            f"graded by {a.reference} under rules {a.rules}, and by {b.reference} under rules {b.rules}: "
            "losses of different references or rules do not compare"
        )
    assert a.mean_loss_se is not None and b.mean_loss_se is not None
    d = b.mean_loss - a.mean_loss
    sa, sb = a.mean_loss_se, b.mean_loss_se
    half = Z95 * math.sqrt(sa * sa + sb * sb)  # as the binary computes it, to the last bit
    games: int | None = None
    if d != 0:
        per_game = sa * sa * a.games + sb * sb * b.games
        n = math.ceil(Z95 * Z95 * per_game / (d * d))
        games = max(n, 2) if n <= 2**31 - 1 else None
    return Separation(d, d - half, d + half, abs(d) > half, games)
