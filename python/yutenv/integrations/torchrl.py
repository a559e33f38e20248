"""TorchRL: a native ``EnvBase`` over one server-side batch, the action mask in its specs.

Example::

    import torch
    from torchrl.envs.utils import check_env_specs
    from yutenv.integrations.torchrl import YutTorchRLEnv

    env = YutTorchRLEnv(16, opponent="greedy")          # batch_size [16], one server batch
    check_env_specs(env)                                 # TorchRL's own checker passes
    td = env.rollout(64, break_when_any_done=False)      # random legal actions, autoreset
    env.close()

:class:`YutTorchRLEnv` steps all of its ``num_envs`` games in one request (a
:class:`~yutenv.YutVectorEnv` underneath) and follows TorchRL's conventions:

* specs: ``observation`` (float32 ``[N, D]``, the tier's bounds) and ``action_mask`` (bool
  ``[N, 180]``) in ``observation_spec``; ``action`` a ``Categorical(180)`` integer of shape
  ``[N]``; ``env.rand_action()`` and ``env.rollout()`` without a policy draw legal actions (of
  the tensordict's ``action_mask``, else the current decisions'); ``reward``, ``done``, ``terminated`` and ``truncated`` of shape
  ``[N, 1]``. TorchRL's ``ActionMask`` transform and ``MaskedCategorical`` read ``action_mask``.
* episodes end as TorchRL defines it: a step whose game ended returns that game's last
  observation in ``("next", "observation")`` with ``done`` True (``truncated`` when
  ``max_decisions`` cut it), and the collector's partial reset (the ``"_reset"`` mask) starts
  its next game. The server has already begun that game (same-step autoreset, no round trip);
  its seed derives from the env's first one, so the games are those of a
  :class:`~yutenv.YutVectorEnv` with the same seeds.
* seeds: ``env.set_seed(s)`` applies at the next full reset: env ``i`` plays game seed ``s + i``,
  and the same seed gives the same games. A full reset (no ``"_reset"``, or every env) starts
  every env afresh; a partial reset may name only envs whose game just ended, since the
  server's batch cannot restart one running game alone.
* errors: an illegal action raises :class:`~yutenv.IllegalActionError` (a ``ValueError``) and
  changes nothing, so the env goes on with a legal one; an action tensor of the wrong shape or
  dtype is a ``ValueError``, a closed env a ``RuntimeError`` (:class:`~yutenv.errors.ClosedError`),
  each with one line saying what was expected.

This module needs the ``torchrl`` extra; ``import yutenv`` does not import it.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt

from .._extras import import_extra

import_extra("torchrl", "torchrl", "yutenv.integrations.torchrl")
import torch  # noqa: E402
from tensordict import TensorDict, TensorDictBase  # noqa: E402
from torchrl.data import Bounded, Categorical, Composite, Unbounded  # noqa: E402
from torchrl.envs import EnvBase  # noqa: E402

from .._protocol import NUM_ACTIONS
from ..envs._gym import AutoresetMode
from ..envs.vector import YutVectorEnv
from ..errors import ClosedError

__all__ = ["YutClosedError", "YutTorchRLEnv", "masked_random_policy"]


class YutClosedError(ClosedError, RuntimeError):
    """A step or reset of a closed :class:`YutTorchRLEnv` (TorchRL raises ``RuntimeError`` there)."""


class YutTorchRLEnv(EnvBase):  # type: ignore[misc]
    """``num_envs`` Yut Nori games as one TorchRL env of ``batch_size=[num_envs]``.

    Args:
        num_envs: number of games N (one server-side batch).
        device: the torch device of the tensors (the games run on the server's CPU).
        kwargs: those of :class:`~yutenv.YutVectorEnv` but ``autoreset_mode``, ``copy`` and
            ``obs_type``: ``rules``, ``opponent``, ``seat``, ``tier``, ``illegal``,
            ``max_decisions``, ``reward``, ``transport``, ``address``, ``server``, ...

    Attributes: ``venv`` is the underlying :class:`~yutenv.YutVectorEnv`.
    """

    batch_locked = True

    def __init__(self, num_envs: int = 8, *, device: Any = "cpu", **kwargs: Any) -> None:
        for k in ("autoreset_mode", "copy", "obs_type"):
            if k in kwargs:
                raise TypeError(f"YutTorchRLEnv sets {k!r} itself (TorchRL's reset semantics, tensors of their own)")
        venv = YutVectorEnv(num_envs, autoreset_mode=AutoresetMode.SAME_STEP, copy=True, **kwargs)
        try:
            super().__init__(device=device, batch_size=torch.Size([venv.num_envs]))
        except BaseException:
            venv.close()
            raise
        self.venv = venv
        n = venv.num_envs
        box = venv.single_observation_space
        assert isinstance(box, gymnasium.spaces.Box)  # obs_type "box", which this env sets
        self._obs_size = int(box.shape[0])
        self.observation_spec = Composite(
            observation=Bounded(
                low=torch.as_tensor(np.broadcast_to(box.low, (n, self._obs_size)).copy()),
                high=torch.as_tensor(np.broadcast_to(box.high, (n, self._obs_size)).copy()),
                shape=(n, self._obs_size),
                dtype=torch.float32,
                device=self.device,
            ),
            action_mask=Categorical(2, shape=(n, NUM_ACTIONS), dtype=torch.bool, device=self.device),
            shape=(n,),
            device=self.device,
        )
        self.action_spec = Categorical(NUM_ACTIONS, shape=(n,), dtype=torch.int64, device=self.device)
        self.reward_spec = Unbounded(shape=(n, 1), dtype=torch.float32, device=self.device)
        flag = Categorical(2, shape=(n, 1), dtype=torch.bool, device=self.device)
        self.full_done_spec = Composite(
            done=flag.clone(), terminated=flag.clone(), truncated=flag.clone(), shape=(n,), device=self.device
        )
        self._seed: int | None = None
        # The rows the next action is chosen against: after a step, for an env whose game
        # ended, the first row of its next game (what a partial reset of it returns).
        self._obs = np.zeros((n, self._obs_size), np.float32)
        self._mask = np.zeros((n, NUM_ACTIONS), np.bool_)
        self._ended = np.zeros(n, np.bool_)  # its game ended at the last step; not yet reset
        self._started = False

    # ---- EnvBase ---------------------------------------------------------------------------

    def _set_seed(self, seed: int | None) -> None:
        self._seed = None if seed is None else int(seed)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        self._check_open("reset")
        want = _reset_mask(tensordict, self.venv.num_envs)
        if want is None or not self._started or not (want <= self._ended).all():
            if want is not None and not want.all() and self._started:
                running = np.flatnonzero(want & ~self._ended)
                raise ValueError(
                    f"reset: envs {running.tolist()} are in running games; a partial reset may name only envs "
                    "whose game ended at the last step (the server's batch restarts running games all at once: "
                    "reset every env)"
                )
            obs, _ = self.venv.reset(seed=self._seed)
            self._seed = None
            self._obs[:] = obs
            self._mask[:] = self.venv.action_masks()
            self._ended[:] = False
            self._started = True
        else:
            self._ended &= ~want
        zeros = torch.zeros((self.venv.num_envs, 1), dtype=torch.bool, device=self.device)
        return TensorDict(
            {
                "observation": torch.as_tensor(self._obs.copy(), device=self.device),
                "action_mask": torch.as_tensor(self._mask.copy(), device=self.device),
                "done": zeros,
                "terminated": zeros.clone(),
                "truncated": zeros.clone(),
            },
            batch_size=self.batch_size,
            device=self.device,
        )

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        self._check_open("step")
        if not self._started:
            raise RuntimeError("step: reset the env first (env.reset())")
        actions = _actions(tensordict.get("action"), self.venv.num_envs)
        obs, reward, terminated, truncated, infos = self.venv.step(actions)
        ended = terminated | truncated
        next_obs, next_mask = obs.copy(), self.venv.action_masks().copy()
        self._obs[:], self._mask[:] = obs, next_mask
        self._ended = ended.copy()
        if ended.any():
            final_obs = infos["final_obs"]
            for i in map(int, np.flatnonzero(ended)):
                next_obs[i] = final_obs[i]
            next_mask[ended] = False  # an ended game has no legal action
        return TensorDict(
            {
                "observation": torch.as_tensor(next_obs, device=self.device),
                "action_mask": torch.as_tensor(next_mask, device=self.device),
                "reward": torch.as_tensor(reward, dtype=torch.float32, device=self.device).reshape(-1, 1),
                "done": torch.as_tensor(ended, device=self.device).reshape(-1, 1),
                "terminated": torch.as_tensor(terminated, device=self.device).reshape(-1, 1),
                "truncated": torch.as_tensor(truncated, device=self.device).reshape(-1, 1),
            },
            batch_size=self.batch_size,
            device=self.device,
        )

    def rand_action(self, tensordict: TensorDictBase | None = None) -> TensorDictBase:
        """A random legal action per env: of the ``action_mask`` in ``tensordict`` when it has
        one, else of the current decisions."""
        if tensordict is None:
            tensordict = TensorDict(batch_size=self.batch_size, device=self.device)
        spec = self.action_spec.clone()
        mask = tensordict.get("action_mask", None)
        spec.update_mask(torch.as_tensor(self._mask, device=self.device) if mask is None else mask.to(torch.bool))
        tensordict.set(self.action_key, spec.rand())
        return tensordict

    def close(self, *, raise_if_closed: bool = True) -> None:
        """Close the env and its server-side batch."""
        venv = self.__dict__.get("venv")
        if venv is not None and not venv.closed:
            venv.close()
        super().close(raise_if_closed=raise_if_closed)

    # ---- yutenv -----------------------------------------------------------------------------

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """Legal-action masks of the current decisions, bool ``[N, 180]`` (no round trip)."""
        return self._mask.copy()

    def _check_open(self, what: str) -> None:
        if self.venv.closed:
            raise YutClosedError(f"{what}: the env is closed")


def masked_random_policy(tensordict: TensorDictBase) -> TensorDictBase:
    """A random legal action for every row of ``tensordict`` (of any batch shape), drawn from its
    ``"action_mask"`` with torch's generator: a policy for ``rollout`` and collectors over
    :class:`YutTorchRLEnv`, also inside ``SerialEnv``/``ParallelEnv``, whose own
    ``rand_action`` draws from an unmasked spec."""
    mask = tensordict.get("action_mask")
    flat = mask.reshape(-1, mask.shape[-1]).to(torch.float32)
    action = torch.multinomial(flat, 1).reshape(mask.shape[:-1])
    tensordict.set("action", action)
    return tensordict


def _reset_mask(tensordict: TensorDictBase | None, n: int) -> npt.NDArray[np.bool_] | None:
    """The envs a reset names (``"_reset"``, shape [N] or [N, 1]), or None for every env."""
    if tensordict is None:
        return None
    r = tensordict.get("_reset", None)
    if r is None:
        return None
    want = r.reshape(n, -1).any(-1).cpu().numpy()
    return None if want.all() else want


def _actions(action: Any, n: int) -> npt.NDArray[np.int32]:
    """The ``action`` entry as N int32 action ids, or a ValueError saying what was expected."""
    if action is None:
        raise ValueError('step: the tensordict has no "action" entry')
    a = torch.as_tensor(action)
    if a.is_floating_point() or a.is_complex() or a.dtype == torch.bool:
        raise ValueError(f"step: action has dtype {a.dtype}; want integer action ids of shape ({n},)")
    if tuple(a.shape) not in ((n,), (n, 1)):
        raise ValueError(f"step: action has shape {tuple(a.shape)}; want ({n},): one action id per env")
    out: npt.NDArray[np.int32] = a.reshape(n).cpu().numpy().astype(np.int32)
    return out
