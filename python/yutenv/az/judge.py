"""Judge a training run: generations against each other, and the final network against the baselines.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from yutenv.az.judge import judge
    md = judge("runs/x", every=10, games=400, search_sims=[200], baselines=["greedy", "mc:100", "mcts:400"])
    print(md.read_text())                  # runs/x/ladder.md (and runs/x/ladder.json)

``python -m yutenv.az.judge runs/x --every 10 --games 400 --search-sims 200`` does the same.

The training loop's own report (:mod:`yutenv.az.report`) measures every generation against
fixed baselines. This module answers the other two questions of a run:

1. **Did each generation beat the one before?** The networks of the chosen generations
   (generation 0, every ``every``-th, and the last) and ``random`` play a round robin in
   ``yutenv ladder`` (the Go agents ``net:gen-G/net.ynet``, or ``net:...,sims=N`` with
   ``ladder_sims``): each pair ``games`` games with seats balanced and the same throws for
   every pair, so the table of consecutive pairs is generation-over-generation improvement,
   head to head, and the ratings are on the published scale's terms (the same
   Bradley-Terry fit, ``random`` = 0; docs/BASELINES.md, "The ladder"). Rules of more than
   two seats have no ladder: their generations play ``yutenv eval``'s round robin, ranked
   with generation 0 = 0.
2. **How good is the final network?** With search (``net:PATH,sims=N``) against the baseline
   ``mcts:N`` at the same number of simulations, for every ``N`` of ``search_sims``; and
   without search against every ``baselines`` agent.
3. **Where did the climb stop?** With ``against`` (``--against 'mcts:400'``), every chosen
   generation (alone, or with ``ladder_sims``) plays each of those fixed agents ``games``
   games: a table by generation and, with matplotlib (the ``az`` extra), the plot
   ``RUN/ladder.png`` of the win rates with their intervals. It measures a run trained with
   ``--eval=`` (no evaluation in the loop) after the fact, with as many games as wanted.

Every match is a real ``yutenv eval --json`` run of the bundled binary, on all cores, with
95% Wilson intervals; nothing here needs torch (the Go side reads the ``yutenv-net`` files).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tabulate import tabulate

from .._files import atomic_write
from .._protocol import SHIPPED_NET_RULES
from .._specs import net_spec as _net_spec
from .._specs import split_specs
from ..errors import InvalidArgumentError, YutEnvError
from ..evaluation.evaluate import run_eval_json
from ..evaluation.ladder import _run_ladder
from .report import generation_plot, plot

__all__ = ["judge", "pick_generations", "net_spec", "DEFAULT_BASELINES", "DEFAULT_REGRET_BASELINES"]

#: The agents the final network alone plays by default: the baselines and the shipped network
#: ``az`` (without and with search; a shipped network is played only under the rules it was
#: trained for).
DEFAULT_BASELINES = ("greedy", "mc:100", "mcts:400", "az", "az,sims=200")

#: The agents whose regret is graded beside the generations' with ``reference``.
DEFAULT_REGRET_BASELINES = ("greedy", "mcts:400")


def _md(rows: list[list[str]], head: list[str]) -> str:
    """A markdown table (GitHub's pipes) of string cells."""
    return str(tabulate(rows, headers=head, tablefmt="github", disable_numparse=True))


def _complete_generations(run: Path) -> list[int]:
    gens = []
    for p in run.glob("gen-*/gen.json"):
        if (p.parent / "net.ynet").exists():
            gens.append(int(p.parent.name.split("-", 1)[1]))
    return sorted(gens)


def pick_generations(run: str | os.PathLike[str], every: int = 0, gens: Sequence[int] = ()) -> list[int]:
    """The complete generations to judge: ``gens`` if given (each must be complete), else
    generation 0, every ``every``-th and the last (every complete one if ``every`` is 0)."""
    have = _complete_generations(Path(run))
    if not have:
        raise ValueError(f"{run}: no complete generation (gen-*/gen.json with net.ynet)")
    if gens:
        missing = sorted(set(gens) - set(have))
        if missing:
            raise ValueError(f"{run}: generations {missing} are not complete (have {have[0]}..{have[-1]})")
        return sorted(set(gens))
    if every < 0:
        raise ValueError(f"every must be >= 0, got {every}")
    if every == 0:
        return have
    return sorted({g for g in have if g % every == 0} | {have[0], have[-1]})


def net_spec(run: str | os.PathLike[str], gen: int, sims: int = 0) -> str:
    """The Go agent spec of generation ``gen``'s network: ``net:PATH`` or ``net:PATH,sims=N``."""
    return _net_spec(Path(run) / f"gen-{gen:04d}" / "net.ynet", sims=sims or None)


def _elo(m: dict[str, Any]) -> str:
    """A match's Elo difference, blank after a clean sweep (an infinite difference: None)."""
    return "" if m.get("elo_diff") is None else f"{m['elo_diff']:+.0f}"


def _pct(m: dict[str, Any]) -> str:
    return f"{100 * m['win_rate_a']:.1f}% [{100 * m['win_rate_a_low']:.1f}, {100 * m['win_rate_a_high']:.1f}]"


def _flip(m: dict[str, Any]) -> dict[str, Any]:
    """The same match seen from agent b."""
    f = {
        **m,
        "a": m["b"],
        "b": m["a"],
        "win_rate_a": 1 - m["win_rate_a"],
        "win_rate_a_low": 1 - m["win_rate_a_high"],
        "win_rate_a_high": 1 - m["win_rate_a_low"],
    }
    if m.get("elo_diff") is not None:
        f["elo_diff"] = -m["elo_diff"]
    return f


def _ladder_markdown(gens: list[int], specs: list[str], rr: dict[str, Any]) -> str:
    """The tables of the generations' round robin: ``rr`` is ``yutenv ladder``'s JSON (pairs,
    ratings; ``random`` among the agents) or ``yutenv eval``'s (matches, ranking)."""
    name = dict(zip(specs, (f"gen {g}" for g in gens)))
    matches = rr.get("pairs", rr.get("matches", []))
    pair: dict[tuple[str, str], dict[str, Any]] = {}
    for m in matches:
        pair[(m["a"], m["b"])] = m
        pair[(m["b"], m["a"])] = _flip(m)
    games = matches[0]["games"] if matches else 0
    lines = [f"Each pair played {games} games, seats balanced; the row's win rate against the column, 95% Wilson interval.", ""]
    steps = []
    for older, newer in zip(specs, specs[1:]):
        m = pair[(newer, older)]
        steps.append([name[newer], name[older], _pct(m), _elo(m)])
    lines.append(_md(steps, ["newer", "older", "newer's win rate", "Elo difference"]))
    lines += ["", "Crosstable (row against column):", ""]
    cols = [a for a in rr.get("agents", specs) if a not in name] + specs  # random first, if it played
    cross = [[name[r], *("" if r == c else f"{100 * pair[(r, c)]['win_rate_a']:.0f}%" for c in cols)] for r in specs]
    lines.append(_md(cross, ["", *(name.get(s, s) for s in cols)]))
    if rr.get("ratings"):
        ranks = [
            [
                str(i),
                name.get(e["agent"], e["agent"]),
                f"{e['elo']:+.0f}",
                f"[{e['elo_low']:+.0f}, {e['elo_high']:+.0f}]",
                f"{100 * e['win_rate']:.1f}%",
            ]
            for i, e in enumerate(rr["ratings"], 1)
        ]
        lines += ["", _md(ranks, ["rank", "agent", "Elo (random = 0)", "95% interval", "win rate over all its games"])]
    elif rr.get("ranking"):
        ranks = [
            [str(i), name.get(e["agent"], e["agent"]), f"{100 * e['win_rate']:.1f}%", f"{e['elo']:.0f}"]
            for i, e in enumerate(rr["ranking"], 1)
        ]
        lines += ["", _md(ranks, ["rank", "network", "win rate over all its games", "Elo (weakest = 0)"])]
    return "\n".join(lines) + "\n"


def judge(
    run: str | os.PathLike[str],
    every: int = 10,
    gens: Sequence[int] = (),
    games: int = 400,
    ladder_sims: int = 0,
    search_sims: Sequence[int] = (),
    baselines: Sequence[str] = DEFAULT_BASELINES,
    search_games: int | None = None,
    seed: int = 1,
    quiet: bool = False,
    against: Sequence[str] = (),
    round_robin: bool = True,
    reference: str | None = None,
    regret_games: int = 400,
    regret_baselines: Sequence[str] = DEFAULT_REGRET_BASELINES,
) -> Path:
    """Judge a run (see the module's doc) and write ``RUN/ladder.md`` and ``RUN/ladder.json``
    (and ``RUN/ladder.png`` with ``against``, ``RUN/regret.png`` with ``reference``, when
    matplotlib is installed). ``round_robin=False`` skips question 1, the generations' round
    robin."""
    d = Path(run)
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    if reference is not None and regret_games < 1:
        raise ValueError(f"regret_games must be at least 1, got {regret_games}")
    if any(n < 1 for n in search_sims):
        raise ValueError(f"search_sims must be positive, got {list(search_sims)}")
    cfg = json.loads((d / "config.json").read_text(encoding="utf-8")) if (d / "config.json").exists() else {}
    rules = str(cfg.get("rules", "standard"))
    chosen = pick_generations(d, every, gens)
    last = chosen[-1]
    common = ["--rules", rules, "--seed", str(seed)]
    # The judge reads win rates only: no luck-adjusted figures (--luck az costs network passes per throw).
    evals = [*common, "--luck", "off"]
    report: dict[str, Any] = {"run": str(d), "rules": rules, "seed": seed, "generations": chosen, "games": games}
    t0 = time.perf_counter()
    text = f"# Judging `{d.name}`\n\nRules `{rules}`, seed {seed}, generations {chosen}.\n\n"

    if round_robin and len(chosen) > 1:
        specs = [net_spec(d, g, ladder_sims) for g in chosen]
        try:
            rr = _run_ladder(
                ["--agents", ";".join(["random", *specs]), "--games", str(games), "--state", "", *common],
                None if not quiet else False,
            )
        except InvalidArgumentError as e:
            if "two-seat rules" not in str(e):
                raise
            rr = run_eval_json(["--agents", ";".join(specs), "--games", str(games), *evals], quiet=quiet)
        report["ladder"] = rr
        how = (
            f"with {ladder_sims} simulations of search each" if ladder_sims else "without search (each plays its policy's argmax)"
        )
        text += f"## Generation against generation\n\nThe networks {how}.\n\n"
        text += _ladder_markdown(chosen, specs, rr) + "\n"

    if against:
        text += _against(d, chosen, ladder_sims, against, games, evals, quiet, report)
    if reference is not None:
        text += _regret(d, chosen, rules, reference, regret_games, regret_baselines, seed, quiet, report)

    sg = search_games or games
    skipped = _off_rules(baselines, rules)
    baselines = [b for b in baselines if b not in skipped]
    if skipped:
        trained = ", ".join(f"`{n}`: {SHIPPED_NET_RULES[n]}" for n in dict.fromkeys(b.split(",")[0].strip() for b in skipped))
        text += f"Skipped {', '.join(f'`{b}`' for b in skipped)}: a shipped network plays only the rules it was trained for ({trained}).\n\n"
    rows: list[tuple[str, str, dict[str, Any]]] = []
    for n in search_sims:
        m = run_eval_json(["--a", net_spec(d, last, n), "--b", f"mcts:{n}", "--games", str(sg), *evals], quiet=quiet)
        rows.append((f"gen {last} with search, sims={n}", f"mcts:{n}", m))
    for b in baselines:
        m = run_eval_json(["--a", net_spec(d, last), "--b", b, "--games", str(sg), *evals], quiet=quiet)
        rows.append((f"gen {last} alone (no search)", b, m))
    if rows:
        report["final"] = [{"who": w, "opponent": o, **m} for w, o, m in rows]
        text += f"## The final network (generation {last})\n\n"
        final = [[w, f"`{o}`", str(m["games"]), _pct(m), _elo(m), f"{m['ms_per_decision_a']:.3f}"] for w, o, m in rows]
        text += _md(final, ["network", "opponent", "games", "win rate", "Elo difference", "ms a decision (network)"]) + "\n\n"
    report["seconds"] = time.perf_counter() - t0
    text += f"{report['seconds'] / 60:.1f} minutes, `yutenv eval` on {os.cpu_count()} cores.\n"
    md = d / "ladder.md"
    if "plot" not in report:  # an earlier judgement's plot would pass for this one's
        (d / "ladder.png").unlink(missing_ok=True)
    if "regret_plot" not in report:
        (d / "regret.png").unlink(missing_ok=True)
    for path, body in ((md, text), (d / "ladder.json", json.dumps(report, indent=1) + "\n")):
        data = body.encode("utf-8")
        atomic_write(path, lambda f: f.write(data))  # noqa: B023 - called in this iteration
    return md


def _against(d: Path, chosen: list[int], sims: int, against: Sequence[str], games: int, common: list[str],
             quiet: bool, report: dict[str, Any]) -> str:  # fmt: skip
    """Every chosen generation against each fixed agent: the markdown section, the report's
    ``against`` entry ({agent: [match of each generation]}) and the plot ``RUN/ladder.png``."""
    res: dict[str, list[dict[str, Any]]] = {}
    for b in against:
        res[b] = []
        for g in chosen:
            m = run_eval_json(["--a", net_spec(d, g, sims), "--b", b, "--games", str(games), *common], quiet=quiet)
            res[b].append({"generation": g, **m})
    report["against"] = res
    how = f"with {sims} simulations of search" if sims else "alone (no search)"
    rows = [[str(g), *(_pct(res[b][i]) for b in against)] for i, g in enumerate(chosen)]
    text = f"## Every generation against fixed agents\n\nEach generation {how}, {games} games against each agent.\n\n"
    text += _md(rows, ["gen", *(f"vs `{b}`" for b in against)]) + "\n\n"
    if importlib.util.find_spec("matplotlib") is None:
        return text + "No plot: it needs matplotlib (`pip install 'yutenv[az]'`).\n\n"
    gens = [{"generation": g, "eval": {b: {"win_rate": res[b][i]["win_rate_a"], "low": res[b][i]["win_rate_a_low"],
                                           "high": res[b][i]["win_rate_a_high"], "games": res[b][i]["games"],
                                           "chance": res[b][i]["chance_rate"]} for b in against}}
            for i, g in enumerate(chosen)]  # fmt: skip
    png = plot(gens, d / "ladder.png", title=f"{d.name}: each generation {how} (95% Wilson intervals)")
    report["plot"] = png.name
    return text + f"![win rate by generation]({png.name})\n\n"


#: Points of win chance in a unit of loss: a loss is a difference of outcomes in [-1, 1], so with
#: two seats 0.02 of it is one percentage point of winning chances.
POINTS_PER_LOSS = 50


def _points(r: dict[str, Any]) -> str:
    """A grade's mean loss in points of win chance, with its 95% interval when it has one."""
    s = f"{POINTS_PER_LOSS * r['mean_loss']:.2f}"
    if r.get("mean_loss_low") is not None:
        s += f" [{POINTS_PER_LOSS * r['mean_loss_low']:.2f}, {POINTS_PER_LOSS * r['mean_loss_high']:.2f}]"
    return s


def _off_rules(baselines: Sequence[str], rules: str) -> list[str]:
    """The specs of ``baselines`` that name a network shipped inside the binary (``az``, ...:
    ``yutenv._protocol.SHIPPED_NET_RULES``) trained for other rules than ``rules`` (written as
    the canonical rules string, ``yutenv net`` shows it): the agents that would refuse to play."""
    out = []
    for b in baselines:
        name = b.split(",")[0].strip()
        if name in SHIPPED_NET_RULES and SHIPPED_NET_RULES[name] != rules:
            out.append(b)
    return out


def _regret(d: Path, chosen: list[int], rules: str, reference: str, games: int, baselines: Sequence[str],
            seed: int, quiet: bool, report: dict[str, Any]) -> str:  # fmt: skip
    """Every chosen generation's regret against ``reference``, beside the baselines': the
    markdown section, the report's ``regret`` entry and the plot ``RUN/regret.png``."""
    from ..evaluation.grade import grade

    def one(spec: str) -> dict[str, Any]:
        r = grade(spec, opponent="greedy", games=games, reference=reference, rules=rules, seed=seed, worst=0, quiet=quiet)
        keys = ("mean_loss", "mean_loss_low", "mean_loss_high", "decisions", "error_rate", "best_rate", "games")
        return {k: getattr(r, k) for k in keys}

    gens = [{"generation": g, **one(net_spec(d, g))} for g in chosen]
    base = {b: one(b) for b in baselines}
    report["regret"] = {"reference": reference, "games": games, "generations": gens, "baselines": base}
    text = (
        f"## Regret against `{reference}`\n\n"
        f"Each agent's decisions with a choice in {games} games against `greedy`, graded by `{reference}`: "
        "the mean win probability a decision gives up against the reference's best, in percentage points "
        "(a loss of 0.02 of the outcome in [-1, 1]), 95% interval clustered by game; the share of decisions "
        "giving up more than one point (the grade's errors).\n\n"
    )
    rows = [[f"gen {e['generation']}", _points(e), f"{100 * e['error_rate']:.0f}%", str(e["decisions"])] for e in gens]
    rows += [[f"`{b}`", _points(e), f"{100 * e['error_rate']:.0f}%", str(e["decisions"])] for b, e in base.items()]
    text += _md(rows, ["agent", "regret (points)", "> 1 point", "decisions"]) + "\n\n"
    if importlib.util.find_spec("matplotlib") is None:
        return text + "No plot: it needs matplotlib (`pip install 'yutenv[az]'`).\n\n"
    png = _plot_regret(gens, base, d / "regret.png", f"{d.name}: regret a decision against {reference}")
    report["regret_plot"] = png.name
    return text + f"![regret by generation]({png.name})\n\n"


def _plot_regret(gens: list[dict[str, Any]], base: dict[str, dict[str, Any]], path: Path, title: str) -> Path:
    """The generations' regret (points, with its interval as a band) and each baseline's as a line."""
    ylabel = "regret a decision (points of win chance)"
    with generation_plot(path, "yutenv.az.judge's regret plot", ylabel, title) as ax:
        xs = [e["generation"] for e in gens]
        ax.plot(xs, [POINTS_PER_LOSS * e["mean_loss"] for e in gens], marker="o", label="the network alone")
        if all(e["mean_loss_low"] is not None for e in gens):
            lows = [POINTS_PER_LOSS * e["mean_loss_low"] for e in gens]
            ax.fill_between(xs, lows, [POINTS_PER_LOSS * e["mean_loss_high"] for e in gens], alpha=0.2)
        for i, (b, e) in enumerate(base.items()):
            ax.axhline(POINTS_PER_LOSS * e["mean_loss"], color=f"C{i + 1}", linestyle="--", linewidth=1, label=b)
        ax.set_ylim(bottom=0)
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m yutenv.az.judge RUN_DIR [options]``."""
    ap = argparse.ArgumentParser(prog="python -m yutenv.az.judge", description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="the run directory of python -m yutenv.az.train")
    ap.add_argument("--every", type=int, default=10, help="judge generation 0, every N-th and the last (0: all)")
    ap.add_argument("--gens", default="", help="comma-separated generations to judge instead of --every")
    ap.add_argument("--games", type=int, default=400, help="games per pair of generations (and per final match)")
    ap.add_argument("--ladder-sims", type=int, default=0, help="the generations search with N simulations (0: no search)")
    ap.add_argument("--search-sims", default="", help="comma-separated N: the final network with N sims against mcts:N")
    ap.add_argument(
        "--baselines",
        default=";".join(DEFAULT_BASELINES),
        help="';'-separated agents the final network alone plays ('' for none)",
    )
    ap.add_argument("--search-games", type=int, default=0, help="games per final match (0: --games)")
    ap.add_argument("--no-round-robin", action="store_true", help="skip the generations' round robin")
    ap.add_argument(
        "--against", default="", help="';'-separated agents every chosen generation plays (a table and RUN/ladder.png)"
    )
    ap.add_argument(
        "--reference",
        default=None,
        help="grade every chosen generation's decisions against this agent (optimal:FILE, a table of yutenv solve)",
    )
    ap.add_argument("--regret-games", type=int, default=400, help="games against greedy graded per agent with --reference")
    ap.add_argument(
        "--regret-baselines",
        default=";".join(DEFAULT_REGRET_BASELINES),
        help="';'-separated agents graded beside the generations with --reference",
    )
    ap.add_argument("--seed", type=int, default=1, help="seed of the games' throws and the agents")
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    a = ap.parse_args(argv)
    try:
        md = judge(
            a.run,
            every=a.every,
            gens=[int(x) for x in a.gens.split(",") if x.strip()],
            games=a.games,
            ladder_sims=a.ladder_sims,
            search_sims=[int(x) for x in a.search_sims.split(",") if x.strip()],
            baselines=split_specs(a.baselines),
            search_games=a.search_games or None,
            seed=a.seed,
            quiet=a.quiet,
            against=split_specs(a.against),
            round_robin=not a.no_round_robin,
            reference=a.reference,
            regret_games=a.regret_games,
            regret_baselines=split_specs(a.regret_baselines),
        )
    except (ValueError, OSError, YutEnvError) as e:
        print(f"python -m yutenv.az.judge: {e}", file=sys.stderr)
        return 2
    print(md.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
