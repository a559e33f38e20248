"""A small pure-Python Yut Nori engine (RULES.md, ``standard`` rules plus ``players`` and
``pieces``), used by ``python -m yutenv.bench`` as the baseline of "the same work done in
plain Python" when ``yutenv.reference`` is not installed.

It is deliberately straightforward Python (lists, dicts, ``random.Random``), the way a
researcher would write the game without the Go server. It does not reproduce the Go
engine's random streams, so its games differ from the server's; it plays by the same rules.
"""

from __future__ import annotations

import random
import numpy as np
import numpy.typing as npt

OUTER, C1, C2, CENTRE_C1, CENTRE_C2 = range(5)
ROUTES: list[list[int]] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 0],
    [5, 20, 21, 22, 23, 24, 15, 16, 17, 18, 19, 0],
    [10, 25, 26, 22, 27, 28, 0],
    [22, 27, 28, 0],
    [22, 27, 28, 0],
]
BACKDO, DO, GAE, GEOL, YUT, MO = range(6)
STEPS = [-1, 1, 2, 3, 4, 5]
NUM_ACTIONS = 180
FINISH = (-1, -1)


def _route_index() -> list[dict[int, int]]:
    idx: list[dict[int, int]] = []
    for r, seq in enumerate(ROUTES):
        d: dict[int, int] = {}
        for i, s in enumerate(seq):
            if i == 0 and r == OUTER:
                continue
            d[s] = i
        idx.append(d)
    return idx


ROUTE_INDEX = _route_index()


def move(route: int, station: int, throw: int, entering: bool = False) -> tuple[int, int]:
    """Where a stack on ``route`` at ``station`` goes with ``throw``: (station, route) or FINISH.
    ``entering``: a piece from hand, which starts at index 0 of OUTER (HOME as a start)."""
    seq = ROUTES[route]
    i = 0 if entering else ROUTE_INDEX[route][station]
    last = len(seq) - 1
    if throw == BACKDO:
        if i == last:
            return seq[last - 1], route
        if route == OUTER and i == 1:
            return 0, OUTER
        if i == 0 and route == C1:
            return 4, OUTER
        if i == 0 and route == C2:
            return 9, OUTER
        if i == 0 and route == CENTRE_C1:
            return 21, C1
        if i == 0 and route == CENTRE_C2:
            return 26, C2
        return seq[i - 1], route
    j = i + STEPS[throw]
    if j > last:
        return FINISH
    s = seq[j]
    if route == OUTER and s == 5:
        return s, C1
    if route == OUTER and s == 10:
        return s, C2
    if route == C1 and s == 22:
        return s, CENTRE_C1
    if route == C2 and s == 22:
        return s, CENTRE_C2
    return s, route


class PyYut:
    """One game: seats take turns; chance is sampled with ``random.Random(seed)``."""

    def __init__(self, players: int = 2, pieces: int = 4, p: float = 0.6) -> None:
        self.players = players
        self.pieces = pieces
        q = 1 - p
        probs = [p * q**3, 3 * p * q**3, 6 * p**2 * q**2, 4 * p**3 * q, p**4, q**4]
        self.cum = list(np.cumsum(probs))
        self.rng = random.Random(0)
        self.reset(0)

    def reset(self, seed: int) -> None:
        self.rng.seed(seed)
        self.cells: dict[int, list[int]] = {}  # station -> [owner, height, route]
        self.hand = [self.pieces] * self.players
        self.finished = [0] * self.players
        self.pool = [0] * 6
        self.seat = self.rng.randrange(self.players)
        self.winner = -1
        self.throw_until_decision()

    def sample_throw(self) -> int:
        x = self.rng.random()
        for t, c in enumerate(self.cum):
            if x < c:
                return t
        return MO

    def has_usable(self) -> bool:
        if sum(self.pool) > self.pool[BACKDO]:
            return True
        return self.pool[BACKDO] > 0 and any(c[0] == self.seat for c in self.cells.values())

    def end_turn(self) -> None:
        self.pool = [0] * 6
        self.seat = (self.seat + 1) % self.players

    def throw_until_decision(self) -> None:
        """Throw (with yut/mo chaining) until the seat to move has a usable result."""
        while self.winner < 0:
            while True:
                t = self.sample_throw()
                self.pool[t] += 1
                if t != YUT and t != MO:
                    break
            if self.has_usable():
                return
            self.end_turn()

    def legal_actions(self) -> list[int]:
        if self.winner >= 0:
            return []
        mine = sorted(s for s, c in self.cells.items() if c[0] == self.seat)
        out = []
        for t in range(6):
            if self.pool[t] == 0:
                continue
            for s in mine:
                out.append(t * 30 + s)
            if self.hand[self.seat] > 0 and t != BACKDO:
                out.append(t * 30 + 29)
        return out

    def mask(self) -> npt.NDArray[np.uint8]:
        m = np.zeros(NUM_ACTIONS, dtype=np.uint8)
        m[self.legal_actions()] = 1
        return m

    def apply(self, a: int) -> None:
        """Play a legal action for the seat to move, then throw for whoever moves next."""
        t, src = divmod(a, 30)
        me = self.seat
        if src == 29:
            self.hand[me] -= 1
            moved = 1
            dest = move(OUTER, 0, t, entering=True)
        else:
            owner, moved, route = self.cells.pop(src)
            dest = move(route, src, t)
        self.pool[t] -= 1
        captured = False
        if dest == FINISH:
            self.finished[me] += moved
        else:
            to, route = dest
            c = self.cells.get(to)
            if c is None:
                self.cells[to] = [me, moved, route]
            elif c[0] == me:
                c[1] += moved
                c[2] = route
            else:
                self.hand[c[0]] += c[1]
                self.cells[to] = [me, moved, route]
                captured = True
        if self.finished[me] == self.pieces:
            self.winner = me
            self.pool = [0] * 6
            return
        if captured and t != YUT and t != MO:
            self.throw_until_decision()
            return
        if sum(self.pool) == 0 or not self.has_usable():
            self.end_turn()
            self.throw_until_decision()

    def observation(self, out: npt.NDArray[np.float32]) -> None:
        """A compact encoding from the mover's view into ``out``: stack heights by station
        and seat, routes, hand, finished and pool (the kind of work the server's tier does)."""
        out[:] = 0.0
        n = self.players
        for s, (owner, h, route) in self.cells.items():
            rel = (owner - self.seat) % n
            out[rel * 29 + s] = h / self.pieces
            out[n * 29 + s * 5 + route] = 1.0
        base = n * 29 + 29 * 5
        for i in range(n):
            rel = (i - self.seat) % n
            out[base + rel] = self.hand[i] / self.pieces
            out[base + n + rel] = self.finished[i] / self.pieces
        for t in range(6):
            out[base + 2 * n + t] = min(self.pool[t], 4) / 4.0

    @staticmethod
    def obs_size(players: int = 2) -> int:
        return players * 29 + 29 * 5 + 2 * players + 6


def play_single(steps: int, seed: int = 0, players: int = 2) -> tuple[int, int]:
    """The single-env loop of the benchmark in plain Python: the learner picks a uniformly
    random legal action, every other seat plays uniformly random legal actions, and each
    learner decision produces an observation vector and a mask. Returns (learner decisions, games)."""
    g = PyYut(players=players)
    rng = random.Random(seed)
    obs = np.zeros(PyYut.obs_size(players), dtype=np.float32)
    learner = 0
    games = 0
    done_steps = 0
    g.reset(seed)
    while done_steps < steps:
        # opponents move until the learner decides or the game ends
        while g.winner < 0 and g.seat != learner:
            legal = g.legal_actions()
            g.apply(legal[rng.randrange(len(legal))])
        if g.winner >= 0:
            games += 1
            g.reset(seed + games)
            continue
        g.observation(obs)
        mask = g.mask()
        choices = np.flatnonzero(mask)
        g.apply(int(choices[rng.randrange(len(choices))]))
        done_steps += 1
    return done_steps, games
