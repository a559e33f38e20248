"""The report of a training run: win rates by generation, as a markdown table and a PNG.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from yutenv.az.report import write_report
    md, png = write_report("runs/x")     # runs/x/report.md and runs/x/report.png

``python -m yutenv.az.report runs/x`` does the same. It reads every complete
generation's ``gen.json`` (written by :mod:`yutenv.az.train`), so it works on a run
that is still going or was interrupted. The plot needs matplotlib (the ``az`` extra).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tabulate import tabulate

from .._extras import import_extra
from .._files import atomic_write

__all__ = ["load_generations", "markdown", "plot", "write_report"]


def load_generations(out: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The summaries (``gen.json``) of the run's complete generations, in order."""
    gens = []
    for p in sorted(Path(out).glob("gen-*/gen.json")):
        try:
            g = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"{p}: unreadable generation summary: {e}") from None
        if not isinstance(g, dict) or not isinstance(g.get("generation"), int):
            raise ValueError(f"{p}: not a generation summary (no generation number)")
        gens.append(g)
    gens.sort(key=lambda g: int(g["generation"]))
    return gens


def _opponents(gens: list[dict[str, Any]], key: str = "eval") -> list[str]:
    seen: list[str] = []
    for g in gens:
        for name in g.get(key, {}):
            if name not in seen:
                seen.append(name)
    return seen


def markdown(gens: list[dict[str, Any]]) -> str:
    """A markdown table: one row per generation, one win-rate column per opponent."""
    cols = [("eval", o, f"vs {o}") for o in _opponents(gens)] + [
        ("eval_search", o, f"search vs {o}") for o in _opponents(gens, "eval_search")
    ]
    head = ["gen", "self-play games", "rows", "buffer", "policy loss", "value loss"] + [c[2] for c in cols] + ["minutes"]
    rows = []
    for g in gens:
        tr = g.get("train") or {}
        cells = [
            str(g["generation"]),
            str(g.get("selfplay", {}).get("games", "")),
            str(g.get("selfplay", {}).get("rows", "")),
            str(tr.get("buffer_rows", "")),
            f"{tr['policy_loss']:.3f}" if "policy_loss" in tr else "",
            f"{tr['value_loss']:.3f}" if "value_loss" in tr else "",
        ]
        for key, o, _ in cols:
            e = g.get(key, {}).get(o)
            cells.append(
                f"{100 * e['win_rate']:.1f}% [{100 * e['low']:.1f}, {100 * e['high']:.1f}] (n={e['games']})" if e else ""
            )
        cells.append(f"{g.get('seconds', 0) / 60:.1f}")
        rows.append(cells)
    return tabulate(rows, headers=head, tablefmt="github", disable_numparse=True) + "\n"


@contextlib.contextmanager
def generation_plot(path: str | os.PathLike[str], who: str, ylabel: str, title: str) -> Iterator[Any]:
    """A figure of one quantity by generation: yields its axes, then labels, saves it to ``path`` as a PNG.

    ``who`` names the caller in the error a missing matplotlib raises.
    """
    matplotlib = import_extra("matplotlib", "az", who)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    try:
        yield ax
        ax.set_xlabel("generation (0 = the initial network)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.set_title(title, fontsize="medium")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best", fontsize="small")
        atomic_write(path, lambda f: fig.savefig(f, format="png"))
    finally:
        plt.close(fig)


def plot(gens: list[dict[str, Any]], path: str | os.PathLike[str], title: str = "") -> Path:
    """Plot the win rate against every opponent by generation (95% Wilson bands) to a PNG."""
    title = title or "yutenv.az: win rate by generation (95% Wilson intervals)"
    with generation_plot(path, "yutenv.az.report's plot", "win rate of the network", title) as ax:
        for key, style, label in (("eval", "-", "vs {}"), ("eval_search", "--", "with search vs {}")):
            for opp in _opponents(gens, key):
                pts = [(g["generation"], g[key][opp]) for g in gens if opp in g.get(key, {})]
                xs = [x for x, _ in pts]
                ax.plot(xs, [e["win_rate"] for _, e in pts], marker="o", linestyle=style, label=label.format(opp))
                ax.fill_between(xs, [e["low"] for _, e in pts], [e["high"] for _, e in pts], alpha=0.2)
        if gens and gens[0].get("eval"):
            chance = next(iter(gens[0]["eval"].values())).get("chance")
            if chance:
                ax.axhline(chance, color="grey", linestyle=":", linewidth=1, label="chance")
        ax.set_ylim(0, 1)
    return Path(path)


def write_report(out: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``OUT/report.md`` and ``OUT/report.png`` from the run's complete generations."""
    d = Path(out)
    gens = load_generations(d)
    cfg: dict[str, Any] = {}
    if (d / "config.json").exists():
        cfg = json.loads((d / "config.json").read_text(encoding="utf-8"))
    text = "# Training report\n\n"
    if cfg:
        keys = ("tier", "rules", "hidden", "games", "sims", "selfplay", "window", "batch", "lr", "seed")
        text += "Run: " + ", ".join(f"`{k}={cfg[k]}`" for k in keys if k in cfg) + "\n\n"
    text += (
        'Win rates of the network playing its policy\'s argmax (no search; "search vs": the Go agent '
        "`net:PATH,sims=N` of `--eval-sims`), with 95% Wilson intervals.\n\n"
    )
    text += markdown(gens)
    md = atomic_write(d / "report.md", lambda f: f.write(text.encode("utf-8")))
    png = plot(gens, d / "report.png")
    return md, png


def main(argv: list[str] | None = None) -> int:
    """``python -m yutenv.az.report RUN_DIR``: rewrite the run's report."""
    p = argparse.ArgumentParser(
        prog="python -m yutenv.az.report",
        description="Rewrite a training run's report (RUN_DIR/report.md, a win-rate table by "
        "generation, and RUN_DIR/report.png, its plot) from the run's complete generations. "
        "Works on a run that is still going. The plot needs matplotlib (the az extra).",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run's folder (the --out of python -m yutenv.az.train)")
    args = p.parse_args(argv)
    if not Path(args.run_dir).is_dir():
        p.error(f"{args.run_dir}: no such folder")
    try:
        paths = write_report(args.run_dir)
    except (ValueError, OSError) as e:
        print(f"yutenv.az.report: {e}", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
