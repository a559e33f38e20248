"""Yut Nori as an OpenSpiel game (``pip install 'yutenv[openspiel]'``).

Importing this module registers ``python_yutenv`` with ``pyspiel``: a sequential,
perfect-information game with explicit chance nodes (the six throws and their
probabilities), backed by :class:`yutenv.State`. OpenSpiel's own tools work on it::

    import pyspiel
    import yutenv.openspiel

    game = pyspiel.load_game("python_yutenv")                          # standard rules
    game = pyspiel.load_game("python_yutenv", {"rules": "players=3,end=rank"})
    pyspiel.random_sim_test(game, num_sims=5, serialize=False, verbose=False)

Actions are yutenv's 180 ids (throw*30 + source); chance outcomes are the throw ids 0..5.
``returns()`` are the engine's outcomes in [-1, 1]. Every state operation is a call to
the yutenv server, so Python algorithms run at Python-game speed (OpenSpiel's note on
Python games applies); ``yutenv.Game``'s batched calls are the fast path.

``observation_tensor(player)`` is that seat's observation of the observation tier given
by the game parameter ``tier`` (default ``"compact"``; ``"tactical"`` and ``"planes"``
too, docs/OBSERVATIONS.md), a float32 vector of shape ``[game.yut.obs_size[tier]]``. It
is defined at chance and terminal states and for a seat that is not to move. The game is
perfect information, so ``information_state_tensor(player)`` is the same vector (the
position is all there is to know; the history adds nothing).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._extras import import_extra

import_extra("pyspiel", "openspiel", "yutenv.openspiel")
import pyspiel  # noqa: E402

from .._protocol import ENTER_SOURCE, NUM_SOURCES, NUM_THROWS, RULE_OPTIONS, THROW_NAMES
from ..errors import InvalidArgumentError
from ..positions.state import CHANCE, TERMINAL, Game, State

__all__ = ["DEFAULT_TIER", "GAME_NAME", "YutSpielGame", "YutSpielState", "load_game"]

#: The short name the game is registered under with OpenSpiel (``pyspiel.load_game(GAME_NAME)``).
GAME_NAME = "python_yutenv"

#: a bound for OpenSpiel's GameInfo; the rules bound no game's length, and a game
#: of random play in the standard rules takes a few hundred steps.
MAX_GAME_LENGTH = 100_000

#: the observation tier of the tensors when the game parameter ``tier`` is not given.
DEFAULT_TIER = "compact"

#: the rules' bounds on the number of seats (the range of the ``players`` option).
_MIN_PLAYERS, _MAX_PLAYERS = next(
    (int(o.min), int(o.max)) for o in RULE_OPTIONS if o.key == "players" and o.min is not None and o.max is not None
)


def _game_type(zero_sum: bool) -> Any:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Yut Nori (yutenv)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=_MAX_PLAYERS,
        min_num_players=_MIN_PLAYERS,
        provides_information_state_string=False,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={"rules": "standard", "tier": DEFAULT_TIER},
    )


_GAME_TYPE = _game_type(True)


class YutSpielGame(pyspiel.Game):  # type: ignore[misc]
    """The OpenSpiel game; parameter ``rules`` is a yutenv rules string, ``tier`` the
    observation tier of the observation and information-state tensors."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.yut = Game(str(params.get("rules", "standard")))
        self.tier = str(params.get("tier", DEFAULT_TIER))
        if self.tier not in self.yut.obs_size:
            raise InvalidArgumentError(
                f"{GAME_NAME}: tier {self.tier!r} is not one of {', '.join(self.yut.obs_size)}",
                code="bad_request",
            )
        # Outcomes sum to 0 with two seats, and under end=rank (places spread evenly
        # from +1 to -1); under end=first with more seats every loser gets -1.
        zero_sum = self.yut.players == 2 or "end=rank" in self.yut.rules
        info = pyspiel.GameInfo(
            num_distinct_actions=self.yut.num_actions,
            max_chance_outcomes=NUM_THROWS,
            num_players=self.yut.players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0 if zero_sum else None,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(_game_type(zero_sum), info, params)

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        # By its parameters, not pyspiel's game string: that string cannot carry a rules
        # value with commas ("players=3,end=rank"), and pyspiel's own unpickling makes a
        # game without this class's attributes. AlphaZero's driver pickles the game into
        # its actor processes.
        return (YutSpielGame, (dict(self.get_parameters()),))

    def new_initial_state(self, seed: int = 0) -> YutSpielState:
        """The initial state, first seat 0 (a chance node)."""
        return YutSpielState(self, self.yut.new_initial_state(seed=seed, start=0))

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> _Observer:
        """The observer behind the observation and information-state tensors and strings
        (the same for both: perfect information)."""
        return _Observer(self.tier, self.yut.obs_size[self.tier], params)


class YutSpielState(pyspiel.State):  # type: ignore[misc]
    """An OpenSpiel state holding a :class:`yutenv.State`."""

    def __init__(self, game: YutSpielGame, state: State) -> None:
        super().__init__(game)
        self.yut = state
        self._legal: list[int] | None = None

    def current_player(self) -> int:
        p = self.yut.current_player()
        if p == CHANCE:
            return int(pyspiel.PlayerId.CHANCE)
        if p == TERMINAL:
            return int(pyspiel.PlayerId.TERMINAL)
        return p

    def _legal_actions(self, player: int) -> list[int]:
        if self._legal is None:
            self._legal = self.yut.legal_actions()
        return list(self._legal)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self.yut.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        if self.yut.is_chance_node():
            self.yut.apply_throw(int(action))
        else:
            self.yut.apply_action(int(action))
        self._legal = None

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return THROW_NAMES[action]
        throw, src = divmod(action, NUM_SOURCES)
        return f"{THROW_NAMES[throw]}@{'enter' if src == ENTER_SOURCE else src}"

    def is_terminal(self) -> bool:
        return self.yut.is_terminal()

    def returns(self) -> list[float]:
        if not self.yut.is_terminal():
            return [0.0] * self.yut.game.players
        return self.yut.returns()

    def __str__(self) -> str:
        return self.yut.render()

    def __getstate__(self) -> Any:
        return {"yut": self.yut}

    def __setstate__(self, d: Any) -> None:
        self.yut = d["yut"]
        self._legal = None


class _Observer:
    """A seat's observation of one tier as the tensor; the board as text (the same for
    every seat)."""

    def __init__(self, tier: str, size: int, params: Any) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        self.tier = tier
        self.tensor = np.zeros(size, np.float32)
        self.dict: dict[str, Any] = {"observation": self.tensor}

    def set_from(self, state: YutSpielState, player: int) -> None:
        # One round trip; any seat, at chance and terminal states too.
        self.tensor[:] = state.yut.observation(self.tier, seat=player)

    def string_from(self, state: YutSpielState, player: int) -> str:
        return state.yut.render()


pyspiel.register_game(_GAME_TYPE, YutSpielGame)


def load_game(rules: str = "standard", tier: str = DEFAULT_TIER) -> YutSpielGame:
    """``pyspiel.load_game("python_yutenv", {"rules": rules, "tier": tier})``."""
    g: YutSpielGame = pyspiel.load_game(GAME_NAME, {"rules": rules, "tier": tier})
    return g
