"""Stable-Baselines3: a ``VecEnv`` over one server-side batch, ready for sb3-contrib's ``MaskablePPO``.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor
    from yutenv.sb3 import YutSB3VecEnv
    venv = VecMonitor(YutSB3VecEnv(64, opponent="random", seat="random"))
    model = MaskablePPO("MlpPolicy", venv, n_steps=128).learn(100_000)

SB3's ``DummyVecEnv`` of :class:`~yutenv.YutEnv` steps its envs one by one: one round trip
to the server per env per step. :class:`YutSB3VecEnv` sends the actions of all envs in one
request and receives all results in one reply (a :class:`~yutenv.YutVectorEnv` underneath),
so a step costs one round trip whatever the number of envs. ``docs/BENCHMARKS.md`` has the
measured MaskablePPO speed of both (``python -m yutenv.tools.bench_sb3``).

It follows SB3's ``VecEnv`` conventions exactly:

* auto-reset: the observation returned for an env whose episode ended is the first
  observation of its next episode, and ``infos[i]["terminal_observation"]`` is the last
  observation of the episode that ended (the server resets envs in the same step:
  ``autoreset="same_step"`` of docs/PROTOCOL.md);
* ``dones = terminated | truncated``, with ``infos[i]["TimeLimit.truncated"]`` True when the
  episode was cut by ``max_decisions`` rather than ended by the game (SB3 then bootstraps
  the value of the terminal observation);
* ``seed(s)`` / ``set_options(...)`` take effect at the next ``reset()``; env ``i`` plays game
  seed ``s + i``; ``reset_infos[i]`` holds its ``seed`` and ``seat``;
* ``action_masks()`` (and ``env_method("action_masks")``, which sb3-contrib calls) give the
  legal-action masks of the current decisions from the last reply, bool ``[N, 180]``.

This module needs the ``sb3`` extra (``pip install 'yutenv[sb3]'``); ``import yutenv`` does not
import it.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterable, Sequence

import gymnasium
import numpy as np
import numpy.typing as npt

from .._extras import import_extra

import_extra("stable_baselines3", "sb3", "yutenv.sb3")
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv  # noqa: E402

from ..envs._gym import AutoresetMode
from ..envs.vector import YutVectorEnv
from ..league import League

__all__ = ["LeagueCallback", "YutSB3VecEnv", "make_vec_env", "vec_env"]

# Attributes fixed when the batch was made: set_attr refuses them instead of silently
# changing a Python attribute the server never sees.
_FIXED = frozenset(
    {
        "rules",
        "opponent",
        "tier",
        "players",
        "obs_type",
        "illegal",
        "render_mode",
        "num_envs",
        "observation_space",
        "action_space",
        "metadata",
    }
)


class _EnvView:
    """Env ``index`` of the batch, as ``get_attr``/``set_attr``/``env_method`` see it.

    Attributes not set on the view are those of the batch (shared by every env); methods
    are the few that make sense for one env of a server-side batch."""

    def __init__(self, owner: YutSB3VecEnv, index: int) -> None:
        self._owner = owner
        self._index = index
        self._attrs: dict[str, Any] = {}

    def action_masks(self) -> npt.NDArray[np.bool_]:
        row: npt.NDArray[np.bool_] = self._owner.action_masks()[self._index]
        return row

    def render(self) -> Any:
        return self._owner._render_one(self._index)

    def get_wrapper_attr(self, name: str) -> Any:
        return self.get(name)

    def get(self, name: str) -> Any:
        if name in self._attrs:
            return self._attrs[name]
        if name in ("action_masks", "render", "get_wrapper_attr"):
            return getattr(self, name)
        if name.startswith("_"):
            raise AttributeError(f"{name!r} is private")
        value = getattr(self._owner.venv, name)  # AttributeError when there is no such attribute
        if callable(value) and not isinstance(value, type):
            # The batch's own methods (reset, step, close, ...) act on every env: not one env's.
            raise AttributeError(f"{name!r} is a method of the whole batch, not of env {self._index}")
        return value


class YutSB3VecEnv(VecEnv):  # type: ignore[misc]
    """``num_envs`` Yut Nori games as an SB3 ``VecEnv``: one round trip to the server per step.

    Args:
        num_envs: number of games N.
        kwargs: those of :class:`~yutenv.YutVectorEnv` but ``autoreset_mode`` and ``copy``:
            ``rules``, ``opponent``, ``seat`` (``"random"`` lets the learner play both sides),
            ``tier``, ``obs_type`` (``"dict"`` gives ``{"observation", "action_mask"}``
            observations for SB3's ``MultiInputPolicy``; the default ``"box"`` suits
            ``MlpPolicy``), ``render_mode``, ``illegal``, ``max_decisions``, ``reward``,
            ``address``, ``token``, ``server``, ``timeout``.

    Arrays returned are writable copies (SB3 stores and converts them to tensors).
    Attributes: ``venv`` is the underlying :class:`~yutenv.YutVectorEnv`.
    """

    def __init__(self, num_envs: int, **kwargs: Any) -> None:
        for k in ("autoreset_mode", "copy"):
            if k in kwargs:
                raise TypeError(f"YutSB3VecEnv sets {k!r} itself (SB3's auto-reset semantics, writable arrays)")
        self.venv = YutVectorEnv(num_envs, autoreset_mode=AutoresetMode.SAME_STEP, copy=True, **kwargs)
        self._views = [_EnvView(self, i) for i in range(self.venv.num_envs)]
        self._actions: npt.NDArray[np.int32] | None = None
        try:
            super().__init__(self.venv.num_envs, self.venv.single_observation_space, self.venv.single_action_space)
        except BaseException:
            self.venv.close()
            raise
        self.closed = False

    # ---- VecEnv API ------------------------------------------------------------------

    def reset(self) -> Any:
        """Reset every env; the seeds and options given by ``seed()``/``set_options()`` since
        the last reset apply (then they are forgotten, as SB3 specifies)."""
        seeds: list[int | None] = list(self._seeds)
        kwargs: dict[str, Any] = {}
        if any(s is not None for s in seeds):
            kwargs["seed"] = seeds
        opts = [dict(o) for o in self._options]
        if any(opts):
            if any(o != opts[0] for o in opts):
                raise ValueError(
                    "YutSB3VecEnv: the server takes one set of reset options for the whole batch; "
                    f"got different options per env: {opts}"
                )
            kwargs["options"] = opts[0]
        obs, infos = self.venv.reset(**kwargs)
        self._reset_seeds()
        self._reset_options()
        seeds_out = infos["seed"]
        seats = infos["seat"]
        self.reset_infos = [{"seed": int(seeds_out[i]), "seat": int(seats[i])} for i in range(self.num_envs)]
        return obs

    def step_async(self, actions: npt.NDArray[Any]) -> None:
        # The server starts stepping now: step_wait only collects the result.
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int32, copy=False)
        self.venv.step_async(self._actions)

    def step_wait(self) -> tuple[Any, npt.NDArray[np.float32], npt.NDArray[np.bool_], list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait: call step_async first")
        self._actions = None
        obs, rewards, terminated, truncated, vinfos = self.venv.step_wait()
        dones = np.logical_or(terminated, truncated)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if "opponent" in vinfos:  # a mixture: each env's running opponent, by name
            for i, name in enumerate(vinfos["opponent"]):
                infos[i]["opponent"] = name
        if dones.any():
            final = vinfos["final_obs"]  # an object array: the ended episodes' last observations
            for i in map(int, np.flatnonzero(dones)):
                infos[i]["terminal_observation"] = final[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards, dones, infos

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.venv.close()

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """Legal-action masks of the current decisions, bool ``[N, 180]`` (no round trip)."""
        return self.venv.action_masks()

    def set_opponents(self, opponent: Any) -> list[str]:
        """A new opponent mixture from each env's next episode on (:meth:`YutVectorEnv.set_opponents`)."""
        return self.venv.set_opponents(opponent)

    def opponent_stats(self, reset: bool = False) -> dict[str, dict[str, float]]:
        """The learner's finished episodes by opponent (:meth:`YutVectorEnv.opponent_stats`)."""
        return self.venv.opponent_stats(reset)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [self._views[i].get(attr_name) for i in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        if attr_name in _FIXED:
            raise AttributeError(
                f"set_attr: {attr_name!r} is fixed when the server-side batch is made; make a new YutSB3VecEnv instead"
            )
        for i in self._get_indices(indices):
            self._views[i]._attrs[attr_name] = value

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks" and not method_args and not method_kwargs:
            masks = self.action_masks()
            return [masks[i] for i in idx]
        return [self._views[i].get(method_name)(*method_args, **method_kwargs) for i in idx]

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper[Any, Any, Any, Any]], indices: Any = None) -> list[bool]:
        # The envs live on the server: no Gymnasium wrapper (Monitor included) is around them.
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[npt.NDArray[Any] | None]:
        if self.render_mode != "rgb_array":
            gymnasium.logger.warn(
                f"The render mode is {self.render_mode}, but this method assumes it is `rgb_array` to obtain images."
            )
            return [None for _ in range(self.num_envs)]
        return [self._render_one(i) for i in range(self.num_envs)]

    def _render_one(self, index: int) -> Any:
        frames = self.venv.render()
        return None if frames is None else frames[index]

    def _get_indices(self, indices: Any) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    def __repr__(self) -> str:
        return f"YutSB3VecEnv({self.venv!r})"


def vec_env(num_envs: int, seed: int | None = None, **kwargs: Any) -> YutSB3VecEnv:
    """A :class:`YutSB3VecEnv` of ``num_envs`` games in one server batch, seeded like SB3's
    ``make_vec_env`` (env ``i`` plays seed ``seed + i`` at the first reset); keyword arguments
    as for :class:`YutSB3VecEnv` (``opponent``, ``tier``, ``seat``, ...).

    SB3's own ``make_vec_env(yutenv.YutEnv, n_envs=N, env_kwargs={...})`` works too: N single
    envs in a ``DummyVecEnv``, each with its own round trip (slower)."""
    venv = YutSB3VecEnv(num_envs, **kwargs)
    if seed is not None:
        venv.seed(seed)
    return venv


def make_vec_env(num_envs: int, seed: int | None = None, **kwargs: Any) -> YutSB3VecEnv:
    """Deprecated name of :func:`vec_env` (SB3's ``make_vec_env(env_id, n_envs, env_kwargs=...)``
    takes other arguments; this one never did)."""
    if isinstance(num_envs, str) or callable(num_envs):
        raise TypeError(
            "yutenv.sb3.make_vec_env(num_envs, seed=None, **env_options) is not SB3's make_vec_env(env_id, n_envs, "
            "env_kwargs=...): call yutenv.sb3.vec_env(num_envs, opponent=..., ...), or SB3's own with yutenv.YutEnv"
        )
    warnings.warn("yutenv.sb3.make_vec_env is now yutenv.sb3.vec_env (same arguments)", DeprecationWarning, stacklevel=2)
    return vec_env(num_envs, seed, **kwargs)


def _yut_venv(env: Any) -> YutSB3VecEnv:
    """The :class:`YutSB3VecEnv` under SB3's vector wrappers (VecMonitor, VecNormalize, ...)."""
    e = env
    while not isinstance(e, YutSB3VecEnv):
        inner = getattr(e, "venv", None)
        if inner is None:
            raise TypeError(f"LeagueCallback needs a YutSB3VecEnv (under any SB3 wrappers), got {type(env).__name__}")
        e = inner
    return e


class LeagueCallback(BaseCallback):  # type: ignore[misc]
    """Trains an SB3 model in a :class:`~yutenv.league.League`: every ``snapshot_every`` steps
    the results per opponent go to the league, the policy joins it as a snapshot (played in Go
    as ``net:PATH``), the model is saved to ``LEAGUE/learner.zip`` (atomically), and the env's
    opponents become the league's next mixture.

    The env must be a :class:`YutSB3VecEnv` made with a mixture (``opponent=[...]``, e.g. the
    league's fixed specs), so that its opponents can change. To resume after a kill::

        league = League("runs/league")
        model = MaskablePPO.load("runs/league/learner.zip", env=venv)
        model.learn(total, reset_num_timesteps=False, callback=LeagueCallback(league, 50_000))

    Args:
        league: the league (its folder holds the snapshots and ``learner.zip``).
        snapshot_every: learner steps (env steps, all envs counted) between snapshots.
        save_model: also save the model with each snapshot.
    """

    def __init__(self, league: League, snapshot_every: int, save_model: bool = True, verbose: int = 0) -> None:
        super().__init__(verbose)
        if snapshot_every < 1:
            raise ValueError(f"snapshot_every must be at least 1, got {snapshot_every}")
        self.league = league
        self.snapshot_every = int(snapshot_every)
        self.save_model = save_model
        self._next = 0

    def _on_training_start(self) -> None:
        self._venv = _yut_venv(self.training_env)
        if self.league.latest is None:
            self.league.snapshot(self.model.policy, self.num_timesteps)
        self._venv.opponent_stats(reset=True)
        self._venv.set_opponents(self.league.mixture())
        self._next = max(self.num_timesteps, self.league.step) + self.snapshot_every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self.round()
            self._next = self.num_timesteps + self.snapshot_every
        return True

    def round(self) -> None:
        """Close a round now: record the results, snapshot (and save) the learner, new opponents."""
        step = self.num_timesteps
        self.league.record_env(self._venv.opponent_stats(reset=True), step=step)
        if self.save_model:
            self._save(self.league.folder / "learner.zip")
        self.league.snapshot(self.model.policy, step)
        self._venv.set_opponents(self.league.mixture())
        if self.verbose:
            print(self.league.table())
        self.logger.record("league/members", len(self.league.members))
        latest = self.league.latest
        if latest is not None and latest.rating is not None:
            self.logger.record("league/rating", latest.rating)

    def _save(self, path: Any) -> None:
        import os

        from .._files import temp_name

        tmp = temp_name(path, ".zip")  # a killed save is removed when the league next opens
        self.model.save(tmp)
        os.replace(tmp, path)
