"""AlphaZero-style training for yutenv: a policy+value network, self-play, a learning loop.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from yutenv.az import PolicyValueNet, export_net, TrainConfig, run
    result = run(TrainConfig(out="runs/x", generations=10, games=200, sims=64))
    export_net(result.model, "best.ynet")          # the Go side plays it as `net:best.ynet`

Or from the shell: ``python -m yutenv.az.train --out runs/x --generations 10`` (docs/TRAINING.md).

Modules: :mod:`yutenv.az.net` (the network, the ``yutenv-net`` file, the network as a
policy and as self-play's evaluator), :mod:`yutenv.az.buffer` (the replay buffer over
datasets), :mod:`yutenv.az.train` (the loop and its command line; :mod:`yutenv.az.config` holds the run's
settings, :mod:`yutenv.az.train_cli` the parser),
:mod:`yutenv.az.report` (win rates by generation: markdown and PNG),
:mod:`yutenv.az.checkpoint` (the checksums of a generation's files and the checked ``model.pt`` loader),
:mod:`yutenv.az.judge` (generations head to head, the final network against the baselines),
:mod:`yutenv.az.fit` (a network fitted to existing datasets, scored on a held-out one) and
:mod:`yutenv.az.selfplay` (``SelfPlay``: network-guided MCTS self-play in the Go server),
:mod:`yutenv.az.cluster` and :mod:`yutenv.az.distributed` (self-play and evaluation fanned out
on Ray) and :mod:`yutenv.az.bench_net` (the network evaluator's speed).

The names below are loaded on first use, so ``import yutenv.az`` needs neither torch nor
matplotlib; the network and the loop need the ``az`` extra (``pip install 'yutenv[az]'``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what __getattr__ loads, as the type checker and the API reference see it
    from .buffer import ReplayBuffer as ReplayBuffer
    from .checkpoint import load_checkpoint as load_checkpoint
    from .config import TrainConfig as TrainConfig
    from .net import NetEvaluator as NetEvaluator
    from .net import NetFileError as NetFileError
    from .net import NetPolicy as NetPolicy
    from .net import PolicyValueNet as PolicyValueNet
    from .net import export_net as export_net
    from .net import load_net as load_net
    from .net import load_start_net as load_start_net
    from .report import write_report as write_report
    from .selfplay import SelfPlay as SelfPlay
    from .selfplay import SelfPlaySummary as SelfPlaySummary
    from .train import RunResult as RunResult
    from .train import run as run

__all__ = [
    "NetEvaluator",
    "NetFileError",
    "NetPolicy",
    "PolicyValueNet",
    "ReplayBuffer",
    "RunResult",
    "SelfPlay",
    "SelfPlaySummary",
    "TrainConfig",
    "export_net",
    "load_checkpoint",
    "load_net",
    "load_start_net",
    "run",
    "write_report",
]

_WHERE = {
    "NetEvaluator": "net",
    "NetFileError": "net",
    "NetPolicy": "net",
    "PolicyValueNet": "net",
    "export_net": "net",
    "load_net": "net",
    "load_start_net": "net",
    "ReplayBuffer": "buffer",
    "RunResult": "train",
    "TrainConfig": "config",
    "load_checkpoint": "checkpoint",
    "run": "train",
    "write_report": "report",
    "SelfPlay": "selfplay",
    "SelfPlaySummary": "selfplay",
}


def __getattr__(name: str) -> Any:
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'yutenv.az' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
