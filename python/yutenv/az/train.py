"""The AlphaZero-style learning loop: self-play, train, evaluate, checkpoint, repeat.

Command line (``python -m yutenv.az.train --help`` lists every option)::

    python -m yutenv.az.train --out runs/x --generations 20 --games 200 --sims 64

Python::

    from yutenv.az.train import TrainConfig, run
    result = run(TrainConfig(out="runs/x", generations=20, games=200, sims=64))
    result.model            # the last generation's PolicyValueNet

Generation 0 is the initial (randomly initialised) network, evaluated as a baseline.
Generation g >= 1:

1. **self-play** with generation g-1's network: ``yutenv.az.SelfPlay(...).run(evaluate,
   games, out)`` (``--selfplay net``, network-guided MCTS in the Go server, the
   network evaluated here in torch), or the server's baseline ``mcts:SIMS`` agents
   (``--selfplay mcts``: ``yutenv selfplay``; no network in the loop, a supervised
   warm start). Either writes a dataset (docs/DATASETS.md) to ``gen-G/selfplay``.
2. **train** on the replay buffer (the datasets of the last ``--window`` generations):
   policy cross-entropy against the visit distribution (illegal actions masked out)
   plus ``--value-weight`` x the MSE of tanh(value) against the outcome.
3. **evaluate** the network playing its policy's argmax (no search) against every
   ``--eval`` opponent with :func:`yutenv.evaluate` (95% Wilson intervals), every
   ``--eval-every`` generations and at the last one.
4. **checkpoint**: ``gen-G/model.pt`` (torch: weights, optimiser, config) and
   ``gen-G/net.ynet`` (the ``yutenv-net`` file the Go side reads), then ``gen-G/gen.json``
   (the summary, written last and atomically: a generation is complete when it exists),
   then ``report.md`` and ``report.png``.

Resume: rerunning the same command on the same ``--out`` continues after the last
complete generation; an incomplete one (the run was killed in it) is deleted and redone.
Every random draw of generation g is seeded from ``(seed, g)``, so a resumed run gives
the same networks as an uninterrupted one. Raising ``--generations`` extends a finished run.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from .._extras import import_extra

import_extra("torch", "az", "yutenv.az.train")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from ..evaluate import evaluate
from ..server import binary_path
from .buffer import ReplayBuffer
from .net import TIER_SIZES, NetEvaluator, NetPolicy, PolicyValueNet, export_net, masked_logits
from .report import write_report

__all__ = ["TrainConfig", "RunResult", "run", "main", "load_checkpoint", "gen_dir"]

#: Config fields that may change between a run and its resumption.
_RESUMABLE = {"generations", "progress", "eval", "eval_games", "eval_every", "eval_envs", "eval_sims", "threads"}


@dataclass
class TrainConfig:
    """Everything that defines a run (saved as ``OUT/config.json``)."""

    out: str
    generations: int = 10
    games: int = 100
    sims: int = 64
    tier: str = "compact"
    rules: str = "standard"
    selfplay: str = "net"
    hidden: Sequence[int] = (256, 256)
    lr: float = 1e-3
    weight_decay: float = 1e-4
    batch: int = 256
    epochs: float = 2.0
    steps: int = 0
    window: int = 4
    value_weight: float = 1.0
    value_mix: float = 0.0
    games_in_flight: int = 64
    c_puct: float = 1.5
    dirichlet_alpha: float = 0.3
    dirichlet_frac: float = 0.25
    temperature_moves: int = 20
    workers: int = 0
    eval: Sequence[str] = ("greedy", "mc:100", "mcts:400")
    eval_games: int = 100
    eval_every: int = 1
    eval_envs: int = 32
    eval_sims: int = 0
    seed: int = 0
    threads: int = 1
    progress: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        """Raise ValueError on an impossible setting."""
        if self.tier not in TIER_SIZES:
            raise ValueError(f"tier {self.tier!r}: want one of {sorted(TIER_SIZES)}")
        if self.selfplay not in ("net", "mcts"):
            raise ValueError(f"selfplay {self.selfplay!r}: want 'net' or 'mcts'")
        for name in ("generations", "games", "sims", "batch", "window", "eval_games", "eval_every", "eval_envs", "threads", "games_in_flight"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.eval_sims < 0:
            raise ValueError(f"eval_sims must be >= 0, got {self.eval_sims}")
        if self.eval_sims and ("," in str(Path(self.out).resolve()) or ";" in str(Path(self.out).resolve())):
            raise ValueError(f"--eval-sims plays net:PATH, and PATH may not hold ',' or ';': {self.out}")
        if self.steps < 0 or self.epochs <= 0 or self.lr <= 0:
            raise ValueError("steps must be >= 0, epochs and lr > 0")

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["hidden"] = list(self.hidden)
        d["eval"] = list(self.eval)
        return d


@dataclass
class RunResult:
    """What :func:`run` returns: the last network and every complete generation's summary."""

    model: PolicyValueNet
    generations: list[dict[str, Any]]
    report_md: Path
    report_png: Path


def gen_dir(out: str | os.PathLike[str], g: int) -> Path:
    """The directory of generation ``g`` of the run in ``out``."""
    return Path(out) / f"gen-{g:04d}"


def _atomic_json(path: Path, doc: Any) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _atomic_torch(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_checkpoint(path: str | os.PathLike[str]) -> tuple[PolicyValueNet, dict[str, Any]]:
    """A generation's ``model.pt``: the network (in eval mode) and the whole checkpoint dict."""
    ck: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    model = PolicyValueNet(**ck["spec"])
    model.load_state_dict(ck["model"])
    model.eval()
    return model, ck


def _complete(out: Path, g: int) -> bool:
    return (gen_dir(out, g) / "gen.json").is_file()


class _Progress:
    """A generation bar (rate, ETA) and status lines, through tqdm when it is enabled."""

    def __init__(self, cfg: TrainConfig, start: int) -> None:
        self.enabled = cfg.progress
        self.bar: Any = None
        if self.enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=cfg.generations, initial=start, desc="generations", unit="gen", dynamic_ncols=True)

    def say(self, msg: str) -> None:
        if self.bar is not None:
            self.bar.write(msg, file=sys.stderr)
        elif self.enabled:
            print(msg, file=sys.stderr)

    def advance(self, postfix: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(postfix)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _selfplay(cfg: TrainConfig, model: PolicyValueNet, g: int, out: Path) -> dict[str, Any]:
    seed = cfg.seed * 100_003 + g
    t0 = time.perf_counter()
    ev = NetEvaluator(model)
    if cfg.selfplay == "net":
        try:
            SelfPlay = importlib.import_module(".selfplay", __package__).SelfPlay  # network-guided MCTS in the Go server
        except (ImportError, AttributeError) as e:
            raise RuntimeError(f"--selfplay net needs yutenv.az.selfplay.SelfPlay ({e}); use --selfplay mcts") from None

        sp = SelfPlay(
            rules=cfg.rules,
            tier=cfg.tier,
            sims=cfg.sims,
            games_in_flight=cfg.games_in_flight,
            c_puct=cfg.c_puct,
            dirichlet_alpha=cfg.dirichlet_alpha,
            dirichlet_frac=cfg.dirichlet_frac,
            temperature_moves=cfg.temperature_moves,
            seed=seed,
        )
        summary = sp.run(ev, games=cfg.games, out=str(out))
        info: dict[str, Any] = {}
        if dataclasses.is_dataclass(summary) and not isinstance(summary, type):
            info["summary"] = dataclasses.asdict(summary)
    else:
        cmd = [
            str(binary_path()), "selfplay", "--agents", f"mcts:{cfg.sims}", "--games", str(cfg.games),
            "--tier", cfg.tier, "--rules", cfg.rules, "--seed", str(seed), "--out", str(out), "--quiet",
        ]  # fmt: skip
        if cfg.workers:
            cmd += ["--workers", str(cfg.workers)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
        info = {"command": cmd[1:]}
    from .. import datasets

    m = datasets.read_manifest(out)
    info.update(games=int(m["games"]), rows=int(m["decisions"]), seed=seed, seconds=time.perf_counter() - t0)
    if ev.rows:
        info.update(evaluations=ev.rows, evaluator_calls=ev.calls, evals_per_second=ev.rows / max(info["seconds"], 1e-9))
    return info


def _train(cfg: TrainConfig, model: PolicyValueNet, opt: torch.optim.Optimizer, buf: ReplayBuffer, g: int, bar: bool) -> dict[str, Any]:
    rng = np.random.default_rng([cfg.seed, g])
    torch.manual_seed(cfg.seed * 100_003 + g)
    steps = cfg.steps or max(1, math.ceil(cfg.epochs * len(buf) / cfg.batch))
    model.train()
    t0 = time.perf_counter()
    pl_sum = vl_sum = 0.0
    it: Any = buf.batches(rng, cfg.batch, steps)
    if bar:
        from tqdm.auto import tqdm

        it = tqdm(it, total=steps, desc=f"gen {g} train", unit="step", leave=False, dynamic_ncols=True)
    for b in it:
        obs = torch.from_numpy(b.obs)
        mask = torch.from_numpy(b.mask)
        pi = torch.from_numpy(b.policy)
        z = torch.from_numpy(b.value)
        logits, v = model(obs)
        logp = F.log_softmax(masked_logits(logits, mask), dim=-1)
        policy_loss = -(pi * logp).sum(dim=-1).mean()
        value_loss = F.mse_loss(torch.tanh(v), z)
        loss = policy_loss + cfg.value_weight * value_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        pl_sum += float(policy_loss.detach())
        vl_sum += float(value_loss.detach())
    model.eval()
    return {
        "steps": steps,
        "batch": cfg.batch,
        "buffer_rows": len(buf),
        "buffer": [Path(p).parent.name for p in buf.paths],
        "policy_loss": pl_sum / steps,
        "value_loss": vl_sum / steps,
        "seconds": time.perf_counter() - t0,
    }


def _result(r: Any) -> dict[str, Any]:
    return {
        "win_rate": r.win_rate_a,
        "low": r.win_rate_a_low,
        "high": r.win_rate_a_high,
        "games": r.games,
        "wins": r.wins_a,
        "chance": r.chance_rate,
        "elo": r.elo_diff,
        "seconds": r.seconds,
    }


def _evaluate(cfg: TrainConfig, model: PolicyValueNet, g: int, ynet: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The network's argmax against every opponent; with ``eval_sims``, also its Go-side MCTS."""
    seed = cfg.seed * 7919 + 1
    plain: dict[str, Any] = {}
    search: dict[str, Any] = {}
    for opp in cfg.eval:
        r = evaluate(
            NetPolicy(model, name=f"gen{g}"), opponent=opp, games=cfg.eval_games, rules=cfg.rules, tier=cfg.tier,
            num_envs=min(cfg.eval_envs, cfg.eval_games), seed=seed, progress=cfg.progress,
        )  # fmt: skip
        plain[opp] = _result(r)
        if cfg.eval_sims:
            spec = f"net:{ynet},sims={cfg.eval_sims}"  # played in the Go binary (yutenv eval)
            search[opp] = _result(evaluate(spec, opponent=opp, games=cfg.eval_games, rules=cfg.rules, seed=seed, name=f"gen{g}+search"))
    return plain, search


def _checkpoint(d: Path, cfg: TrainConfig, model: PolicyValueNet, opt: torch.optim.Optimizer, g: int) -> None:
    _atomic_torch(d / "model.pt", {"generation": g, "spec": model.spec(), "model": model.state_dict(), "optimizer": opt.state_dict(), "config": cfg.as_dict()})
    export_net(model, d / "net.ynet")


def _open_run(cfg: TrainConfig) -> int:
    """Create or check ``OUT``; delete an incomplete generation; return the last complete one (-1: none)."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    cfg_path = out / "config.json"
    mine = cfg.as_dict()
    if cfg_path.exists():
        old = json.loads(cfg_path.read_text(encoding="utf-8"))
        diff = sorted(k for k in set(old) | set(mine) if k not in _RESUMABLE and k != "out" and old.get(k) != mine.get(k))
        if diff:
            raise ValueError(f"{out} holds a run made with other settings ({', '.join(f'{k}: {old.get(k)!r} != {mine.get(k)!r}' for k in diff)}): use another --out")
    _atomic_json(cfg_path, mine)
    last = -1
    while _complete(out, last + 1):
        last += 1
    for d in sorted(out.glob("gen-*")):  # an incomplete generation, or anything after a gap
        try:
            g = int(d.name[4:])
        except ValueError:
            continue
        if g > last and d.is_dir():
            shutil.rmtree(d)
    return last


def run(cfg: TrainConfig) -> RunResult:
    """Run (or resume) the loop of ``cfg`` up to ``cfg.generations``; see the module doc."""
    cfg.check()
    torch.set_num_threads(cfg.threads)
    out = Path(cfg.out)
    last = _open_run(cfg)
    obs_size = TIER_SIZES[cfg.tier]
    buf = ReplayBuffer(cfg.window, value_mix=cfg.value_mix)
    if last < 0:
        torch.manual_seed(cfg.seed)
        model = PolicyValueNet(obs_size, cfg.hidden, tier=cfg.tier, rules=cfg.rules)
    else:
        model, ck = load_checkpoint(gen_dir(out, last) / "model.pt")
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    if last >= 0:
        opt.load_state_dict(ck["optimizer"])
        for g in range(max(1, last - cfg.window + 1), last + 1):
            buf.add(gen_dir(out, g) / "selfplay")
    prog = _Progress(cfg, max(last, 0))
    if last >= 0:
        prog.say(f"resuming {out} after generation {last}")
    try:
        for g in range(last + 1, cfg.generations + 1):
            t0 = time.perf_counter()
            d = gen_dir(out, g)
            d.mkdir()
            summary: dict[str, Any] = {"generation": g}
            if g > 0:
                prog.say(f"gen {g}: self-play ({cfg.games} games, {cfg.selfplay}, {cfg.sims} sims)")
                summary["selfplay"] = _selfplay(cfg, model, g, d / "selfplay")
                buf.add(d / "selfplay")
                prog.say(f"gen {g}: training on {len(buf)} rows from {len(buf.paths)} generation(s)")
                summary["train"] = _train(cfg, model, opt, buf, g, cfg.progress)
            _checkpoint(d, cfg, model, opt, g)
            if g % cfg.eval_every == 0 or g == cfg.generations:
                summary["eval"], search = _evaluate(cfg, model, g, d / "net.ynet")
                if search:
                    summary["eval_search"] = search
            summary["seconds"] = time.perf_counter() - t0
            _atomic_json(d / "gen.json", summary)
            write_report(out)
            rates = ", ".join(f"{k} {100 * v['win_rate']:.0f}%" for k, v in summary.get("eval", {}).items())
            if g > 0:
                prog.advance(rates)
            prog.say(f"gen {g} done in {summary['seconds']:.0f}s" + (f": {rates}" if rates else ""))
    finally:
        prog.close()
    md, png = write_report(out)
    from .report import load_generations

    return RunResult(model, load_generations(out), md, png)


def _parser() -> argparse.ArgumentParser:
    d = TrainConfig(out="")
    p = argparse.ArgumentParser(
        prog="python -m yutenv.az.train",
        description="AlphaZero-style training for yutenv: self-play with the current network, train it on the "
        "last generations' datasets, evaluate it against baseline agents, checkpoint, repeat. Rerun the same "
        "command to resume after an interruption.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--out", required=True, help="run directory (created; an existing run in it is resumed)")
    p.add_argument("--generations", type=int, default=d.generations, help="generations to reach (self-play + train + eval each)")
    p.add_argument("--games", type=int, default=d.games, help="self-play games per generation")
    p.add_argument("--sims", type=int, default=d.sims, help="MCTS simulations per self-play decision")
    p.add_argument("--tier", default=d.tier, choices=sorted(TIER_SIZES), help="observation tier the network reads")
    p.add_argument("--rules", default=d.rules, help="rules (key=value pairs, docs/FORMATS.md)")
    p.add_argument("--selfplay", default=d.selfplay, choices=["net", "mcts"], help="net: network-guided MCTS (yutenv.az.SelfPlay); mcts: the baseline mcts:SIMS agents (no network in self-play)")
    p.add_argument("--hidden", default=",".join(map(str, d.hidden)), help="trunk widths, comma-separated")
    p.add_argument("--lr", type=float, default=d.lr, help="AdamW learning rate")
    p.add_argument("--weight-decay", type=float, default=d.weight_decay, help="AdamW weight decay")
    p.add_argument("--batch", type=int, default=d.batch, help="minibatch size")
    p.add_argument("--epochs", type=float, default=d.epochs, help="training samples per generation, in passes over the replay buffer")
    p.add_argument("--steps", type=int, default=d.steps, help="training steps per generation (0: from --epochs)")
    p.add_argument("--window", type=int, default=d.window, help="replay buffer: the datasets of the last K generations")
    p.add_argument("--value-weight", type=float, default=d.value_weight, help="weight of the value MSE in the loss")
    p.add_argument("--value-mix", type=float, default=d.value_mix, help="value target: (1-m)*outcome + m*search value")
    p.add_argument("--games-in-flight", type=int, default=d.games_in_flight, help="self-play games played at once (net self-play)")
    p.add_argument("--c-puct", type=float, default=d.c_puct, help="PUCT exploration constant (net self-play)")
    p.add_argument("--dirichlet-alpha", type=float, default=d.dirichlet_alpha, help="root noise alpha (net self-play)")
    p.add_argument("--dirichlet-frac", type=float, default=d.dirichlet_frac, help="root noise fraction (net self-play)")
    p.add_argument("--temperature-moves", type=int, default=d.temperature_moves, help="decisions per game sampled at temperature 1, then argmax (net self-play)")
    p.add_argument("--workers", type=int, default=d.workers, help="games at once for --selfplay mcts (0: all cores)")
    p.add_argument("--eval", default=";".join(d.eval), help="opponents the network is evaluated against, ';'-separated agent specs ('' for none)")
    p.add_argument("--eval-games", type=int, default=d.eval_games, help="evaluation games per opponent")
    p.add_argument("--eval-every", type=int, default=d.eval_every, help="evaluate every N generations (and the last)")
    p.add_argument("--eval-envs", type=int, default=d.eval_envs, help="evaluation games played at once per seat")
    p.add_argument("--eval-sims", type=int, default=d.eval_sims, help="also evaluate the network with N simulations of MCTS (the Go agent net:PATH,sims=N); 0: only without search")
    p.add_argument("--seed", type=int, default=d.seed, help="seed of the run (network init, self-play, sampling, evaluation)")
    p.add_argument("--threads", type=int, default=d.threads, help="torch CPU threads")
    p.add_argument("--quiet", action="store_true", help="no progress bars or status lines")
    return p


def config_from_args(argv: Sequence[str] | None = None) -> TrainConfig:
    """Parse command-line arguments into a :class:`TrainConfig`."""
    a = _parser().parse_args(argv)
    return TrainConfig(
        out=a.out, generations=a.generations, games=a.games, sims=a.sims, tier=a.tier, rules=a.rules,
        selfplay=a.selfplay, hidden=tuple(int(x) for x in a.hidden.split(",") if x.strip()), lr=a.lr,
        weight_decay=a.weight_decay, batch=a.batch, epochs=a.epochs, steps=a.steps, window=a.window,
        value_weight=a.value_weight, value_mix=a.value_mix, games_in_flight=a.games_in_flight, c_puct=a.c_puct,
        dirichlet_alpha=a.dirichlet_alpha, dirichlet_frac=a.dirichlet_frac, temperature_moves=a.temperature_moves,
        workers=a.workers, eval=tuple(s.strip() for s in a.eval.split(";") if s.strip()), eval_games=a.eval_games,
        eval_every=a.eval_every, eval_envs=a.eval_envs, eval_sims=a.eval_sims, seed=a.seed, threads=a.threads, progress=not a.quiet,
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: run the loop, print the report's table."""
    try:
        cfg = config_from_args(argv)
        res = run(cfg)
    except (ValueError, RuntimeError) as e:
        print(f"yutenv.az.train: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("yutenv.az.train: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    print(res.report_md.read_text(encoding="utf-8"))
    print(f"report: {res.report_md} {res.report_png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
