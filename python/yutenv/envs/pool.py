"""``YutEnvPool``: EnvPool-style asynchronous stepping, ``send(actions, env_id)`` / ``recv()``.

``num_envs`` games are split into groups of ``batch_size``; each group is one batch on its own
connection, so the server steps the groups at the same time, and while it steps some, this
process computes the actions of the group :meth:`YutEnvPool.recv` returned::

    pool = yutenv.YutEnvPool(1024, batch_size=512, opponent="greedy")
    pool.async_reset()
    while training:
        obs, rew, term, trunc, info = pool.recv()        # the earliest-sent group that is ready
        actions = policy(obs, info["action_mask"])
        pool.send(actions, info["env_id"])               # the server steps it; recv() goes on

Episodes autoreset as in ``AutoresetMode.NEXT_STEP`` (the step after an episode ended returns
the first observation of the next). Observations are float32 [batch_size, D], rewards float32,
terminations and truncations bool, ``info["env_id"]`` int32 [batch_size] and
``info["action_mask"]`` int8 [batch_size, A]. With ``copy=False`` the arrays are read-only views
of the group's shared rows, valid until that group's next :meth:`~YutEnvPool.send`.
"""

from __future__ import annotations

import os
import select
import time
from collections import deque
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ClosedError, YutEnvError, YutTimeoutError
from .batch import Batch, StepResult, open_batch
from .config import EnvConfig
from .shared import DEFAULT_SPIN_US, POLL_LIMIT

#: What :meth:`YutEnvPool.step` returns: observations, rewards, terminated and truncated flags of
#: the ready envs, and the info map (``env_id``, ``action_mask``, ...).
PoolStep = tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]


def pool_spin_us(groups: int, cores: int | None = None) -> int:
    """The server's poll of each group's region (``spin_us``): on, as the single env's, when the
    machine has a core for every group's poll, every group's step and this process; else off.
    A poll spins on a core, and with fewer cores the polls would take them from the steps."""
    if cores is None:
        cores = os.cpu_count() or 1
    return DEFAULT_SPIN_US if cores >= 2 * groups + 1 else 0


class YutEnvPool:
    """``num_envs`` games stepped asynchronously in groups of ``batch_size`` (see the module).

    Args:
        num_envs: number of games.
        batch_size: games per group, a divisor of ``num_envs`` (default ``num_envs``: one group,
            synchronous).
        config, options: as :class:`~yutenv.YutVectorEnv` (single-agent options). ``spin_us``
            left unset, the server polls the groups' regions only on a machine with a core for
            every group's poll and step and this process (:func:`pool_spin_us`); else each step
            rings over its socket, and :meth:`recv` blocks on the sockets.
        copy: return fresh arrays (default) instead of views of the shared rows.
    """

    def __init__(
        self, num_envs: int, batch_size: int | None = None, config: EnvConfig | None = None, *, copy: bool = True, **options: Any
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        bs = num_envs if batch_size is None else batch_size
        if isinstance(bs, bool) or not isinstance(bs, (int, np.integer)) or bs < 1 or num_envs % bs:
            raise ValueError(f"batch_size must be a divisor of num_envs={num_envs}, got {batch_size!r}")
        self.config = cfg = EnvConfig.build(config, **options)
        self.num_envs, self.batch_size, self.copy = int(num_envs), int(bs), copy
        self._groups: list[Batch] = []
        groups = self.num_envs // self.batch_size
        try:
            for _ in range(groups):
                b = open_batch(self.batch_size, cfg, "single", "next_step", spin_us=pool_spin_us(groups))
                b.views = True
                self._groups.append(b)
        except BaseException:
            self.close()
            raise
        first = self._groups[0]
        self.obs_size, self.num_actions = first.obs_size, first.actions
        self._env_ids = [self._ids(g) for g in range(groups)]
        self._ready: deque[tuple[int, Any]] = deque()  # groups whose rows wait to be received
        #: Groups stepping on the server, in the order they were sent: recv returns the
        #: earliest-sent group that is ready, so a slow policy does not starve the later ones.
        self._sent: dict[int, None] = {}
        self.closed = False

    def _ids(self, g: int) -> npt.NDArray[np.int32]:
        ids = np.arange(g * self.batch_size, (g + 1) * self.batch_size, dtype=np.int32)
        ids.flags.writeable = False  # recv hands out the same array each time
        return ids

    def async_reset(self, seed: int | None = None) -> None:
        """Start a new episode in every game (env i gets ``seed + i``); :meth:`recv` then returns
        each group's first observations. Steps still in flight are finished and dropped."""
        self._check("async_reset")
        for g in sorted(self._sent):  # finish the steps in flight: their rows are dropped
            self._groups[g].recv_step()
        self._sent.clear()
        self._ready.clear()
        for g, b in enumerate(self._groups):
            r = b.reset(None if seed is None else seed + g * self.batch_size)
            self._ready.append((g, r))

    def reset(self, seed: int | None = None) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
        """Reset every game and return all observations [num_envs, D] with ``info`` holding
        ``env_id`` and ``action_mask`` for all of them (in env order)."""
        self.async_reset(seed)
        obs = np.empty((self.num_envs, self.obs_size), dtype=np.float32)
        mask = np.empty((self.num_envs, self.num_actions), dtype=np.int8)
        for g, r in self._ready:
            sl = slice(g * self.batch_size, (g + 1) * self.batch_size)
            obs[sl], mask[sl] = r.obs, r.mask
        self._ready.clear()
        return obs, {"env_id": np.arange(self.num_envs, dtype=np.int32), "action_mask": mask}

    def send(self, actions: Any, env_id: Any = None) -> None:
        """Start stepping one group: ``actions`` [batch_size] for the games ``env_id`` (the
        ``info["env_id"]`` of the group's last :meth:`recv`; default: the only group)."""
        self._check("send")
        if env_id is None:
            if len(self._groups) != 1:
                raise ValueError("send: pass env_id (info['env_id'] of the group recv() returned)")
            g = 0
        else:
            ids = np.asarray(env_id)
            if ids.shape != (self.batch_size,) or ids.size == 0:
                raise ValueError(f"send: env_id must be one group's {self.batch_size} ids, got shape {ids.shape}")
            g = int(ids[0]) // self.batch_size
            if not (0 <= g < len(self._groups)) or (ids is not self._env_ids[g] and not np.array_equal(ids, self._env_ids[g])):
                raise ValueError("send: env_id must be the info['env_id'] of a group recv() returned")
        if g in self._sent:
            raise YutEnvError(f"send: group {g} (envs {g * self.batch_size}..) is already stepping; recv() it first")
        a = np.asarray(actions)
        if a.shape != (self.batch_size,) or a.dtype.kind not in "iu":
            raise ValueError(f"send: actions must be {self.batch_size} integers, got shape {a.shape}, dtype {a.dtype}")
        self._groups[g].send_step(a)
        self._sent[g] = None

    def recv(self, timeout: float | None = None) -> PoolStep:
        """The rows of the group sent earliest among those ready (EnvPool's order): ``obs,
        reward, terminated, truncated, info`` with ``info["env_id"]`` naming its games. Waits up
        to ``timeout`` seconds (None: the env's timeout) for one."""
        self._check("recv")
        if self._ready:
            g, r = self._ready.popleft()
            return self._result(g, r)
        if not self._sent:
            raise YutEnvError("recv: no group is stepping (send first, or async_reset)")
        g = self._wait_any(self.config.timeout if timeout is None else timeout)
        del self._sent[g]
        return self._result(g, self._groups[g].recv_step())

    def step(self, actions: Any, env_id: Any = None) -> PoolStep:
        """:meth:`send` then :meth:`recv` (synchronous, for one group)."""
        self.send(actions, env_id)
        return self.recv()

    def _wait_any(self, timeout: float | None) -> int:
        order = list(self._sent)
        if any(self._polled(g) for g in order):
            # The server serves some group by polling its region: poll its done flag too.
            until = time.perf_counter() + POLL_LIMIT
            pause = getattr(os, "sched_yield", None)  # leave the cores to the server's workers
            while time.perf_counter() < until:
                for g in order:
                    if self._groups[g].step_ready():
                        return g
                if pause is not None:
                    pause()
        # Every group rang over its socket (or rings now): block until the first reply, which
        # leaves every core to the server.
        for g in order:
            region = self._groups[g].region
            if region is not None and region.polled:
                region._ring()
        socks = {self._groups[g].session.client._sock.fileno(): g for g in order}
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            for g in order:
                if self._groups[g].step_ready():
                    return g
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise YutTimeoutError(f"recv: no group finished within {timeout:g} s", method="step", timeout=timeout or 0.0)
            select.select(list(socks), [], [], left)

    def _polled(self, g: int) -> bool:
        """Whether group ``g``'s step in flight is left to the server's poll (not rung)."""
        region = self._groups[g].region
        return region is not None and region.polled

    def _result(self, g: int, r: Any) -> PoolStep:
        ids = self._env_ids[g]
        n = self.batch_size
        if isinstance(r, StepResult):
            obs, mask, rew, term, trunc = r.obs, r.mask, r.reward, r.terminated, r.truncated
        else:  # a reset's rows
            obs, mask = r.obs, r.mask
            rew, term, trunc = np.zeros(n, np.float32), np.zeros(n, np.bool_), np.zeros(n, np.bool_)
        if self.copy:
            obs, mask, rew, term, trunc = obs.copy(), mask.copy(), rew.copy(), term.copy(), trunc.copy()
        return obs, rew, term, trunc, {"env_id": ids, "action_mask": mask}

    def _check(self, method: str) -> None:
        if self.closed:
            raise ClosedError(f"{method}: the env pool is closed")

    def close(self) -> None:
        """Free every group's games and connection. Idempotent."""
        self.closed = True
        for b in self._groups:
            try:
                b.close()
            finally:
                b.session.close()
        self._groups = []

    def __enter__(self) -> YutEnvPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
