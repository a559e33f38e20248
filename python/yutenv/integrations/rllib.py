"""RLlib (new API stack): Yut Nori envs with action masks, registered under names a config can use.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    import yutenv.rllib
    from ray.rllib.algorithms.ppo import PPOConfig
    yutenv.rllib.register()                       # "yutenv" and "yutenv-multi"
    config = (
        PPOConfig()
        .environment("yutenv", env_config={"opponent": "greedy", "seat": "random"})
        .rl_module(rl_module_spec=yutenv.rllib.module_spec())
    )
    algo = config.build_algo()
    algo.train()

Two envs:

* ``"yutenv"`` (:class:`YutRLlibEnv`): one learner against the server's built-in ``opponent``
  (a :class:`~yutenv.YutEnv` underneath; ``env_config`` takes its keyword arguments). With
  ``config.env_runners(gym_env_vectorize_mode="vector_entry_point")`` each env runner's
  ``num_envs_per_env_runner`` games are one server-side batch instead
  (:class:`YutRLlibVectorEnv`, one round trip per step for all of them).
* ``"yutenv-multi"`` (:class:`YutRLlibMultiEnv`): a ``MultiAgentEnv`` in which every seat is an
  agent (``player_0`` ..): self-play when the agents map to one policy. It is turn-based, as
  RLlib's turn-based examples: each step returns an observation only for the agent to move
  next (a yut, a mo or a capture gives the same agent another decision), rewards for every
  agent that has played, and at the end of the game every agent that played gets its last
  observation and ``terminateds["__all__"]`` is True.

Observations are RLlib's action-masking form: ``{"action_mask": float32[180] of 0/1,
"observations": float32[D]}``, which the ``ActionMaskingTorchRLModule`` of RLlib's examples
expects (it masks the logits of illegal actions and feeds ``observations`` to the network);
:func:`module_spec` builds that module's spec.

Illegal actions are penalised by default (``illegal="penalty"``: the episode ends with -1 for
the actor), because RLlib's env checker steps the multi-agent env with unmasked random
actions; pass ``illegal="error"`` in ``env_config`` to have them raise instead.

Env runners are separate processes; each one's envs start the bundled server of that process
by themselves (as every yutenv env does), so no server address needs to be passed around.
This module needs the ``rllib`` extra (``pip install 'yutenv[rllib]'``); ``import yutenv``
does not import it.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence, cast

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from .._extras import import_extra

import_extra("ray.rllib", "rllib", "yutenv.rllib")
from ray.rllib.env.multi_agent_env import MultiAgentEnv  # noqa: E402

from .._protocol import NUM_ACTIONS
from ..envs._gym import AutoresetMode
from ..envs.gym_env import YutEnv
from ..envs.pettingzoo import YutAECEnv
from ..envs.vector import YutVectorEnv

__all__ = ["ENV_NAME", "MULTI_ENV_NAME", "YutRLlibEnv", "YutRLlibMultiEnv", "YutRLlibVectorEnv", "module_spec", "register"]

#: The RLlib env name of :class:`YutRLlibEnv` (one learner against the server's opponent).
ENV_NAME = "yutenv"
#: The RLlib env name of :class:`YutRLlibMultiEnv` (every seat an agent).
MULTI_ENV_NAME = "yutenv-multi"

MaskedObs = dict[str, npt.NDArray[np.float32]]

# YutEnv arguments that the RLlib envs set themselves.
_OWN = ("obs_type",)


def _mask_space() -> spaces.Box:
    return spaces.Box(0.0, 1.0, shape=(NUM_ACTIONS,), dtype=np.float32)


def _masked(obs: npt.NDArray[np.float32], mask: npt.NDArray[Any]) -> MaskedObs:
    return {"action_mask": mask.astype(np.float32), "observations": np.array(obs, dtype=np.float32)}


def _info(info: Mapping[str, Any]) -> dict[str, Any]:
    # The mask is in the observation already. Seeds are uniform over 2**64: as a Python int one
    # >= 2**63 would overflow the int64 array Gymnasium's vector envs collect infos into.
    out = {k: v for k, v in info.items() if k != "action_mask"}
    if "seed" in out:
        out["seed"] = np.uint64(out["seed"])
    return out


def _config(config: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    # RLlib passes an EnvContext: a dict of env_config (worker_index etc. are attributes).
    cfg = {**dict(config or {}), **kwargs}
    # RLlib checks a multi-agent env by stepping it with unmasked random actions: an illegal
    # action ends the episode with -1 for the actor instead of raising (the masked module
    # never plays one). Pass illegal="error" to have them raise.
    cfg.setdefault("illegal", "penalty")
    for k in _OWN:
        if k in cfg:
            raise ValueError(f"yutenv.rllib: {k!r} is set by the RLlib env itself")
    return cfg


class YutRLlibEnv(gymnasium.Env[MaskedObs, np.int64]):
    """One learner against the server's opponents, with RLlib's masked observations.

    ``config`` (RLlib's ``env_config``) and keyword arguments are those of
    :class:`~yutenv.YutEnv` except ``obs_type``: ``rules``, ``opponent``, ``seat``, ``tier``,
    ``max_decisions``, ``reward``, ``illegal``, ``render_mode``, ``address``, ... The
    underlying env is ``self.env``.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"]}

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        self.env = YutEnv(**_config(config, kwargs))
        self.render_mode = self.env.render_mode
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = cast(
            "spaces.Space[MaskedObs]",
            spaces.Dict({"action_mask": _mask_space(), "observations": self.env.observation_space}),
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[MaskedObs, dict[str, Any]]:
        super().reset(seed=seed)
        obs, info = self.env.reset(seed=seed, options=options)
        assert isinstance(obs, np.ndarray)
        return _masked(obs, info["action_mask"]), _info(info)

    def step(self, action: Any) -> tuple[MaskedObs, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        assert isinstance(obs, np.ndarray)
        return _masked(obs, info["action_mask"]), float(reward), terminated, truncated, _info(info)

    def action_masks(self) -> npt.NDArray[np.bool_]:
        return self.env.action_masks()

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


class YutRLlibVectorEnv(gymnasium.vector.VectorEnv[MaskedObs, npt.NDArray[Any], npt.NDArray[Any]]):
    """``num_envs`` games of :class:`YutRLlibEnv` as one server-side batch: one round trip per step.

    What an env runner builds with ``config.env_runners(gym_env_vectorize_mode="vector_entry_point",
    num_envs_per_env_runner=N)``: RLlib then calls the registered creator with ``num_envs`` in
    the config. Autoreset is Gymnasium's ``NEXT_STEP``, as RLlib's env runners expect. Other
    arguments as :class:`YutRLlibEnv`; the underlying :class:`~yutenv.YutVectorEnv` is ``self.venv``.
    """

    def __init__(self, num_envs: int, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        self.venv = YutVectorEnv(int(num_envs), autoreset_mode=AutoresetMode.NEXT_STEP, **_config(config, kwargs))
        self.num_envs = self.venv.num_envs
        self.metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": self.venv.metadata["render_modes"]}
        self.render_mode = self.venv.render_mode
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = spaces.Dict(
            {"action_mask": _mask_space(), "observations": self.venv.single_observation_space}
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[MaskedObs, dict[str, Any]]:
        obs, infos = self.venv.reset(seed=seed, options=options)
        return _masked(obs, infos["action_mask"]), _vinfos(infos)

    def step(
        self, actions: Any
    ) -> tuple[MaskedObs, npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        obs, reward, terminated, truncated, infos = self.venv.step(np.asarray(actions).astype(np.int64, copy=False))
        return _masked(obs, infos["action_mask"]), reward.copy(), terminated.copy(), truncated.copy(), _vinfos(infos)

    def render(self) -> Any:
        return self.venv.render()

    def close_extras(self, **kwargs: Any) -> None:
        self.venv.close()


def _vinfos(infos: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in infos.items() if k not in ("action_mask", "_action_mask")}


class YutRLlibMultiEnv(MultiAgentEnv):  # type: ignore[misc]
    """Every seat an agent, turn-based (see the module doc); RLlib's masked observations.

    ``config`` (RLlib's ``env_config``) and keyword arguments are those of
    :class:`yutenv.pettingzoo.YutAECEnv`: ``rules`` (``players`` sets the number of agents),
    ``tier``, ``max_decisions``, ``reward``, ``illegal``, ``address``, ... The game is played
    by that AEC env, ``self.aec``.
    """

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__()
        self.aec = YutAECEnv(**_config(config, kwargs))
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = list(self.possible_agents)
        inner = self.aec.observation_space(self.possible_agents[0])
        assert isinstance(inner, spaces.Dict)
        space = spaces.Dict({"action_mask": _mask_space(), "observations": inner["observation"]})
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces: dict[str, gymnasium.spaces.Space[Any]] = {
            a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents
        }
        self._played: list[str] = []  # agents that received an observation this episode, in order

    def _obs(self, agent: str) -> MaskedObs:
        o = self.aec.observe(agent)
        return _masked(o["observation"], o["action_mask"])

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, MaskedObs], dict[str, Any]]:
        self.aec.reset(seed=seed, options=options)
        actor = str(self.aec.agent_selection)
        self._played = [actor]
        return {actor: self._obs(actor)}, {actor: {}}

    def step(
        self, action_dict: Mapping[str, Any]
    ) -> tuple[dict[str, MaskedObs], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        actor = str(self.aec.agent_selection)
        if actor not in action_dict:
            raise KeyError(f"yutenv-multi: no action for {actor}, the agent to move (got {sorted(action_dict)})")
        self.aec.step(int(action_dict[actor]))
        rewards = {a: float(self.aec.rewards[a]) for a in self._played}
        terminated = all(self.aec.terminations.values())
        truncated = not terminated and all(self.aec.truncations.values())
        if terminated or truncated:
            obs = {a: self._obs(a) for a in self._played}
            return obs, rewards, {"__all__": terminated}, {"__all__": truncated}, {}
        nxt = str(self.aec.agent_selection)
        if nxt not in self._played:
            self._played.append(nxt)
        return {nxt: self._obs(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}

    def render(self) -> Any:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()


def _make_single(config: Mapping[str, Any]) -> YutRLlibEnv | YutRLlibVectorEnv:
    cfg = dict(config)
    if "num_envs" in cfg:  # gym_env_vectorize_mode="vector_entry_point": one batch of N games
        return YutRLlibVectorEnv(cfg.pop("num_envs"), cfg)
    return YutRLlibEnv(cfg)


def _make_multi(config: Mapping[str, Any]) -> YutRLlibMultiEnv:
    return YutRLlibMultiEnv(config)


def register(name: str = ENV_NAME, multi_name: str = MULTI_ENV_NAME) -> None:
    """Register the single-agent env as ``name`` and the multi-agent one as ``multi_name`` with
    ``ray.tune.registry.register_env``, so that ``config.environment(name, env_config=...)``
    builds it in every env runner."""
    from ray.tune.registry import register_env

    register_env(name, _make_single)
    register_env(multi_name, _make_multi)


def module_spec(hiddens: Sequence[int] = (256, 256), **model_config: Any) -> Any:
    """An ``RLModuleSpec`` of RLlib's ``ActionMaskingTorchRLModule`` (PPO-style actor and critic
    over ``observations``, illegal actions' logits masked) with hidden layers ``hiddens``;
    extra keyword arguments go to its ``model_config``. For the multi-agent env, wrap it:
    ``MultiRLModuleSpec(rl_module_specs={"shared": module_spec()})``."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    cfg = {"head_fcnet_hiddens": list(hiddens), "fcnet_hiddens": list(hiddens), **model_config}
    return RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=cfg)
