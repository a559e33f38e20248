"""The results of a ladder and the published Elo scale of the built-in agents.

:func:`published` reads the scale the package ships (``ladder.json``, written by ``yutenv ladder
--json``); :mod:`.evaluate` places a policy on it (``rating=True``) and :mod:`.ladder` runs new
ladders. Both import these types from here, so neither imports the other to read them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any

from tabulate import tabulate

__all__ = ["LadderPair", "LadderRating", "LadderResult", "PUBLISHED_FILE", "published"]

#: The published ladder of the built-in agents, shipped with the package (written by
#: ``yutenv ladder --json``; docs/BASELINES.md shows the same figures).
PUBLISHED_FILE = "ladder.json"


@dataclass(frozen=True)
class LadderRating:
    """One agent's line of a ladder: its rating with the 95% interval and its games."""

    agent: str
    elo: float
    elo_low: float
    elo_high: float
    se: float
    games: int
    wins: int
    win_rate: float
    ms_per_decision: float = 0.0

    @property
    def low(self) -> float:
        """The interval's lower end."""
        return self.elo_low

    @property
    def high(self) -> float:
        """The interval's upper end."""
        return self.elo_high


@dataclass(frozen=True)
class LadderPair:
    """The games of one pair: ``a``'s wins against ``b``'s."""

    a: str
    b: str
    games: int
    wins_a: int
    wins_b: int


@dataclass
class LadderResult:
    """A ladder: ratings (strongest first), the pairs' results, and how it was made."""

    ratings: list[LadderRating]
    pairs: list[LadderPair]
    anchor: str
    anchor_elo: float = 0.0
    rules: str = "standard"
    seed: int = 1
    games_per_pair: int = 0
    interval: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def rating(self, agent: str) -> LadderRating:
        """The rating of ``agent`` (as the ladder names it); KeyError if it is not rated."""
        for r in self.ratings:
            if r.agent == agent:
                return r
        raise KeyError(f"{agent!r} is not on this ladder (agents: {[r.agent for r in self.ratings]})")

    def as_dict(self) -> dict[str, Any]:
        """The ladder as a plain dict (JSON-ready)."""
        d = asdict(self)
        d.pop("raw")
        return d

    def __str__(self) -> str:
        head = ["rank", "agent", "Elo", "95% interval", "games", "wins", "win rate"]
        rows = [
            [
                str(i),
                r.agent,
                f"{r.elo:+.0f}",
                f"[{r.elo_low:+.0f}, {r.elo_high:+.0f}]",
                str(r.games),
                str(r.wins),
                f"{100 * r.win_rate:.1f}%",
            ]
            for i, r in enumerate(self.ratings, 1)
        ]
        return (
            f"rules {self.rules}, {self.games_per_pair} games per pair, seed {self.seed}; "
            f"Bradley-Terry Elo, {self.anchor} = {self.anchor_elo:+.0f}\n"
            + tabulate(rows, headers=head, tablefmt="pretty", stralign="right", disable_numparse=True)
        )

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> LadderResult:
        """A ladder from the JSON ``yutenv ladder --json`` writes."""
        ratings = [
            LadderRating(
                str(r["agent"]),
                float(r["elo"]),
                float(r["elo_low"]),
                float(r["elo_high"]),
                float(r["se"]),
                int(r["games"]),
                int(r["wins"]),
                float(r["win_rate"]),
                float(r.get("ms_per_decision", 0.0)),
            )
            for r in d["ratings"]
        ]
        pairs = [LadderPair(p["a"], p["b"], p["games"], p["wins_a"], p["wins_b"]) for p in d["pairs"]]
        return cls(
            ratings,
            pairs,
            str(d["anchor"]),
            float(d.get("anchor_elo", 0.0)),
            str(d.get("rules", "standard")),
            int(d.get("seed", 1)),
            int(d.get("games_per_pair", 0)),
            str(d.get("interval", "")),
            dict(d),
        )


def published() -> LadderResult:
    """The published ladder of the built-in agents (standard rules): the fixed scale that
    :func:`yutenv.evaluate` with ``rating=True`` places a policy on."""
    text = resources.files("yutenv").joinpath(PUBLISHED_FILE).read_text(encoding="utf-8")
    return LadderResult.from_json(json.loads(text))
