"""The statistics of match results: Wilson intervals of win rates and Elo differences.

The one Python home of these formulas (the Go side's is the ``stats`` package; both use the
same quantile, so ``yutenv eval --json`` and :func:`yutenv.evaluate` report the same
intervals for the same counts).

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

__all__ = ["Z95", "elo_diff", "wilson"]

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
