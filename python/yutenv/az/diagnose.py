"""Why a run stops improving: how much the search adds to the network, generation by generation.

Command line::

    python -m yutenv.az.diagnose runs/x --gens 1,5,20,last

Python::

    from yutenv.az.diagnose import diagnose
    rows = diagnose("runs/x", gens=[5, 20])      # one dict of figures per generation

Generation ``g``'s self-play dataset (``gen-G/selfplay``) was played by the search guided by
generation ``g-1``'s network. For each chosen ``g`` this reads that dataset (a seeded sample
of at most ``rows`` decisions) and that network (``gen-(G-1)/model.pt``), and measures, on
the decisions with more than one legal action (forced moves carry no policy target and a
search value of 0) and, in a run with playout cap randomization (``--fast-sims``), a policy
target (the full searches; the fast ones' policies are not targets):

* ``kl``: the mean KL(search policy target || network prior), in nats: how far the search
  moved from what the network already plays. Near 0, the targets teach nothing new.
* ``argmax_differs``: how often the target's most visited action is not the prior's most
  likely one.
* ``target_entropy`` and ``prior_entropy``: mean entropies (nats) of the targets and priors.
* ``value_mse_outcome``: the MSE of the network's value (tanh of its head) against the game's
  outcome; ``value_mse_search`` against the search's root value; ``search_mse_outcome``:
  the search value against the outcome; ``outcome_var``: the MSE of the best constant
  (the outcome's variance), the figure a useless value head reaches.
* ``calibration``: the network's value in ``bins`` equal bins of [-1, 1]: the count, the
  mean predicted value and the mean outcome of each (a reliability table); ``ece``: their
  count-weighted mean absolute gap.

Results go to stdout (a markdown table), ``RUN/diagnose.json`` and, with matplotlib,
``RUN/diagnose.png`` (the reliability plot of every chosen generation). Reads only: the run
may still be training.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tabulate import tabulate

from .._extras import import_extra
from .._files import atomic_write, error_text

import_extra("torch", "az", "yutenv.az.diagnose")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from ..data import datasets  # noqa: E402
from ..errors import YutEnvError  # noqa: E402
from .checkpoint import load_checkpoint  # noqa: E402
from .net import infer  # noqa: E402

__all__ = ["diagnose", "diagnose_generation", "entropy", "network_outputs", "policy_kl", "markdown", "plot", "main"]

_ARRAYS = ("obs", "mask", "policy", "value", "search_value")


def _generations(run: Path) -> list[int]:
    """The complete generations of a run (those with a gen.json)."""
    out = []
    for p in run.glob("gen-*/gen.json"):
        try:
            out.append(int(p.parent.name[4:]))
        except ValueError:
            continue
    return sorted(out)


def entropy(p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The entropy of every row of ``p`` (distributions), in nats."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: npt.NDArray[np.float64] = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1)
    return out


def network_outputs(
    model: torch.nn.Module, obs: npt.ArrayLike, mask: npt.ArrayLike, chunk: int = 8192
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The network's log-policy over the legal actions [B, 180] and its tanh value [B], as
    float64, ``chunk`` rows at a time (:func:`yutenv.az.net.infer`: evaluation mode, no gradients)."""
    obs, mask = np.asarray(obs), np.asarray(mask)
    logps, values = [], []
    for lo in range(0, len(obs), chunk):
        logits, v = infer(model, obs[lo : lo + chunk], mask[lo : lo + chunk])
        logps.append(F.log_softmax(logits, dim=-1).double().numpy())
        values.append(torch.tanh(v).double().numpy())
    if not logps:
        return np.zeros((0, mask.shape[1] if mask.ndim == 2 else 0)), np.zeros(0)
    return np.concatenate(logps), np.concatenate(values)


def policy_kl(target: npt.NDArray[np.float64], logp: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """KL(target ‖ exp(logp)) of every row, in nats (0 where the target is 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: npt.NDArray[np.float64] = np.where(target > 0, target * (np.log(target) - logp), 0.0).sum(axis=1)
    return out


def diagnose_generation(run: str | os.PathLike[str], g: int, rows: int = 20_000, bins: int = 10, seed: int = 0) -> dict[str, Any]:
    """The figures of generation ``g`` (>= 1): its dataset against generation ``g-1``'s network
    (see the module doc). Raises CheckpointError or DatasetError naming a damaged file."""
    if g < 1:
        raise ValueError(f"generation {g}: the figures need a self-play dataset, generation 1 or later")
    run = Path(run)
    d = run / f"gen-{g:04d}"
    model, _ = load_checkpoint(run / f"gen-{g - 1:04d}" / "model.pt", generation=g - 1)
    names = [a["name"] for a in datasets.read_manifest(d / "selfplay")["arrays"]]
    ds = datasets.load(d / "selfplay", arrays=_ARRAYS + (("policy_target",) if "policy_target" in names else ()))
    mask_all = ds.mask.astype(bool)
    n_all = len(mask_all)
    choice = np.flatnonzero((mask_all.sum(axis=1) > 1) & ds.policy_targets(n_all))  # decisions with a choice and a policy target
    if len(choice) > rows:
        choice = np.sort(np.random.default_rng([seed, g]).choice(choice, size=rows, replace=False))
    mask = mask_all[choice]
    target = np.asarray(ds.policy[choice], dtype=np.float64)
    z = np.asarray(ds.value[choice], dtype=np.float64)
    sv = np.asarray(ds.search_value[choice], dtype=np.float64)
    logp, pv = network_outputs(model, np.ascontiguousarray(ds.obs[choice], dtype=np.float32), mask)
    prior = np.exp(logp)
    kl = policy_kl(target, logp)
    edges = np.linspace(-1, 1, bins + 1)
    which = np.clip(np.digitize(pv, edges[1:-1]), 0, bins - 1)
    calib = []
    ece = 0.0
    for b in range(bins):
        sel = which == b
        k = int(sel.sum())
        if k:
            mp, mz = float(pv[sel].mean()), float(z[sel].mean())
            ece += k * abs(mp - mz)
            calib.append({"low": float(edges[b]), "high": float(edges[b + 1]), "count": k, "predicted": mp, "outcome": mz})
    n = len(choice)
    return {
        "generation": g,
        "network": g - 1,
        "decisions": n_all,
        "forced": float(1 - (mask_all.sum(axis=1) > 1).mean()) if n_all else 0.0,
        "rows": n,
        "kl": float(kl.mean()),
        "argmax_differs": float((target.argmax(axis=1) != prior.argmax(axis=1)).mean()),
        "target_entropy": float(entropy(target).mean()),
        "prior_entropy": float(entropy(prior).mean()),
        "value_mse_outcome": float(((pv - z) ** 2).mean()),
        "value_mse_search": float(((pv - sv) ** 2).mean()),
        "search_mse_outcome": float(((sv - z) ** 2).mean()),
        "outcome_var": float(z.var()),
        "ece": ece / max(n, 1),
        "calibration": calib,
    }


def diagnose(
    run: str | os.PathLike[str], gens: Sequence[int] | None = None, rows: int = 20_000, bins: int = 10, seed: int = 0
) -> list[dict[str, Any]]:
    """:func:`diagnose_generation` of every generation of ``gens`` (default: every complete
    generation from 1 on)."""
    have = [g for g in _generations(Path(run)) if g >= 1]
    if gens is None:
        gens = have
    missing = sorted(set(gens) - set(have))
    if missing:
        raise ValueError(f"{run}: no complete generation {', '.join(map(str, missing))} (complete: {_span(have)})")
    return [diagnose_generation(run, g, rows, bins, seed) for g in gens]


def _span(gens: Sequence[int]) -> str:
    return f"{gens[0]}..{gens[-1]}" if gens else "none"


def markdown(res: Sequence[dict[str, Any]]) -> str:
    """The figures as two markdown tables: search against network, and value calibration."""
    head = ["gen", "net", "KL(target‖prior)", "argmax differs", "H(target)", "H(prior)", "value MSE vs outcome",
            "vs search value", "search MSE vs outcome", "outcome variance", "ECE"]  # fmt: skip
    rows = [
        [r["generation"], r["network"], f"{r['kl']:.3f}", f"{100 * r['argmax_differs']:.1f}%", f"{r['target_entropy']:.3f}",
         f"{r['prior_entropy']:.3f}", f"{r['value_mse_outcome']:.3f}", f"{r['value_mse_search']:.3f}",
         f"{r['search_mse_outcome']:.3f}", f"{r['outcome_var']:.3f}", f"{r['ece']:.3f}"]
        for r in res
    ]  # fmt: skip
    text = str(tabulate(rows, headers=head, tablefmt="github", disable_numparse=True))
    if res:
        bins = sorted({(c["low"], c["high"]) for r in res for c in r["calibration"]})
        chead = ["predicted value"] + [f"gen {r['generation']}: mean predicted / mean outcome (n)" for r in res]
        crows = []
        for lo, hi in bins:
            row = [f"[{lo:+.1f}, {hi:+.1f})"]
            for r in res:
                c = next((c for c in r["calibration"] if c["low"] == lo), None)
                row.append(f"{c['predicted']:+.2f} / {c['outcome']:+.2f} ({c['count']})" if c else "")
            crows.append(row)
        text += "\n\nValue calibration (reliability):\n\n" + str(
            tabulate(crows, headers=chead, tablefmt="github", disable_numparse=True)
        )
    return text + "\n"


def plot(res: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """The reliability plot (mean outcome against mean predicted value, per bin) to a PNG."""
    matplotlib = import_extra("matplotlib", "az", "yutenv.az.diagnose's plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 5), dpi=110)
    try:
        ax.plot([-1, 1], [-1, 1], color="grey", linestyle=":", linewidth=1, label="calibrated")
        for r in res:
            c = r["calibration"]
            ax.plot([b["predicted"] for b in c], [b["outcome"] for b in c], marker="o", label=f"gen {r['network']} network")
        ax.set_xlabel("predicted value (tanh of the value head)")
        ax.set_ylabel("mean outcome of the mover")
        ax.set_xlim(-1, 1)
        ax.set_ylim(-1, 1)
        ax.grid(alpha=0.3)
        ax.set_title("yutenv.az: value calibration on its own self-play")
        ax.legend(loc="upper left", fontsize="small")
        fig.tight_layout()
        return atomic_write(path, lambda f: fig.savefig(f, format="png"))
    finally:
        plt.close(fig)


def _parse_gens(text: str, have: list[int]) -> list[int]:
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if item == "last":
            if not have:
                raise ValueError("--gens last: the run has no complete generation after 0")
            out.append(have[-1])
            continue
        try:
            out.append(int(item))
        except ValueError:
            raise ValueError(f"--gens: {item!r} is not a generation number or 'last'") from None
    return sorted(set(out))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (``--help``)."""
    p = argparse.ArgumentParser(
        prog="python -m yutenv.az.diagnose",
        description="How much the search improves on the network, generation by generation: KL(search target || prior), "
        "argmax disagreement, target entropy, value MSE against the outcome and the search value, and value calibration. "
        "Writes RUN_DIR/diagnose.json and RUN_DIR/diagnose.png and prints the tables.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run's folder (the --out of python -m yutenv.az.train)")
    p.add_argument(
        "--gens", default="", help="comma-separated generations (>= 1; 'last' for the last complete one); default: all"
    )
    p.add_argument("--rows", type=int, default=20_000, help="decisions sampled from each generation's dataset at most")
    p.add_argument("--bins", type=int, default=10, help="bins of the calibration table")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--no-plot", action="store_true", help="do not write diagnose.png")
    a = p.parse_args(argv)
    run = Path(a.run_dir)
    if not run.is_dir():
        p.error(f"{run}: no such folder")
    if a.rows < 1 or a.bins < 1:
        p.error("--rows and --bins must be at least 1")
    torch.set_num_threads(a.threads)
    try:
        have = [g for g in _generations(run) if g >= 1]
        res = diagnose(run, _parse_gens(a.gens, have) if a.gens else None, a.rows, a.bins, a.seed)
        doc = json.dumps({"run": str(run), "rows": a.rows, "bins": a.bins, "seed": a.seed, "generations": res}, indent=1) + "\n"
        atomic_write(run / "diagnose.json", lambda f: f.write(doc.encode("utf-8")))
        if not a.no_plot:
            plot(res, run / "diagnose.png")
    except (YutEnvError, ValueError, OSError) as e:  # OSError: the disk is full, a folder is not writable, ...
        print(f"yutenv.az.diagnose: {error_text(e)}", file=sys.stderr)
        return 1
    print(markdown(res), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
