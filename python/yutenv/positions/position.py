"""A readable position (pool by throw name, stacks as maps or tuples, routes by name) as the map
the server's ``position`` method reads; :meth:`yutenv.Game.state_from_position` sends it, and the
engine checks the position itself.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .._protocol import NUM_THROWS, PHASES, ROUTES, THROW_NAMES
from .calls import _int

__all__ = ["position_map"]

_THROW, _MOVE, _OVER = PHASES
#: The ids of a throw's names: each name, and each name without its hyphen ("backdo").
_THROW_IDS = {**{n: t for t, n in enumerate(THROW_NAMES)}, **{n.replace("-", ""): t for t, n in enumerate(THROW_NAMES)}}


def position_map(
    players: int,
    pieces: int,
    *,
    to_move: int,
    phase: str | None,
    pool: Mapping[str, int] | Sequence[int] | None,
    stacks: Iterable[Mapping[str, Any] | Sequence[Any]],
    hand: Sequence[int] | None,
    finished: Sequence[int] | None,
    place: Sequence[int] | None,
    missed: Sequence[int] | None,
) -> dict[str, Any]:
    """The ``position`` map of a game of ``players`` seats with ``pieces`` pieces each, from the
    arguments of :meth:`yutenv.Game.state_from_position` (which documents them); a ValueError or
    TypeError names the argument that cannot be read."""
    counts = [0] * NUM_THROWS
    if isinstance(pool, Mapping):
        for k, v in pool.items():
            t = _THROW_IDS.get(k.lower())
            if t is None:
                raise ValueError(f"pool: unknown throw {k!r} (throws: {', '.join(THROW_NAMES)})")
            counts[t] = int(v)
    elif pool is not None:
        if len(pool) != NUM_THROWS:
            raise ValueError(f"pool: {len(pool)} counts, want {NUM_THROWS} (by throw id: {', '.join(THROW_NAMES)})")
        counts = [int(v) for v in pool]
    st: list[dict[str, Any]] = []
    for i, s in enumerate(stacks):
        if isinstance(s, Mapping):
            d = {"seat": s["seat"], "station": s["station"], "route": s.get("route", ROUTES[0]), "height": s.get("height", 1)}
        else:
            if not 3 <= len(s) <= 4:
                raise ValueError(f"stacks[{i}]: want (seat, station, route[, height]), got {s!r}")
            d = {"seat": s[0], "station": s[1], "route": s[2], "height": s[3] if len(s) > 3 else 1}
        if isinstance(d["route"], (int, np.integer)) and not isinstance(d["route"], bool):
            if not 0 <= int(d["route"]) < len(ROUTES):
                raise ValueError(f"stacks[{i}]: route id {d['route']} out of range 0..{len(ROUTES) - 1}")
            d["route"] = ROUTES[int(d["route"])]
        for k in ("seat", "station", "height"):
            d[k] = _int(d[k], f"stacks[{i}].{k}")
        d["route"] = str(d["route"])
        st.append(d)
    fin = [0] * players if finished is None else [_int(v, "finished") for v in finished]
    if hand is None:
        hand = [
            pieces - (fin[seat] if seat < len(fin) else 0) - sum(d["height"] for d in st if d["seat"] == seat)
            for seat in range(players)
        ]
    pos: dict[str, Any] = {
        "to_move": _int(to_move, "to_move"),
        "phase": phase if phase is not None else (_MOVE if any(counts) else _THROW),
        "pool": counts,
        "hand": [_int(v, "hand") for v in hand],
        "finished": fin,
        "stacks": st,
    }
    if place is not None:
        pos["place"] = [_int(v, "place") for v in place]
    if missed is not None:
        pos["missed"] = [_int(v, "missed") for v in missed]
    return pos
