"""Game states as Python values, backed by the Go engine: for search, labelling and analysis.

A :class:`Game` holds a rule set; a :class:`State` is one position of it, held as the
engine's *packed* bytes (``Game.state_size`` bytes, docs/FORMATS.md): copying, pickling
and comparing a state is copying, pickling and comparing those bytes. Every engine
operation is one round trip to the server (the process's shared ``yutenv serve``, started
on first use), and every operation has a batched form over an ``(N, state_size)`` uint8
array of packed states, so a Python search over thousands of nodes pays one round trip
per batch, not per node::

    import yutenv
    game = yutenv.Game("standard")
    s = game.new_initial_state(seed=1)
    s.apply_throw(yutenv.state.GAE)              # or s.sample_throw()
    s.legal_actions()                            # [59]: gae@enter
    s.apply_action(59)
    batch = game.initial_states(1024, seed=0)    # (1024, state_size) uint8
    batch = game.apply_throws(batch, -1)         # every state throws with its own generator
    a = game.analyse(batch_at_decisions, "mcts:400")   # actions, policies (N, 180), values

States are checked by the server whenever they cross: a damaged or forged state is refused
with :class:`~yutenv.BadStateError` naming its row; an illegal action or throw raises
:class:`~yutenv.IllegalActionError`, and the state is unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar, Union

import numpy as np
import numpy.typing as npt

from .._progress import progress_bar
from .._protocol import NUM_ACTIONS, NUM_THROWS, PACKED_FIELDS, PACKED_STATE_SIZE, PACKED_STATE_V1_SIZE, PACKED_STATE_VERSION
from .._protocol import PHASES as PHASES
from .._protocol import ROUTES as ROUTES
from .._protocol import THROW_NAMES as THROW_NAMES
from .._wire.args import check_action, check_seed
from ..connection.session import close_shared_session as close_shared_session
from ..envs.config import check_rules
from ..errors import BadStateError, LimitExceededError
from .calls import _call, _declare, _int, _join, _per_state, _seat_error, _upgrade_packed, in_chunks
from .position import position_map

__all__ = [
    "Analysis",
    "Game",
    "State",
    "THROW_NAMES",
    "BACK_DO",
    "DO",
    "GAE",
    "GEOL",
    "YUT",
    "MO",
    "CHANCE",
    "TERMINAL",
]

# The engine's names and numbers come from the generated yutenv._protocol (THROW_NAMES, PHASES
# and ROUTES, by id, are re-exported from it); python/tests/test_engine_facts.py fails on a copy.
#: Throw ids, in the engine's order (RULES.md).
BACK_DO, DO, GAE, GEOL, YUT, MO = range(NUM_THROWS)
_THROW, _MOVE, _OVER = PHASES
#: current_player() at a chance node and after the game, as in OpenSpiel.
CHANCE = -1
#: current_player() after the game, as in OpenSpiel.
TERMINAL = -4

# Offsets of the packed layout that Python reads itself (env.PackedFields).
_SEAT, _PHASE, _HAND, _FINISHED, _PLACE = (PACKED_FIELDS[f].offset for f in ("seat", "phase", "hand", "finished", "place"))


_T = TypeVar("_T")

States = Union[npt.NDArray[np.uint8], Sequence["State"]]  # noqa: UP007 - a run-time alias


@dataclass(frozen=True)
class Analysis:
    """What an agent says about a batch of states (:meth:`Game.analyse`).

    Attributes:
        actions: (N,) int32, the action the agent plays.
        policy: (N, 180) float32, its search policy (mcts: root visit fractions; agents
            without a search: one-hot on the action).
        value: (N,) float32, its estimate of the mover's outcome in [-1, 1] (0 if none).
        values: (N, players) float32, its estimate of every seat's outcome.
        agent: the agent's canonical spec.
    """

    actions: npt.NDArray[np.int32]
    policy: npt.NDArray[np.float32]
    value: npt.NDArray[np.float32]
    values: npt.NDArray[np.float32]
    agent: str


class Game:
    """A rule set: makes states and runs batched operations on packed states.

    Args:
        rules: a rules string (``"players=3,end=rank"``) or a mapping of its keys; default
            the standard rules.
    """

    def __init__(self, rules: str | Mapping[str, Any] = "standard") -> None:
        check_rules(rules)
        r = _declare(dict(rules) if isinstance(rules, Mapping) else rules)
        self.rules: str = str(r["rules"])
        self.players: int = int(r["players"])
        self.pieces: int = int(r["pieces"])
        self.state_size: int = int(r["state_size"])
        self.num_actions: int = int(r["actions"])
        #: probability of each throw id at a chance node (back-do is 0 with back_do=off)
        self.chance: tuple[float, ...] = tuple(float(p) for p in r["chance"])
        #: observation size of each tier
        self.obs_size: dict[str, int] = {str(k): int(v) for k, v in r["obs_size"].items()}

    def __repr__(self) -> str:
        return f"yutenv.Game({self.rules!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and other.rules == self.rules

    def __hash__(self) -> int:
        return hash(self.rules)

    def __reduce__(self) -> Any:
        return (Game, (self.rules,))

    def _call(self, method: str, params: Mapping[str, Any]) -> Any:
        return _call(method, params, self.rules)

    # ---- making states -------------------------------------------------------------------

    def new_initial_state(self, seed: int = 0, start: int | None = 0) -> State:
        """The initial state (a chance node: the first seat throws). ``seed`` seeds the
        state's own generator (used by :meth:`State.sample_throw`); ``start`` is the first
        seat, or None to draw it from the seed."""
        return State(self, bytes(self.initial_states(1, seed, start)[0]))

    def initial_states(self, n: int, seed: int = 0, start: int | None = 0) -> npt.NDArray[np.uint8]:
        """``n`` initial states with seeds ``seed, seed+1, ...``, as an (n, state_size) array."""
        p: dict[str, Any] = {"seed": check_seed(seed), "n": int(n)}
        if start is not None:
            p["start"] = int(start)
        return self._rows(self._call("initial", p)["states"])

    def state_from_position(
        self,
        *,
        to_move: int = 0,
        phase: str | None = None,
        pool: Mapping[str, int] | Sequence[int] | None = None,
        stacks: Iterable[Mapping[str, Any] | Sequence[Any]] = (),
        hand: Sequence[int] | None = None,
        finished: Sequence[int] | None = None,
        place: Sequence[int] | None = None,
        missed: Sequence[int] | None = None,
        seed: int = 0,
    ) -> State:
        """Build a state from a readable position; the engine checks it thoroughly.

        Args:
            to_move: the seat to throw or move.
            phase: ``"throw"``, ``"move"`` or ``"over"``; default ``"move"`` if the pool
                holds a result, else ``"throw"``.
            pool: the results waiting to be used: ``{"gae": 1, "yut": 1}`` or six counts by id
                (:data:`THROW_NAMES`).
            stacks: the stacks on the board: ``{"seat", "station", "route", "height"}`` maps or
                ``(seat, station, route, height)`` tuples; route is a name of :data:`ROUTES`
                (``"OUTER"``, ``"C1"``, ``"C2"``, ``"CENTRE/C1"``, ``"CENTRE/C2"``; ``"LINE"`` on
                a line board) or its id, its index there; height defaults to 1.
            hand: pieces in hand per seat; default: whatever is neither on the board nor finished.
            finished: finished pieces per seat (default none).
            place: final places per seat (1 = first; 0 while playing).
            missed: turns each seat will miss because of skip obstacles (default none).
            seed: seed of the state's own generator.

        Raises:
            BadStateError: the position is inconsistent (the message says how).
        """
        pos = position_map(
            self.players, self.pieces, to_move=to_move, phase=phase, pool=pool, stacks=stacks, hand=hand,
            finished=finished, place=place, missed=missed,
        )  # fmt: skip
        r = self._call("position", {"position": pos, "seed": check_seed(seed)})
        return State(self, bytes(r["state"]))

    def deserialize(self, blob: bytes) -> State:
        """A state from :meth:`State.serialize`'s saved-state blob, whose rules must be this game's."""
        r = self._call("state_load", {"blob": bytes(blob)})
        return State(self, bytes(r["state"]))

    def state(self, packed: bytes | npt.NDArray[np.uint8]) -> State:
        """The :class:`State` of one packed row, checked by the server (one round trip).

        Raises:
            BadStateError: the bytes are not a state of this game (damaged or forged).
        """
        b = bytes(np.asarray(packed, dtype=np.uint8).tobytes()) if not isinstance(packed, bytes) else packed
        b = _upgrade_packed(b)
        if len(b) != self.state_size:
            raise BadStateError(f"a packed state of {self.rules!r} is {self.state_size} bytes, got {len(b)}", code="bad_state")
        self.query(np.frombuffer(b, dtype=np.uint8))
        return State(self, b)

    def states(self, rows: npt.NDArray[np.uint8]) -> list[State]:
        """One :class:`State` per row of an (N, state_size) array, checked by the server (one
        round trip per chunk): BadStateError naming the first damaged or forged row."""
        a = self._array(rows)
        self.query(a)
        return [State(self, bytes(r)) for r in a]

    # ---- batched operations --------------------------------------------------------------

    def _rows(self, b: bytes) -> npt.NDArray[np.uint8]:
        return np.frombuffer(b, dtype=np.uint8).reshape(-1, self.state_size)

    def _array(self, states: States) -> npt.NDArray[np.uint8]:
        if isinstance(states, np.ndarray):
            a = states
            if a.dtype != np.uint8:
                raise TypeError(f"packed states are uint8, got {a.dtype}")
            if a.ndim == 1:
                a = a.reshape(1, -1)
            if a.ndim == 2 and a.shape[1] == PACKED_STATE_V1_SIZE and len(a) and (a[:, 0] == 1).all():
                # version 1 rows (an array saved before missed turns were packed): upgrade them
                a = np.concatenate([a, np.zeros((len(a), PACKED_STATE_SIZE - PACKED_STATE_V1_SIZE), np.uint8)], axis=1)
                a[:, 0] = PACKED_STATE_VERSION
            if a.ndim != 2 or a.shape[1] != self.state_size:
                raise ValueError(f"packed states have shape (N, {self.state_size}), got {states.shape}")
            return a
        rows = []
        for s in states:
            if not isinstance(s, State):
                raise TypeError(f"want State objects or an (N, {self.state_size}) uint8 array, got {type(s).__name__}")
            if s.game.rules != self.rules:
                raise ValueError(f"a state of rules {s.game.rules!r} given to the game of rules {self.rules!r}")
            rows.append(s.packed)
        return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(-1, self.state_size)

    def _bytes(self, states: States) -> tuple[bytes, int]:
        a = self._array(states)
        return np.ascontiguousarray(a).tobytes(), a.shape[0]

    def apply_actions(self, states: States, actions: npt.ArrayLike) -> npt.NDArray[np.uint8]:
        """Apply one action per state (all at decisions); returns the (N, state_size) children.

        Raises IllegalActionError naming the first row whose action is illegal; nothing changes.
        """
        b, n = self._bytes(states)
        acts = _per_state(actions, n, "apply_actions", "actions").astype("<i4")
        return self._chunks(
            b,
            n,
            self.state_size + 4,
            lambda lo, hi, rows: self._rows(self._call("apply", {"states": rows, "actions": acts[lo:hi].tobytes()})["states"]),
        )

    def apply_throws(self, states: States, throws: npt.ArrayLike) -> npt.NDArray[np.uint8]:
        """Resolve one chance node per state with a throw id 0..5, or -1 to throw with the
        state's own generator (sampled mode); returns the children."""
        b, n = self._bytes(states)
        t = _per_state(throws, n, "apply_throws", "throws")
        if ((t < -1) | (t >= NUM_THROWS)).any():
            raise ValueError(f"apply_throws: a throw is an id 0..{NUM_THROWS - 1} ({', '.join(THROW_NAMES)}) or -1 to sample")
        th = t.astype(np.int8)
        return self._chunks(
            b,
            n,
            self.state_size + 1,
            lambda lo, hi, rows: self._rows(self._call("apply", {"states": rows, "throws": th[lo:hi].tobytes()})["states"]),
        )

    def query(
        self,
        states: States,
        *,
        mask: bool = False,
        returns: bool = False,
        obs: str | None = None,
        seat: int | None = None,
    ) -> dict[str, npt.NDArray[Any]]:
        """Everything about a batch of states in one round trip.

        Returns a dict of arrays: ``phase`` (N,) uint8 (0 throw, 1 move, 2 over) and
        ``to_move`` (N,) int8 always; ``mask`` (N, 180) int8 if asked; ``returns``
        (N, players) float32 (every seat's outcome, 0 until the game is over); ``obs``
        (N, D) float32 of tier ``obs`` seen by ``seat`` (default the seat to move; any
        seat may be observed at any time, from its own chair).
        """
        b, n = self._bytes(states)
        p: dict[str, Any] = {"mask": bool(mask), "returns": bool(returns)}
        per_row = 2 + (NUM_ACTIONS if mask else 0) + (4 * self.players if returns else 0)
        if obs is not None:
            p["obs"] = str(obs)
            per_row += 4 * self.obs_size.get(str(obs), 0)
        if seat is not None:
            p["seat"] = _int(seat, "seat")

        def one(lo: int, hi: int, rows: bytes) -> dict[str, npt.NDArray[Any]]:
            r = self._call("query", {**p, "states": rows})
            k = hi - lo
            out: dict[str, npt.NDArray[Any]] = {
                "phase": np.frombuffer(r["phase"], dtype=np.uint8),
                "to_move": np.frombuffer(r["to_move"], dtype=np.int8),
            }
            if mask:
                out["mask"] = np.frombuffer(r["mask"], dtype=np.int8).reshape(k, NUM_ACTIONS)
            if returns:
                out["returns"] = np.frombuffer(r["returns"], dtype="<f4").reshape(k, self.players)
            if obs is not None:
                out["obs"] = np.frombuffer(r["obs"], dtype="<f4").reshape(k, -1)
            return out

        return self._chunks(b, n, max(per_row, self.state_size), one)

    def legal_masks(self, states: States) -> npt.NDArray[np.int8]:
        """(N, 180) legal-action masks (all zero except at decisions)."""
        return self.query(states, mask=True)["mask"]

    def observations(self, states: States, tier: str = "tactical", seat: int | None = None) -> npt.NDArray[np.float32]:
        """(N, D) observations of tier ``tier`` for ``seat`` (default the seat to move)."""
        return self.query(states, obs=tier, seat=seat)["obs"]

    def returns(self, states: States) -> npt.NDArray[np.float32]:
        """(N, players) outcomes in [-1, 1]; 0 until the game is over."""
        return self.query(states, returns=True)["returns"]

    def phases(self, states: States) -> npt.NDArray[np.uint8]:
        """(N,) phases read from the packed bytes, without a round trip: 0 throw, 1 move, 2 over."""
        return self._array(states)[:, _PHASE]

    def analyse(self, states: States, agent: str, seed: int = 0, progress: bool | None = None) -> Analysis:
        """Ask a built-in agent (``"greedy"``, ``"mc:100"``, ``"mcts:400,rollout=greedy"``...)
        what it plays at every state (each a decision), with its policy and value.

        The states are searched in parallel on the server's workers; state ``i`` is searched
        by the agent seeded with ``seed + i``, so the answer is reproducible. Each state's
        search is bounded by the server's ``--max-opponent-sims``; a request's, over all its
        states, by ``--max-analyse-sims``: a batch above it is sent in halves (the answer is
        the same), so only a single state above the limits raises
        :class:`~yutenv.errors.LimitExceededError`.

        ``progress``: a bar of the states searched (rate, ETA) on stderr: ``None`` on a terminal
        only, ``True`` always, ``False`` never. With a bar the states go in about 50 requests,
        so that it moves; the answer is the same.
        """
        b, n = self._bytes(states)
        seed = check_seed(seed)

        def one(lo: int, hi: int, rows: bytes) -> dict[str, Any]:
            try:
                r = self._call("analyse", {"states": rows, "agent": str(agent), "seed": (seed + lo) % 2**64})
            except LimitExceededError as e:
                if hi - lo < 2 or "--max-analyse-sims" not in str(e):
                    raise
                mid = (lo + hi) // 2
                cut = (mid - lo) * self.state_size
                return _join([one(lo, mid, rows[:cut]), one(mid, hi, rows[cut:])])
            k = hi - lo
            return {
                "actions": np.frombuffer(r["actions"], dtype="<i4"),
                "policy": np.frombuffer(r["policy"], dtype="<f4").reshape(k, NUM_ACTIONS),
                "value": np.frombuffer(r["value"], dtype="<f4"),
                "values": np.frombuffer(r["values"], dtype="<f4").reshape(k, self.players),
                "agent": str(r["agent"]),
            }

        def searched(first: int, rows: bytes, m: int) -> dict[str, Any]:
            return self._chunks(rows, m, 4 * (NUM_ACTIONS + 2 + self.players), lambda lo, hi, r: one(first + lo, first + hi, r))

        bar = progress_bar(n, f"analyse {agent}", unit="state", show=progress) if n else None
        if bar is None:
            d = searched(0, b, n)
        else:
            k, piece, parts = self.state_size, max(1, -(-n // 50)), []
            try:
                for lo in range(0, n, piece):
                    hi = min(n, lo + piece)
                    parts.append(searched(lo, b[lo * k : hi * k], hi - lo))
                    bar.update(hi - lo)
            finally:
                bar.close()
            d = _join(parts)
        return Analysis(actions=d["actions"], policy=d["policy"], value=d["value"], values=d["values"], agent=d["agent"])

    def _chunks(self, b: bytes, n: int, per_row: int, fn: Callable[[int, int, bytes], _T]) -> _T:
        return in_chunks(b, n, self.state_size, per_row, fn)


class State:
    """One game position: a value backed by the engine's packed bytes.

    ``copy.copy``, ``copy.deepcopy``, :meth:`clone` and pickling clone it; two states are
    equal when their games and bytes are (position, counters and generator). The
    ``apply_*`` methods change the state in place, as in OpenSpiel; :meth:`child` returns a
    new state instead.
    """

    __slots__ = ("game", "_b")
    __hash__ = None  # type: ignore[assignment]  # mutable: hash .packed instead

    def __init__(self, game: Game, packed: bytes) -> None:
        self.game = game
        self._b = packed

    @property
    def packed(self) -> bytes:
        """The packed bytes (hashable: use them as a transposition-table key)."""
        return self._b

    # ---- value semantics -----------------------------------------------------------------

    def clone(self) -> State:
        return State(self.game, self._b)

    __copy__ = clone

    def __deepcopy__(self, memo: dict[int, Any]) -> State:
        return self.clone()

    def __reduce__(self) -> Any:
        return (_restore, (self.game.rules, self._b))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and other._b == self._b and other.game.rules == self.game.rules

    def __repr__(self) -> str:
        try:
            head = f"{self.phase} seat={self.to_move}"
        except BadStateError:
            head = "damaged"
        return f"<yutenv.State {head} {self._b.hex()[:16]}...>"

    def __str__(self) -> str:
        return self.render()

    # ---- read from the bytes -------------------------------------------------------------
    # The few bytes Python reads itself are range-checked here (a State made from bytes the
    # server never saw, e.g. unpickled, may hold anything); the engine checks the rest.

    def _byte(self, offset: int, most: int, what: str) -> int:
        """The byte at ``offset``, which must be at most ``most``, or BadStateError."""
        b = self._b
        if len(b) != self.game.state_size:
            raise BadStateError(
                f"a damaged or forged packed state: {len(b)} bytes, want {self.game.state_size}", code="bad_state"
            )
        if b[offset] > most:
            raise BadStateError(f"a damaged or forged packed state: {what} is {b[offset]}, want 0..{most}", code="bad_state")
        return b[offset]

    @property
    def phase(self) -> str:
        """``"throw"`` (a chance node), ``"move"`` (a decision) or ``"over"``."""
        return PHASES[self._byte(_PHASE, len(PHASES) - 1, "the phase")]

    @property
    def to_move(self) -> int:
        """The seat to throw or move (after the game, the seat that moved last)."""
        return self._byte(_SEAT, self.game.players - 1, "the seat to move")

    def is_chance_node(self) -> bool:
        return self.phase == _THROW

    def is_terminal(self) -> bool:
        return self.phase == _OVER

    def current_player(self) -> int:
        """The seat to move at a decision, CHANCE (-1) at a chance node, TERMINAL (-4) after."""
        ph = self.phase
        return CHANCE if ph == _THROW else TERMINAL if ph == _OVER else self.to_move

    def places(self) -> list[int]:
        """Every seat's final place (1 = first), 0 while it plays."""
        n = self.game.players
        return [self._byte(_PLACE + i, n, f"seat {i}'s place") for i in range(n)]

    def hand(self, seat: int) -> int:
        """Pieces of ``seat`` waiting in hand."""
        if not 0 <= seat < self.game.players:
            _seat_error(seat, self.game.players)
        return self._byte(_HAND + seat, self.game.pieces, f"seat {seat}'s pieces in hand")

    def finished(self, seat: int) -> int:
        """Pieces of ``seat`` that have finished."""
        if not 0 <= seat < self.game.players:
            _seat_error(seat, self.game.players)
        return self._byte(_FINISHED + seat, self.game.pieces, f"seat {seat}'s finished pieces")

    def winner(self) -> int:
        """The seat that finished first, or -1."""
        p = self.places()
        if p.count(1) > 1:
            raise BadStateError(
                f"a damaged or forged packed state: seats {[i for i, x in enumerate(p) if x == 1]} all hold place 1",
                code="bad_state",
            )
        return p.index(1) if 1 in p else -1

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """At a chance node, every throw id with a non-zero probability and that
        probability; otherwise []."""
        if not self.is_chance_node():
            return []
        return [(t, p) for t, p in enumerate(self.game.chance) if p > 0]

    # ---- engine calls --------------------------------------------------------------------

    def _set(self, rows: npt.NDArray[np.uint8]) -> None:
        self._b = rows[0].tobytes()

    def legal_actions_mask(self) -> npt.NDArray[np.int8]:
        """The (180,) legal-action mask."""
        m: npt.NDArray[np.int8] = self.game.legal_masks([self])[0]
        return m

    def legal_actions(self) -> list[int]:
        """The legal action ids, increasing ([] unless the state is a decision)."""
        if self.phase != _MOVE:
            return []
        return [int(a) for a in np.flatnonzero(self.legal_actions_mask())]

    def apply_action(self, action: int) -> None:
        """Play ``action`` for the seat to move (in place). IllegalActionError if it is not
        legal; the state is then unchanged."""
        self._set(self.game.apply_actions([self], [check_action(action, NUM_ACTIONS, "apply_action")]))

    def apply_throw(self, throw: int) -> None:
        """Resolve the chance node with throw id ``throw`` (explicit chance, in place)."""
        t = _int(throw, "apply_throw")
        if not 0 <= t < NUM_THROWS:
            raise ValueError(f"apply_throw: a throw id is 0..{NUM_THROWS - 1} ({', '.join(THROW_NAMES)}), got {t}")
        self._set(self.game.apply_throws([self], [t]))

    def sample_throw(self) -> None:
        """Resolve the chance node by throwing with the state's own generator (in place)."""
        self._set(self.game.apply_throws([self], [-1]))

    def child(self, action: int) -> State:
        """A new state: this one after ``action`` (at a decision) or throw ``action`` (at a
        chance node)."""
        c = self.clone()
        if self.is_chance_node():
            c.apply_throw(action)
        else:
            c.apply_action(action)
        return c

    def returns(self) -> list[float]:
        """Every seat's outcome in [-1, 1] (0 until the game is over)."""
        return [float(x) for x in self.game.returns([self])[0]]

    def observation(self, tier: str = "tactical", seat: int | None = None) -> npt.NDArray[np.float32]:
        """The observation of tier ``tier`` for ``seat`` (default the seat to move; another
        seat once the game is over)."""
        o: npt.NDArray[np.float32] = self.game.observations([self], tier, seat)[0]
        return o

    def _describe(self) -> dict[str, Any]:
        return dict(self.game._call("describe", {"state": self._b}))

    def json(self) -> dict[str, Any]:
        """The documented JSON form of the state (docs/FORMATS.md), as a dict."""
        return dict(json.loads(self._describe()["json"]))

    def position(self) -> dict[str, Any]:
        """The readable position: to_move, phase, pool (by throw id), hand, finished, place,
        stacks; :meth:`Game.state_from_position` accepts it back."""
        return dict(self._describe()["position"])

    def render(self) -> str:
        """The text board."""
        return str(self._describe()["text"])

    def serialize(self) -> bytes:
        """The engine's saved-state blob (rules included; docs/FORMATS.md)."""
        return bytes(self.game._call("state_save", {"state": self._b})["blob"])

    @staticmethod
    def deserialize(blob: bytes) -> State:
        """The state of a saved-state blob, under the rules it names."""
        r = _call("state_load", {"blob": bytes(blob)})
        return State(Game(str(r["rules"])), bytes(r["state"]))


_games: dict[str, Game] = {}


def _restore(rules: str, packed: bytes) -> State:
    g = _games.get(rules)
    if g is None:
        g = _games[rules] = Game(rules)
    return State(g, _upgrade_packed(packed))
