"""yutenv: Yut Nori environments for reinforcement learning, backed by a Go server.

>>> import yutenv
>>> env = yutenv.make(opponent="greedy")                 # gymnasium.Env (YutEnv)
>>> venv = yutenv.make(num_envs=256)                     # gymnasium.vector.VectorEnv (YutVectorEnv)
>>> aec = yutenv.pettingzoo.env(rules="players=3")       # PettingZoo AEC env
>>> env.action_space, venv.num_envs, aec.possible_agents
(Discrete(180), 256, ['player_0', 'player_1', 'player_2'])
>>> env.close(); venv.close(); aec.close()

Also registered with Gymnasium: ``gymnasium.make("yutenv/Yut-v0", ...)`` and
``gymnasium.make_vec("yutenv/Yut-v0", num_envs=N, ...)`` (the latter builds a
:class:`YutVectorEnv`, one server-side batch).

Every front end takes the same options, as keyword arguments or as one :class:`EnvConfig`
(``yutenv.make(config=cfg)``, ``YutVectorEnv(64, cfg)``, ``pettingzoo.env(cfg)``).

By default the envs of this process share one bundled ``yutenv serve`` process on a
private Unix socket, started on first use and stopped with the last env (and at exit).
Pass ``address=`` (or set ``$YUTENV_ADDRESS``, and ``$YUTENV_TOKEN`` if needed) to use
a server you run yourself, or ``server=yutenv.Server()`` for a private one.
"""

from __future__ import annotations

from typing import Any, overload

import gymnasium

from . import datasets, pettingzoo
from .config import DEFAULT_TIMEOUT, EnvConfig
from .core import NUM_ACTIONS, Batch, Session
from .evaluate import EvalResult, evaluate
from .errors import (
    BadStateError,
    CheckpointError,
    ClosedError,
    EvalTimeoutError,
    IllegalActionError,
    InvalidArgumentError,
    InvalidRulesError,
    LimitExceededError,
    MissingExtraError,
    NetError,
    ProtocolError,
    ResetNeeded,
    ServerDiedError,
    ServerError,
    ServerStartError,
    UnauthorizedError,
    UnsupportedError,
    YutEnvError,
    YutTimeoutError,
)
from .gym_env import YutEnv
from .ladder import LadderResult, ladder
from .server import Server, binary_path
from .state import Analysis, Game, State
from .vector import YutVectorEnv

__version__ = "0.1.0"

ENV_ID = "yutenv/Yut-v0"

__all__ = [
    "DEFAULT_TIMEOUT",
    "ENV_ID",
    "Analysis",
    "EnvConfig",
    "EvalResult",
    "LadderResult",
    "Game",
    "State",
    "NUM_ACTIONS",
    "BadStateError",
    "Batch",
    "CheckpointError",
    "ClosedError",
    "EvalTimeoutError",
    "IllegalActionError",
    "InvalidArgumentError",
    "InvalidRulesError",
    "LimitExceededError",
    "MissingExtraError",
    "NetError",
    "ProtocolError",
    "ResetNeeded",
    "Server",
    "ServerDiedError",
    "ServerError",
    "ServerStartError",
    "Session",
    "UnauthorizedError",
    "UnsupportedError",
    "YutEnv",
    "YutEnvError",
    "YutTimeoutError",
    "YutVectorEnv",
    "binary_path",
    "datasets",
    "evaluate",
    "ladder",
    "make",
    "pettingzoo",
]


@overload
def make(num_envs: None = None, config: EnvConfig | None = None, **kwargs: Any) -> YutEnv: ...
@overload
def make(num_envs: int, config: EnvConfig | None = None, **kwargs: Any) -> YutVectorEnv: ...


def make(num_envs: int | None = None, config: EnvConfig | None = None, **kwargs: Any) -> YutEnv | YutVectorEnv:
    """A :class:`YutEnv`, or a :class:`YutVectorEnv` of ``num_envs`` games when given.

    ``config`` and the keyword arguments are the env options of :class:`EnvConfig`
    (``rules``, ``opponent``, ``seat``, ``tier``, ``obs_type``, ``render_mode``, ``illegal``,
    ``max_decisions``, ``reward``, ``info``, ``address``, ``token``, ``server``,
    ``timeout``); keyword arguments replace fields of ``config``. The vector env also takes
    ``autoreset_mode`` and ``copy``. Unlike ``gymnasium.make``, no wrappers are added.
    """
    if num_envs is None:
        return YutEnv(config, **kwargs)
    return YutVectorEnv(num_envs, config, **kwargs)


def _register() -> None:
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="yutenv.gym_env:YutEnv",
            vector_entry_point="yutenv.vector:YutVectorEnv",
            nondeterministic=False,
        )


_register()
