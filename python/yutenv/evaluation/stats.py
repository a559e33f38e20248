"""The statistics of match results: Wilson intervals, Elo differences, Bradley-Terry ratings.

The one Python home of these formulas (the Go side's is the ``stats`` package; both use the
same quantile, so ``yutenv eval --json`` and :func:`yutenv.evaluate` report the same
intervals for the same counts). :func:`bradley_terry` is the fit of ``yutenv ladder``
(Go's ``stats.BradleyTerry``): the same ratings and intervals for the same counts.

>>> from yutenv.stats import wilson, elo_diff
>>> lo, hi = wilson(60, 100)
>>> round(lo, 4), round(hi, 4)
(0.502, 0.6906)
>>> round(elo_diff(0.6), 1)
70.4
>>> elo_diff(1.0) is None
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ELO_PER_NAT",
    "ControlVariateEstimate",
    "Rating",
    "Z95",
    "bradley_terry",
    "control_variate",
    "elo_diff",
    "luck_adjusted",
    "place",
    "wilson",
]

#: The standard normal quantile of a two-sided 95% interval.
Z95 = 1.959964


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``wins`` successes out of ``n`` (95% by default);
    ``(0, 1)`` when ``n`` is 0."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def elo_diff(p: float) -> float | None:
    """The rating difference that gives win probability ``p``; None when infinite."""
    if p <= 0 or p >= 1:
        return None
    return 400 * math.log10(p / (1 - p))


@dataclass(frozen=True)
class ControlVariateEstimate:
    """:func:`control_variate`'s estimate of a mean outcome (Go's ``stats.CVEstimate``)."""

    #: The mean adjusted outcome and its interval from the adjusted values' sample variance.
    mean: float
    low: float
    high: float
    #: The coefficient applied to the luck of fold 0's and fold 1's games (0, 0: the raw result).
    coef: tuple[float, float]
    #: Raw over adjusted sample variance: at least 1 (1 for the raw result), ``inf`` when no
    #: variance is left.
    variance_ratio: float
    #: The mean control (the mean luck).
    mean_control: float
    #: Whether the luck was taken out (False: the raw mean and interval are reported).
    adjusted: bool


def control_variate(
    outcomes: Sequence[float], luck: Sequence[float], folds: Sequence[int], z: float = Z95
) -> ControlVariateEstimate | None:
    """The cross-fitted control-variate estimate of the mean outcome (Go's
    ``stats.ControlVariate``; both are checked against ``stats/testdata/control_variate.json``).

    Game ``i`` is in fold ``folds[i] % 2``, fixed before the games are played, and counts
    ``outcomes[i] - b * luck[i]`` with ``b = sum(o * l) / sum(l * l)`` over the OTHER fold's
    games (0 when that fold has no luck): ``b`` is independent of game ``i``'s luck, whose mean
    is 0, so the adjusted mean is unbiased (a coefficient fitted on the same games would
    correlate with the luck it multiplies). The interval comes from the adjusted values' sample
    variance; when that is not below the raw outcomes' the raw mean and interval are reported
    (``adjusted`` False, ``coef`` (0, 0), ``variance_ratio`` 1), so the interval is never wider
    than the raw one. None for fewer than two games.

    >>> e = control_variate([1, -1, 1, -1], [0.5, -0.5, 1, 0], [0, 0, 1, 1])
    >>> e.coef, e.mean, round(e.variance_ratio, 4)
    ((1.0, 2.0), -0.5, 2.6667)
    """
    o, lk = np.asarray(outcomes, dtype=np.float64), np.asarray(luck, dtype=np.float64)
    k = np.asarray(folds, dtype=np.int64) % 2
    if len(o) < 2 or not len(o) == len(lk) == len(k):
        return None
    coef = [0.0, 0.0]
    for f in (0, 1):
        other = k != f
        ll = float(lk[other] @ lk[other])
        if ll > 0:
            coef[f] = float(o[other] @ lk[other]) / ll
    adj = o - np.asarray(coef)[k] * lk
    mean, v, raw_v = float(adj.mean()), float(adj.var(ddof=1)), float(o.var(ddof=1))
    adjusted = v < raw_v
    if adjusted:
        ratio = raw_v / v if v > 0 else math.inf
    else:
        mean, v, coef, ratio = float(o.mean()), raw_v, [0.0, 0.0], 1.0
    half = z * math.sqrt(v / len(o))
    return ControlVariateEstimate(mean, mean - half, mean + half, (coef[0], coef[1]), ratio, float(lk.mean()), adjusted)


def luck_adjusted(
    outcomes: Sequence[float], luck: Sequence[float], folds: Sequence[int], two_seats: bool, z: float = Z95
) -> dict[str, float | tuple[float, float] | None]:
    """The luck-adjusted result of a match (Go's ``evalLuck.finishLuck``, ``yutenv eval --luck``):
    from each game's outcome for the policy (in [-1, 1]), its luck over the game and its fold
    (:func:`control_variate`), the mean adjusted outcome on the win-rate scale ``(1 + x) / 2``
    with its interval, its Elo difference (two seats), the variance ratio raw over adjusted
    (None when no variance is left), the luck coefficients of the two folds and the mean luck.
    The keys are :class:`~yutenv.EvalResult`'s ``luck_*`` fields; all None for fewer than two
    games.

    >>> r = luck_adjusted([1, -1, 1, -1], [0.5, -0.5, 1, 0], [0, 0, 1, 1], True)
    >>> r["luck_adjusted_score_a"], r["luck_coefficients"]
    (0.25, (1.0, 2.0))

    The interval is a score's, within [0, 1], where a few games' normal interval reaches past it:

    >>> r = luck_adjusted([1, 1, -1], [0, 0, 0], [0, 1, 0], True)
    >>> r["luck_adjusted_score_a_low"] >= 0 and r["luck_adjusted_score_a_high"]
    1.0
    """
    keys = ("score_a", "score_a_low", "score_a_high", "elo_diff", "elo_diff_low", "elo_diff_high")
    out: dict[str, float | tuple[float, float] | None] = {f"luck_adjusted_{k}": None for k in keys}
    out["luck_variance_ratio"] = out["luck_coefficients"] = out["mean_luck_a"] = None
    e = control_variate(outcomes, luck, folds, z)
    if e is None:
        return out
    # A score is in [0, 1], so its interval is too; the estimate itself stays unbiased.
    scores = [(1 + x) / 2 for x in (e.mean, max(e.low, -1.0), min(e.high, 1.0))]
    out.update(zip(("luck_adjusted_score_a", "luck_adjusted_score_a_low", "luck_adjusted_score_a_high"), scores))
    out["luck_variance_ratio"] = e.variance_ratio if math.isfinite(e.variance_ratio) else None
    out["luck_coefficients"] = e.coef
    out["mean_luck_a"] = e.mean_control
    if two_seats:
        for k, p in zip(("elo_diff", "elo_diff_low", "elo_diff_high"), scores):
            out[f"luck_adjusted_{k}"] = elo_diff(min(max(p, 0.0), 1.0))
    return out


#: Elo points per natural-log unit of Bradley-Terry strength: 400 / ln 10.
ELO_PER_NAT = 400 / math.log(10)


@dataclass(frozen=True)
class Rating:
    """A rating on the Elo scale with its standard error and interval (``low``, ``high``)."""

    elo: float
    se: float
    low: float
    high: float


def _mm_fit(wins: Sequence[float], games: Sequence[Sequence[float]]) -> list[float]:
    """Bradley-Terry strengths by the minorization-maximization iteration (Go's mmFit)."""
    k = len(wins)
    gamma = [1.0] * k
    for _ in range(100000):
        change = 0.0
        for i in range(k):
            den = sum(games[i][j] / (gamma[i] + gamma[j]) for j in range(k) if j != i and games[i][j] > 0)
            if den > 0:
                nxt = wins[i] / den
                change = max(change, abs(math.log(nxt / gamma[i])))
                gamma[i] = nxt
        if change < 1e-12:
            break
    return gamma


def bradley_terry(
    wins: Sequence[float], games: Sequence[Sequence[float]], anchor: int = 0, anchor_elo: float = 0.0, z: float = Z95
) -> list[Rating]:
    """Bradley-Terry ratings by maximum likelihood, the same fit as Go's ``stats.BradleyTerry``.

    ``wins[i]`` counts the games player ``i`` won (draws as halves), ``games[i][j]`` the
    games between ``i`` and ``j`` (symmetric). Player ``anchor`` is rated ``anchor_elo``;
    each other rating has a Wald interval ``elo ± z·se`` from the observed Fisher
    information with the anchor's row and column removed (an interval relative to the
    anchor). Give every pair a virtual draw to keep a clean sweep finite. Raises
    ValueError when a player has no wins or is not connected to the anchor by games.

    >>> r = bradley_terry([25.0, 75.0], [[0, 100], [100, 0]])
    >>> round(r[1].elo, 1), round(r[1].se, 1), r[0]
    (190.8, 40.1, Rating(elo=0.0, se=0.0, low=0.0, high=0.0))
    """
    k = len(wins)
    if not 0 <= anchor < k or len(games) != k or any(len(row) != k for row in games):
        raise ValueError(f"{k} players, {len(games)} rows of games, anchor {anchor}")
    if any(w <= 0 for w in wins):
        raise ValueError("a player has no wins (add virtual draws)")
    seen, todo = {anchor}, [anchor]
    while todo:
        i = todo.pop()
        for j in range(k):
            if games[i][j] > 0 and j not in seen:
                seen.add(j)
                todo.append(j)
    if len(seen) < k:
        raise ValueError("a player is not connected to the anchor by games")
    gamma = _mm_fit(wins, games)
    theta = [math.log(g / gamma[anchor]) for g in gamma]
    idx = [i for i in range(k) if i != anchor]
    out = [Rating(anchor_elo, 0.0, anchor_elo, anchor_elo)] * k
    if not idx:
        return out
    info = np.zeros((k - 1, k - 1))
    for a, i in enumerate(idx):
        for m in range(k):
            if m != i and games[i][m] > 0:
                p = 1 / (1 + math.exp(theta[m] - theta[i]))
                info[a, a] += games[i][m] * p * (1 - p)
        for b, j in enumerate(idx):
            if j != i and games[i][j] > 0:
                p = 1 / (1 + math.exp(theta[j] - theta[i]))
                info[a, b] = -games[i][j] * p * (1 - p)
    try:
        cov = np.linalg.inv(np.linalg.cholesky(info))
        cov = cov.T @ cov
    except np.linalg.LinAlgError as e:
        raise ValueError("a player is not connected to the anchor by games") from e
    for a, i in enumerate(idx):
        elo = anchor_elo + ELO_PER_NAT * theta[i]
        se = ELO_PER_NAT * math.sqrt(float(cov[a, a]))
        out[i] = Rating(elo, se, elo - z * se, elo + z * se)
    return out


def place(results: Sequence[tuple[float, int, int]], z: float = Z95) -> Rating:
    """The rating of one player from its games against players of fixed ratings.

    ``results`` holds ``(opponent_elo, wins, games)`` per opponent. The rating is the
    maximum-likelihood Bradley-Terry rating with every opponent's rating held fixed and
    one virtual draw per opponent (as the ladder's fit), found by Newton's method; its
    interval ``elo ± z·se`` comes from the observed Fisher information and counts only
    the player's own games (the opponents' ratings are taken as exact).

    >>> r = place([(0.0, 75, 100)])
    >>> round(r.elo, 1) == round(elo_diff(75.5 / 101), 1)
    True
    """
    if not results or any(g < 0 or not 0 <= w <= g for _, w, g in results):
        raise ValueError(f"results must be (opponent_elo, wins, games) with 0 <= wins <= games, got {list(results)}")
    data = [(e / ELO_PER_NAT, w + 0.5, g + 1.0) for e, w, g in results]
    theta = sum(t for t, _, _ in data) / len(data)
    info = 0.0
    for _ in range(200):
        grad = info = 0.0
        for t, w, g in data:
            p = 1 / (1 + math.exp(t - theta))
            grad += w - g * p
            info += g * p * (1 - p)
        step = grad / info
        theta += max(-2.0, min(2.0, step))
        if abs(step) < 1e-13:
            break
    elo = ELO_PER_NAT * theta
    se = ELO_PER_NAT / math.sqrt(info)
    return Rating(elo, se, elo - z * se, elo + z * se)
