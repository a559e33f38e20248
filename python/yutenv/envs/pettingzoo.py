"""A PettingZoo AEC env: every seat of a Yut Nori game is an external agent.

>>> import numpy as np
>>> from yutenv.pettingzoo import env
>>> e = env(rules="players=3")
>>> e.reset(seed=0)
>>> for agent in e.agent_iter():
...     obs, reward, terminated, truncated, info = e.last()
...     action = None if terminated or truncated else int(np.flatnonzero(obs["action_mask"])[0])
...     e.step(action)
>>> e.agents                                    # the game is over
[]
>>> e.close()

Agents are ``player_0`` .. ``player_{P-1}`` (seat order). ``agent_selection`` is the
seat the server says is to move, so the same agent is selected again after a yut,
a mo or a capture (repeated turns): never assume agents alternate.

Observations are ``{"observation": float32[D], "action_mask": int8[180]}``.
``observe(agent)`` returns that agent's real current view of the game (seat-relative, from
its own chair; the server's ``observe`` method) and a mask that is all zero exactly when
the agent cannot act (it is not its decision). When the game ends, every agent sees the
final position, gets its reward (+1 / -1 with two seats; places spread from +1 to -1 under
``end=rank``) and is terminated.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .._wire.client import SINGLE_ENV_SPIN
from ..errors import ClosedError, IllegalActionError, ResetNeeded
from .batch import check_action, check_seed, open_batch
from .config import HUMAN_RENDER_MODES, EnvConfig
from .frontend import HumanRender, NotCopyable, mask_box, obs_box, render_frame
from .shared import DEFAULT_SPIN_US

__all__ = ["env", "raw_env", "YutAECEnv"]

_RESET_OPTIONS = ("start",)
SINGLE_AGENT_OPTIONS = ("opponent", "seat", "info")
"""The options of :class:`~yutenv.EnvConfig` only the single-agent front ends use: every seat is an
agent here, and the AEC env refuses them as keyword arguments."""
ObsDict = dict[str, npt.NDArray[Any]]
_DEFAULTS = EnvConfig()


class YutAECEnv(NotCopyable, AECEnv[str, ObsDict, int]):  # type: ignore[misc]
    """Yut Nori with every seat external (protocol ``mode: "multi"``).

    Args:
        config: an :class:`~yutenv.EnvConfig`; keyword arguments replace its fields (or build
            one): ``rules`` (``players`` sets the number of agents), ``tier``, ``render_mode``
            (``"ansi"`` or ``"rgb_array"``), ``illegal``, ``max_decisions`` (in total, all
            seats), ``reward``, ``address``, ``token``, ``server``, ``timeout``. With
            ``illegal="penalty"`` an illegal action ends the game: -1 for the actor, 0 for the
            others, ``infos[actor]["illegal"] = True``. ``opponent``, ``seat`` and ``info``
            are refused as keyword arguments (every seat is an agent here); a ``config``
            shared with the single-agent front ends may carry them, and they are not used.
            Observations are always dicts.

    The AEC env cannot be pickled or deep-copied (it says what to do instead);
    :meth:`save_state` / :meth:`load_state` move a game between envs.
    """

    metadata: dict[str, Any] = {
        "render_modes": list(HUMAN_RENDER_MODES),
        "render_fps": 4,
        "name": "yut_v0",
        "is_parallelizable": False,
    }
    _not_copyable = (
        "the yutenv AEC env cannot be pickled or copied: its game lives in a server session. "
        "Make a new env where you need it (yutenv.pettingzoo.env(config=e.config)) and move the "
        "game with e.save_state() / new.load_state(state)"
    )

    def __init__(self, config: EnvConfig | None = None, **options: Any) -> None:
        super().__init__()
        cfg = EnvConfig.build(config, **options)  # a bad value of any option: its own error first
        single = SINGLE_AGENT_OPTIONS
        for name in single:
            if name in options and options[name] != getattr(_DEFAULTS, name):
                raise ValueError(f"the AEC env has no {name!r} option: every seat is an agent")
        self.config = cfg = dataclasses.replace(cfg, **{name: getattr(_DEFAULTS, name) for name in single})
        self.render_mode = cfg.render_mode
        self._human = HumanRender(self.metadata["render_fps"]) if cfg.render_mode == "human" else None
        self.illegal = cfg.illegal
        # one env per round trip: poll for the reply, do not sleep
        self._batch = open_batch(1, cfg, "multi", "next_step", spin=SINGLE_ENV_SPIN, spin_us=DEFAULT_SPIN_US)
        self._session = self._batch.session
        self.rules: str = str(self._batch.made["rules"])
        self.players = self._batch.players
        self.possible_agents = [f"player_{i}" for i in range(self.players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.num_actions: int = self._batch.actions
        space = spaces.Dict({"observation": obs_box(self._batch.obs_space_info), "action_mask": mask_box(self.num_actions)})
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces: dict[str, gymnasium.spaces.Space[Any]] = {
            a: spaces.Discrete(self.num_actions) for a in self.possible_agents
        }
        d = self._batch.obs_size
        self._zero_obs = np.zeros(d, dtype=np.float32)
        self._zero_mask = np.zeros(self.num_actions, dtype=np.int8)
        self._obs: list[npt.NDArray[np.float32]] = [self._zero_obs] * self.players
        self._mask: npt.NDArray[np.int8] = self._zero_mask
        self._to_move = -1
        self.game_seed: int | None = None
        self.closed = False
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game. ``seed`` seeds the game (the engine's ``env.New(rules, seed)``);
        without one, a seed is drawn from an internal generator seeded by the last seed given.
        ``options``: ``start`` (the seat that begins; None draws it from the seed); other
        keys are ignored with a warning.
        """
        if self.closed:
            raise ClosedError("reset: the env is closed")
        if seed is not None:
            game_seed = check_seed(seed)
            self._np_random = np.random.default_rng(game_seed)
        else:
            if getattr(self, "_np_random", None) is None:
                self._np_random = np.random.default_rng()
            game_seed = int(self._np_random.integers(0, 2**64, dtype=np.uint64))
        opts: dict[str, Any] | None = None
        if options:
            unknown = set(options) - set(_RESET_OPTIONS)
            if unknown:
                warnings.warn(
                    f"yutenv: ignoring unknown reset options {sorted(unknown)}; known: {list(_RESET_OPTIONS)}", stacklevel=2
                )
            opts = {k: v for k, v in options.items() if k in _RESET_OPTIONS} or None
        r = self._batch.reset(game_seed, opts)
        self.game_seed = r.seeds[0]
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._obs = [self._zero_obs] * self.players
        self._set_decision(r.obs[0], r.mask[0], int(r.to_move[0]))
        self._skip_agent_selection = None
        if self._human is not None:
            self._human.show(self._batch)

    def _set_decision(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8], to_move: int) -> None:
        self._obs[to_move] = obs
        self._mask = mask
        self._to_move = to_move
        self.agent_selection = self.possible_agents[to_move]

    def observe(self, agent: str) -> ObsDict:
        seat = self.agent_name_mapping[agent]
        if seat == self._to_move:  # the last row is this seat's view: no round trip
            return {"observation": self._obs[seat], "action_mask": self._mask}
        obs, mask = self._batch.observe(seat)
        return {"observation": obs[0], "action_mask": mask[0]}

    def step(self, action: Any) -> None:
        if self.closed:
            raise ClosedError("step: the env is closed")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent}: None is not an action (only dead agents step with None)", method="step")
        a = check_action(action, self.num_actions, agent)
        was_legal = bool(self._mask[a])
        self._cumulative_rewards[agent] = 0.0
        r = self._batch.step_one(a)
        for ag in self.agents:
            self.infos[ag] = {}
        if not was_legal:
            self.infos[agent]["illegal"] = True
        terminated = bool(r.terminated[0])
        truncated = bool(r.truncated[0])
        row = r.reward[0]  # every seat's reward for this step (non-zero mid-game with reward="progress")
        for ag in self.agents:
            self.rewards[ag] = float(row[self.agent_name_mapping[ag]])
            if terminated or truncated:
                self.terminations[ag] = terminated
                self.truncations[ag] = truncated and not terminated
        self._set_decision(r.obs[0], r.mask[0], int(r.to_move[0]))
        self._accumulate_rewards()
        if self._human is not None:
            self._human.show(self._batch)

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        """The position: text (``"ansi"``) or a (480, 720, 3) uint8 image (``"rgb_array"``); None
        in ``"human"`` mode, where reset and step print the board."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.game_seed is None:
            raise ResetNeeded("render: call reset() first")
        if self.render_mode == "human":
            return None  # reset and step print the board
        return render_frame(self._batch, self.render_mode, 0)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self._batch.close()
        finally:
            self._session.close()

    def action_mask(self) -> npt.NDArray[np.bool_]:
        """The legal-action mask of the agent to move, bool[180]."""
        return self._mask.view(np.bool_)

    def save_state(self) -> bytes:
        """The engine's binary blob of the game (see :meth:`yutenv.YutEnv.save_state`)."""
        if self.closed:
            raise ClosedError("save_state: the env is closed")
        if self.game_seed is None:
            raise ResetNeeded("save_state: call reset() first")
        return self._batch.save(0)

    def load_state(self, state: bytes) -> None:
        """Replace the game by a state from :meth:`save_state` (same rules), as a new episode
        from that position: rewards and cumulative rewards 0, every agent live and the one to
        move selected; if the loaded game is over every agent is terminated. Call
        :meth:`reset` first. Raises :class:`~yutenv.BadStateError` for a damaged state or one
        of other rules (nothing changes then)."""
        if self.closed:
            raise ClosedError("load_state: the env is closed")
        if self.game_seed is None:
            raise ResetNeeded("load_state: call reset() first")
        r = self._batch.load(0, state)
        over = not r["mask"].any()
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: over for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._obs = [self._zero_obs] * self.players
        self._set_decision(r["obs"][0], r["mask"][0], int(r["to_move"][0]))
        self._skip_agent_selection = None


def raw_env(config: EnvConfig | None = None, **kwargs: Any) -> YutAECEnv:
    """The bare AEC env (see :class:`YutAECEnv` for the arguments)."""
    return YutAECEnv(config, **kwargs)


def env(config: EnvConfig | None = None, **kwargs: Any) -> AECEnv[str, ObsDict, int]:
    """The AEC env with PettingZoo's standard wrappers: out-of-bounds actions are refused and
    the API order (reset before step, ...) is enforced."""
    e: AECEnv[str, ObsDict, int] = YutAECEnv(config, **kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e
