"""Opponents beyond one fixed spec: mixtures drawn per episode, and Python policies.

An env's ``opponent`` is one of:

* an agent spec played by the server: ``"greedy"``, ``"mcts:400"``, ``"az"``, ``"net:PATH"``;
* a **Python policy**, called in the client: any callable ``policy(obs, mask) -> actions`` over a
  batch (``obs`` float32 ``[B, D]``, ``mask`` bool ``[B, 180]``, ``actions`` ``B`` ints), an
  sb3-contrib ``MaskablePPO`` model (its ``predict`` with ``action_masks``, deterministic), or a
  torch module mapping observations to 180 action logits (the legal action of highest logit);
* a **mixture** of these: a list (``["greedy", "mc:100", "az"]``, entries drawn with equal
  probability), a list of ``(entry, weight)`` pairs, or a mapping ``{entry: weight}``; a weight
  is any finite real number > 0 (a Python or numpy int or float; a bool, NaN, an infinity or a
  number <= 0 is refused with a ValueError naming the entry). Each
  episode draws its entry from its own game seed on the server, so the same seeds give the same
  opponents; ``info["opponent"]`` names the episode's.

A Python policy sees the opponent seat's own observation and mask (the tier of the env). It is
called once per round of opponent decisions for **all** envs of a batch whose opponent is to
move, never once per env: a Yut turn can hold several decisions (a yut or mo earns another
throw), so one ``step()`` may take a few rounds. The policy is run on a worker thread and given
the env's ``timeout`` to answer; a policy that raises, hangs, answers with the wrong shape or an
illegal action raises :class:`~yutenv.OpponentError` (or :class:`~yutenv.OpponentTimeoutError`)
naming the opponent and the envs, and the env must then be ``reset()``.

>>> import yutenv
>>> def first_legal(obs, mask):            # any batch policy
...     return mask.argmax(axis=1)
>>> venv = yutenv.make(num_envs=8, opponent=[("greedy", 3), ("mc:20", 1), first_legal])
>>> obs, info = venv.reset(seed=1)
>>> sorted(set(info["opponent"]))         # each env's episode drew its own
['first_legal', 'greedy', 'mc:20']
>>> venv.close()
"""

from __future__ import annotations

import math
import queue
import sys
import threading
from dataclasses import dataclass, field
from numbers import Real as _Real
from typing import Any, Callable, Mapping

import numpy as np
import numpy.typing as npt

from .._protocol import MAX_OPPONENTS as _MAX_OPPONENTS
from .._protocol import NUM_ACTIONS, TIER_SIZES
from ..errors import OpponentError, OpponentTimeoutError

CLIENT = "client"
"""The wire's spec of a mixture entry that the client plays (docs/PROTOCOL.md, "Opponent mixtures")."""

MAX_OPPONENTS = _MAX_OPPONENTS
"""The most entries a mixture may have (the server's ``vecenv.MaxOpponents``, generated)."""

#: A Python opponent: ``policy(obs, mask) -> actions`` over a batch (observations ``[B, D]``,
#: legal-action masks ``[B, 180]``; one action per row).
Policy = Callable[[npt.NDArray[np.float32], npt.NDArray[np.bool_]], Any]


def _is_sb3_model(x: object) -> bool:
    return hasattr(x, "predict") and hasattr(x, "policy") and hasattr(x, "observation_space")


def is_torch_module(x: object) -> bool:
    """True for a torch ``nn.Module`` (without importing torch when it is not loaded)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.nn.Module)


def policy_name(p: object) -> str:
    """A readable name of a policy, for ``info["opponent"]`` and messages: its ``name``
    attribute, else its function or class name (``"policy"`` for a lambda)."""
    name = getattr(p, "name", None)
    if isinstance(name, str) and name:
        return name
    fn = getattr(p, "__name__", None)
    if isinstance(fn, str):
        return "policy" if fn == "<lambda>" else fn
    return type(p).__name__


def torch_actions(module: Any, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """A torch module's actions: ``module(obs)`` gives [B, 180] logits; each row's legal action
    of highest logit."""
    import torch

    with torch.no_grad():
        logits = module(torch.as_tensor(obs)).detach().cpu().numpy()
    return np.where(mask, logits, -np.inf).argmax(axis=1)  # type: ignore[no-any-return]


def policy_obs_size(policy: object) -> int | None:
    """The observation length a policy was built for, when it says: an SB3 model's flat
    ``observation_space``, a torch module's ``obs_size`` attribute (for a module that does not
    read its input with a first nn.Linear, such as one that slices it) or else its first
    ``in_features`` (nn.Linear); None for a plain callable."""
    if _is_sb3_model(policy):
        shape = getattr(getattr(policy, "observation_space", None), "shape", None)
        return int(np.prod(shape)) if shape else None
    if is_torch_module(policy):
        declared = getattr(policy, "obs_size", None)
        if isinstance(declared, int) and not isinstance(declared, bool):
            return declared
        for m in policy.modules():  # type: ignore[attr-defined]
            n = getattr(m, "in_features", None)
            if isinstance(n, int):
                return n
    return None


def check_obs_size(policy: object, name: str, obs_size: int, tier: str) -> None:
    """Raise ValueError, naming the tiers, when ``policy`` was built for observations of another
    length than the env's ``obs_size`` (tier ``tier``): a model trained on one tier and played on
    another, which would otherwise fail deep inside torch with a shape error."""
    want = policy_obs_size(policy)
    if want is None or want == obs_size:
        return
    tiers = [t for t, size in TIER_SIZES.items() if size == want]
    fix = f"those of tier {tiers[0]!r}: pass tier={tiers[0]!r}" if tiers else "those of no observation tier"
    raise ValueError(f"{name} takes observations of {want} values ({fix}), but this env's tier {tier!r} gives {obs_size}")


class _Worker:
    """A daemon thread that runs policy calls, so that a call can be given a timeout. A call
    that times out leaves its thread behind (Python cannot stop it); the next call gets a
    fresh thread."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], dict[str, Any], threading.Event]] | None = None

    def _start(self) -> queue.SimpleQueue[tuple[Callable[[], Any], dict[str, Any], threading.Event]]:
        jobs: queue.SimpleQueue[tuple[Callable[[], Any], dict[str, Any], threading.Event]] = queue.SimpleQueue()

        def loop() -> None:
            while True:
                fn, box, done = jobs.get()
                try:
                    box["value"] = fn()
                except BaseException as e:  # handed to the caller
                    box["error"] = e
                done.set()

        threading.Thread(target=loop, daemon=True, name="yutenv-opponent").start()
        return jobs

    def run(self, fn: Callable[[], Any], timeout: float) -> Any:
        if self._jobs is None:
            self._jobs = self._start()
        box: dict[str, Any] = {}
        done = threading.Event()
        self._jobs.put((fn, box, done))
        if not done.wait(timeout):
            self._jobs = None  # that thread is stuck: the next call starts another
            raise TimeoutError
        if "error" in box:
            raise box["error"]
        return box["value"]


@dataclass
class PolicyOpponent:
    """A Python policy playing an opponent seat, called for a batch of envs at once.

    Args:
        policy: a callable ``(obs [B, D] float32, mask [B, 180] bool) -> B actions``, an SB3
            model (``predict(obs, action_masks=mask, deterministic=True)``) or a torch module
            (obs -> 180 logits; the legal action of highest logit).
        name: the name in ``info["opponent"]`` and in messages (default: the policy's).
        timeout: seconds a call may take (None: no limit, and no worker thread).
    """

    policy: Any
    name: str = ""
    timeout: float | None = None
    _worker: _Worker = field(default_factory=_Worker, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (callable(self.policy) or _is_sb3_model(self.policy)):
            raise TypeError(
                f"an opponent policy must be callable (obs, mask) -> actions, an SB3 model or a torch module; got {self.policy!r}"
            )
        if not self.name:
            self.name = policy_name(self.policy)

    def _raw(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_]) -> Any:
        p = self.policy
        if _is_sb3_model(p):
            actions, _ = p.predict(obs, action_masks=mask, deterministic=True)
            return actions
        if is_torch_module(p):
            return torch_actions(p, obs, mask)
        return p(obs, mask)

    def act(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_], envs: npt.NDArray[np.intp]) -> npt.NDArray[np.int32]:
        """The policy's actions for the rows of ``envs`` (env indices, for messages), checked:
        B ints, each legal in its row. Raises :class:`OpponentError` otherwise."""
        where = _envs_text(envs)
        try:
            if self.timeout is None:
                out = self._raw(obs, mask)
            else:
                out = self._worker.run(lambda: self._raw(obs, mask), self.timeout)
        except TimeoutError:
            raise OpponentTimeoutError(
                f"opponent {self.name!r} did not answer within {self.timeout:g} s for {where} "
                "(reset the env; raise the env's timeout= if the policy is this slow)"
            ) from None
        except Exception as e:
            raise OpponentError(f"opponent {self.name!r} raised {type(e).__name__} for {where}: {e}") from e
        try:
            a = np.asarray(out)
        except Exception as e:  # an object numpy cannot read
            raise OpponentError(f"opponent {self.name!r} returned {type(out).__name__}, not actions, for {where}") from e
        b = len(envs)
        if a.shape not in ((b,), (b, 1)):
            raise OpponentError(f"opponent {self.name!r} returned actions of shape {a.shape} for {b} envs ({where}); want ({b},)")
        a = a.reshape(b)
        if a.dtype.kind not in "iu" and not (a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(np.mod(a, 1) == 0)):
            raise OpponentError(f"opponent {self.name!r} returned actions of dtype {a.dtype} for {where}; want integers")
        a = a.astype(np.int64)
        bad = (a < 0) | (a >= NUM_ACTIONS)
        if not bad.any():
            bad = ~mask[np.arange(b), a]
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise OpponentError(
                f"opponent {self.name!r} returned action {int(a[j])} for env {int(envs[j])}, which is not legal there "
                f"(legal: {np.flatnonzero(mask[j]).tolist()})"
            )
        return a.astype(np.int32)


def _envs_text(envs: npt.NDArray[np.intp]) -> str:
    e = [int(x) for x in envs]
    return f"env {e[0]}" if len(e) == 1 else f"envs {', '.join(map(str, e[:8]))}{', ...' if len(e) > 8 else ''}"


@dataclass(frozen=True)
class Mixture:
    """An env's opponents as the server plays them: the entries' wire specs (``"client"`` for
    a Python policy), their weights and names, and the policies by entry index."""

    specs: tuple[str, ...]
    weights: tuple[float, ...]
    names: tuple[str, ...]
    policies: Mapping[int, PolicyOpponent]

    def check_obs_size(self, obs_size: int, tier: str) -> None:
        """Each policy's observation length against the env's (:func:`check_obs_size`)."""
        for p in self.policies.values():
            check_obs_size(p.policy, f"opponent {p.name!r}", obs_size, tier)

    def params(self) -> dict[str, Any]:
        """``make``'s (and ``set_opponents``') params of the mixture."""
        return {"opponents": list(self.specs), "weights": list(self.weights)}


def _is_number(w: object) -> bool:
    """A real number of any type (Python's, numpy's, anything :class:`numbers.Real` covers), or a
    bool: what a mixture's weight is meant to be (:func:`_weight` then refuses bools, NaN, inf
    and numbers <= 0 by name)."""
    return isinstance(w, (_Real, np.integer, np.floating, np.bool_))


def _weight(i: int, w: object) -> float:
    """Entry ``i``'s weight as a float, or ValueError saying what is wrong with it."""
    if isinstance(w, (bool, np.bool_)):
        raise ValueError(f"opponent entry {i}: weight {w!r} is a bool; want a finite number > 0")
    if not _is_number(w):
        raise ValueError(f"opponent entry {i}: weight {w!r} is a {type(w).__name__}; want a finite number > 0")
    f = float(w)  # type: ignore[arg-type]
    if not math.isfinite(f) or f <= 0:
        raise ValueError(f"opponent entry {i}: weight {w!r}; want a finite number > 0")
    return f


def _entries(opponent: Any) -> list[tuple[Any, Any]]:
    if isinstance(opponent, Mapping):
        return [(k, v) for k, v in opponent.items()]
    if isinstance(opponent, (list, tuple)):
        out: list[tuple[Any, Any]] = []
        for e in opponent:
            if isinstance(e, tuple) and len(e) == 2 and _is_number(e[1]):
                out.append((e[0], e[1]))
            else:
                out.append((e, 1.0))
        return out
    return [(opponent, 1.0)]


def is_mixture(opponent: Any) -> bool:
    """Whether ``opponent`` needs the mixture form on the wire (anything but one spec string)."""
    return not isinstance(opponent, str)


def mixture(opponent: Any, timeout: float | None = None) -> Mixture:
    """The :class:`Mixture` of an ``opponent`` option (see the module's doc). Raises TypeError
    or ValueError naming the bad entry."""
    entries = _entries(opponent)
    if not entries:
        raise ValueError("opponent: an empty mixture; give at least one agent spec or policy")
    if len(entries) > MAX_OPPONENTS:
        raise ValueError(f"opponent: {len(entries)} entries, at most {MAX_OPPONENTS}")
    specs: list[str] = []
    weights: list[float] = []
    names: list[str] = []
    policies: dict[int, PolicyOpponent] = {}
    for i, (e, w) in enumerate(entries):
        weight = _weight(i, w)
        if isinstance(e, str):
            if e == CLIENT:
                raise ValueError(f"opponent entry {i}: {CLIENT!r} is the wire's name of a Python policy; pass the policy itself")
            specs.append(e)
            names.append(e)
        else:
            p = e if isinstance(e, PolicyOpponent) else PolicyOpponent(e)
            if p.timeout is None and timeout is not None:
                p = PolicyOpponent(p.policy, p.name, timeout)
            policies[i] = p
            specs.append(CLIENT)
            names.append(p.name if p.name not in names else f"{p.name}#{i}")
        weights.append(weight)
    return Mixture(tuple(specs), tuple(weights), tuple(names), policies)


def check_opponent(opponent: Any) -> None:
    """Check an ``opponent`` option without building anything that lasts."""
    if isinstance(opponent, str):
        return
    mixture(opponent)


@dataclass
class OpponentStats:
    """Finished episodes against one opponent: counts and the learner's results."""

    episodes: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    truncated: int = 0
    total_reward: float = 0.0

    @property
    def win_rate(self) -> float:
        """Wins over episodes that ended by the rules (NaN before any)."""
        n = self.wins + self.losses + self.draws
        return self.wins / n if n else math.nan

    def as_dict(self) -> dict[str, float]:
        return {
            "episodes": self.episodes,
            "wins": self.wins,
            "losses": self.losses,
            "draws": self.draws,
            "truncated": self.truncated,
            "win_rate": self.win_rate,
            "mean_reward": self.total_reward / self.episodes if self.episodes else math.nan,
        }


def answer(batch: Any, r: dict[str, Any], index: int | None = None) -> dict[str, Any]:
    """Answer every env of ``r`` (a reply of ``reset``, ``step``, ``opponent_step`` or, with
    ``index``, ``load`` of env ``index``) that waits for a client-played opponent, one policy
    call per entry per round, until none waits; returns the last reply (of the whole batch).
    Each env's policy is that of the mixture its episode drew from (``batch.mixture_of``)."""
    n = batch.n
    while True:
        pending = r.get("pending")
        if pending is None or 1 not in pending:
            return r
        rows = len(pending)
        pend = np.frombuffer(pending, dtype=np.uint8).astype(np.bool_)
        opp = np.frombuffer(r["opponent"], dtype=np.uint8)
        obs = np.frombuffer(r["obs"], dtype="<f4").reshape(rows, batch.obs_size)
        mask = np.frombuffer(r["mask"], dtype=np.int8).reshape(rows, batch.actions).view(np.bool_)
        row_env = np.arange(rows) if index is None else np.array([index])
        groups: dict[tuple[int, int], tuple[PolicyOpponent | None, list[int]]] = {}
        for j in map(int, np.flatnonzero(pend)):
            m = batch.mixture_of(int(row_env[j]), r)
            k = int(opp[j])
            g = groups.setdefault((id(m), k), (m.policies.get(k), []))
            g[1].append(j)
        actions = np.zeros(n, dtype="<i4")
        for (_, k), (pol, js) in groups.items():
            if pol is None:
                raise OpponentError(f"the server asked the client to play opponent entry {k}, which is not a Python policy")
            sel = np.array(js)
            actions[row_env[sel]] = pol.act(obs[sel], mask[sel], row_env[sel])
        r = batch.opponent_step(actions.tobytes())
        index = None
