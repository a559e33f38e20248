"""Tianshou 2.x: a vector env over one server-side batch, masked observations, PettingZoo self-play.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net
    import yutenv.integrations.tianshou

    train = yutenv.integrations.tianshou.YutTianshouVectorEnv(64, opponent="random", seat="random")
    test = yutenv.integrations.tianshou.YutTianshouVectorEnv(16, opponent="random", seat="random")
    net = Net(state_shape=train.obs_size, action_shape=yutenv.NUM_ACTIONS, hidden_sizes=[256, 256])
    policy = DiscreteQLearningPolicy(model=net, action_space=train.single_action_space, eps_training=0.1)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), target_update_freq=320)
    dqn.run_training(OffPolicyTrainerParams(
        training_collector=Collector(dqn, train, VectorReplayBuffer(100_000, 64), exploration_noise=True),
        test_collector=Collector(dqn, test), max_epochs=10, epoch_num_steps=50_000,
        collection_step_num_env_steps=640, test_step_num_episodes=64, batch_size=256))
    yutenv.evaluate(yutenv.integrations.tianshou.policy_fn(policy), rating=True)

:class:`YutTianshouVectorEnv` is a Tianshou ``BaseVectorEnv`` backed by one
:class:`~yutenv.YutVectorEnv` (one server batch, one round trip per step for every env), where
Tianshou's ``DummyVectorEnv``/``SubprocVectorEnv`` of :func:`gym_env` make one round trip per env
(and one process per env). It follows Tianshou's conventions:

* observations are Tianshou's masked form, a ``Batch`` with ``obs`` (float32 ``[R, D]``) and
  ``mask`` (bool ``[R, 180]``, True where the action is legal), which ``DiscreteQLearningPolicy``
  (DQN and its kin), ``MultiAgentPolicy`` and Tianshou's masked random policy read;
* no autoreset on Tianshou's side: the step that ends an episode returns its last observation
  (``terminated``/``truncated`` set), and the caller resets the env with ``reset(env_id=...)``;
* ``reset(env_id=None)`` resets every env (the seed given to ``seed(s)`` or ``reset(seed=s)``:
  env ``i`` plays the game seed ``s + i``, as ``YutVectorEnv.reset(seed=s)``); ``step(action, id)``
  steps the envs ``id`` (all by default) with ``action[k]`` for env ``id[k]``, and row ``k`` of
  what it returns is env ``id[k]``'s; infos are an object array of empty dicts.

How the server batch serves Tianshou's per-env calls. The server steps every env of a batch at
once and resets them all at once or, with same-step autoreset, each one in the step that ends its
episode. So:

* an env's episode ends in a step: the server has already begun its next episode (same-step
  autoreset). The door returns the ended episode's last observation and keeps the next one's
  first; ``reset(env_id=[i])`` returns it without a round trip. The games are therefore the ones
  a ``YutVectorEnv`` with ``AutoresetMode.SAME_STEP`` plays from the same seeds and actions.
* ``reset(env_id=ids)`` of envs that have not ended is a full reset when ``ids`` is every env, and
  otherwise refused (:class:`~yutenv.UnsupportedError`, nothing changed): the batch cannot restart
  one game in the middle. Tianshou's ``Collector`` resets only envs whose episode ended, or all.
* ``step(action, id)`` with some envs left out (Tianshou's ``Collector`` does so near the end of
  ``collect(n_episode=...)``, for envs it no longer needs) still steps them on the server, with
  their first legal action; they are then *parked*: stepping or resetting one alone raises
  :class:`~yutenv.ResetNeeded` until a full ``reset()``, which the ``Collector`` makes at the end
  of such a collect.
* a ``truncated`` episode's last observation has a mask of every action (the game is not over:
  Tianshou bootstraps a truncated episode from it, and a mask of no action would make the
  bootstrap's maximum meaningless); a ``terminated`` one's mask is all False.

Bad input raises before anything is sent, and the env stays usable: an action outside the mask
(unless ``illegal="penalty"``, where the server ends the episode with -1) or 0..179 is
:class:`~yutenv.IllegalActionError` (a ``ValueError``), actions of the wrong number
or env ids that are not 0..N-1 once each a ``ValueError``, actions of a non-integer dtype a
``TypeError``. A closed env raises :class:`YutClosedError` (a :class:`~yutenv.ClosedError` and
the ``AssertionError`` Tianshou's own vector envs raise after ``close()``); a server that died,
:class:`~yutenv.ServerDiedError`.

Also here: :func:`gym_env`, one :class:`~yutenv.YutEnv` with the masked observations, for
Tianshou's own vector envs; :func:`pettingzoo_env`, the AEC env in Tianshou's ``PettingZooEnv``
for multi-agent self-play (``MultiAgentOffPolicyAlgorithm``); :func:`policy_fn`, a Tianshou
policy as the ``(obs, mask) -> actions`` callable :func:`yutenv.evaluate` rates.

This module needs the ``tianshou`` extra (``pip install 'yutenv[tianshou]'``); ``import yutenv``
does not import it.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from .._extras import import_extra

import_extra("tianshou", "tianshou", "yutenv.integrations.tianshou")
from tianshou.data import Batch  # noqa: E402
from tianshou.env import BaseVectorEnv, PettingZooEnv  # noqa: E402

from ..envs import pettingzoo as _pettingzoo
from ..envs._gym import AutoresetMode
from ..envs.config import EnvConfig
from ..envs.gym_env import YutEnv
from ..envs.vector import YutVectorEnv
from ..errors import ClosedError, IllegalActionError, ResetNeeded, UnsupportedError

__all__ = ["YutClosedError", "YutTianshouVectorEnv", "gym_env", "pettingzoo_env", "policy_fn"]

# Where each env is, as the caller sees it.
_LIVE = 0  # at the decision of the last observation returned for it
_ENDED = 1  # its episode ended; the server began the next one, whose first row is held
_PARKED = 2  # stepped by the server without the caller (left out of a partial step)

# Options the door sets itself.
_OWN = ("autoreset_mode", "copy", "obs_type")


class YutClosedError(ClosedError, AssertionError):
    """A call on a closed :class:`YutTianshouVectorEnv`: yutenv's :class:`~yutenv.ClosedError`,
    and the ``AssertionError`` that Tianshou's own vector envs raise after ``close()``."""


def masked_space(box: spaces.Box, actions: int) -> spaces.Dict:
    """The space of Tianshou's masked observation: ``obs`` (the tier's Box) and ``mask`` (bool)."""
    return spaces.Dict({"obs": box, "mask": spaces.Box(0, 1, shape=(actions,), dtype=np.bool_)})


class _LegalActions(spaces.Discrete):
    """Env ``index``'s action space: ``Discrete(180)`` whose ``sample()`` draws a legal action of
    the env's current decision (what Tianshou's ``collect(random=True)`` plays)."""

    def __init__(self, owner: YutTianshouVectorEnv, index: int, n: int) -> None:
        super().__init__(n)
        self._owner = owner
        self._index = index

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None:
            mask = self._owner._mask[self._index].view(np.int8)
        return super().sample(mask=mask, probability=probability)


class YutTianshouVectorEnv(BaseVectorEnv):  # type: ignore[misc]
    """``num_envs`` Yut Nori games as a Tianshou vector env: one server batch, one round trip a step.

    Args:
        num_envs: number of games N.
        config: an :class:`~yutenv.EnvConfig`; keyword arguments replace its fields (or build
            one): ``rules``, ``opponent``, ``seat`` (``"random"`` lets the learner play both
            sides), ``tier``, ``render_mode``, ``illegal``, ``max_decisions``, ``reward``,
            ``address``, ``token``, ``server``, ``timeout``. ``autoreset_mode``, ``copy`` and
            ``obs_type`` are the door's own.

    Attributes:
        venv: the :class:`~yutenv.YutVectorEnv` underneath (same-step autoreset).
        env_num: N. ``len(env)`` is N too.
        obs_size: D, the length of ``obs``.
        single_observation_space: ``Dict(obs=Box(D), mask=Box(bool, 180))``.
        single_action_space: ``Discrete(180)``.

    See the module's docstring for how Tianshou's per-env resets and steps are served.
    """

    def __init__(self, num_envs: int, config: EnvConfig | None = None, **options: Any) -> None:
        for k in _OWN:
            if k in options:
                raise TypeError(f"YutTianshouVectorEnv sets {k!r} itself (Tianshou's reset semantics, masked observations)")
        # Not BaseVectorEnv.__init__: it makes one worker per env, and the envs here are one batch.
        self.venv = YutVectorEnv(num_envs, config, autoreset_mode=AutoresetMode.SAME_STEP, copy=False, obs_type="box", **options)
        n = self.env_num = self.wait_num = self.venv.num_envs
        self.workers: list[Any] = []
        self.worker_class = None
        self.timeout = None
        self.is_async = False
        self.waiting_conn: list[Any] = []
        self.waiting_id: list[int] = []
        self.ready_id = list(range(n))
        self.is_closed = False
        self.num_actions = self.venv.num_actions
        box = self.venv.single_observation_space
        assert isinstance(box, spaces.Box)
        self.obs_size = int(box.shape[0])
        self.single_observation_space = masked_space(box, self.num_actions)
        self.single_action_space = spaces.Discrete(self.num_actions)
        self._action_spaces = [_LegalActions(self, i, self.num_actions) for i in range(n)]
        self._attrs: list[dict[str, Any]] = [{} for _ in range(n)]
        self._all = np.arange(n)
        self._seed: int | list[int] | None = None
        # The caller's view of every env: the last observation returned for it, and where it is.
        self._obs = np.zeros((n, self.obs_size), dtype=np.float32)
        self._mask = np.zeros((n, self.num_actions), dtype=np.bool_)
        self._state = np.full(n, _PARKED, dtype=np.int8)  # nothing returned yet: reset() first
        self._fresh = np.zeros(n, dtype=np.bool_)  # at the first decision of an episode
        # The next episode's first row, for envs whose episode ended (_ENDED).
        self._next_obs = np.zeros((n, self.obs_size), dtype=np.float32)
        self._next_mask = np.zeros((n, self.num_actions), dtype=np.bool_)
        self._reset_done = False

    # ---- Tianshou's BaseVectorEnv API ------------------------------------------------

    def __len__(self) -> int:
        return int(self.env_num)

    def reset(
        self, env_id: int | Sequence[int] | npt.NDArray[Any] | None = None, **kwargs: Any
    ) -> tuple[Batch, npt.NDArray[Any]]:
        """Reset every env (``env_id`` None, or every id), or envs whose episode ended.

        ``seed`` (keyword): env ``i`` plays the game seed ``seed + i`` (default: the one given
        to :meth:`seed`, else seeds drawn from the previous reset's); ``options``: ``start``,
        ``seat`` as for :class:`~yutenv.YutEnv`. Both apply to a reset of every env only.
        Returns the observations of the envs ``env_id`` (a ``Batch`` of ``obs`` and ``mask``)
        and their infos."""
        self._check_open("reset")
        unknown = set(kwargs) - {"seed", "options"}
        if unknown:
            raise TypeError(f"reset: unknown keyword arguments {sorted(unknown)}; known: ['seed', 'options']")
        ids = self._ids(env_id, "reset")
        if not len(ids):
            raise ValueError("reset: env_id names no env (None resets every env)")
        whole = env_id is None or len(ids) == self.env_num
        fresh = kwargs.get("seed") is not None or bool(kwargs.get("options"))
        if env_id is not None and self._reset_done and not (fresh and whole):
            state = self._state[ids]
            if ((state == _ENDED) | ((state == _LIVE) & self._fresh[ids])).all():
                if fresh:
                    raise ValueError(
                        "reset: a seed or options apply to a reset of every env (env_id=None); "
                        "the server began these envs' next episodes itself"
                    )
                return self._serve_reset(ids)
        if not whole:
            parked = ids[self._state[ids] == _PARKED]
            if len(parked):
                raise ResetNeeded(
                    f"env {int(parked[0])} was left out of a partial step (or never reset), so the server "
                    "played it on: reset every env (reset() with no env_id) to go on",
                    method="reset",
                )
            live = ids[self._state[ids] == _LIVE]
            raise UnsupportedError(
                f"env {int(live[0])} is in the middle of an episode: a server batch restarts all its envs "
                "together (reset() with no env_id), or an env when its episode ends (then reset(env_id) "
                "returns the next episode's first observation)",
                method="reset",
            )
        seed = kwargs.get("seed", self._seed)
        self._seed = None
        obs, infos = self.venv.reset(seed=seed, options=kwargs.get("options"))
        np.copyto(self._obs, obs)
        np.copyto(self._mask, infos["action_mask"].view(np.bool_))
        self._state[:] = _LIVE
        self._fresh[:] = True
        self._reset_done = True
        return self._rows(ids)

    def step(
        self, action: Any, id: int | Sequence[int] | npt.NDArray[Any] | None = None
    ) -> tuple[Batch, npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[Any]]:
        """Step the envs ``id`` (all by default) with ``action[k]`` for env ``id[k]``, in one
        round trip. Returns their observations (the last one of an episode that ended),
        rewards, ``terminated``, ``truncated`` and infos."""
        self._check_open("step")
        if action is None:
            raise ValueError("step: action must not be None (the env is synchronous: is_async is False)")
        ids = self._ids(id, "step")
        if not len(ids):
            raise ValueError("step: id names no env (None steps every env)")
        a = _to_numpy(action)
        if a.ndim != 1 or len(a) != len(ids):
            raise ValueError(f"step: expected {len(ids)} actions (one per env id), got shape {a.shape}")
        if a.dtype.kind not in "iu":
            raise TypeError(f"step: actions must be integers, got dtype {a.dtype}")
        state = self._state[ids]
        if (state != _LIVE).any():
            k = int(np.flatnonzero(state != _LIVE)[0])
            i = int(ids[k])
            if state[k] == _ENDED:
                msg = f"env {i}'s episode ended: reset(env_id=[{i}]) returns its next episode's first observation"
            else:
                msg = f"env {i} was left out of a partial step (or never reset): reset every env (reset()) first"
            raise ResetNeeded(msg, method="step")
        bad = (a < 0) | (a >= self.num_actions)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise IllegalActionError(
                f"env {int(ids[k])}: action {int(a[k])} is out of range 0..{self.num_actions - 1}", method="step"
            )
        legal = self._mask[ids, a]
        if self.venv.illegal != "penalty" and not legal.all():  # penalty: the server ends the episode
            k = int(np.flatnonzero(~legal)[0])
            raise IllegalActionError(f"env {int(ids[k])}: action {int(a[k])} is not legal (its mask forbids it)", method="step")
        partial = len(ids) != self.env_num or not np.array_equal(ids, self._all)
        if partial:  # the envs left out play their first legal action on the server
            actions = self.venv.action_masks().argmax(axis=1).astype(np.int32)
            actions[ids] = a
        else:
            actions = a.astype(np.int32, copy=False)
        obs, rew, term, trunc, infos = self.venv.step(actions)
        if partial:
            self._state[:] = _PARKED
            self._state[ids] = _LIVE
        self._fresh[ids] = False
        self._obs[ids] = obs[ids]
        self._mask[ids] = infos["action_mask"][ids].view(np.bool_)
        ended = term | trunc
        if ended.any():
            final = infos["final_obs"]
            for i in np.flatnonzero(ended).tolist():
                if self._state[i] == _PARKED:
                    continue
                self._next_obs[i] = self._obs[i]
                self._next_mask[i] = self._mask[i]
                self._obs[i] = final[i]
                self._mask[i] = bool(trunc[i]) and not bool(term[i])
                self._state[i] = _ENDED
        ob, inf = self._rows(ids)
        return ob, rew[ids], term[ids], trunc[ids], inf

    def seed(self, seed: int | Sequence[int] | None = None) -> list[list[int] | None]:
        """Seed the next reset of every env: env ``i`` plays the game seed ``seed + i`` (a list:
        its own seed each); the action spaces' ``sample()`` are seeded alike."""
        self._check_open("seed")
        if seed is None:
            return [None] * self.env_num
        seeds = [int(seed) + i for i in range(self.env_num)] if isinstance(seed, (int, np.integer)) else [int(s) for s in seed]
        if len(seeds) != self.env_num:
            raise ValueError(f"seed: expected {self.env_num} seeds, got {len(seeds)}")
        self._seed = seeds[0] if isinstance(seed, (int, np.integer)) else seeds
        for space, s in zip(self._action_spaces, seeds):
            space.seed(s)
        return [[s] for s in seeds]

    def get_env_attr(self, key: str, id: int | Sequence[int] | npt.NDArray[Any] | None = None) -> list[Any]:
        """An attribute of each env ``id``: the spaces (``action_space`` per env,
        ``observation_space``), ``metadata``, the batch's attributes (``rules``, ``tier``,
        ``opponent``, ... the same for every env), or a value :meth:`set_env_attr` set."""
        self._check_open("get_env_attr")
        ids = self._ids(id, "get_env_attr")
        return [self._attr(int(i), key) for i in ids]

    def set_env_attr(self, key: str, value: Any, id: int | Sequence[int] | npt.NDArray[Any] | None = None) -> None:
        """Set an attribute of each env ``id``; those of the server batch (``rules``, ``tier``,
        the spaces, ...) are fixed when it is made and refused."""
        self._check_open("set_env_attr")
        if key.startswith("_") or key in ("action_space", "observation_space", "metadata", "spec") or hasattr(self.venv, key):
            raise AttributeError(f"set_env_attr: {key!r} is fixed when the server batch is made; make a new env instead")
        for i in self._ids(id, "set_env_attr"):
            self._attrs[int(i)][key] = value

    def render(self, **kwargs: Any) -> list[Any]:
        """Every env's frame (``render_mode`` ``"ansi"`` or ``"rgb_array"``)."""
        self._check_open("render")
        frames = self.venv.render()
        return [None] * self.env_num if frames is None else list(frames)

    def close(self) -> None:
        """Close the server batch (idempotent)."""
        if not self.is_closed:
            self.is_closed = True
            self.venv.close()

    # ---- extras ----------------------------------------------------------------------

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The mask of each env's last observation returned, bool ``[N, 180]`` (a copy)."""
        return self._mask.copy()

    def __repr__(self) -> str:
        return f"YutTianshouVectorEnv({self.venv!r})"

    # ---- internals -------------------------------------------------------------------

    def _check_open(self, what: str) -> None:
        if self.is_closed:
            raise YutClosedError(f"{what}: the env is closed")

    def _ids(self, id: Any, what: str) -> npt.NDArray[np.intp]:
        if id is None:
            return self._all
        ids = np.atleast_1d(_to_numpy(id))
        if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
            raise ValueError(f"{what}: env ids must be integers, got {np.asarray(id)!r}")
        ids = ids.astype(np.intp, copy=False)
        if ids.size and (ids.min() < 0 or ids.max() >= self.env_num):
            raise ValueError(f"{what}: env ids must be 0..{self.env_num - 1}, got {ids.tolist()}")
        if len(np.unique(ids)) != len(ids):
            raise ValueError(f"{what}: env ids must be distinct, got {ids.tolist()}")
        return ids

    def _serve_reset(self, ids: npt.NDArray[np.intp]) -> tuple[Batch, npt.NDArray[Any]]:
        ended = ids[self._state[ids] == _ENDED]
        self._obs[ended] = self._next_obs[ended]
        self._mask[ended] = self._next_mask[ended]
        self._state[ids] = _LIVE
        self._fresh[ids] = True
        return self._rows(ids)

    def _rows(self, ids: npt.NDArray[np.intp]) -> tuple[Batch, npt.NDArray[Any]]:
        # Empty: Tianshou's Collector turns every info into a Batch on every step, and an empty
        # one costs nothing (an "env_id" key, as Tianshou's own vector envs add, made its
        # collects a third slower); row k is env ids[k].
        infos = np.empty(len(ids), dtype=object)
        infos[:] = [{} for _ in range(len(ids))]
        return Batch(obs=self._obs[ids], mask=self._mask[ids]), infos

    def _attr(self, i: int, key: str) -> Any:
        if key in self._attrs[i]:
            return self._attrs[i][key]
        if key == "action_space":
            return self._action_spaces[i]
        if key == "observation_space":
            return self.single_observation_space
        if key == "metadata":
            return self.venv.metadata
        if key == "spec":
            return None
        if key.startswith("_"):
            raise AttributeError(f"get_env_attr: {key!r} is private")
        value = getattr(self.venv, key)  # AttributeError when there is no such attribute
        if callable(value) and not isinstance(value, type):
            raise AttributeError(f"get_env_attr: {key!r} is a method of the whole batch, not an attribute of env {i}")
        return value


def _to_numpy(x: Any) -> npt.NDArray[Any]:
    """``x`` as an array; a torch tensor is moved to the CPU first."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)


class _Masked(gymnasium.ObservationWrapper[dict[str, npt.NDArray[Any]], np.int64, Any]):
    """A :class:`~yutenv.YutEnv` of dict observations, as Tianshou's ``{"obs", "mask"}``."""

    def __init__(self, env: YutEnv) -> None:
        super().__init__(env)
        space = env.observation_space
        assert isinstance(space, spaces.Dict)
        box = space["observation"]
        assert isinstance(box, spaces.Box)
        self.observation_space = masked_space(box, env.num_actions)

    def observation(self, observation: Any) -> dict[str, npt.NDArray[Any]]:
        return {"obs": observation["observation"], "mask": observation["action_mask"].view(np.bool_)}


def gym_env(config: EnvConfig | None = None, **kwargs: Any) -> gymnasium.Env[dict[str, npt.NDArray[Any]], np.int64]:
    """One :class:`~yutenv.YutEnv` whose observations are Tianshou's masked form (``{"obs",
    "mask"}``), for Tianshou's own vector envs: ``DummyVectorEnv([yutenv.integrations.tianshou.gym_env] * 8)``
    makes one round trip per env per step, ``SubprocVectorEnv`` one process per env, where
    :class:`YutTianshouVectorEnv` is one round trip for the batch. Takes the arguments of
    :class:`~yutenv.YutEnv` but ``obs_type``."""
    if "obs_type" in kwargs:
        raise TypeError("gym_env sets 'obs_type' itself (Tianshou's masked observations)")
    return _Masked(YutEnv(config, obs_type="dict", **kwargs))


def pettingzoo_env(config: EnvConfig | None = None, **kwargs: Any) -> PettingZooEnv:
    """The PettingZoo AEC env (:func:`yutenv.pettingzoo.env`, every seat an agent) in Tianshou's
    ``PettingZooEnv``: observations ``{"agent_id", "obs", "mask"}``, a reward per agent, for
    ``MultiAgentOffPolicyAlgorithm``/``MultiAgentOnPolicyAlgorithm`` (give the same algorithm for
    every agent for self-play with one network)."""
    return PettingZooEnv(_pettingzoo.env(config, **kwargs))


def policy_fn(policy: Any) -> Callable[[Any, npt.NDArray[np.bool_]], npt.NDArray[np.int64]]:
    """A Tianshou policy (or algorithm: its ``.policy``) as a batched ``(obs, mask) -> actions``
    callable, what :func:`yutenv.evaluate` and the env's ``opponent=`` take: the policy's action
    on ``Batch(obs=Batch(obs=obs, mask=mask))``, without gradients or exploration noise
    (``eps_inference`` of a DQN policy applies only inside a ``Collector``)."""
    import torch

    pol = getattr(policy, "policy", policy)

    def act(obs: Any, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        batch = Batch(obs=Batch(obs=np.asarray(obs, dtype=np.float32), mask=np.asarray(mask, dtype=np.bool_)), info=Batch())
        with torch.no_grad():
            out = pol(batch)
        return _to_numpy(out.act).astype(np.int64).reshape(-1)

    act.__name__ = type(pol).__name__
    return act
