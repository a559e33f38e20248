"""``YutVectorEnv``: N Yut Nori games as one server-side batch, one round trip per step."""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from ..errors import ClosedError, IllegalActionError, OpponentError, ResetNeeded, YutEnvError
from ._gym import AutoresetMode
from .batch import ResetResult, StepResult, check_seed, open_batch
from .config import RENDER_MODES, EnvConfig
from .frontend import INTERRUPTED_STEP, NotCopyable, fit_info, mask_box, obs_box, obs_part, render_frame
from .opponents import OpponentStats
from .shared import DEFAULT_SPIN_US

_RESET_OPTIONS = ("start", "seat")
_WIRE_AUTORESET = {AutoresetMode.NEXT_STEP: "next_step", AutoresetMode.SAME_STEP: "same_step"}


class YutVectorEnv(NotCopyable, gymnasium.vector.VectorEnv[Any, npt.NDArray[np.int32], npt.NDArray[Any]]):
    """``num_envs`` independent games of :class:`~yutenv.YutEnv` held by the server as one batch.

    ``step(actions)`` sends all N actions in one request and receives all N results
    in one reply; the server steps large batches on all cores. Autoreset happens on
    the server, as declared in ``metadata["autoreset_mode"]``:

    * ``AutoresetMode.NEXT_STEP`` (default): the step after an episode ended ignores
      that env's action and returns the first observation of the next episode, with
      reward 0 and terminated/truncated False.
    * ``AutoresetMode.SAME_STEP``: the step that ends an episode returns the next
      episode's first observation; the terminal observation is in
      ``infos["final_obs"]`` (an object array, None where no episode ended) and the
      terminal info in ``infos["final_info"]`` (with ``_final_obs``/``_final_info`` masks),
      as in Gymnasium's ``SyncVectorEnv``.

    Arrays returned are observations float32 [N, D], rewards float32 [N], terminations and
    truncations bool [N]: writable copies by default, as Gymnasium's vector envs return. With
    ``copy=False`` they are read-only views of the memory the server writes the rows into (shared
    memory, ``transport``), with no copy at all: **valid until the next** ``step`` **or**
    ``reset``, which overwrites them (keep ``arr.copy()`` of what you store). ``infos`` holds ``action_mask`` (int8
    [N, 180]) and ``seat`` (int8 [N]), each with its ``_key`` mask; ``action_masks()``
    returns the same masks as bool [N, 180] without a round trip.

    Args:
        num_envs: number of games N.
        config: an :class:`~yutenv.EnvConfig`; keyword arguments replace its fields (or build
            one): ``rules``, ``opponent``, ``seat``, ``tier``, ``obs_type``, ``render_mode``,
            ``illegal``, ``max_decisions``, ``reward``, ``info``, ``address``, ``token``,
            ``server``, ``timeout`` (as :class:`~yutenv.YutEnv`).
        autoreset_mode: an ``AutoresetMode`` (or its value string); NEXT_STEP or SAME_STEP.
        copy: return writable copies (default) instead of read-only views that the next step
            overwrites.

    ``render()`` returns a tuple of N frames: strings (``"ansi"``) or (480, 720, 3) uint8
    images (``"rgb_array"``). A vector env is one batch on the server and cannot be pickled
    or deep-copied; :meth:`save_state` / :meth:`load_state` move single games.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "autoreset_mode": AutoresetMode.NEXT_STEP}
    _not_copyable = (
        "a YutVectorEnv cannot be pickled or copied: it is one batch of games held by the server. "
        "Make a new one where you need it (YutVectorEnv(env.num_envs, env.config)), and move games "
        "with env.save_state(i) / new.load_state(i, state) if you need their positions"
    )

    def __init__(
        self,
        num_envs: int,
        config: EnvConfig | None = None,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        **options: Any,
    ) -> None:
        mode = autoreset_mode if isinstance(autoreset_mode, AutoresetMode) else AutoresetMode(autoreset_mode)
        if mode not in _WIRE_AUTORESET:
            raise ValueError(
                f"autoreset_mode {mode} is not supported: the server resets envs itself "
                "(use AutoresetMode.NEXT_STEP or AutoresetMode.SAME_STEP)"
            )
        self.config = cfg = EnvConfig.build(config, **options)
        if cfg.render_mode == "human":
            raise ValueError(f"render_mode 'human' is for one game (YutEnv); a vector env renders {list(RENDER_MODES)}")
        self.autoreset_mode = mode
        self.metadata = {"render_modes": list(RENDER_MODES), "autoreset_mode": mode}
        self.render_mode = cfg.render_mode
        self.obs_type = cfg.obs_type
        self.copy = copy
        self.illegal = cfg.illegal
        self._batch = open_batch(num_envs, cfg, "single", _WIRE_AUTORESET[mode], spin_us=DEFAULT_SPIN_US)
        self._batch.views = True  # the rows are views of the shared region; copy decides
        #: Every env's flag of the keys every env has (Gymnasium's ``_key`` masks), read-only.
        self._all = np.ones(self._batch.n, dtype=np.bool_)
        self._all.flags.writeable = False
        self._session = self._batch.session
        made = self._batch.made
        self.num_envs = self._batch.n
        self.rules: str = str(made["rules"])
        self.players: int = self._batch.players
        self.tier: str = str(made["tier"])
        self.opponent: str = str(made["opponent"]) or ";".join(made.get("opponents") or ())
        #: The value function of ``info["luck"]`` (the ``luck`` option, resolved), or ``"off"``.
        self.luck: str = str(made.get("luck", "off"))
        #: Finished episodes by opponent name (a mixture's entries, or the one opponent).
        self._stats: dict[str, OpponentStats] = {}
        # The last step's flags and rewards (terminated, truncated, reward) and its opponents'
        # names, while their episodes wait to be counted (_note_ended).
        self._ended_rows = np.zeros((3, self._batch.n), dtype=np.float32)
        self._ended_pending: tuple[dict[int, str], str] | None = None
        self.num_actions: int = self._batch.actions
        self.single_action_space = spaces.Discrete(self.num_actions)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        box = obs_box(self._batch.obs_space_info)
        if self.obs_type == "dict":
            self.single_observation_space: spaces.Space[Any] = spaces.Dict(
                {"observation": box, "action_mask": mask_box(self.num_actions)}
            )
        else:
            self.single_observation_space = box
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._mask: npt.NDArray[np.int8] = np.zeros((self.num_envs, self.num_actions), dtype=np.int8)
        self._started = False
        self._interrupted = False  # the last step was cut short (see step_wait)
        self.seeds: list[int] = []

    # ---- Gymnasium VectorEnv API -----------------------------------------------------

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every env.

        ``seed``: an int (env i plays seed ``seed + i``, the game ``i`` of ``yutenv selfplay
        --seed seed`` plays), a list of N seeds, or None (seeds drawn from ``self.np_random``).
        An env's later episodes (autoresets) derive their game seeds from its first one
        (``info["seed"]``; docs/PROTOCOL.md, "Seeds and determinism"). ``options``: ``start``, ``seat`` as for
        :class:`YutEnv`; ``reset_mask`` (partial reset) is not supported: the server
        resets envs itself (autoreset).
        """
        if self.closed:
            raise ClosedError("reset: the vector env is closed")
        if isinstance(seed, (int, np.integer)):
            first = check_seed(seed)
            super().reset(seed=first)
            seeds: int | list[int] = first
        elif seed is None:
            super().reset(seed=None)
            seeds = int(self.np_random.integers(0, 2**64, dtype=np.uint64))
        else:
            if len(seed) != self.num_envs:
                raise ValueError(
                    f"If seeds are passed as a list the length must match num_envs={self.num_envs} but got length={len(seed)}."
                )
            given = [None if s is None else check_seed(s) for s in seed]
            # Seed np_random from the list too, so that reset(seed=[...]); reset() is reproducible.
            super().reset(seed=next((s for s in given if s is not None), None))
            seeds = [s if s is not None else int(self.np_random.integers(0, 2**64, dtype=np.uint64)) for s in given]
        opts = None
        if options:
            if "reset_mask" in options:
                raise ValueError(
                    "options['reset_mask'] (partial reset) is not supported by YutVectorEnv: "
                    "envs are reset by the server (autoreset_mode NEXT_STEP or SAME_STEP)"
                )
            unknown = set(options) - set(_RESET_OPTIONS)
            if unknown:
                raise ValueError(f"unknown reset options {sorted(unknown)}; known: {list(_RESET_OPTIONS)}")
            opts = dict(options)
        try:
            r: ResetResult = self._batch.reset(seeds, opts)
        except YutEnvError:
            raise  # refused: the games are as they were
        except BaseException:
            self._started = False  # interrupted: which games were reset is unknown
            raise
        self._interrupted = False
        self.seeds = r.seeds
        self._mask = r.mask
        self._started = True
        infos: dict[str, Any] = {}
        self._base_infos(infos, r.mask, r.to_move)
        infos["seed"] = np.array(r.seeds, dtype=np.uint64)
        infos["_seed"] = np.ones(self.num_envs, dtype=np.bool_)
        self._opponent_infos(infos, r.raw)
        if r.info is not None:
            for i, inf in enumerate(r.info):
                infos = self._add_info(infos, fit_info(inf), i)
        return self._observations(r.obs, r.mask), infos

    def step(
        self, actions: Any
    ) -> tuple[Any, npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions: Any) -> None:
        """Start a step with ``actions`` and return at once: the server steps the envs while
        this process goes on (computing the next batch's actions of another env, say);
        :meth:`step_wait` returns what :meth:`step` would have. One step at a time."""
        if not self._started:
            if self.closed:
                raise ClosedError("step: the vector env is closed")
            if self._interrupted:
                raise ResetNeeded(INTERRUPTED_STEP)
            raise ResetNeeded("step: call reset() first")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"expected actions of shape ({self.num_envs},), got {a.shape}")
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers, got dtype {a.dtype}")
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        # One reduction checks both ends: viewed as unsigned, a negative action is huge.
        if a.size and a.view(f"u{a.dtype.itemsize}").max() >= self.num_actions:
            bad = int(np.flatnonzero((a < 0) | (a >= self.num_actions))[0])
            raise IllegalActionError(f"env {bad}: action {int(a[bad])} is out of range 0..{self.num_actions - 1}", method="step")
        try:
            self._batch.send_step(a)
        except YutEnvError:
            raise
        except BaseException:
            self._started, self._interrupted = False, True  # see step_wait
            raise

    def step_wait(
        self,
    ) -> tuple[Any, npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """The result of the step :meth:`step_async` started, as :meth:`step` returns it."""
        try:
            return self._collect()
        except OpponentError:
            self._started = False  # the games wait for the failed opponent's moves
            raise
        except YutEnvError:
            raise
        except BaseException:
            # Interrupted (a KeyboardInterrupt) after the step was sent: the games may have
            # moved without this env or its caller seeing it, so only a reset knows where
            # they stand.
            self._started, self._interrupted = False, True
            raise

    def _collect(
        self,
    ) -> tuple[Any, npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        # step_wait's work: the server's reply read and made into Gymnasium's tuple.
        r: StepResult = self._batch.recv_step(self._count_ended if self._ended_pending else None)
        self._mask = r.mask
        infos: dict[str, Any] = {}
        self._base_infos(infos, r.mask, r.to_move)
        self._note_ended(r)
        self._opponent_infos(infos, r.raw)
        if r.info is not None:
            for i, inf in enumerate(r.info):
                infos = self._add_info(infos, fit_info({k: v for k, v in inf.items() if k != "final_info"}), i)
        if r.final_obs is not None:
            ended = np.logical_or(r.terminated, r.truncated)
            if ended.any():
                assert r.final_mask is not None and r.final_to_move is not None
                fo = self._observations(r.final_obs, r.final_mask)
                # An object array, None where no episode ended, as Gymnasium 1.1+ makes it
                # (1.0's _add_info would make a dense array of zeros): built here for both.
                final_obs = np.full(self.num_envs, None, dtype=object)
                for i in map(int, np.flatnonzero(ended)):
                    final_info: dict[str, Any] = {"action_mask": r.final_mask[i], "seat": np.int8(r.final_to_move[i])}
                    if r.info is not None and isinstance(r.info[i].get("final_info"), dict):
                        final_info.update(fit_info(r.info[i]["final_info"]))
                    if i in self._batch.ended_opponents:
                        final_info["opponent"] = self._batch.ended_opponents[i]
                    final_obs[i] = {k: v[i] for k, v in fo.items()} if isinstance(fo, dict) else fo[i]
                    infos = self._add_info(infos, {"final_info": final_info}, i)
                infos["final_obs"], infos["_final_obs"] = final_obs, ended
        obs = self._observations(r.obs, r.mask)
        rew, term, trunc = r.reward, r.terminated, r.truncated
        if self.copy:
            rew, term, trunc = rew.copy(), term.copy(), trunc.copy()
        return obs, rew, term, trunc, infos

    def render(self) -> tuple[Any, ...] | None:
        """Every env's position: a tuple of N strings (``"ansi"``) or N (480, 720, 3) uint8
        images (``"rgb_array"``), as Gymnasium's ``SyncVectorEnv`` returns."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if not self._started:
            raise ResetNeeded("render: call reset() first")
        return tuple(render_frame(self._batch, self.render_mode, i) for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        if "_batch" not in self.__dict__:
            return  # __init__ failed before the batch opened (Gymnasium 1.0's __del__ still closes)
        try:
            self._batch.close()
        finally:
            self._session.close()
        self._started = False

    # ---- extras ----------------------------------------------------------------------

    def obs_part(self, obs: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
        """The named part of observation(s) [N, D] of this env's tier, reshaped to its shape
        (a view): e.g. ``env.obs_part(obs, "actions")`` of the tactical tier gives the 10
        features of each of the 180 actions. Parts are listed in docs/OBSERVATIONS.md."""
        return obs_part(self._batch.obs_space_info, obs, name)

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """Legal-action masks of the current decisions, bool [N, 180], from the last reply (no round trip).

        A read-only view of the reply, or a writable copy with ``copy=True``."""
        m = self._mask.view(np.bool_)
        return m.copy() if self.copy else m

    def save_state(self, index: int) -> bytes:
        """The engine's binary blob of env ``index``'s game (see :meth:`YutEnv.save_state`)."""
        if not self._started:
            raise ResetNeeded("save_state: call reset() first")
        return self._batch.save(self._index(index))

    def load_state(self, index: int, state: bytes, seat: int | None = None) -> tuple[Any, dict[str, Any]]:
        """Replace env ``index``'s game by a saved state (see :meth:`YutEnv.load_state`) and
        return that env's observation and info (``action_mask``, ``seat``). The other envs
        are untouched; the masks of :meth:`action_masks` are updated. If the loaded game is
        over, that env's next step autoresets it (its returned mask is all zero)."""
        if not self._started:
            raise ResetNeeded("load_state: call reset() first")
        i = self._index(index)
        r = self._batch.load(i, state, None if seat is None else int(seat))
        masks = np.array(self._mask)
        masks[i] = r["mask"][0]
        self._mask = masks
        info = {"action_mask": r["mask"][0], "seat": np.int8(r["to_move"][0])}
        return self._observations(r["obs"][0], r["mask"][0]), info

    def _index(self, index: int) -> int:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < self.num_envs:
            raise IndexError(f"env index must be 0..{self.num_envs - 1}, got {index!r}")
        return int(index)

    @property
    def server_address(self) -> str:
        return self._session.address

    def set_opponents(self, opponent: Any) -> list[str]:
        """Replace the opponent mixture (an env made with a list, mapping or policy as its
        ``opponent``) from each env's next episode on; running episodes finish against the entry
        they drew. Takes any ``opponent`` option but one spec string; returns the entries' names.
        What a league does between rounds (:mod:`yutenv.league`)."""
        if self.closed:
            raise ClosedError("set_opponents: the vector env is closed")
        names = self._batch.set_opponents(opponent)
        self.opponent = ";".join(names)
        return names

    def opponent_stats(self, reset: bool = False) -> dict[str, dict[str, float]]:
        """The learner's finished episodes by opponent name, since the env was made (or the last
        ``opponent_stats(reset=True)``): ``episodes``, ``wins``, ``losses``, ``draws`` (by the
        sign of the terminal reward: the game's outcome, which progress shaping never flips),
        ``truncated``, ``win_rate`` (wins over episodes ended by the rules) and ``mean_reward``
        (of the terminal step)."""
        if self._ended_pending:
            self._count_ended()
        out = {k: v.as_dict() for k, v in sorted(self._stats.items())}
        if reset:
            self._stats = {}
        return out

    def _note_ended(self, r: StepResult) -> None:
        """Keep what the per-opponent counts need of this step's ended episodes, to be counted
        while the server works on the next step (:meth:`_count_ended`): a copy of the flags and
        rewards (the rows are overwritten by the next step) and the opponents' names."""
        np.copyto(self._ended_rows[0], r.terminated)
        np.copyto(self._ended_rows[1], r.truncated)
        np.copyto(self._ended_rows[2], r.reward)
        self._ended_pending = (self._batch.ended_opponents, self.opponent)

    def _count_ended(self) -> None:
        """Add the episodes that ended in the last step noted to the per-opponent counts. One
        vector operation finds them; plain Python counts the few (cheaper than a handful of
        numpy reductions over the whole batch)."""
        assert self._ended_pending is not None
        names, default = self._ended_pending
        self._ended_pending = None
        term, trunc, reward = self._ended_rows
        ended = (term != 0) | (trunc != 0)
        idx = ended.nonzero()[0]
        if not len(idx):
            return
        stats = self._stats
        for i, t, rew in zip(idx.tolist(), term.take(idx).tolist(), reward.take(idx).tolist()):
            name = names.get(i, default) if names else default
            st = stats.get(name)
            if st is None:
                st = stats[name] = OpponentStats()
            st.episodes += 1
            if not t:
                st.truncated += 1
                continue
            st.total_reward += rew
            if rew > 0:
                st.wins += 1
            elif rew < 0:
                st.losses += 1
            else:
                st.draws += 1

    def _opponent_infos(self, infos: dict[str, Any], raw: dict[str, Any]) -> None:
        """``infos["opponent"]``: each env's running opponent (a mixture's), by name; with
        same_step autoreset, ``final_info["opponent"]`` names the ended episode's (in ``step``)."""
        if "opponent" not in raw:
            return
        infos["opponent"] = np.array(self._batch.opponent_names(), dtype=object)
        infos["_opponent"] = np.ones(self.num_envs, dtype=np.bool_)

    def _base_infos(self, infos: dict[str, Any], mask: npt.NDArray[np.int8], to_move: npt.NDArray[np.int8]) -> None:
        infos["action_mask"] = mask.copy() if self.copy else mask
        infos["_action_mask"] = self._all
        infos["seat"] = to_move.copy() if self.copy else to_move
        infos["_seat"] = self._all

    def _observations(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> Any:
        if self.copy:
            obs, mask = obs.copy(), mask.copy()
        if self.obs_type == "dict":
            return {"observation": obs, "action_mask": mask}
        return obs

    def __repr__(self) -> str:
        return f"YutVectorEnv(num_envs={getattr(self, 'num_envs', '?')}, rules={getattr(self, 'rules', '?')}, opponent={getattr(self, 'opponent', '?')})"
