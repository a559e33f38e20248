"""A PettingZoo Parallel env of Yut Nori: every live agent is stepped at once, only the one to move acts.

>>> import numpy as np
>>> from yutenv.pettingzoo_parallel import parallel_env
>>> env = parallel_env(rules="players=3")
>>> observations, infos = env.reset(seed=0)
>>> while env.agents:
...     actions = {a: int(np.flatnonzero(observations[a]["action_mask"])[0]) if infos[a]["acting"] else 0
...                for a in env.agents}
...     observations, rewards, terminations, truncations, infos = env.step(actions)
>>> env.agents
[]
>>> env.close()

Yut Nori is turn-based, and a turn is not a fixed cycle of the seats: a yut or a mo gives the
same seat another throw, a capture another turn. PettingZoo's ``aec_to_parallel`` assumes every
agent acts once per cycle in a fixed order and checks that the AEC env says it may be converted
(``metadata["is_parallelizable"]``); the AEC env :func:`yutenv.pettingzoo.env` says it may not, and
the conversion would fail at the first repeated turn. This module is the Parallel form instead:

* each ``step(actions)`` is one decision of the game: the action of the agent to move
  (``env.agent_selection``; ``infos[agent]["acting"]`` is True for it alone, and every info's
  ``"active_agent"`` names it, None once the game is over) is played, the
  actions of the other agents are ignored and may be left out;
* every live agent gets an observation each step: the agent to move its current decision with
  its legal-action mask, the others their view of the current position from their own seat
  with an all-zero mask (nothing is legal for them), as the AEC env's ``observe`` gives it;
* rewards are those of this step for every agent (the game's outcome when it ends; the shaping
  of ``reward="progress"`` mid-game); when the game ends every agent is terminated (or truncated
  by ``max_decisions``) and ``agents`` becomes empty.

``pettingzoo.utils.parallel_to_aec`` turns this env back into a valid AEC env, and PettingZoo's
``turn_based_aec_to_parallel`` applied to the AEC env gives the same game (both tested).
"""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium
import numpy as np
import numpy.typing as npt
from pettingzoo import ParallelEnv

from ..errors import IllegalActionError
from .pettingzoo import ObsDict, YutAECEnv

__all__ = ["YutParallelEnv", "parallel_env"]


class YutParallelEnv(ParallelEnv[str, ObsDict, int]):  # type: ignore[misc]
    """Yut Nori with every seat external, in PettingZoo's Parallel API.

    Arguments are those of :class:`yutenv.pettingzoo.YutAECEnv` (``rules``, ``tier``,
    ``render_mode``, ``illegal``, ``max_decisions``, ``reward``, ``address``, ``token``,
    ``server``, ``timeout``); the game is played by one such AEC env, ``self.aec``.
    """

    metadata: dict[str, Any] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "render_fps": 4,
        "name": "yut_parallel_v0",
    }

    def __init__(self, **kwargs: Any) -> None:
        self.aec = YutAECEnv(**kwargs)
        self.render_mode = self.aec.render_mode
        self.possible_agents: list[str] = list(self.aec.possible_agents)
        self.agents: list[str] = []
        self.observation_spaces = dict(self.aec.observation_spaces)
        self.action_spaces = dict(self.aec.action_spaces)
        self.rules = self.aec.rules
        self.players = self.aec.players

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    @property
    def agent_selection(self) -> str:
        """The agent whose action the next ``step`` plays."""
        return str(self.aec.agent_selection)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, ObsDict], dict[str, dict[str, Any]]]:
        """Start a new game (``seed`` and ``options`` as for the AEC env's ``reset``)."""
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.aec.agents)
        return self._observations(), self._infos()

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[dict[str, ObsDict], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        """Play the action of the agent to move; the other agents' actions are ignored."""
        if not self.agents:
            raise IllegalActionError("step: the game is over (or not started); call reset()", method="step")
        actor = self.agent_selection
        if actor not in actions:
            raise IllegalActionError(f"step: no action for {actor}, the agent to move", method="step")
        live = self.agents
        self.aec.step(actions[actor])
        observations = {a: self.aec.observe(a) for a in live}
        rewards = {a: float(self.aec.rewards[a]) for a in live}
        terminations = {a: bool(self.aec.terminations[a]) for a in live}
        truncations = {a: bool(self.aec.truncations[a]) for a in live}
        self.agents = [a for a in live if not (terminations[a] or truncations[a])]
        infos = self._infos(live)
        return observations, rewards, terminations, truncations, infos

    def _observations(self) -> dict[str, ObsDict]:
        return {a: self.aec.observe(a) for a in self.agents}

    def _infos(self, agents: list[str] | None = None) -> dict[str, dict[str, Any]]:
        actor = self.aec.agent_selection if self.agents else None  # nobody acts once the game is over
        out: dict[str, dict[str, Any]] = {}
        for a in self.agents if agents is None else agents:
            info = dict(self.aec.infos.get(a, {}))
            info["acting"] = a == actor
            info["active_agent"] = actor  # as PettingZoo's turn_based_aec_to_parallel names it
            out[a] = info
        return out

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        """The position: text (``"ansi"``) or a (480, 720, 3) uint8 image (``"rgb_array"``); None
        in ``"human"`` mode, where reset and step print the board (each step is one AEC step)."""
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()

    def state(self) -> Any:
        raise NotImplementedError("yutenv: no global state array; use each agent's observation")


def parallel_env(**kwargs: Any) -> YutParallelEnv:
    """The Parallel env (see :class:`YutParallelEnv` for the arguments)."""
    return YutParallelEnv(**kwargs)
