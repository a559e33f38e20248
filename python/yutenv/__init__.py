"""yutenv: Yut Nori environments for reinforcement learning, backed by a Go server.

>>> import yutenv
>>> env = yutenv.make(opponent="greedy")                 # gymnasium.Env (YutEnv)
>>> venv = yutenv.make(num_envs=256)                     # gymnasium.vector.VectorEnv (YutVectorEnv)
>>> aec = yutenv.pettingzoo.env(rules="players=3")       # PettingZoo AEC env

Also registered with Gymnasium: ``gymnasium.make("yutenv/Yut-v0", ...)`` and
``gymnasium.make_vec("yutenv/Yut-v0", num_envs=N, ...)`` (the latter builds a
:class:`YutVectorEnv`, one server-side batch).

By default the envs of this process share one bundled ``yutenv serve`` process on a
private Unix socket, started on first use and stopped with the last env (and at exit).
Pass ``address=`` (or set ``$YUTENV_ADDRESS``, and ``$YUTENV_TOKEN`` if needed) to use
a server you run yourself, or ``server=yutenv.Server()`` for a private one.
"""

from __future__ import annotations

from typing import Any, overload

import gymnasium

from . import datasets, pettingzoo
from .core import NUM_ACTIONS, Batch, Session
from .evaluate import EvalResult, evaluate
from .errors import (
    BadStateError,
    ClosedError,
    EvalTimeoutError,
    IllegalActionError,
    InvalidArgumentError,
    InvalidRulesError,
    LimitExceededError,
    ProtocolError,
    ResetNeeded,
    ServerDiedError,
    ServerError,
    ServerStartError,
    UnauthorizedError,
    UnsupportedError,
    YutEnvError,
)
from .gym_env import YutEnv
from .server import Server, binary_path
from .vector import YutVectorEnv

__version__ = "0.1.0"

ENV_ID = "yutenv/Yut-v0"

__all__ = [
    "ENV_ID",
    "EvalResult",
    "NUM_ACTIONS",
    "BadStateError",
    "Batch",
    "ClosedError",
    "EvalTimeoutError",
    "IllegalActionError",
    "InvalidArgumentError",
    "InvalidRulesError",
    "LimitExceededError",
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
    "YutVectorEnv",
    "binary_path",
    "datasets",
    "evaluate",
    "make",
    "pettingzoo",
]


@overload
def make(num_envs: None = None, **kwargs: Any) -> YutEnv: ...
@overload
def make(num_envs: int, **kwargs: Any) -> YutVectorEnv: ...


def make(num_envs: int | None = None, **kwargs: Any) -> YutEnv | YutVectorEnv:
    """A :class:`YutEnv`, or a :class:`YutVectorEnv` of ``num_envs`` games when given.

    Keyword arguments are those of :class:`YutEnv` (``rules``, ``opponent``, ``seat``,
    ``tier``, ``obs_type``, ``render_mode``, ``illegal``, ``max_decisions``, ``info``,
    ``address``, ``token``, ``server``, ``timeout``); the vector env also takes
    ``autoreset_mode`` and ``copy``. Unlike ``gymnasium.make``, no wrappers are added.
    """
    if num_envs is None:
        return YutEnv(**kwargs)
    return YutVectorEnv(num_envs, **kwargs)


def _register() -> None:
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="yutenv.gym_env:YutEnv",
            vector_entry_point="yutenv.vector:YutVectorEnv",
            nondeterministic=False,
        )


_register()
