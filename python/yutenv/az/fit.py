"""Fit a network to datasets you already have: supervised training (behaviour cloning of the
search that wrote them), with a held-out dataset to tell fitting from learning.

Command line (``python -m yutenv.az.fit --help`` lists every option)::

    python -m yutenv.az.fit --data runs/x/gen-0008/selfplay runs/x/gen-0009/selfplay \\
        --holdout runs/x/gen-0010/selfplay --hidden 512,512 --epochs 10 --out wide.ynet

Python::

    from yutenv.az.fit import FitConfig, fit
    res = fit(FitConfig(data=["runs/x/gen-0009/selfplay"], holdout="runs/x/gen-0010/selfplay", out="wide.ynet"))
    res.epochs[-1]["holdout_policy_loss"]

The datasets (docs/DATASETS.md: ``yutenv selfplay``, ``yutenv.az.train``'s
``gen-G/selfplay``) must share one tier and rules; their rows are the training set. Every
epoch is one pass (minibatches drawn with replacement, as the training loop does) with the
loss of :func:`yutenv.az.train.losses`, AdamW and a cosine learning rate down to ``lr/20``.
After each epoch the held-out rows are scored: policy cross-entropy, its part above the
targets' own entropy (the KL the network could still remove) and how often the network's
argmax is the target's, over the decisions with more than one legal move; value MSE over
every row. The network is written as a ``yutenv-net`` file that every
``net:PATH`` agent spec plays. ``--init`` starts from a network instead of a fresh one: a
``yutenv-net`` file, or a shipped network's name (``az``, ...) for that network inside the binary (agent ``az``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from .._extras import import_extra
from .._files import error_text
from .._progress import progress_bar

import_extra("torch", "az", "yutenv.az.fit")
import torch  # noqa: E402

from ..data import datasets  # noqa: E402
from ..errors import YutEnvError  # noqa: E402
from .buffer import ReplayBuffer  # noqa: E402
from .diagnose import entropy, network_outputs, policy_kl  # noqa: E402
from .net import TIER_SIZES, PolicyValueNet, export_net, load_start_net  # noqa: E402
from .train import cosine_lr, losses  # noqa: E402

__all__ = ["FitConfig", "FitResult", "fit", "main"]


@dataclass
class FitConfig:
    """What :func:`fit` does: the datasets, the network and the optimisation."""

    data: Sequence[str]
    out: str
    holdout: str = ""
    hidden: Sequence[int] = (256, 256)
    init: str = ""
    epochs: float = 10.0
    batch: int = 512
    lr: float = 1e-3
    weight_decay: float = 1e-4
    value_weight: float = 1.0
    value_mix: float = 0.0
    seed: int = 0
    threads: int = 1
    progress: bool = True


@dataclass
class FitResult:
    """What :func:`fit` returns: the network, where it was written, and one record per epoch."""

    model: PolicyValueNet
    path: Path
    tier: str
    rules: str
    rows: int
    holdout_rows: int
    epochs: list[dict[str, float]]


def _kind(path: str) -> tuple[str, str]:
    m = datasets.read_manifest(path)
    return str(m["tier"]), str(m.get("rules_text", ""))


def _holdout_scores(model: PolicyValueNet, buf: ReplayBuffer) -> dict[str, float]:
    obs, mask, pi, z, target = buf._arrays()
    logp, pv = network_outputs(model, obs, mask)
    choice = target & (mask.sum(axis=1) > 1)  # forced decisions teach nothing
    p = pi[choice].astype(np.float64)
    kl = policy_kl(p, logp[choice])

    def mean(a: npt.NDArray[Any]) -> float:
        return float(a.mean()) if len(a) else 0.0

    return {
        "holdout_policy_loss": mean(kl + entropy(p)),  # cross-entropy = KL + the target's entropy
        "holdout_policy_kl": mean(kl),
        "holdout_value_mse": mean((pv - z) ** 2),
        "holdout_argmax_agrees": mean(logp[choice].argmax(axis=1) == p.argmax(axis=1)),
    }


def fit(cfg: FitConfig) -> FitResult:
    """Train a network on ``cfg.data`` (see the module doc); write it to ``cfg.out``.

    Raises ValueError on an impossible setting or datasets of different tiers or rules,
    :class:`~yutenv.data.datasets.DatasetError` on a damaged dataset and
    :class:`~yutenv.az.net.NetFileError` on a damaged ``init`` network.
    """
    if not cfg.data:
        raise ValueError("no datasets: give at least one --data DIR")
    if cfg.epochs <= 0 or cfg.batch < 1 or cfg.lr <= 0 or cfg.threads < 1:
        raise ValueError("epochs and lr must be > 0, batch and threads at least 1")
    kinds = {p: _kind(p) for p in [*cfg.data, *([cfg.holdout] if cfg.holdout else [])]}
    if len(set(kinds.values())) > 1:
        raise ValueError(
            "the datasets differ in tier or rules: " + "; ".join(f"{p}: tier {t}, rules {r!r}" for p, (t, r) in kinds.items())
        )
    tier, rules = next(iter(kinds.values()))
    if tier not in TIER_SIZES:
        raise ValueError(f"tier {tier!r} of the datasets: want one of {sorted(TIER_SIZES)}")
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    if cfg.init:
        model = load_start_net(cfg.init)
        if (model.tier, model.rules) != (tier, rules):
            raise ValueError(
                f"--init {cfg.init}: tier {model.tier!r}, rules {model.rules!r}; the datasets' are {tier!r}, {rules!r}"
            )
    else:
        model = PolicyValueNet(TIER_SIZES[tier], cfg.hidden, tier=tier, rules=rules)
    buf = ReplayBuffer(len(cfg.data), value_mix=cfg.value_mix)
    for p in cfg.data:
        buf.add(p)
    held = None
    if cfg.holdout:
        held = ReplayBuffer(1, value_mix=cfg.value_mix)
        held.add(cfg.holdout)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    per_epoch = max(1, math.ceil(len(buf) / cfg.batch))
    total = max(1, round(cfg.epochs * per_epoch))
    rng = np.random.default_rng(cfg.seed)
    bar = progress_bar(total, "fit", unit="step", show=None if cfg.progress else False)
    records: list[dict[str, float]] = []
    pl = vl = 0.0
    n = 0
    t0 = time.perf_counter()
    model.train()
    for i, b in enumerate(buf.batches(rng, cfg.batch, total)):
        for group in opt.param_groups:
            group["lr"] = cosine_lr(cfg.lr, i / total)
        logits, v = model(torch.from_numpy(b.obs))
        target = None if b.policy_target is None else torch.from_numpy(b.policy_target)
        policy_loss, value_loss = losses(
            logits, v, torch.from_numpy(b.mask), torch.from_numpy(b.policy), torch.from_numpy(b.value), target
        )
        loss = policy_loss + cfg.value_weight * value_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        pl += float(policy_loss.detach())
        vl += float(value_loss.detach())
        n += 1
        if bar is not None:
            bar.update(1)
        if (i + 1) % per_epoch == 0 or i + 1 == total:
            model.eval()
            rec = {"epoch": (i + 1) / per_epoch, "policy_loss": pl / n, "value_loss": vl / n, "seconds": time.perf_counter() - t0}
            if held is not None:
                rec.update(_holdout_scores(model, held))
            records.append(rec)
            if cfg.progress:
                msg = "  ".join(f"{k} {v:.4g}" for k, v in rec.items())
                if bar is not None:
                    bar.write(msg, file=sys.stderr)
                else:
                    print(msg, file=sys.stderr)
            pl = vl = 0.0
            n = 0
            model.train()
    if bar is not None:
        bar.close()
    model.eval()
    path = export_net(model, cfg.out)
    return FitResult(model, path, tier, rules, len(buf), len(held) if held is not None else 0, records)


def _parser() -> argparse.ArgumentParser:
    d = FitConfig(data=[], out="")
    p = argparse.ArgumentParser(
        prog="python -m yutenv.az.fit",
        description="Fit a network to existing datasets (supervised: the policy to the datasets' policy targets, "
        "the value to their outcomes), score it on a held-out dataset after every epoch, and write it as a "
        "yutenv-net file that net:PATH agents play.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--data", nargs="+", required=True, metavar="DIR", help="dataset directories to train on (one tier and rules)")
    p.add_argument(
        "--holdout", default=d.holdout, metavar="DIR", help="a dataset scored after every epoch, never trained on ('': none)"
    )
    p.add_argument("--out", required=True, help="the yutenv-net file to write")
    p.add_argument("--hidden", default=",".join(map(str, d.hidden)), help="trunk widths, comma-separated (ignored with --init)")
    p.add_argument(
        "--init",
        default=d.init,
        metavar="PATH",
        help="start from this yutenv-net file's network, or a shipped network's name (az, ...: yutenv net lists them) for that network in the binary ('': a fresh one)",
    )
    p.add_argument("--epochs", type=float, default=d.epochs, help="passes over the training rows")
    p.add_argument("--batch", type=int, default=d.batch, help="minibatch size")
    p.add_argument("--lr", type=float, default=d.lr, help="AdamW learning rate at the start (cosine down to lr/20)")
    p.add_argument("--weight-decay", type=float, default=d.weight_decay, help="AdamW weight decay")
    p.add_argument("--value-weight", type=float, default=d.value_weight, help="weight of the value MSE in the loss")
    p.add_argument("--value-mix", type=float, default=d.value_mix, help="value target: (1-m)*outcome + m*search value")
    p.add_argument("--seed", type=int, default=d.seed, help="seed of the initial weights and of the minibatches")
    p.add_argument("--threads", type=int, default=d.threads, help="torch CPU threads")
    p.add_argument("--quiet", action="store_true", help="no progress bar or epoch lines")
    return p


def _markdown(res: FitResult) -> str:
    keys = list(res.epochs[0]) if res.epochs else []
    head = "| " + " | ".join(k.replace("_", " ") for k in keys) + " |"
    rule = "|" + "---|" * len(keys)
    rows = ["| " + " | ".join(f"{r[k]:.4g}" for k in keys) + " |" for r in res.epochs]
    return "\n".join([head, rule, *rows])


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: fit, print the epochs' table and where the network went."""
    a = _parser().parse_args(argv)
    try:
        cfg = FitConfig(
            data=a.data, out=a.out, holdout=a.holdout, hidden=tuple(int(x) for x in a.hidden.split(",") if x.strip()),
            init=a.init, epochs=a.epochs, batch=a.batch, lr=a.lr, weight_decay=a.weight_decay,
            value_weight=a.value_weight, value_mix=a.value_mix, seed=a.seed, threads=a.threads, progress=not a.quiet,
        )  # fmt: skip
        res = fit(cfg)
    except (YutEnvError, ValueError, OSError) as e:  # OSError: the disk is full, a folder is not writable, ...
        print(f"yutenv.az.fit: {error_text(e)}", file=sys.stderr)
        return 1
    print(_markdown(res))
    print(f"network: {res.path} (tier {res.tier}, rules {res.rules!r}, {res.rows} rows, {res.holdout_rows} held out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
