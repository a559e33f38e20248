"""``YutEnv``: one Yut Nori game as a Gymnasium env, against opponents played by the server."""

from __future__ import annotations

import copy
import dataclasses
import struct
from typing import Any, Mapping, Union

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from .._wire.client import SINGLE_ENV_SPIN
from ..errors import ClosedError, OpponentError, ResetNeeded, YutEnvError
from .batch import check_action, check_seed, open_batch
from .config import HUMAN_RENDER_MODES, EnvConfig
from .frontend import INTERRUPTED_STEP, HumanRender, fit_info, mask_box, obs_box, obs_part, render_frame
from .shared import DEFAULT_SPIN_US, STEP

#: An observation of :class:`YutEnv`: the flat float32 vector, or with ``obs_type="dict"`` a map
#: of the observation and its action mask.
ObsType = Union[npt.NDArray[np.float32], dict[str, npt.NDArray[Any]]]  # noqa: UP007 - a run-time alias

_RESET_OPTIONS = ("start", "seat")
_f32 = struct.Struct("<f").unpack

# What happened to the env since its last reset, to rebuild it exactly in a copy: an int is a
# step with that action; ("reset", seed, options) and ("load", state, seat) are the others.
_Event = Union[int, tuple[Any, ...]]  # noqa: UP007 - a run-time alias


def _by_address(cfg: EnvConfig) -> EnvConfig:
    """``cfg`` for another process: its Server object replaced by the server's address."""
    if cfg.server is None:
        return cfg
    return dataclasses.replace(cfg, server=None, address=cfg.server.address, token=cfg.server.token)


class YutEnv(gymnasium.Env[ObsType, np.int64]):
    """Yut Nori for one learner seat; the other seats are played by ``opponent`` on the server.

    Every observation is at a decision of the learner (throws and the opponents'
    turns happen inside the server during ``step``), encoded from the learner's
    point of view by the observation ``tier``.

    Args:
        config: an :class:`~yutenv.EnvConfig`; keyword arguments replace its fields (or build
            one): ``rules``, ``opponent``, ``seat``, ``tier``, ``obs_type``, ``render_mode``,
            ``illegal``, ``max_decisions``, ``reward``, ``info``, ``address``, ``token``,
            ``server``, ``timeout`` (see :class:`~yutenv.EnvConfig` for each).

    The action space, the observation space and its parts come from the server's reply
    to ``make``. The arrays returned (observation, ``info["action_mask"]``) are read-only
    numpy views of the server's reply (``np.frombuffer``, no copy); each call returns new
    arrays. Copy them (``np.array(obs)``) if you need to write into them.

    The legal-action mask is in ``info["action_mask"]`` (int8), in the observation with
    ``obs_type="dict"``, and from :meth:`action_masks` (bool; what sb3-contrib's
    ``MaskablePPO`` calls). Through ``gymnasium.make``'s wrappers, call
    ``env.unwrapped.action_masks()`` or ``env.get_wrapper_attr("action_masks")()``.

    ``copy.deepcopy(env)`` and ``pickle`` give a new env (its own server session) in the same
    state, which continues exactly as the original would: same seeds, same opponent moves.
    """

    metadata: dict[str, Any] = {"render_modes": list(HUMAN_RENDER_MODES), "render_fps": 4}

    def __init__(self, config: EnvConfig | None = None, **options: Any) -> None:
        self.config = EnvConfig.build(config, **options)
        self._open()

    def _open(self) -> None:
        cfg = self.config
        self.closed = True
        self.render_mode = cfg.render_mode
        self._human = HumanRender(self.metadata["render_fps"]) if cfg.render_mode == "human" else None
        self.obs_type = cfg.obs_type
        self.illegal = cfg.illegal
        # one env per round trip: poll for the reply, do not sleep
        self._batch = open_batch(1, cfg, "single", "next_step", spin=SINGLE_ENV_SPIN, spin_us=DEFAULT_SPIN_US)
        self._session = self._batch.session
        region = self._batch.region
        #: The region's rows step() reads (obs, mask, reward, terminated, truncated): with
        #: shared memory, one opponent spec and no server info.
        self._rows: tuple[npt.NDArray[Any], ...] | None = None
        if region is not None and self._batch.mixture is None and not cfg.info:
            v = region.views
            self._rows = (v["obs"][0], v["mask"][0].view(np.int8), v["reward"], v["terminated"], v["truncated"])
        made = self._batch.made
        self.rules: str = str(made["rules"])
        self.players: int = self._batch.players
        self.tier: str = str(made["tier"])
        self.opponent: str = str(made["opponent"]) or ";".join(made.get("opponents") or ())
        self.num_actions: int = self._batch.actions
        self.action_space = spaces.Discrete(self.num_actions)
        box = obs_box(self._batch.obs_space_info)
        space: spaces.Space[Any] = box
        if self.obs_type == "dict":
            space = spaces.Dict({"observation": box, "action_mask": mask_box(self.num_actions)})
        self.observation_space = space
        self._mask: npt.NDArray[np.int8] = np.zeros(self.num_actions, dtype=np.int8)
        self._needs_reset = True
        self._interrupted = False  # the last step was cut short (see step)
        self._history: list[_Event] = []
        self.game_seed: int | None = None
        self.seat: int = -1
        self.closed = False

    # ---- Gymnasium API -------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[ObsType, dict[str, Any]]:
        """Start a new game.

        ``seed`` seeds the game itself: ``reset(seed=s)`` plays the engine's
        ``env.New(rules, s, ...)``. Without a seed the game seed is drawn from
        ``self.np_random``, so ``reset(seed=s); reset()`` is reproducible too.
        ``options``: ``start`` (seat that begins, or None to draw it from the seed),
        ``seat`` (the learner's seat for this and later episodes).

        ``info``: ``action_mask``, ``seat`` (the learner's), ``seed`` (the game seed, as
        ``np.uint64``: every info value fits Gymnasium's vectorizers). The game with seed ``s``
        is game ``g`` of ``yutenv selfplay --seed s - g``: the same throws, and an opponent
        that plays as the command line's agent of its seat (agents are reseeded before every
        decision from the game seed, the seat and the decision number).
        """
        if seed is not None:
            seed = check_seed(seed)  # before anything changes
        super().reset(seed=seed)
        if self.closed:
            raise ClosedError("reset: the env is closed")
        if seed is not None:
            game_seed = seed
        else:
            game_seed = int(self.np_random.integers(0, 2**64, dtype=np.uint64))
        opts = None
        if options:
            unknown = set(options) - set(_RESET_OPTIONS)
            if unknown:
                raise ValueError(f"unknown reset options {sorted(unknown)}; known: {list(_RESET_OPTIONS)}")
            opts = dict(options)
        out = self._reset(game_seed, opts)
        if self._human is not None:
            self._human.show(self._batch)
        return out

    def _reset(self, game_seed: int, opts: dict[str, Any] | None) -> tuple[ObsType, dict[str, Any]]:
        self._needs_reset = True
        self._interrupted = False
        r = self._batch.reset(game_seed, opts)
        self._history = [("reset", game_seed, opts)]
        self.game_seed = r.seeds[0]
        self._mask = r.mask[0]
        self.seat = int(r.to_move[0])
        self._needs_reset = False
        info: dict[str, Any] = {"action_mask": self._mask, "seat": self.seat, "seed": np.uint64(self.game_seed)}
        if "opponent" in r.raw:
            info["opponent"] = self._batch.opponent_names()[0]
        if r.info is not None:
            info.update(fit_info(r.info[0]))
        return self._observation(r.obs[0], self._mask), info

    def step(self, action: Any) -> tuple[ObsType, float, bool, bool, dict[str, Any]]:
        if self._needs_reset:
            if self.closed:
                raise ClosedError("step: the env is closed")
            if self._interrupted:
                raise ResetNeeded(INTERRUPTED_STEP)
            raise ResetNeeded("step: call reset() first (the episode has not started or has ended)")
        a = check_action(action, self.num_actions)
        was_legal = self._mask[a] != 0
        r: Mapping[str, Any] = {}
        # Everything after the action is sent is one block: an interrupt (a KeyboardInterrupt)
        # anywhere in it may leave the game moved without this env or its caller seeing it,
        # so only a reset knows where it stands.
        try:
            if self._rows is not None:  # shared memory: copy the row out of the region
                region = self._batch.region
                assert region is not None
                region.actions[0] = a
                region.request(STEP)
                obs_row, mask_row, rew_row, term_row, trunc_row = self._rows
                obs, mask = obs_row.copy(), mask_row.copy()
                reward, terminated, truncated = float(rew_row[0, 0]), bool(term_row[0]), bool(trunc_row[0])
            else:
                r = self._batch.step_one_raw(a)
                # One env: decode only what is needed; obs and mask are views of the reply's bytes.
                obs = np.frombuffer(r["obs"], dtype="<f4")
                mask = np.frombuffer(r["mask"], dtype=np.int8)
                reward = _f32(r["reward"])[0]
                terminated = r["terminated"] != b"\x00"
                truncated = r["truncated"] != b"\x00"
            self._history.append(a)
            self._mask = mask
            self._needs_reset = terminated or truncated
            info: dict[str, Any] = {"action_mask": mask, "seat": self.seat}
            if not was_legal:
                info["illegal"] = True
            if "opponent" in r:
                info["opponent"] = self._batch.opponent_names()[0]
            if "info" in r:
                info.update(fit_info(r["info"][0]))
            if self._human is not None:
                self._human.show(self._batch)
            return self._observation(obs, mask), reward, terminated, truncated, info
        except OpponentError:
            self._needs_reset = True  # the game waits for the failed opponent's move
            raise
        except YutEnvError:
            raise  # the server refused the step: the game is as it was
        except BaseException:
            self._needs_reset = self._interrupted = True
            raise

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode. "
                'You can specify the render_mode at initialization, e.g. yutenv.make(render_mode="ansi")'
            )
            return None
        if self._needs_reset and self.game_seed is None:
            raise ResetNeeded("render: call reset() first")
        if self.render_mode == "human":
            return None  # reset and step print the board
        return render_frame(self._batch, self.render_mode, 0)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._needs_reset = True
        try:
            self._batch.close()
        finally:
            self._session.close()
        super().close()

    # ---- extras --------------------------------------------------------------------

    def obs_part(self, obs: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
        """The named part of observation(s) [D] of this env's tier, reshaped to its shape
        (a view): e.g. ``env.obs_part(obs, "actions")`` of the tactical tier gives the 10
        features of each of the 180 actions. Parts are listed in docs/OBSERVATIONS.md."""
        return obs_part(self._batch.obs_space_info, obs, name)

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The legal-action mask of the current decision (bool[num_actions]), from the last reply.

        No round trip: this is what sb3-contrib's ``MaskablePPO`` calls before each step.
        All False after the episode ended. Behind ``gymnasium.make``'s wrappers use
        ``env.unwrapped.action_masks()`` or ``env.get_wrapper_attr("action_masks")()``.
        """
        return self._mask.view(np.bool_)

    def set_opponents(self, opponent: Any) -> list[str]:
        """Replace the opponent mixture (an env made with a list, mapping or policy as its
        ``opponent``) from the next episode on (:meth:`YutVectorEnv.set_opponents`); returns the
        entries' names."""
        if self.closed:
            raise ClosedError("set_opponents: the env is closed")
        names = self._batch.set_opponents(opponent)
        self.opponent = ";".join(names)
        return names

    def save_state(self) -> bytes:
        """The engine's versioned binary blob of the current game (includes its generator);
        :meth:`load_state` puts it back, in this env or another of the same rules."""
        if self.closed:
            raise ClosedError("save_state: the env is closed")
        if self.game_seed is None:
            raise ResetNeeded("save_state: call reset() first")
        return self._batch.save(0)

    def load_state(self, state: bytes, seat: int | None = None) -> tuple[ObsType, dict[str, Any]]:
        """Replace the current game by a state from :meth:`save_state` (of an env with the
        same rules) and return the observation and info of the learner's next decision, as
        :meth:`reset` does (the server throws and plays the opponents up to it).

        ``seat``: the learner's seat from now on (default: unchanged). The episode's step
        counter (``max_decisions``) restarts. The opponents are reseeded, as always, from the
        env's game seed (``info["seed"]`` of the episode, not part of a state) and the loaded
        state's decision counter. If the loaded game is over, the episode has ended: call
        :meth:`reset`. An env that was never reset is reset first (from ``np_random``).
        Raises :class:`~yutenv.BadStateError` for a damaged state or one of other rules
        (the env is then unchanged).
        """
        if self.closed:
            raise ClosedError("load_state: the env is closed")
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, (int, np.integer))):
            raise TypeError(f"load_state: seat must be an int, got {seat!r}")
        if self.game_seed is None:
            self.reset()
        return self._load(state, None if seat is None else int(seat))

    def _load(self, state: bytes, seat: int | None) -> tuple[ObsType, dict[str, Any]]:
        r = self._batch.load(0, state, seat)
        self._history.append(("load", bytes(state), seat))
        mask = r["mask"][0]
        self._mask = mask
        if seat is not None:
            self.seat = seat
        self._needs_reset = not mask.any()
        return self._observation(r["obs"][0], mask), {"action_mask": mask, "seat": self.seat}

    @property
    def server_address(self) -> str:
        return self._session.address

    def _observation(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> ObsType:
        if self.obs_type == "dict":
            return {"observation": obs, "action_mask": mask}
        return obs

    # ---- copies --------------------------------------------------------------------
    #
    # A copy is a new env on its own session. It replays what this env did since its last
    # reset (the reset, its steps, any load_state), which rebuilds every generator on the
    # server (the game's, the opponents', the episode's), then checks that the game state
    # equals this env's save_state(). Gymnasium's np_random is copied too, so the next
    # reset() draws the same seed in both.

    def _copy_state(self) -> dict[str, Any]:
        if self.closed:
            raise ClosedError("a closed YutEnv cannot be copied or pickled")
        return {
            "config": self.config,
            "np_random": self._np_random,
            "np_random_seed": self._np_random_seed,
            "spec": self.spec,
            "history": list(self._history),
            "state": self._batch.save(0) if self.game_seed is not None else None,
            "needs_reset": self._needs_reset,
        }

    def __getstate__(self) -> dict[str, Any]:
        # pickle: another process cannot share this process's Server object; the copy connects
        # to the same server by address (it must still run), or to its own shared server.
        st = self._copy_state()
        st["config"] = _by_address(st["config"])
        spec = st["spec"]
        if spec is not None and ("server" in spec.kwargs or "config" in spec.kwargs):
            kw = {k: v for k, v in spec.kwargs.items() if k != "server"}
            if spec.kwargs.get("server") is not None:
                kw["address"] = spec.kwargs["server"].address
            if isinstance(kw.get("config"), EnvConfig):
                kw["config"] = _by_address(kw["config"])
            st["spec"] = dataclasses.replace(spec, kwargs=kw)
        return st

    def __setstate__(self, st: dict[str, Any]) -> None:
        self.config = st["config"]
        self._open()
        try:
            self._np_random = st["np_random"]
            self._np_random_seed = st["np_random_seed"]
            self.spec = st["spec"]
            for ev in st["history"]:
                if isinstance(ev, int):
                    self.step(ev)
                elif ev[0] == "reset":
                    self._reset(ev[1], ev[2])
                else:
                    self._load(ev[1], ev[2])
            self._needs_reset = st["needs_reset"]
            if st["state"] is not None and self._batch.save(0) != st["state"]:
                raise YutEnvError(
                    "copying a YutEnv: the replayed game differs from the original "
                    "(was the copy made with a different server version?)"
                )
        except BaseException:
            self.close()
            raise

    def __deepcopy__(self, memo: dict[int, Any]) -> YutEnv:
        st = self._copy_state()
        st["np_random"] = copy.deepcopy(st["np_random"], memo)
        new = YutEnv.__new__(YutEnv)
        memo[id(self)] = new
        new.__setstate__(st)
        return new

    def __repr__(self) -> str:
        return f"<YutEnv rules={getattr(self, 'rules', '?')} opponent={getattr(self, 'opponent', '?')} tier={getattr(self, 'tier', '?')}>"
