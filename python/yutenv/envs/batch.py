"""Env batches: the one way every front end steps games.

A :class:`Batch` is one server-side handle of ``n`` envs (``make``) on a
:class:`~yutenv.connection.Session`; its ``reset`` and ``step`` are one round trip each and
return numpy views of the reply's ``bin`` payloads (``np.frombuffer``: zero-copy,
**read-only**). :class:`~yutenv.YutEnv`, :class:`~yutenv.YutVectorEnv` and the PettingZoo
envs all hold one (:func:`open_batch`) and differ only in the API they put around it
(:mod:`yutenv.envs.frontend` has what they share). Over shared memory the rows are in a region
the server writes (:mod:`yutenv.envs.shared`) instead of the reply.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, Sequence

import msgpack
import numpy as np
import numpy.typing as npt

from .._layout import OBS_LAYOUT, TIER_SIZES  # noqa: F401  # re-exported
from .._protocol import LUCK_NET_PREFIX
from .._protocol import NUM_ACTIONS as NUM_ACTIONS  # the action count, generated from the engine (180)
from .._specs import net_spec, spec_path
from .._wire.args import check_action as check_action
from .._wire.args import check_seed as check_seed
from ..connection.session import PROTOCOL as PROTOCOL
from ..connection.session import Session as Session
from ..errors import ClosedError, YutEnvError
from .config import EnvConfig, plain
from .opponents import Mixture, answer, is_mixture, mixture
from .shared import OPPONENT_STEP, STEP, Region
from .shared import supported as shared_supported

#: The transports of a batch (see :class:`Batch`).
TRANSPORTS = ("auto", "shared", "socket")

# Where a spec's PATH ends: at the first item that reads key=value with a bare ASCII word as key
# (the server's agent.ParseSpec, looksLikeOption); a file's name may hold commas.

if TYPE_CHECKING:
    pass


def _f32(b: bytes, shape: tuple[int, ...]) -> npt.NDArray[np.float32]:
    return np.frombuffer(b, dtype="<f4").reshape(shape)


def _mask(b: bytes, shape: tuple[int, ...]) -> npt.NDArray[np.int8]:
    return np.frombuffer(b, dtype=np.int8).reshape(shape)


def _bool(b: bytes) -> npt.NDArray[np.bool_]:
    # The wire sends 0/1 bytes: a bool view of the same memory, no copy.
    return np.frombuffer(b, dtype=np.bool_)


def _i8(b: bytes) -> npt.NDArray[np.int8]:
    return np.frombuffer(b, dtype=np.int8)


@dataclass
class ResetResult:
    """A batch's reset, as :meth:`Batch.reset` returns it: the rows of every env (``N`` envs,
    observations of ``D`` values), the seeds the server used, the info maps when asked for, and
    the reply as decoded (``raw``)."""

    obs: npt.NDArray[np.float32]  # [N, D]
    mask: npt.NDArray[np.int8]  # [N, 180]
    to_move: npt.NDArray[np.int8]  # [N]
    seeds: list[int]
    info: list[dict[str, Any]] | None
    raw: dict[str, Any]


@dataclass
class StepResult:
    """A batch's step, as :meth:`Batch.step` returns it: the rows of every env after the step
    (rewards ``[N]`` for one learner, ``[N, P]`` for every seat), the final rows of the envs an
    autoreset restarted in the same step (``same_step`` mode only), the info maps when asked
    for, and the reply as decoded (``raw``)."""

    obs: npt.NDArray[np.float32]  # [N, D]
    mask: npt.NDArray[np.int8]  # [N, 180]
    reward: npt.NDArray[np.float32]  # [N] (single) or [N, P] (multi)
    terminated: npt.NDArray[np.bool_]  # [N]
    truncated: npt.NDArray[np.bool_]  # [N]
    to_move: npt.NDArray[np.int8]  # [N]
    final_obs: npt.NDArray[np.float32] | None  # [N, D], same_step only
    final_mask: npt.NDArray[np.int8] | None
    final_to_move: npt.NDArray[np.int8] | None
    info: list[dict[str, Any]] | None
    raw: dict[str, Any]


class Batch:
    """A handle of ``n`` envs on the server (protocol ``make``).

    Keyword arguments are the ``make`` parameters of docs/PROTOCOL.md (``rules``,
    ``tier``, ``mode``, ``seat``, ``opponent``, ``autoreset``, ``max_decisions``,
    ``reward``, ``illegal``, ``info``); None means the server's default.

    ``transport`` is ``"auto"`` (shared memory where the connection allows it: a Unix socket on
    Linux or macOS; else the socket), ``"shared"`` (shared memory, or an error) or ``"socket"``
    (every row through the socket). ``spin_us`` is how long the server polls a shared region for
    the next step (:mod:`yutenv.envs.shared`). With shared memory, results are fresh bytes unless
    :attr:`views` is set: then they are read-only views of the region, overwritten by the next
    reset or step.
    """

    def __init__(self, session: Session, n: int = 1, *, transport: str = "auto", spin_us: int = 0, **params: Any) -> None:
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {', '.join(map(repr, TRANSPORTS))}; got {transport!r}")
        self.session = session
        self._call = session.client.call
        p: dict[str, Any] = {"n": int(n)}
        #: The opponent mixture, when ``opponent`` is not one spec (its policies are played here).
        self.mixture: Mixture | None = None
        opponent = params.pop("opponent", None)
        if opponent is not None:
            if is_mixture(opponent):
                self.mixture = mixture(opponent, session.timeout)
                p.update(self._params(self.mixture))
            else:
                p["opponent"] = self._local(opponent)
        self._answers = self.mixture is not None and bool(self.mixture.policies)
        for k, v in params.items():
            if v is not None:
                p[k] = v
        if isinstance(p.get("luck"), str) and p["luck"].startswith(LUCK_NET_PREFIX):
            p["luck"] = self._local(p["luck"])  # the luck's value head, a network file like an opponent's
        self.made: dict[str, Any] = self._call("make", p)
        self.handle: int = int(self.made["handle"])
        self.n: int = int(self.made["n"])
        self.players: int = int(self.made["players"])
        self.obs_size: int = int(self.made["obs_size"])
        if self.mixture is not None:
            try:
                self.mixture.check_obs_size(self.obs_size, str(self.made["tier"]))
            except ValueError:
                self._call("close", {"handle": self.handle})
                raise
        self.obs_space_info: dict[str, Any] = dict(self.made["obs_space"])
        self.reward_shape: tuple[int, ...] = tuple(int(x) for x in self.made["reward_shape"])
        #: The number of actions (the server's codec), the length of every mask row.
        self.actions: int = int(self.made["actions"])
        self.same_step = self.made.get("autoreset") == "same_step"
        # A mixture's bookkeeping: each env's running episode drew from the mixture in
        # env_mix[i] (set_opponents changes only the next episodes'), at entry column[i].
        self.env_mix: list[Mixture | None] = [self.mixture] * self.n
        self._column = np.zeros(self.n, dtype=np.uint8)
        self._anew = np.zeros(self.n, dtype=np.bool_)  # next_step: these envs begin an episode at the next step
        #: After a step: the name of the opponent of each episode that ended in it, by env index.
        self.ended_opponents: dict[int, str] = {}
        self.closed = False
        self._obs_shape = (self.n, self.obs_size)
        self._mask_shape = (self.n, self.actions)
        # step's params for one action, pre-encoded: {"handle": h, "actions": bin8(4)} + int32
        pk = msgpack.Packer(use_bin_type=True)
        self._one_prefix = b"\x82" + pk.pack("handle") + pk.pack(self.handle) + pk.pack("actions") + b"\xc4\x04"
        self._i32 = struct.Struct("<i").pack
        self._info = bool(p.get("info", False))
        self._sent = False  # send_step started a step that recv_step has not ended
        #: The shared region of the rows (None: the socket carries them); see ``transport``.
        self.region: Region | None = None
        #: With a shared region: return the rows as views of it (else fresh bytes).
        self.views = False
        self._arrays: dict[str, Any] | None = None
        self._views_result: StepResult | None = None
        if transport == "shared" or (transport == "auto" and shared_supported(session.client)):
            try:
                self.region = Region(session.client, self.handle, spin_us)
            except BaseException:
                self._close_quietly()
                raise

    def _close_quietly(self) -> None:
        self.closed = True
        try:
            self._call("close", {"handle": self.handle})
        except YutEnvError:
            pass

    def _rows(self, r: Mapping[str, Any]) -> dict[str, Any]:
        """A shared handle's reply ``r`` completed with the rows of the region, as the socket
        would have sent them: fresh bytes, or views of the region with :attr:`views`."""
        assert self.region is not None
        out = dict(r)
        if self.views:
            out.update(self.region.bytes)
        else:
            for k, v in self.region.bytes.items():
                out[k] = bytes(v)
        return out

    def _region_arrays(self) -> dict[str, Any]:
        """The region's rows as the arrays of a :class:`StepResult` (made once: they are views
        of the region, whose contents each step replaces)."""
        if self._arrays is None:
            assert self.region is not None
            v = self.region.views
            self._arrays = {
                "obs": v["obs"],
                "mask": v["mask"].view(np.int8),
                "reward": v["reward"].reshape(self.reward_shape),
                "terminated": v["terminated"],
                "truncated": v["truncated"],
                "to_move": v["to_move"],
                "final_obs": v.get("final_obs"),
                "final_mask": v["final_mask"].view(np.int8) if "final_mask" in v else None,
                "final_to_move": v.get("final_to_move"),
            }
        return self._arrays

    def _shared(self, op: int, info: bool | None) -> dict[str, Any]:
        assert self.region is not None
        return self._rows(self.region.request(op, self._info if info is None else info))

    def _check(self, method: str) -> None:
        if self.closed:
            raise ClosedError(f"{method}: the env batch is closed")

    def reset(
        self,
        seed: int | Sequence[int] | None = None,
        options: Mapping[str, Any] | None = None,
        info: bool | None = None,
    ) -> ResetResult:
        self._check("reset")
        p: dict[str, Any] = {"handle": self.handle}
        if seed is not None:
            p["seed"] = int(seed) if isinstance(seed, (int, np.integer)) else [int(s) for s in seed]
        if options:
            p["options"] = {k: plain(v) for k, v in options.items()}
        if info is not None:
            p["info"] = info
        self.env_mix = [self.mixture] * self.n  # every env begins an episode
        self._anew[:] = False
        self._finish_abandoned()
        if self.region is not None:
            p["shared"] = True
            r = self._rows(self._call("reset", p))
        else:
            r = self._call("reset", p)
        if self._answers:
            seeds = r["seeds"]
            r = answer(self, r)
            r["seeds"] = seeds
        self._tracked(r, reset=True)
        return ResetResult(
            obs=_f32(r["obs"], self._obs_shape),
            mask=_mask(r["mask"], self._mask_shape),
            to_move=_i8(r["to_move"]),
            seeds=[int(s) for s in r["seeds"]],
            info=r.get("info"),
            raw=r,
        )

    def step_bytes(self, actions: bytes, info: bool | None = None) -> StepResult:
        """Step with ``actions`` already encoded as N little-endian int32."""
        self._check("step")
        self._begin_step()
        if self.region is not None:
            if len(actions) != 4 * self.n:
                raise ValueError(f"expected {self.n} actions ({4 * self.n} bytes), got {len(actions)} bytes")
            self.region.actions[:] = np.frombuffer(actions, dtype="<i4")
            r = self._shared(STEP, info)
        else:
            p: dict[str, Any] = {"handle": self.handle, "actions": actions}
            if info is not None:
                p["info"] = info
            r = self._call("step", p)
        return self._step_result(r)

    def _step_result(self, r: dict[str, Any]) -> StepResult:
        if self._answers:
            r = answer(self, r)
        self._tracked(r)
        if self.views and self.region is not None:
            return StepResult(**self._region_arrays(), info=r.get("info"), raw=r)
        fo = r.get("final_obs")
        return StepResult(
            obs=_f32(r["obs"], self._obs_shape),
            mask=_mask(r["mask"], self._mask_shape),
            reward=_f32(r["reward"], self.reward_shape),
            terminated=_bool(r["terminated"]),
            truncated=_bool(r["truncated"]),
            to_move=_i8(r["to_move"]),
            final_obs=_f32(fo, self._obs_shape) if fo is not None else None,
            final_mask=_mask(r["final_mask"], self._mask_shape) if fo is not None else None,
            final_to_move=_i8(r["final_to_move"]) if fo is not None else None,
            info=r.get("info"),
            raw=r,
        )

    def step_array(self, actions: npt.NDArray[Any], info: bool | None = None) -> StepResult:
        """Step with ``actions``, an integer array of N actions (checked by the caller): written
        straight into a shared region, else sent as N little-endian int32."""
        self.send_step(actions, info)
        return self.recv_step()

    def send_step(self, actions: npt.NDArray[Any], info: bool | None = None) -> None:
        """Start a step with ``actions`` (as :meth:`step_array`) and return at once: the server
        steps while this process goes on; :meth:`recv_step` returns its result."""
        self._check("step")
        if self._sent:
            raise YutEnvError("step: a step was sent and its result not received (call recv_step)")
        self._begin_step()
        if self.region is not None:
            self.region.actions[:] = actions
            self.region.send(STEP, self._info if info is None else info)
        else:
            p: dict[str, Any] = {"handle": self.handle, "actions": actions.astype("<i4", copy=False).tobytes()}
            if info is not None:
                p["info"] = info
            self.session.client.send_packed("step", msgpack.packb(p, use_bin_type=True))
        self._sent = True

    def _finish_abandoned(self) -> None:
        # A step still in flight that nothing will collect (its caller was interrupted, or reset
        # came before step_wait) is finished, its result dropped, so that it cannot land after
        # what follows; so is a shared request an interrupt cut short (Region.settle).
        if self._sent:
            try:
                self.recv_step()
            except YutEnvError:
                pass
        elif self.region is None:
            self.session.client.abandon()  # a step's frame sent, its caller interrupted before
        if self.region is not None:
            self.region.settle()

    def step_ready(self) -> bool:
        """Whether the step :meth:`send_step` started is done (never blocks)."""
        if self.region is not None:
            return self.region.ready()
        return self.session.client.reply_waiting()

    def recv_step(self, idle: Callable[[], None] | None = None) -> StepResult:
        """The result of the step :meth:`send_step` started (waits for it). ``idle``, if given,
        is called once while the server steps (work of the last step that can wait)."""
        if not self._sent:
            raise YutEnvError("step: no step was sent (call send_step first)")
        self._sent = False
        if self.region is not None:
            reply = self.region.wait(idle)
            if self.views and self.mixture is None and not reply:
                # Served by the poll, no info, nothing to answer or track: the rows are the
                # region's views, the same objects each step.
                if self._views_result is None:
                    self._views_result = StepResult(**self._region_arrays(), info=None, raw=self._rows({}))
                return self._views_result
            r = self._rows(reply)
        else:
            if idle is not None:
                idle()
            r = self.session.client.recv_reply("step")
        return self._step_result(r)

    def step(self, actions: Any, info: bool | None = None) -> StepResult:
        """Step every env; ``actions`` is anything ``np.asarray`` turns into N ints."""
        a = np.asarray(actions)
        if a.shape != (self.n,):
            if a.size == self.n:
                a = a.reshape(self.n)
            else:
                raise ValueError(f"expected {self.n} actions, got an array of shape {a.shape}")
        if a.dtype.kind not in "iub":
            if a.dtype.kind == "f" and np.all(np.mod(a, 1) == 0):
                pass
            else:
                raise TypeError(f"actions must be integers, got dtype {a.dtype}")
        return self.step_bytes(a.astype("<i4", copy=False).tobytes(), info)

    def step_one(self, action: int, info: bool | None = None) -> StepResult:
        """Step a batch of one env with one int action."""
        return self.step_bytes(self._i32(action), info)

    def step_one_raw(self, action: int) -> dict[str, Any]:
        """The fast path of the single env: step one env, return the raw result map
        (``obs``, ``mask``, ``reward``, ``terminated``, ... as bytes; see docs/PROTOCOL.md)."""
        if self.closed:
            raise ClosedError("step: the env batch is closed")
        region = self.region
        if self.mixture is None:
            if region is not None:
                region.actions[0] = action
                return self._shared(STEP, None)
            return self.session.client.call_packed("step", self._one_prefix + self._i32(action))  # type: ignore[no-any-return]
        self._begin_step()
        if region is not None:
            region.actions[0] = action
            r = self._shared(STEP, None)
        else:
            r = self.session.client.call_packed("step", self._one_prefix + self._i32(action))
        if self._answers:
            r = answer(self, r)
        self._tracked(r)
        return r

    def _begin_step(self) -> None:
        """Before a step: envs whose episode ended at the last one (next_step) begin a new one,
        drawn from the current mixture."""
        if self.mixture is not None and self._anew.any():
            for i in np.flatnonzero(self._anew):
                self.env_mix[i] = self.mixture
            self._anew[:] = False

    def mixture_of(self, i: int, r: Mapping[str, Any]) -> Mixture:
        """The mixture env ``i``'s row of reply ``r`` belongs to: its running episode's, or the
        current one for an episode that began in this same step (same_step autoreset)."""
        if self.same_step and "terminated" in r and (r["terminated"][i] or r["truncated"][i]):
            m = self.mixture
        else:
            m = self.env_mix[i]
        assert m is not None
        return m

    def _tracked(self, r: Mapping[str, Any], reset: bool = False) -> None:
        """After a reset or step: note which mixture each env's episode plays, and the
        opponents of the episodes that ended."""
        if self.mixture is None:
            return
        col = np.frombuffer(r["opponent"], dtype=np.uint8)
        self.ended_opponents = {}
        if reset:
            self.env_mix = [self.mixture] * self.n
            self._anew[:] = False
        elif "terminated" in r:
            ended = np.flatnonzero(np.frombuffer(r["terminated"], np.bool_) | np.frombuffer(r["truncated"], np.bool_))
            for i in map(int, ended):
                m = self.env_mix[i]
                k = int(self._column[i] if self.same_step else col[i])
                self.ended_opponents[i] = _name(m, k)
                if self.same_step:
                    self.env_mix[i] = self.mixture
                else:
                    self._anew[i] = True
        self._column = col.copy()

    def opponent_step(self, actions: bytes) -> dict[str, Any]:
        """Answer the envs that wait for a client-played opponent (``actions``: N little-endian
        int32, ignored for the others); the raw reply, as ``step``'s. :func:`answer` calls it."""
        self._check("opponent_step")
        if self.region is not None:
            self.region.actions[:] = np.frombuffer(actions, dtype="<i4")
            return self._shared(OPPONENT_STEP, None)
        return self._call("opponent_step", {"handle": self.handle, "actions": actions})  # type: ignore[no-any-return]

    def set_opponents(self, opponent: Any) -> list[str]:
        """Replace the opponent mixture of a batch made with one (``set_opponents``): each env's
        next episode draws from ``opponent`` (any ``opponent`` option but one spec string); the
        running episodes finish against the entry they drew. Returns the entries' names."""
        self._check("set_opponents")
        if self.mixture is None:
            raise ValueError(
                "set_opponents: this env was made with one opponent spec; make it with a mixture (a list) to change it"
            )
        m = mixture(opponent if is_mixture(opponent) else [opponent], self.session.timeout)
        m.check_obs_size(self.obs_size, str(self.made["tier"]))
        self._call("set_opponents", {"handle": self.handle, **self._params(m)})
        self.mixture = m
        self._answers = self._answers or bool(m.policies)
        return list(m.names)

    def _local(self, spec: str) -> str:
        """``spec`` with a relative ``net:PATH`` made absolute from this process's folder when
        the server is one the package started with its default folders (it may have started
        in another folder); a server named by address, or started with its own ``--net-dir``
        folders, resolves names itself."""
        srv = self.session.server
        if srv is None or not srv.opens_any_net:
            return spec
        parts = spec_path(spec)  # the PATH as the server parses it, quoted or bare
        if parts is None or parts[0] != "net" or os.path.isabs(parts[1]):
            return spec
        return net_spec(os.path.abspath(parts[1])) + parts[2]

    def _params(self, m: Mixture) -> dict[str, Any]:
        p = m.params()
        p["opponents"] = [self._local(s) for s in p["opponents"]]
        return p

    def opponent_names(self, column: npt.NDArray[np.uint8] | None = None) -> list[str]:
        """The name of each env's running opponent, from the last reply's ``opponent`` column
        (or ``column``): an entry of the mixture its episode drew from."""
        col = self._column if column is None else column
        return [_name(self.env_mix[i], int(k)) for i, k in enumerate(col)]

    def observe(self, seat: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Every env's observation [N, D] and mask [N, actions] as ``seat`` sees them (``observe``;
        changes nothing)."""
        self._check("observe")
        r = self._call("observe", {"handle": self.handle, "seat": int(seat)})
        return _f32(r["obs"], self._obs_shape), _mask(r["mask"], self._mask_shape)

    def render(self, index: int = 0) -> str:
        """The env's position as text (the engine's board drawing)."""
        self._check("render")
        return str(self._call("render", {"handle": self.handle, "index": int(index), "format": "text"})["text"])

    def render_rgb(self, index: int = 0) -> npt.NDArray[np.uint8]:
        """The env's position as an RGB image, shape (height, width, 3), dtype uint8 (read-only view)."""
        self._check("render")
        r = self._call("render", {"handle": self.handle, "index": int(index), "format": "rgb"})
        return np.frombuffer(r["rgb"], dtype=np.uint8).reshape(int(r["height"]), int(r["width"]), 3)

    def render_svg(self, index: int = 0) -> str:
        """The env's position as an SVG document."""
        self._check("render")
        return str(self._call("render", {"handle": self.handle, "index": int(index), "format": "svg"})["svg"])

    def save(self, index: int = 0) -> bytes:
        self._check("save")
        return bytes(self._call("save", {"handle": self.handle, "index": int(index)})["state"])

    def load(self, index: int, state: bytes, seat: int | None = None) -> dict[str, Any]:
        self._check("load")
        if not isinstance(state, (bytes, bytearray, memoryview)):
            raise TypeError(f"load_state: a state is the bytes of save_state(), got {type(state).__name__}")
        p: dict[str, Any] = {"handle": self.handle, "index": int(index), "state": bytes(state)}
        if seat is not None:
            p["seat"] = int(seat)
        self._finish_abandoned()
        r = self._call("load", p)
        if self._answers and r.get("pending") == b"\x01":
            full = answer(self, r, index=int(index))
            i, d, a = int(index), self.obs_size, self.actions
            r = {
                "obs": full["obs"][4 * d * i : 4 * d * (i + 1)],
                "mask": full["mask"][a * i : a * (i + 1)],
                "to_move": full["to_move"][i : i + 1],
            }
        return {
            "obs": _f32(r["obs"], (1, self.obs_size)),
            "mask": _mask(r["mask"], (1, self.actions)),
            "to_move": _i8(r["to_move"]),
        }

    def close(self) -> None:
        """Free the handle on the server (best effort if the connection is gone)."""
        if self.closed:
            return
        self.closed = True
        if not self.session.closed and not self.session.client.closed:
            try:
                self._call("close", {"handle": self.handle})
            except YutEnvError:
                pass
        if self.region is not None:
            self.region.close()


def open_batch(
    n: int, config: EnvConfig, mode: Literal["single", "multi"], autoreset: str, spin: float = 0.0, spin_us: int = 0
) -> Batch:
    """Connect a session as ``config`` says (``spin``: see :attr:`Client.spin`) and make a
    batch of ``n`` envs with its options and transport (``spin_us``: the server's poll of a
    shared region, unless the config names one); the session is closed again if ``make`` fails. ``batch.session`` is it.
    ``n`` is checked first, by the name the front ends give it."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"num_envs must be an integer >= 1, got {n!r}")
    session = Session(address=config.address, token=config.token, server=config.server, timeout=config.timeout)
    session.client.spin = spin
    try:
        sp = spin_us if config.spin_us is None else config.spin_us
        return Batch(session, n, transport=config.transport, spin_us=sp, **config.make_params(mode, autoreset))
    except BaseException:
        session.close()
        raise


def _name(m: Mixture | None, k: int) -> str:
    names = m.names if m is not None else ()
    return names[k] if 0 <= k < len(names) else str(k)
