"""An independent, pure-Python implementation of the Yut Nori rules of RULES.md.

This module is the project's second opinion on the rules. It was written from
RULES.md alone (not translated from the Go engine in ``env/``) so that the two
can be checked against each other: perft counts, and whole games compared state
by state in the JSON form that ``env.StateJSON`` documents.

It uses the standard library only and never imports the rest of the package, so
it also runs as a script::

    python3 reference.py replay < records.jsonl      # JSON lines of every state
    python3 reference.py perft < requests.jsonl      # {"rules":{..},"start":0,"depth":5} -> counts
                                                     # ("state": a StateJSON instead of "start")
    python3 reference.py playout --games 100 --seed 1

Conventions shared with the Go engine:

* stations 0..28 as in RULES.md (0 HOME, 5 C1, 10 C2, 15 C3, 22 the centre);
* routes ``OUTER``, ``C1``, ``C2``, ``CENTRE/C1``, ``CENTRE/C2`` (the centre
  route remembers the diagonal it was entered from);
* throws by id: 0 back-do, 1 do, 2 gae, 3 geol, 4 yut, 5 mo;
* actions ``throw_id * 30 + source``, source a station or 29 to enter a piece;
* phases ``throw`` (a chance node), ``move`` (a decision), ``over``;
* a line board's spaces are stations 0..N-1 on the route ``LINE``.

It implements every rule option of RULES.md (both boards, the four finish
modes, pool and capture-bonus switches, skip and push obstacles), so the Go
cross-check (env/crosscheck_test.go) runs it over every rule set of
``env.Variants()``.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence, TextIO

# --- board ------------------------------------------------------------------

HOME = 0
C1 = 5
C2 = 10
C3 = 15
CENTRE = 22
NUM_STATIONS = 29

OUTER = "OUTER"
ROUTE_C1 = "C1"
ROUTE_C2 = "C2"
CENTRE_C1 = "CENTRE/C1"
CENTRE_C2 = "CENTRE/C2"

#: Every route as its stations in order; each ends at HOME (RULES.md, "Board").
ROUTES: dict[str, tuple[int, ...]] = {
    OUTER: tuple(range(20)) + (HOME,),
    ROUTE_C1: (5, 20, 21, 22, 23, 24, 15, 16, 17, 18, 19, HOME),
    ROUTE_C2: (10, 25, 26, 22, 27, 28, HOME),
    CENTRE_C1: (22, 27, 28, HOME),
    CENTRE_C2: (22, 27, 28, HOME),
}

# --- throws and actions -----------------------------------------------------

BACK_DO, DO, GAE, GEOL, YUT, MO = range(6)
NUM_THROWS = 6
THROW_NAMES: tuple[str, ...] = ("back-do", "do", "gae", "geol", "yut", "mo")
THROW_STEPS: tuple[int, ...] = (-1, 1, 2, 3, 4, 5)

NUM_SOURCES = 30
ENTER = 29
NUM_ACTIONS = NUM_THROWS * NUM_SOURCES


def action_id(throw: int, source: int) -> int:
    """Return the action that uses ``throw`` on the stack at ``source`` (29 = enter)."""
    return throw * NUM_SOURCES + source


def throw_probabilities(p: float, back_do: bool) -> list[float]:
    """Probability of each throw id for sticks that land flat with probability ``p``.

    Without back-do the marked stick counts as do (RULES.md, "Variants").
    """
    q = 1.0 - p
    one_flat = p * q * q * q
    probs = [one_flat, 3 * one_flat, 6 * p * p * q * q, 4 * p * p * p * q, p * p * p * p, q * q * q * q]
    if not back_do:
        probs[DO] = 4 * one_flat
        probs[BACK_DO] = 0.0
    return probs


# --- errors -----------------------------------------------------------------


class RulesError(Exception):
    """Base class of the errors this module raises."""


class InvalidRules(RulesError):
    """A rules configuration is out of range or not supported."""


class IllegalAction(RulesError):
    """The action is not legal in this state (the state is unchanged)."""


class WrongPhase(RulesError):
    """The call does not fit the state's phase."""


# --- rules ------------------------------------------------------------------


@dataclass(frozen=True)
class Rules:
    """A rules configuration; the defaults are the ``standard`` set of RULES.md."""

    players: int = 2
    pieces: int = 4
    flat_prob: float = 0.6
    back_do: bool = True
    capture_bonus_yut_mo: bool = False
    shortcut: str = "forced"
    finish: str = "pass"
    back_do_enters: bool = False
    end: str = "first"
    board: str = "cross"
    spaces: int = 0
    pool: bool = True
    capture_bonus: bool = True
    obstacles: str = ""

    def validate(self) -> None:
        """Raise InvalidRules naming the first field that is out of range or unsupported."""
        if not 2 <= self.players <= 4:
            raise InvalidRules(f"players must be 2 to 4, got {self.players}")
        if not 1 <= self.pieces <= 5:
            raise InvalidRules(f"pieces must be 1 to 5, got {self.pieces}")
        if not 0.5 <= self.flat_prob <= 0.65:
            raise InvalidRules(f"flat_prob must be 0.5 to 0.65, got {self.flat_prob}")
        if self.shortcut != "forced":
            raise InvalidRules(f"shortcut must be forced, got {self.shortcut!r}")
        if self.finish not in ("pass", "stop", "exact", "wrap"):
            raise InvalidRules(f"finish must be pass, stop, exact or wrap, got {self.finish!r}")
        if self.end not in ("first", "rank"):
            raise InvalidRules(f"end must be first or rank, got {self.end!r}")
        if self.back_do_enters and not self.back_do:
            raise InvalidRules("back_do_enters needs back_do")
        if self.board == "cross" and self.spaces != 0:
            raise InvalidRules("spaces needs board=line")
        if self.board == "line" and not 1 <= self.spaces <= NUM_STATIONS:
            raise InvalidRules(f"spaces must be 1 to {NUM_STATIONS}, got {self.spaces}")
        if self.board not in ("cross", "line"):
            raise InvalidRules(f"board must be cross or line, got {self.board!r}")
        if self.board == "line" and self.back_do_enters:
            raise InvalidRules("back_do_enters needs the cross board (a line has no HOME station)")
        if self.capture_bonus_yut_mo and not (self.capture_bonus and self.pool):
            raise InvalidRules("capture_bonus_yut_mo needs capture_bonus and pool")
        for st in self.obstacle_map:
            # Obstacles stand anywhere but the end (RULES.md, "Obstacles").
            size = self.spaces if self.board == "line" else NUM_STATIONS
            if st == self.end_station() or not 0 <= st < size:
                raise InvalidRules(f"no obstacle may stand on station {st}")

    @functools.cached_property
    def obstacle_map(self) -> dict[int, int | None]:
        """The obstacles by station: None for skip, k for back<k> (parsed once)."""
        out: dict[int, int | None] = {}
        for item in filter(None, self.obstacles.split("+")):
            station, effect = item.split(":")
            if effect == "skip":
                out[int(station)] = None
            elif effect.startswith("back") and 1 <= int(effect[4:]) <= NUM_STATIONS - 1:
                out[int(station)] = int(effect[4:])
            else:
                raise InvalidRules(f"obstacle {item!r}: want skip or back<k>")
        return out

    def end_station(self) -> int:
        """The end of the board: HOME on the cross, the last space on a line."""
        return self.spaces - 1 if self.board == "line" else HOME

    def first_station(self) -> int:
        """The first place of the board, behind which no push goes: station 1, or space 0."""
        return 0 if self.board == "line" else 1

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Rules:
        """Build rules from the JSON object a Go record holds; missing keys keep standard values."""
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(obj) - known
        if unknown:
            raise InvalidRules(f"unknown rules keys {sorted(unknown)}")
        args = dict(obj)
        for key in ("pool", "capture_bonus"):
            # Switches are written "on"/"off" in JSON.
            if isinstance(args.get(key), str):
                args[key] = args[key] == "on"
        rules = cls(**args)
        rules.validate()
        return rules

    def to_json(self) -> dict[str, Any]:
        """Return the rules as the JSON object the Go engine writes."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}

    def probabilities(self) -> list[float]:
        """Probability of each throw id under these rules."""
        return throw_probabilities(self.flat_prob, self.back_do)


# --- moves on the board -----------------------------------------------------

LINE = "LINE"


def _index(route: str, station: int) -> int:
    """Position of ``station`` on ``route``; a stack on HOME is at the route's end."""
    stations = ROUTES[route]
    if station == HOME:
        return len(stations) - 1
    return stations.index(station)


@dataclass(frozen=True)
class Landing:
    """Where a move ends: a station and route, or off the board (finished)."""

    station: int
    route: str
    finished: bool = False
    shortcut: bool = False


def _turn(station: int, route: str) -> Landing:
    """A stack that stops on ``station`` of ``route`` by a forward move, after its forced shortcut.

    Shortcuts are forced, and happen only by stopping (RULES.md, "Moving").
    """
    if route == OUTER and station == C1:
        return Landing(station, ROUTE_C1, shortcut=True)
    if route == OUTER and station == C2:
        return Landing(station, ROUTE_C2, shortcut=True)
    if station == CENTRE and route in (ROUTE_C1, ROUTE_C2):
        return Landing(station, "CENTRE/" + route, shortcut=True)
    return Landing(station, route)


def _past_end(rules: Rules, beyond: int) -> Landing | None:
    """A forward move that would go ``beyond`` steps past the end (RULES.md, "Finishing").

    None when the move is not legal (``exact``).
    """
    if rules.finish == "exact":
        return None
    if rules.finish != "wrap":
        return Landing(HOME, OUTER, finished=True)  # pass and stop: finished, the extra steps lost
    if rules.board == "line":
        # After the last space comes space 0, as often as the steps go round.
        space = (beyond - 1) % rules.spaces
        if space == rules.spaces - 1:
            return Landing(HOME, LINE, finished=True)
        return Landing(space, LINE)
    # After HOME comes station 1 of OUTER (beyond <= 5 < 20: at most once round).
    return _turn(beyond, OUTER)


def _stop_forward(rules: Rules, route: str, index: int) -> Landing | None:
    """Resolve a forward move that reaches position ``index`` of ``route`` on the cross."""
    stations = ROUTES[route]
    last = len(stations) - 1
    if index > last:
        return _past_end(rules, index - last)
    if index == last:
        if rules.finish == "pass":
            return Landing(HOME, route)  # stops on the end: waits there
        return Landing(HOME, route, finished=True)
    return _turn(stations[index], route)


def _line_forward(rules: Rules, position: int, steps: int) -> Landing | None:
    """A forward move on a line from ``position`` (-1: in hand) by ``steps``."""
    last = rules.spaces - 1
    target = position + steps
    if target > last:
        return _past_end(rules, target - last)
    if target == last and rules.finish != "pass":
        return Landing(HOME, LINE, finished=True)
    return Landing(target, LINE)


def forward(rules: Rules, station: int, route: str, steps: int) -> Landing | None:
    """Where a stack on the board at ``station`` on ``route`` goes with ``steps`` (1..5).

    None when the move is not legal (it would go past the end under ``finish=exact``).
    """
    if station == rules.end_station() and (rules.board == "cross" or rules.finish == "pass"):
        # A stack standing on the end leaves by going past it (RULES.md, "Finishing"):
        # any forward move finishes it, but under wrap it goes round again.
        if rules.finish == "wrap":
            return _past_end(rules, steps)
        return Landing(HOME, route, finished=True)
    if rules.board == "line":
        return _line_forward(rules, station, steps)
    return _stop_forward(rules, route, _index(route, station) + steps)


def enter(rules: Rules, steps: int) -> Landing | None:
    """Where a piece entered from hand with ``steps`` (1..5) goes: station k of OUTER, space k-1 of a line."""
    if rules.board == "line":
        return _line_forward(rules, -1, steps)
    return _stop_forward(rules, OUTER, steps)


def backward(station: int, route: str) -> Landing | None:
    """Where a back-do takes a stack at ``station`` on ``route`` (RULES.md, "Back-do").

    None on space 0 of a line, where back-do has no use.
    """
    if route == LINE:
        return Landing(station - 1, LINE) if station > 0 else None
    stations = ROUTES[route]
    if station == HOME:
        return Landing(stations[-2], route)
    if route == OUTER and station == 1:
        return Landing(HOME, OUTER)
    if route == ROUTE_C1 and station == C1:
        return Landing(4, OUTER)
    if route == ROUTE_C2 and station == C2:
        return Landing(9, OUTER)
    if route == CENTRE_C1 and station == CENTRE:
        return Landing(21, ROUTE_C1)
    if route == CENTRE_C2 and station == CENTRE:
        return Landing(26, ROUTE_C2)
    return Landing(stations[stations.index(station) - 1], route)


# --- state ------------------------------------------------------------------


@dataclass(frozen=True)
class Stack:
    """A stack on the board: its owner, the route it follows and how many pieces it holds."""

    seat: int
    route: str
    height: int


@dataclass
class Event:
    """What one throw or one move did; ``to_json`` gives the fields of env.EventJSON but its text."""

    kind: str
    seat: int
    throw: int
    action: int | None = None
    source: int | None = None
    to: int | None = None
    entered: bool = False
    moved: int = 0
    shortcut: bool = False
    joined: bool = False
    captured: int = 0
    finished: int = 0
    bonus_throw: bool = False
    discarded: int = 0
    turn_ended: bool = False
    game_over: bool = False
    placed: bool = False
    loses_turn: bool = False
    pushed: int = 0
    turns_missed: int = 0

    def to_json(self) -> dict[str, Any]:
        """The event as env.EventJSON writes it, without the "text" field (zero values omitted)."""
        out: dict[str, Any] = {"kind": self.kind, "seat": self.seat, "throw": THROW_NAMES[self.throw]}
        if self.kind == "move":
            out["action"] = self.action
            if not self.entered:
                out["from"] = self.source
            out["to"] = self.to
        optional = (
            ("entered", self.entered),
            ("moved", self.moved),
            ("shortcut", self.shortcut),
            ("joined", self.joined),
            ("captured", self.captured),
            ("finished", self.finished),
            ("bonus_throw", self.bonus_throw),
            ("discarded", self.discarded),
            ("turn_ended", self.turn_ended),
            ("loses_turn", self.loses_turn),
            ("pushed", self.pushed),
            ("turns_missed", self.turns_missed),
        )
        for key, value in optional:
            if value:
                out[key] = value
        return out


@dataclass
class State:
    """A whole game position. Build one with :meth:`new`; ``copy`` clones it."""

    rules: Rules
    to_move: int
    phase: str = "throw"
    pool: list[int] = field(default_factory=lambda: [0] * NUM_THROWS)
    board: list[Stack | None] = field(default_factory=lambda: [None] * NUM_STATIONS)
    hand: list[int] = field(default_factory=list)
    finished: list[int] = field(default_factory=list)
    places: list[int] = field(default_factory=list)
    winner: int = -1
    missed: list[int] = field(default_factory=list)

    @classmethod
    def new(cls, rules: Rules, start: int) -> State:
        """A new game: every piece in hand, seat ``start`` to throw."""
        rules.validate()
        if not 0 <= start < rules.players:
            raise InvalidRules(f"start seat {start} out of range 0..{rules.players - 1}")
        n = rules.players
        return cls(rules, start, hand=[rules.pieces] * n, finished=[0] * n, places=[0] * n, missed=[0] * n)

    def copy(self) -> State:
        """An independent copy (stacks are immutable, so shallow list copies suffice)."""
        return State(
            self.rules,
            self.to_move,
            self.phase,
            list(self.pool),
            list(self.board),
            list(self.hand),
            list(self.finished),
            list(self.places),
            self.winner,
            list(self.missed),
        )

    @classmethod
    def from_json(cls, rules: Rules, obj: dict[str, Any]) -> State:
        """Rebuild a state from its JSON form (env.StateJSON); the "legal" list is ignored.

        Pieces on one station must agree on seat and route; they form one stack.
        """
        rules.validate()
        n = rules.players
        state = cls(rules, int(obj["to_move"]), str(obj["phase"]), [int(c) for c in obj["pool"]])
        state.hand, state.finished = [0] * n, [0] * n
        state.places, state.winner = [int(p) for p in obj["places"]], int(obj["winner"])
        state.missed = [int(m) for m in obj.get("missed") or [0] * n]
        if len(state.pool) != NUM_THROWS or len(state.places) != n or state.phase not in ("throw", "move", "over"):
            raise InvalidRules("state JSON does not fit the rules")
        for piece in obj["pieces"]:
            seat, status = int(piece["seat"]), piece["status"]
            if status == "hand":
                state.hand[seat] += 1
            elif status == "finished":
                state.finished[seat] += 1
            else:
                st, route = int(piece["station"]), str(piece["route"])
                on_line = route == LINE and rules.board == "line" and 0 <= st < rules.spaces
                if not on_line and (route not in ROUTES or (st != HOME and st not in ROUTES[route])):
                    raise InvalidRules(f"station {st} is not on route {route}")
                old = state.board[st]
                if old is not None and (old.seat != seat or old.route != route):
                    raise InvalidRules(f"station {st} holds two stacks")
                state.board[st] = Stack(seat, route, 1 if old is None else old.height + 1)
        for seat in range(n):
            on_board = sum(s.height for s in state.board if s is not None and s.seat == seat)
            if state.hand[seat] + state.finished[seat] + on_board != rules.pieces:
                raise InvalidRules(f"seat {seat} does not have {rules.pieces} pieces")
        return state

    # -- queries --

    def stacks_of(self, seat: int) -> list[int]:
        """Stations holding ``seat``'s stacks, in increasing order."""
        return [st for st, stack in enumerate(self.board) if stack is not None and stack.seat == seat]

    def legal_actions(self) -> list[int]:
        """Legal action ids of the seat to move, increasing; empty unless the phase is ``move``."""
        if self.phase != "move":
            return []
        return self._actions()

    def _actions(self) -> list[int]:
        seat = self.to_move
        own = self.stacks_of(seat)
        out: list[int] = []
        for t in range(NUM_THROWS):
            if self.pool[t] == 0:
                continue
            if self.rules.finish != "exact" and (t != BACK_DO or self.rules.board == "cross"):
                out.extend(action_id(t, st) for st in own)  # every stack can use the result
            else:
                out.extend(action_id(t, st) for st in own if self._landing(t, st) is not None)
            if self.hand[seat] > 0:
                if t == BACK_DO:
                    if self.rules.back_do_enters and not own:
                        out.append(action_id(t, ENTER))
                elif enter(self.rules, THROW_STEPS[t]) is not None:
                    out.append(action_id(t, ENTER))
        return out

    def _landing(self, throw: int, station: int) -> Landing | None:
        """Where result ``throw`` takes the stack at ``station``; None if that is not a legal move."""
        stack = self.board[station]
        assert stack is not None
        if throw == BACK_DO:
            return backward(station, stack.route)
        return forward(self.rules, station, stack.route, THROW_STEPS[throw])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The throw outcomes with non-zero probability, empty unless the phase is ``throw``."""
        if self.phase != "throw":
            return []
        return [(t, p) for t, p in enumerate(self.rules.probabilities()) if p > 0]

    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.phase == "over"

    # -- turn bookkeeping --

    def _next_seat(self, seat: int, ev: Event) -> int:
        """The next seat in order still playing, passing over (and paying) missed turns."""
        n = self.rules.players
        while True:
            for k in range(1, n + 1):
                nxt = (seat + k) % n
                if self.places[nxt] == 0:
                    break
            seat = nxt
            if self.missed[seat] == 0:
                return seat
            # A skip obstacle: play passes over this seat once (RULES.md, "Obstacles").
            self.missed[seat] -= 1
            ev.turns_missed += 1

    def _end_turn(self, ev: Event) -> None:
        """Discard what is left of the pool and pass the turn to the next seat still playing."""
        ev.discarded = sum(self.pool)
        ev.turn_ended = True
        self.pool = [0] * NUM_THROWS
        self.to_move = self._next_seat(self.to_move, ev)
        self.phase = "throw"

    def _after_pool_change(self, ev: Event) -> None:
        """Decide between a decision and passing the turn once the throwing has stopped."""
        if sum(self.pool) > 0 and self._actions():
            self.phase = "move"
        else:
            self._end_turn(ev)

    # -- chance --

    def apply_throw(self, throw: int) -> Event:
        """Resolve the chance node with the given result."""
        if self.phase != "throw":
            raise WrongPhase(f"a throw in phase {self.phase}")
        if not 0 <= throw < NUM_THROWS or self.rules.probabilities()[throw] == 0:
            raise IllegalAction(f"throw {throw} is impossible under these rules")
        ev = Event("throw", self.to_move, throw)
        self.pool[throw] += 1
        if not self.rules.pool:
            # Each throw is used at once, or spent (RULES.md, "A turn").
            if self._actions():
                self.phase = "move"
            elif throw in (YUT, MO):
                ev.discarded, ev.bonus_throw = 1, True
                self.pool[throw] = 0
            else:
                self._end_turn(ev)
        elif throw in (YUT, MO):
            ev.bonus_throw = True
        else:
            self._after_pool_change(ev)
        return ev

    def sample_throw(self, rng: random.Random) -> Event:
        """Resolve the chance node with a throw drawn from ``rng``."""
        x = rng.random()
        probs = self.rules.probabilities()
        cumulative = 0.0
        for t, p in enumerate(probs):
            cumulative += p
            if x < cumulative and p > 0:
                return self.apply_throw(t)
        return self.apply_throw(MO)

    # -- moves --

    def apply(self, action: int) -> Event:
        """Play ``action`` for the seat to move; an illegal action raises and changes nothing."""
        if self.phase != "move":
            raise WrongPhase(f"an action in phase {self.phase}")
        if action not in self._actions():
            raise IllegalAction(f"action {action} is not legal")
        seat = self.to_move
        throw, source = divmod(action, NUM_SOURCES)
        ev = Event("move", seat, throw, action=action, source=source)
        self.pool[throw] -= 1

        if source == ENTER:
            ev.entered = True
            height = 1
            self.hand[seat] -= 1
            if throw == BACK_DO:
                landing: Landing | None = Landing(HOME, OUTER)  # back_do_enters: onto HOME
            else:
                landing = enter(self.rules, THROW_STEPS[throw])
        else:
            stack = self.board[source]
            assert stack is not None
            height = stack.height
            landing = self._landing(throw, source)
            self.board[source] = None
        assert landing is not None
        ev.moved = height
        ev.to = landing.station
        ev.shortcut = landing.shortcut

        if landing.finished:
            # A finished move reports the end of the board (docs/FORMATS.md).
            ev.to = self.rules.end_station()
            self.finished[seat] += height
            ev.finished = height
        else:
            self._stop(seat, landing.station, landing.route, height, ev)
            self._obstacle(seat, landing.station, ev)

        yut_mo = throw in (YUT, MO)
        bonus = ev.captured > 0 and self.rules.capture_bonus and (not yut_mo or self.rules.capture_bonus_yut_mo)
        if self.finished[seat] == self.rules.pieces:
            self._place(seat, ev)
        elif bonus or (yut_mo and not self.rules.pool):
            # Without a pool yut and mo earn their throw after the move; a move earns at most one.
            ev.bonus_throw = True
            self.phase = "throw"
        else:
            self._after_pool_change(ev)
        return ev

    def _stop(self, seat: int, station: int, route: str, height: int, ev: Event) -> None:
        """A stack of ``seat`` stops on ``station``: it joins its own stack there or captures another's."""
        there = self.board[station]
        if there is not None and there.seat == seat:
            height += there.height
            ev.joined = True
        elif there is not None:
            self.hand[there.seat] += there.height
            ev.captured += there.height
        self.board[station] = Stack(seat, route, height)
        ev.to = station

    def _obstacle(self, seat: int, station: int, ev: Event) -> None:
        """The stack that has just stopped on ``station`` suffers its obstacle, if any."""
        obstacles = self.rules.obstacle_map
        if station not in obstacles:
            return
        push = obstacles[station]
        if push is None:
            self.missed[seat] += 1
            ev.loses_turn = True
            return
        stack = self.board[station]
        assert stack is not None
        at, route, steps = station, stack.route, 0
        # One back-do step at a time, never behind the first place of the board.
        while steps < push and at != self.rules.first_station():
            back = backward(at, route)
            assert back is not None
            at, route, steps = back.station, back.route, steps + 1
        if steps == 0:
            return
        self.board[station] = None
        ev.pushed = steps
        self._stop(seat, at, route, stack.height, ev)

    def _place(self, seat: int, ev: Event) -> None:
        """Rank a seat that has just finished all its pieces, and end the game or the turn."""
        ev.placed = True
        ranked = sum(1 for p in self.places if p)
        self.places[seat] = ranked + 1
        if self.winner < 0:
            self.winner = seat
        unranked = [s for s in range(self.rules.players) if self.places[s] == 0]
        if self.rules.end == "rank" and len(unranked) > 1:
            self._end_turn(ev)
            return
        if self.rules.end == "rank":
            for s in unranked:
                self.places[s] = self.rules.players
        ev.discarded = sum(self.pool)
        ev.game_over = True
        self.pool = [0] * NUM_THROWS
        self.phase = "over"

    # -- JSON --

    def to_json(self) -> dict[str, Any]:
        """The state as env.StateJSON writes it, keys in the same order."""
        pieces: list[dict[str, Any]] = []
        for seat in range(self.rules.players):
            for st, stack in enumerate(self.board):
                if stack is not None and stack.seat == seat:
                    for _ in range(stack.height):
                        pieces.append({"seat": seat, "status": "board", "station": st, "route": stack.route})
            pieces.extend({"seat": seat, "status": "hand"} for _ in range(self.hand[seat]))
            pieces.extend({"seat": seat, "status": "finished"} for _ in range(self.finished[seat]))
        out = {
            "to_move": self.to_move,
            "phase": self.phase,
            "pool": list(self.pool),
            "pieces": pieces,
            "winner": self.winner,
            "places": list(self.places),
            "legal": self.legal_actions(),
        }
        if any(self.missed):
            out["missed"] = list(self.missed)
        return out


def dumps(obj: Any) -> str:
    """Compact JSON, byte for byte as Go's encoding/json writes these values."""
    return json.dumps(obj, separators=(",", ":"))


def json_line(step: int, event: Event | None, state: State) -> str:
    """One replay line as env.MarshalJSONLine writes it (the event without its text)."""
    line: dict[str, Any] = {"step": step}
    if step >= 0 and event is not None:
        line["event"] = event.to_json()
    line["state"] = state.to_json()
    return dumps(line)


# --- perft ------------------------------------------------------------------


def perft(state: State, depth: int) -> int:
    """Count paths of exactly ``depth`` steps (a throw outcome or a legal action each).

    Games that end before ``depth`` contribute nothing, as in chess perft.
    """
    if depth == 0:
        return 1
    total = 0
    if state.phase == "throw":
        for throw, _ in state.chance_outcomes():
            child = state.copy()
            child.apply_throw(throw)
            total += perft(child, depth - 1)
    elif state.phase == "move":
        for action in state.legal_actions():
            child = state.copy()
            child.apply(action)
            total += perft(child, depth - 1)
    return total


def divide(state: State, depth: int) -> list[tuple[str, int, int]]:
    """Split perft by first step: ``("throw", id, count)`` or ``("action", id, count)``."""
    out: list[tuple[str, int, int]] = []
    if depth == 0:
        return out
    if state.phase == "throw":
        for throw, _ in state.chance_outcomes():
            child = state.copy()
            child.apply_throw(throw)
            out.append(("throw", throw, perft(child, depth - 1)))
    elif state.phase == "move":
        for action in state.legal_actions():
            child = state.copy()
            child.apply(action)
            out.append(("action", action, perft(child, depth - 1)))
    return out


# --- records ----------------------------------------------------------------


def replay_record(record: dict[str, Any], emit: Callable[[int, Event | None, State], None]) -> State:
    """Replay a Go game record (format ``yutenv-record``), calling ``emit`` on every state.

    ``emit`` gets the initial state with step -1, then every step's index, event and
    the state after it. A record whose start is -1 (drawn from the seed by the Go
    generator, which this module does not reproduce) starts with the seat of its
    first step. A step that does not fit raises an error naming its index.
    """
    if record.get("format") != "yutenv-record" or record.get("version") != 1:
        raise ValueError("not a version 1 yutenv-record")
    rules = Rules.from_json(record.get("rules", {}))
    steps: Sequence[dict[str, Any]] = record.get("steps") or []
    start = int(record.get("start", -1))
    if start < 0:
        start = int(steps[0]["seat"]) if steps else 0
    state = State.new(rules, start)
    emit(-1, None, state)
    for i, step in enumerate(steps):
        try:
            if step.get("seat") != state.to_move:
                raise IllegalAction(f"step by seat {step.get('seat')}, but seat {state.to_move} is to play")
            if "action" in step and step["action"] is not None:
                ev = state.apply(int(step["action"]))
            else:
                ev = state.apply_throw(THROW_NAMES.index(step["throw"]))
        except (RulesError, ValueError, KeyError) as err:
            raise ValueError(f"record step {i}: {err}") from err
        emit(i, ev, state)
    return state


# --- random playouts --------------------------------------------------------


@dataclass
class PlayoutResult:
    """The end of a random game."""

    winner: int
    places: list[int]
    decisions: int
    throws: int


def random_playout(rules: Rules, seed: int, start: int | None = None) -> PlayoutResult:
    """Play one game with uniformly random legal actions, using its own ``random.Random(seed)``.

    This is the pure-Python loop of equal work that the package's benchmark
    compares with the Go engine: throws sampled from the rules' distribution,
    legal actions generated at every decision, one applied.
    """
    rng = random.Random(seed)
    state = State.new(rules, rng.randrange(rules.players) if start is None else start)
    decisions = throws = 0
    while state.phase != "over":
        if state.phase == "throw":
            state.sample_throw(rng)
            throws += 1
        else:
            state.apply(rng.choice(state.legal_actions()))
            decisions += 1
    return PlayoutResult(state.winner, list(state.places), decisions, throws)


# --- command line -----------------------------------------------------------


def _read_json_lines(stream: TextIO) -> Iterable[dict[str, Any]]:
    for line in stream:
        line = line.strip()
        if line:
            yield json.loads(line)


def _cmd_replay(inp: TextIO, out: TextIO) -> int:
    """Print every record's states; a step that does not fit prints {"error": ...} and ends that record."""
    for record in _read_json_lines(inp):

        def emit(step: int, ev: Event | None, state: State) -> None:
            out.write(json_line(step, ev, state) + "\n")

        try:
            replay_record(record, emit)
        except ValueError as err:
            out.write(dumps({"error": str(err)}) + "\n")
    return 0


def _cmd_perft(inp: TextIO, out: TextIO) -> int:
    for req in _read_json_lines(inp):
        rules = Rules.from_json(req.get("rules", {}))
        if "state" in req:
            state = State.from_json(rules, req["state"])
        else:
            state = State.new(rules, int(req.get("start", 0)))
        out.write(dumps({"depth": req["depth"], "count": perft(state, int(req["depth"]))}) + "\n")
    return 0


def _cmd_playout(games: int, seed: int, rules: Rules, out: TextIO) -> int:
    t0 = time.perf_counter()
    decisions = 0
    wins = [0] * rules.players
    for g in range(games):
        res = random_playout(rules, seed + g)
        decisions += res.decisions
        wins[res.winner] += 1
    dt = time.perf_counter() - t0
    summary = {"games": games, "seconds": dt, "games_per_s": games / dt, "decisions": decisions, "wins": wins}
    out.write(dumps(summary) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(description="Pure-Python reference of the yutenv rules")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("replay", help="replay yutenv-record JSON lines from stdin, print every state as JSON lines")
    sub.add_parser("perft", help='read {"rules":..,"start":..,"depth":..} lines (or "state" instead of "start"), print counts')
    po = sub.add_parser("playout", help="random playouts, timed")
    po.add_argument("--games", type=int, default=100)
    po.add_argument("--seed", type=int, default=1)
    po.add_argument("--rules", default="{}", help="rules as a JSON object")
    args = ap.parse_args(argv)
    if args.cmd == "replay":
        return _cmd_replay(sys.stdin, sys.stdout)
    if args.cmd == "perft":
        return _cmd_perft(sys.stdin, sys.stdout)
    return _cmd_playout(args.games, args.seed, Rules.from_json(json.loads(args.rules)), sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
