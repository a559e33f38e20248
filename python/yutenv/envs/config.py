"""``EnvConfig``: the options of an env, validated once, shared by every front end.

:class:`~yutenv.YutEnv`, :class:`~yutenv.YutVectorEnv` and the PettingZoo AEC env all take
the same options: either as keyword arguments (``yutenv.make(opponent="greedy")``), which
build an :class:`EnvConfig`, or as a ready config (``yutenv.make(config=cfg)``), optionally
with keyword arguments that override some of its fields.

>>> from yutenv import EnvConfig, YutEnv, YutVectorEnv
>>> cfg = EnvConfig(rules="players=3", opponent="mc:20", reward="progress")
>>> env = YutEnv(cfg)                       # one game
>>> venv = YutVectorEnv(64, cfg, seat=1)    # 64 games, the learner in seat 1
>>> env.config.opponent, venv.num_envs
('mc:20', 64)
>>> env.close(); venv.close()

What the server decides (the rules' canonical form, the observation space, the number of
actions, frame limits) is not repeated here: the front ends read it from the server's
``hello`` and ``make`` replies (docs/PROTOCOL.md).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

import numpy as np

from .._protocol import LUCK_NET_PREFIX, LUCK_VALUES, MAX_SHARE_SPIN_US, PRESETS, REWARDS, RULE_KEYS, RULE_OPTIONS, RuleOption
from ..connection.server import Server
from ..connection.session import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from ..errors import InvalidRulesError
from .opponents import check_opponent

RENDER_MODES = ("ansi", "rgb_array")
"""Render modes of every front end: the board as text, or as a (480, 720, 3) uint8 image."""

HUMAN_RENDER_MODES = ("human", *RENDER_MODES)
"""Render modes of the one-game front ends (YutEnv, the PettingZoo envs): ``"human"`` also
prints the board as text to the terminal at every reset and step."""


@dataclass(frozen=True)
class EnvConfig:
    """The options of a yutenv env (all optional).

    Game (sent to the server's ``make``):

    Attributes:
        rules: rules string (``"players=3,end=rank"``) or mapping; default ``"standard"``.
        opponent: who plays every other seat (single-agent envs; the AEC env has no
            opponent): an agent spec played by the server (``random``, ``greedy``, ``mc:N``,
            ``mcts:N``, ``az``, ``net:PATH``); a Python policy (a callable ``(obs, mask) ->
            actions`` over a batch, an SB3 model or a torch module), called once per round for
            every env whose opponent is to move; or a mixture drawn per episode from its seed:
            a list of these, of ``(entry, weight)`` pairs, or a mapping ``{entry: weight}``
            (:mod:`yutenv.envs.opponents`). ``info["opponent"]`` names each episode's.
        seat: the learner's seat, or ``"random"`` to draw it each episode (single-agent envs).
        tier: observation tier (``compact``, ``tactical``, ``planes``); None: the server's default.
        illegal: ``"error"`` (an illegal action raises :class:`~yutenv.IllegalActionError`
            and changes nothing) or ``"penalty"`` (the episode ends with reward -1 and
            ``info["illegal"] = True``; for tools that sample unmasked actions, such as
            Gymnasium's env checker).
        max_decisions: truncate an episode after this many decisions (0: never).
        reward: ``"win"`` (+1/-1 at the end only) or ``"progress"`` (the same plus
            potential-based shaping by race progress; see docs/PROTOCOL.md).
        info: also put the server's per-env info map (``seed``, ``episode``, ...) into ``info``.
        luck: value the throws' luck with this value function: ``"az"``, ``"progress"``,
            ``"net:PATH"`` (a network file's value head, under the rules it records), or
            ``"auto"`` for ``az`` under the rules it plays, else ``progress`` (default ``"off"``): the info map then has ``luck``, every seat's luck
            over the episode so far, which :func:`yutenv.evaluate` takes from the outcomes
            (docs/BASELINES.md, "Luck-adjusted results"). It costs server time at every throw.

    Python side:

    Attributes:
        obs_type: ``"box"`` (a float32 vector) or ``"dict"`` (``{"observation", "action_mask"}``;
            the AEC env always uses the dict).
        render_mode: None, ``"ansi"`` (the board as text), ``"rgb_array"`` (an image) or, for
            the one-game envs, ``"human"`` (the board printed to the terminal at every step).

    Connection:

    Attributes:
        address: the server to connect to (``unix:/path``, ``host:port``); default
            ``$YUTENV_ADDRESS``, else the process-wide bundled server.
        token: the server's token, if it has one (default ``$YUTENV_TOKEN`` or the contents
            of ``$YUTENV_TOKEN_FILE``).
        server: a :class:`~yutenv.Server` to use instead of the shared one.
        timeout: seconds to wait for any reply before raising
            :class:`~yutenv.YutTimeoutError` (default 60; None: wait forever).
        transport: how rows travel: ``"auto"`` (shared memory over a Unix socket on Linux and
            macOS, else the socket), ``"shared"`` (shared memory, or an error) or ``"socket"``.
        spin_us: with shared memory, the longest (microseconds, 0..2000) the server keeps
            polling for the next step after serving one, so that it starts at once instead of
            waking up (tens of microseconds on a virtual machine). The server polls for about
            twice the client's usual time between steps, and not at all when that is longer
            than ``spin_us``, so a slow policy costs no polling. None: 2000; 0: never poll.
    """

    rules: str | Mapping[str, Any] = "standard"
    opponent: Any = "random"
    seat: int | str = 0
    tier: str | None = None
    obs_type: Literal["box", "dict"] = "box"
    render_mode: str | None = None
    illegal: Literal["error", "penalty"] = "error"
    max_decisions: int = 0
    reward: Literal["win", "progress"] = "win"
    info: bool = False
    luck: str = "off"
    address: str | None = None
    token: str | None = field(default=None, repr=False)
    server: Server | None = field(default=None, compare=False)
    timeout: float | None = DEFAULT_TIMEOUT
    transport: Literal["auto", "shared", "socket"] = "auto"
    spin_us: int | None = None

    def __post_init__(self) -> None:
        # numpy's scalars (a seat from rng.integers, a sweep's values) are the Python values.
        for name in ("seat", "spin_us", "max_decisions", "timeout"):
            v = getattr(self, name)
            if isinstance(v, np.generic):
                object.__setattr__(self, name, plain(v))
        if isinstance(self.rules, Mapping):
            object.__setattr__(self, "rules", {k: plain(v) for k, v in self.rules.items()})
        elif not isinstance(self.rules, str):
            raise TypeError(f"rules must be a string or a mapping, got {self.rules!r}")
        check_rules(self.rules)
        if isinstance(self.opponent, Mapping):
            object.__setattr__(self, "opponent", tuple(self.opponent.items()))
        elif isinstance(self.opponent, list):
            object.__setattr__(self, "opponent", tuple(self.opponent))
        check_opponent(self.opponent)
        if isinstance(self.seat, str):
            if self.seat != "random":
                raise ValueError(f"seat must be a seat number or 'random', got {self.seat!r}")
        elif isinstance(self.seat, bool) or not isinstance(self.seat, int) or self.seat < 0:
            raise ValueError(f"seat must be a seat number >= 0 or 'random', got {self.seat!r}")
        if self.tier is not None:
            _need_str("tier", self.tier)
        _need_choice("obs_type", self.obs_type, ("box", "dict"))
        if self.render_mode is not None:
            _need_choice("render_mode", self.render_mode, HUMAN_RENDER_MODES)
        _need_choice("illegal", self.illegal, ("error", "penalty"))
        _need_choice("reward", self.reward, REWARDS)
        if not (isinstance(self.luck, str) and self.luck.startswith(LUCK_NET_PREFIX) and len(self.luck) > len(LUCK_NET_PREFIX)):
            _need_choice("luck", self.luck, (*LUCK_VALUES, f"{LUCK_NET_PREFIX}PATH"))
        _need_choice("transport", self.transport, ("auto", "shared", "socket"))
        sp = self.spin_us
        if sp is not None and (isinstance(sp, bool) or not isinstance(sp, int) or not 0 <= sp <= MAX_SHARE_SPIN_US):
            raise ValueError(f"spin_us must be an integer from 0 to {MAX_SHARE_SPIN_US} (microseconds), or None; got {sp!r}")
        if isinstance(self.max_decisions, bool) or not isinstance(self.max_decisions, int) or self.max_decisions < 0:
            raise ValueError(f"max_decisions must be an integer >= 0 (0: never truncate), got {self.max_decisions!r}")
        if not isinstance(self.info, bool):
            raise TypeError(f"info must be True or False, got {self.info!r}")
        for name in ("address", "token"):
            if getattr(self, name) is not None:
                _need_str(name, getattr(self, name))
        if self.server is not None and not isinstance(self.server, Server):
            raise TypeError(f"server must be a yutenv.Server, got {self.server!r}")
        t = self.timeout
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0):
            raise ValueError(f"timeout must be a number of seconds > 0, or None for no limit; got {t!r}")

    @classmethod
    def build(cls, config: EnvConfig | None = None, **options: Any) -> EnvConfig:
        """``config`` (default: all defaults) with ``options`` replacing some fields.

        Raises TypeError naming an unknown option, ValueError/TypeError for a bad value."""
        if config is not None and not isinstance(config, EnvConfig):
            raise TypeError(f"config must be a yutenv.EnvConfig, got {config!r}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"unknown env option(s) {', '.join(map(repr, unknown))}; known: {', '.join(sorted(known))}")
        if config is None:
            return cls(**options)
        return dataclasses.replace(config, **options) if options else config

    def make_params(self, mode: Literal["single", "multi"], autoreset: str) -> dict[str, Any]:
        """The params of the server's ``make`` for these options (``n`` aside)."""
        p: dict[str, Any] = {
            "rules": self.rules,
            "mode": mode,
            "autoreset": autoreset,
            "max_decisions": self.max_decisions,
            "reward": self.reward,
            "illegal": self.illegal,
            "info": self.info,
        }
        if self.luck != "off":
            p["luck"] = self.luck
        if self.tier is not None:
            p["tier"] = self.tier
        if mode == "single":
            p["seat"] = self.seat
            p["opponent"] = self.opponent
        return p


def _need_str(name: str, v: object) -> None:
    if not isinstance(v, str):
        raise TypeError(f"{name} must be a string, got {v!r}")


def _need_choice(name: str, v: object, choices: tuple[str, ...]) -> None:
    if v not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {v!r}")


_OPTIONS: dict[str, RuleOption] = {o.key: o for o in RULE_OPTIONS}
_SWITCH_WORDS = ("on", "off", "true", "false", "yes", "no", "1", "0")


def plain(v: Any) -> Any:
    """``v`` with a numpy scalar (``np.int64(3)``, ``np.bool_(True)``) made its Python value,
    which the checks and msgpack take; anything else as it is."""
    return v.item() if isinstance(v, np.generic) else v


def check_rules(rules: str | Mapping[str, Any]) -> None:
    """Check the keys and values of a rules string or mapping against the rule options.

    The options come from the engine's declarations (``yutenv._protocol.RULE_OPTIONS``), and the
    messages are the server's, so a mistake is reported before any server is involved: an unknown
    key, a key given twice (also through an alias, such as ``p`` and ``flat_prob``), a value of the
    wrong type or not one of an enum's values. Ranges and combinations of options are checked by
    the server, which raises the same :class:`~yutenv.InvalidRulesError`.

    Raises:
        InvalidRulesError: naming the key and what is wrong with it.
    """
    if isinstance(rules, str):
        items = [i.strip() for i in rules.split(",")] if rules.strip() else []
        if items and items[0] in PRESETS:
            items = items[1:]
        pairs: list[tuple[str, object]] = []
        for item in items:
            name, eq, text = item.partition("=")
            if not eq:
                raise _invalid(
                    f'"{item}" is not key=value (keys: {", ".join(o.key for o in RULE_OPTIONS)}; '
                    f"presets first: {', '.join(PRESETS)})"
                )
            pairs.append((name.strip(), text.strip()))
    else:
        pairs = list(rules.items())
    seen: set[str] = set()
    for k, v in pairs:
        if not isinstance(k, str) or k not in RULE_KEYS:
            raise _invalid(f'unknown rules key "{k}" (keys: {", ".join(sorted(_OPTIONS))})')
        key = RULE_KEYS[k]
        if key in seen:
            raise _invalid(f'rules key "{key}" given more than once')
        seen.add(key)
        _check_value(_OPTIONS[key], v)


def _check_value(o: RuleOption, v: object) -> None:
    """Check one value's type (and an enum's or switch's value) against its option."""
    if o.kind == "switch":
        ok = isinstance(v, bool) or str(v).lower() in _SWITCH_WORDS
        want = "on or off"
    elif isinstance(v, bool):
        ok, want = False, _wants(o)
    elif o.kind == "int":
        ok, want = isinstance(v, int) or (isinstance(v, str) and _parses(int, v)), "an integer"
    elif o.kind == "float":
        ok, want = isinstance(v, (int, float)) or (isinstance(v, str) and _parses(float, v)), "a number"
    elif o.kind == "enum":
        # shortcut=choice passes: the server explains why it is refused.
        ok, want = v in o.values or v == "choice", _wants(o)
    else:
        ok, want = isinstance(v, str), "a string"
    if not ok:
        raise _invalid(f'{o.key} must be {want}, got "{v}"')


def _parses(kind: type[int] | type[float], v: str) -> bool:
    try:
        kind(v)
    except ValueError:
        return False
    return True


def _wants(o: RuleOption) -> str:
    """What an option's values look like, for messages."""
    if o.kind in ("int", "float"):
        return f"a number from {o.min:g} to {o.max:g}"
    return "one of " + ", ".join(o.values)


def _invalid(message: str) -> InvalidRulesError:
    return InvalidRulesError("invalid rules: " + message, code="invalid_rules")
