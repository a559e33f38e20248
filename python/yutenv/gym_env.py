"""``YutEnv``: one Yut Nori game as a Gymnasium env, against opponents played by the server."""

from __future__ import annotations

import struct
from typing import Any, Dict, Literal, Mapping, Union

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from .client import SINGLE_ENV_SPIN
from .core import NUM_ACTIONS, check_action, check_seed, mask_box, obs_box, obs_part, open_batch
from .errors import ClosedError, IllegalActionError, ResetNeeded
from .server import Server

ObsType = Union[npt.NDArray[np.float32], Dict[str, npt.NDArray[Any]]]

_RESET_OPTIONS = ("start", "seat")
_f32 = struct.Struct("<f").unpack


class YutEnv(gymnasium.Env[ObsType, np.int64]):
    """Yut Nori for one learner seat; the other seats are played by ``opponent`` on the server.

    Every observation is at a decision of the learner (throws and the opponents'
    turns happen inside the server during ``step``), encoded from the learner's
    point of view by the observation ``tier``.

    Args:
        rules: rules string (``"players=3,end=rank"``) or mapping; default ``"standard"``.
        opponent: agent spec of every other seat: ``random``, ``greedy``, ``mc:N``, ``mcts:N``.
        seat: the learner's seat, or ``"random"`` to draw it each episode.
        tier: observation tier (``compact``, ``tactical``, ``planes``); default: the server's.
        obs_type: ``"box"`` (a float32 vector) or ``"dict"`` (``{"observation", "action_mask"}``).
        render_mode: None, ``"ansi"`` (the board as text) or ``"rgb_array"`` (a 480x720x3 uint8 image).
        illegal: ``"error"`` (an illegal action raises :class:`~yutenv.IllegalActionError` and
            changes nothing) or ``"penalty"`` (the episode ends with reward -1 and
            ``info["illegal"] = True``; for tools that sample unmasked actions, such as
            Gymnasium's env checker).
        max_decisions: truncate an episode after this many learner decisions (0: never).
        reward: ``"win"`` (+1/-1 at the end only) or ``"progress"`` (the same plus
            potential-based shaping by race progress: a signal every step, same optimal policy;
            see docs/PROTOCOL.md).
        info: also put the server's per-env info map (``seed``, ...) into ``info``.
        address, token, server, timeout: where the server is; see :class:`yutenv.core.Session`.

    The arrays returned (observation, ``info["action_mask"]``) are read-only numpy
    views of the server's reply (``np.frombuffer``, no copy); each call returns new
    arrays. Copy them (``np.array(obs)``) if you need to write into them.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        rules: str | Mapping[str, Any] = "standard",
        opponent: str = "random",
        seat: int | str = 0,
        tier: str | None = None,
        obs_type: Literal["box", "dict"] = "box",
        render_mode: str | None = None,
        illegal: Literal["error", "penalty"] = "error",
        max_decisions: int = 0,
        reward: Literal["win", "progress"] = "win",
        info: bool = False,
        address: str | None = None,
        token: str | None = None,
        server: Server | None = None,
        timeout: float | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        if obs_type not in ("box", "dict"):
            raise ValueError(f"obs_type must be 'box' or 'dict', got {obs_type!r}")
        self.render_mode = render_mode
        self.obs_type = obs_type
        self.illegal = illegal
        self._info = bool(info)
        # one env per round trip: poll for the reply, do not sleep
        self._batch = open_batch(
            1,
            address=address,
            token=token,
            server=server,
            timeout=timeout,
            spin=SINGLE_ENV_SPIN,
            rules=dict(rules) if isinstance(rules, Mapping) else rules,
            tier=tier,
            mode="single",
            seat=seat,
            opponent=opponent,
            autoreset="next_step",
            max_decisions=int(max_decisions),
            reward=reward,
            illegal=illegal,
            info=self._info,
        )
        self._session = self._batch.session
        made = self._batch.made
        self.rules: str = str(made["rules"])
        self.players: int = self._batch.players
        self.tier: str = str(made["tier"])
        self.opponent: str = str(made["opponent"])
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        box = obs_box(self._batch.obs_space_info)
        space: spaces.Space[Any] = box
        if obs_type == "dict":
            space = spaces.Dict({"observation": box, "action_mask": mask_box()})
        self.observation_space = space
        self._mask: npt.NDArray[np.int8] = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._needs_reset = True
        self.game_seed: int | None = None
        self.seat: int = -1
        self.closed = False

    # ---- Gymnasium API -------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Start a new game.

        ``seed`` seeds the game itself: ``reset(seed=s)`` plays the engine's
        ``env.New(rules, s, ...)``. Without a seed the game seed is drawn from
        ``self.np_random``, so ``reset(seed=s); reset()`` is reproducible too.
        ``options``: ``start`` (seat that begins, or None to draw it from the seed),
        ``seat`` (the learner's seat for this and later episodes).
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
        r = self._batch.reset(game_seed, opts)
        self.game_seed = r.seeds[0]
        self._mask = r.mask[0]
        self.seat = int(r.to_move[0])
        self._needs_reset = False
        info: dict[str, Any] = {"action_mask": self._mask, "seat": self.seat, "seed": self.game_seed}
        if r.info is not None:
            info.update(r.info[0])
        return self._observation(r.obs[0], self._mask), info

    def step(self, action: Any) -> tuple[ObsType, float, bool, bool, dict[str, Any]]:
        if self._needs_reset:
            if self.closed:
                raise ClosedError("step: the env is closed")
            raise ResetNeeded("step: call reset() first (the episode has not started or has ended)")
        a = check_action(action)
        if not 0 <= a < NUM_ACTIONS:
            raise IllegalActionError(f"action {a} is out of range 0..{NUM_ACTIONS - 1}", code=None, method="step")
        was_legal = self._mask[a] != 0
        r = self._batch.step_one_raw(a)
        # One env: decode only what is needed; obs and mask are views of the reply's bytes.
        obs = np.frombuffer(r["obs"], dtype="<f4")
        mask = np.frombuffer(r["mask"], dtype=np.int8)
        self._mask = mask
        terminated = r["terminated"] != b"\x00"
        truncated = r["truncated"] != b"\x00"
        self._needs_reset = terminated or truncated
        info: dict[str, Any] = {"action_mask": mask, "seat": self.seat}
        if not was_legal:
            info["illegal"] = True
        if "info" in r:
            info.update(r["info"][0])
        return self._observation(obs, mask), _f32(r["reward"])[0], terminated, truncated, info

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode. "
                'You can specify the render_mode at initialization, e.g. yutenv.make(render_mode="ansi")'
            )
            return None
        if self._needs_reset and self.game_seed is None:
            raise ResetNeeded("render: call reset() first")
        if self.render_mode == "rgb_array":
            return self._batch.render_rgb(0).copy()
        return self._batch.render(0)

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
        """The legal-action mask of the current decision (bool[180]), from the last reply.

        No round trip: this is what sb3-contrib's ``MaskablePPO`` calls before each step.
        All False after the episode ended.
        """
        return self._mask.view(np.bool_)

    def save_state(self) -> bytes:
        """The engine's versioned binary blob of the current game (includes its generator)."""
        return self._batch.save(0)

    @property
    def server_address(self) -> str:
        return self._session.address

    def _observation(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> ObsType:
        if self.obs_type == "dict":
            return {"observation": obs, "action_mask": mask}
        return obs

    def __repr__(self) -> str:
        return f"<YutEnv rules={getattr(self, 'rules', '?')} opponent={getattr(self, 'opponent', '?')} tier={getattr(self, 'tier', '?')}>"
