"""The AlphaZero-style learning loop: self-play, train, evaluate, checkpoint, repeat.

Command line (``python -m yutenv.az.train --help`` lists every option)::

    python -m yutenv.az.train --out runs/x --generations 20 --games 200 --sims 64

Python::

    from yutenv.az.train import TrainConfig, run
    result = run(TrainConfig(out="runs/x", generations=20, games=200, sims=64))
    result.model            # the last generation's PolicyValueNet

Generation 0 is the initial network, evaluated as a baseline: randomly initialised, or with
``--init PATH`` a ``yutenv-net`` file's weights (a generation of another run, say, to go on
from it with other settings; its tier, widths and rules must be the run's).
Generation g >= 1 (``--games`` and ``--sims`` may change from one generation to another:
:mod:`yutenv.az.schedule`):

1. **self-play** with generation g-1's network: ``yutenv.az.SelfPlay(...).run(evaluate,
   games, out)`` (``--selfplay net``, network-guided MCTS in the Go server, the
   network evaluated here in torch), or the same search with the network evaluated in Go
   (``--selfplay net-go``: ``yutenv selfplay --agents net:gen-G/selfplay.ynet,sims=N,gumbel=1``,
   Gumbel root sampling, no torch in self-play, several times faster), or the server's baseline
   ``mcts:SIMS`` agents (``--selfplay mcts``: ``yutenv selfplay``; no network in the loop, a
   supervised warm start). Each writes a dataset (docs/DATASETS.md) to ``gen-G/selfplay``.
2. **train** on the replay buffer (the datasets of the last ``--window`` generations):
   policy cross-entropy against the visit distribution (illegal actions masked out)
   plus ``--value-weight`` x the MSE of tanh(value) against the outcome (:func:`losses`).
   With playout cap randomization (``--fast-sims N --full-prob P``, KataGo) a share
   1-P of the decisions run a fast search of N simulations whose rows have no policy target: the
   policy term covers the full searches' rows only, the value term every row.
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

Checkpoints are verified (:mod:`yutenv.az.checkpoint`): ``gen.json`` records the SHA-256 of
every file of its generation, the generation and the run's identity, and a resume checks
them, the generation numbers and the weights of every generation it reads. A damaged
generation is refused with :class:`~yutenv.errors.CheckpointError` (exit 1 from the
command line) naming the file; ``--redo-damaged`` deletes it and the generations after it
and trains them again from the last good one (the same networks: every draw is seeded).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import shutil
import subprocess
import sys
import time
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._extras import import_extra
from .._progress import progress_bar

import_extra("torch", "az", "yutenv.az.train")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from .._files import atomic_write, error_text, sha256_bytes
from .._specs import net_spec
from ..connection.server import binary_path
from ..data import datasets
from ..errors import CheckpointError, YutEnvError
from ..evaluation.evaluate import evaluate
from .buffer import ReplayBuffer
from .checkpoint import CHECKSUM_VERSION, check_generation, file_records, load_checkpoint, read_json
from .config import LR_SCHEDULES as LR_SCHEDULES
from .config import SELFPLAY_MODES as SELFPLAY_MODES
from .config import TrainConfig, learning_rate
from .config import cosine_lr as cosine_lr
from .net import (
    TIER_SIZES,
    NetEvaluator,
    NetFileError,
    NetPolicy,
    PolicyValueNet,
    export_net,
    load_net,
    load_start_net,
    masked_logits,
    start_net_bytes,
)
from .report import write_report
from .train_cli import config_from_args

__all__ = ["losses", "TrainConfig", "RunResult", "CheckpointWarning", "run", "main", "load_checkpoint", "gen_dir"]

#: Config fields that may change between a run and its resumption.
_RESUMABLE = {"generations", "progress", "eval", "eval_games", "eval_every", "eval_envs", "eval_sims", "threads", "redo_damaged"}
# Where self-play runs and how its datasets are cut into files: the same rows either way.
_RESUMABLE |= {"shard_games", "ray", "ray_cpus", "ray_tasks", "ray_storage"}


class CheckpointWarning(UserWarning):
    """A resume read generations whose ``gen.json`` has no checksums (written by an older
    yutenv: their files were checked for structure only), or deleted damaged generations to
    train them again (``redo_damaged``). The message names the files."""


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
    data = (json.dumps(doc, indent=1) + "\n").encode("utf-8")
    atomic_write(path, lambda f: f.write(data))


def _atomic_torch(path: Path, obj: Any) -> None:
    atomic_write(path, lambda f: torch.save(obj, f))


class _Progress:
    """A generation bar (rate, ETA; ``cfg.progress`` says where: :mod:`yutenv._progress`) and
    status lines, unless ``cfg.progress`` is False."""

    def __init__(self, cfg: TrainConfig, start: int) -> None:
        self.enabled = cfg.progress is not False
        self.bar: Any = None
        if self.enabled:
            self.bar = progress_bar(cfg.generations, "generations", unit="gen", initial=start, show=cfg.progress)

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
    """Generation ``g``'s self-play into the new dataset folder ``out``; ``cfg`` is that
    generation's settings (:meth:`TrainConfig.at`: whole ``games`` and ``sims``)."""
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
            shard_games=cfg.shard_games,
            fast_sims=cfg.fast_sims,
            full_prob=cfg.full_prob,
            extra=cfg.selfplay_opts,
        )
        summary = None if cfg.ray else sp.run(ev, games=cfg.games, out=str(out), progress=cfg.progress)
        info: dict[str, Any] = {}
        if cfg.ray:  # every range of games on a Ray worker (yutenv.az.cluster): the same dataset
            info = importlib.import_module(".cluster", __package__).ray_selfplay(cfg, g, out, model, sp, seed)
        if dataclasses.is_dataclass(summary) and not isinstance(summary, type):
            info["summary"] = dataclasses.asdict(summary)
    else:
        agents, net_sha = f"mcts:{cfg.sims}", ""
        if cfg.selfplay == "net-go":  # the network's file beside the dataset, which the Go agent reads,
            ynet = export_net(model, out.parent / "selfplay.ynet")  # named from the generation's folder:
            net_sha = sha256_bytes(ynet.read_bytes())  # the dataset records no run path, and
            agents = cfg.net_go_agent(Path(ynet.name))  # Ray's workers write the same (they run there)
        cmd = [
            str(binary_path()), "selfplay", "--agents", agents, "--games", str(cfg.games),
            "--tier", cfg.tier, "--rules", cfg.rules, "--seed", str(seed), "--out", str(out.resolve()), "--quiet",
            "--shard-games", str(cfg.shard_games),
        ]  # fmt: skip
        if cfg.workers:
            cmd += ["--workers", str(cfg.workers)]
        if cfg.ray:
            cluster = importlib.import_module(".cluster", __package__)
            info = cluster.ray_selfplay(
                cfg, g, out, None, None, seed, agents=agents, net_sha=net_sha, cwd=str(out.parent.resolve())
            )
        else:
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=out.parent)
            if p.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
            info = {"command": cmd[1:]}
        if net_sha:
            info["net_sha256"] = net_sha

    m = datasets.read_manifest(out)
    info.update(games=int(m["games"]), sims=cfg.sims, rows=int(m["decisions"]), seed=seed, seconds=time.perf_counter() - t0)
    if ev.rows:
        info.update(evaluations=ev.rows, evaluator_calls=ev.calls, evals_per_second=ev.rows / max(info["seconds"], 1e-9))
    return info


def losses(
    logits: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor,
    pi: torch.Tensor,
    z: torch.Tensor,
    target: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The policy and value losses of one batch.

    The policy loss is the cross-entropy of the masked policy against ``pi``, averaged over
    the rows whose ``target`` is True (all rows when ``target`` is None; 0 when none is: a
    fast search of playout cap randomization has no policy target); the value loss is the
    MSE of ``tanh(v)`` against ``z`` over every row.
    """
    logp = F.log_softmax(masked_logits(logits, mask), dim=-1)
    ce = -(pi * logp).sum(dim=-1)
    if target is None:
        policy_loss = ce.mean()
    else:
        w = target.to(ce.dtype)
        # where(): a masked row's cross-entropy may be inf or nan (a policy on a logit of -inf); 0 * nan is nan.
        policy_loss = torch.where(target, ce, torch.zeros_like(ce)).sum() / w.sum().clamp(min=1.0)
    value_loss = F.mse_loss(torch.tanh(v), z)
    return policy_loss, value_loss


def _train(
    cfg: TrainConfig, model: PolicyValueNet, opt: torch.optim.Optimizer, buf: ReplayBuffer, g: int, bar: bool | None
) -> dict[str, Any]:
    rng = np.random.default_rng([cfg.seed, g])
    torch.manual_seed(cfg.seed * 100_003 + g)
    steps = cfg.steps or max(1, math.ceil(cfg.epochs * len(buf) / cfg.batch))
    model.train()
    t0 = time.perf_counter()
    pl_sum = vl_sum = 0.0
    it: Any = buf.batches(rng, cfg.batch, steps)
    steps_bar = progress_bar(steps, f"gen {g} train", unit="step", show=bar, leave=False)
    lrs = []
    for i, b in enumerate(it):
        lr = learning_rate(cfg, g - 1 + i / steps)
        if i == 0 or i == steps - 1:
            lrs.append(lr)
        for group in opt.param_groups:
            group["lr"] = lr
        obs = torch.from_numpy(b.obs)
        mask = torch.from_numpy(b.mask)
        pi = torch.from_numpy(b.policy)
        z = torch.from_numpy(b.value)
        target = None if b.policy_target is None else torch.from_numpy(b.policy_target)
        logits, v = model(obs)
        policy_loss, value_loss = losses(logits, v, mask, pi, z, target)
        loss = policy_loss + cfg.value_weight * value_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        pl_sum += float(policy_loss.detach())
        vl_sum += float(value_loss.detach())
        if steps_bar is not None:
            steps_bar.update(1)
    if steps_bar is not None:
        steps_bar.close()
    model.eval()
    return {
        "steps": steps,
        "batch": cfg.batch,
        "buffer_rows": len(buf),
        "buffer": [Path(p).parent.name for p in buf.paths],
        "policy_loss": pl_sum / steps,
        "value_loss": vl_sum / steps,
        "lr": lrs,
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
            luck="off",  # the report reads win rates only: no luck accounting
        )  # fmt: skip
        plain[opp] = _result(r)
        if cfg.eval_sims:
            spec = net_spec(ynet, sims=cfg.eval_sims)  # played in the Go binary (yutenv eval)
            search[opp] = _result(
                evaluate(spec, opponent=opp, games=cfg.eval_games, rules=cfg.rules, seed=seed, name=f"gen{g}+search", luck="off")
            )
    return plain, search


def _checkpoint(d: Path, cfg: TrainConfig, model: PolicyValueNet, opt: torch.optim.Optimizer, g: int, run_id: str) -> None:
    ck = {
        "generation": g,
        "run": run_id,
        "spec": model.spec(),
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "config": cfg.as_dict(),
    }
    _atomic_torch(d / "model.pt", ck)
    export_net(model, d / "net.ynet")


_RESTORE = "restore it from a backup, or start a new run with another --out"


def _open_run(cfg: TrainConfig) -> tuple[int, str]:
    """Create or check ``OUT`` and its ``config.json``; delete an incomplete generation (the
    run was killed in it); return the last complete generation (-1: none) and the run's id."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    cfg_path = out / "config.json"
    mine = cfg.as_dict()
    gens = {}
    for d in out.glob("gen-*"):
        try:
            gens[int(d.name[4:])] = d
        except ValueError:
            continue
    top = max((g for g, d in gens.items() if (d / "gen.json").exists() or (d / "gen.json").is_symlink()), default=-1)
    run_id = ""
    if cfg_path.exists() or cfg_path.is_symlink():
        try:
            old = read_json(cfg_path, "the settings file")
        except CheckpointError as e:
            raise CheckpointError(f"{e}: {_RESTORE}", e.path) from None
        if not isinstance(old, dict) or not isinstance(old.get("run_id", ""), str):
            raise CheckpointError(
                f"{cfg_path}: the run's settings are not a JSON object of settings (damaged): {_RESTORE}", str(cfg_path)
            )
        defaults = TrainConfig(out="").as_dict()  # a setting added since the run began had its default
        diff = sorted(
            k
            for k in set(old) | set(mine)
            if k not in _RESUMABLE and k not in ("out", "run_id") and old.get(k, defaults.get(k)) != mine.get(k)
        )
        if diff:
            raise ValueError(
                f"{out} holds a run made with other settings ({', '.join(f'{k}: {old.get(k)!r} != {mine.get(k)!r}' for k in diff)}): use another --out"
            )
        run_id = old.get("run_id", "")
    elif top >= 0:
        raise CheckpointError(
            f"{cfg_path}: the run's settings are missing, but {out} holds generations: {_RESTORE}", str(cfg_path)
        )
    mine["run_id"] = run_id or uuid.uuid4().hex  # a run made by an older yutenv gets an id now
    _atomic_json(cfg_path, mine)
    for g, d in sorted(gens.items()):
        if g > top and d.is_dir():  # an incomplete generation
            shutil.rmtree(d)
    return top, str(mine["run_id"])


def _span(d: int, top: int) -> str:
    return f"generation {d}" if d == top else f"generations {d}..{top}"


def _fix(d: int, top: int) -> str:
    since = f"from generation {d - 1}" if d > 0 else "from scratch"
    return f"restore it from a backup, or rerun with --redo-damaged to delete {_span(d, top)} and train again {since}"


def _resume(
    cfg: TrainConfig, out: Path, top: int, run_id: str, start: PolicyValueNet | None = None
) -> tuple[PolicyValueNet, torch.optim.Optimizer, ReplayBuffer, list[str]]:
    """The network, optimiser and replay buffer after generation ``top``, every generation
    they read checked (:mod:`yutenv.az.checkpoint`); with no generation yet, ``start`` (or
    :func:`initial_net`'s network); the generations without checksums
    (with their files) are returned. CheckpointError (without the fix) on damage."""
    buf = ReplayBuffer(cfg.window, value_mix=cfg.value_mix)
    if top < 0:
        torch.manual_seed(cfg.seed)
        model = start if start is not None else initial_net(cfg)
        return model, torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay), buf, []
    summaries: dict[int, dict[str, Any]] = {}
    for g in range(top + 1):  # every summary (the report reads them all)
        gp = gen_dir(out, g) / "gen.json"
        if not (gp.exists() or gp.is_symlink()):
            raise CheckpointError(f"{gp}: missing, but generation {top} after it is complete", str(gp), g)
        s = read_json(gp, "the generation's summary", g)
        if not isinstance(s, dict):
            raise CheckpointError(f"{gp}: not a JSON object (damaged)", str(gp), g)
        if s.get("generation") != g:
            raise CheckpointError(
                f"{gp}: says generation {s.get('generation')!r}, but it is in {gp.parent.name} (copied from another generation)",
                str(gp),
                g,
            )
        summaries[g] = s
    unchecked = []
    for g in range(max(0, top - cfg.window + 1), top + 1):  # the generations read: the last one and the replay window
        d = gen_dir(out, g)
        files = check_generation(d, g, run_id, summaries[g])
        if files:
            more = f" and {len(files) - 5} more" if len(files) > 5 else ""
            unchecked.append(f"{d.name} ({', '.join(files[:5])}{more})")
    d = gen_dir(out, top)
    model, ck = load_checkpoint(
        d / "model.pt", generation=top, run_id=run_id, spec={"hidden": list(cfg.hidden), "tier": cfg.tier}
    )
    try:
        load_net(d / "net.ynet")
    except NetFileError as e:
        raise CheckpointError(str(e), str(d / "net.ynet"), top) from None
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    try:
        opt.load_state_dict(ck["optimizer"])
    except Exception as e:  # noqa: BLE001  # a damaged state dict of an older run: any type at all
        raise CheckpointError(
            f"{d / 'model.pt'}: its optimiser state does not fit the network ({type(e).__name__}: {e})", str(d / "model.pt"), top
        ) from None
    for g in range(max(1, top - cfg.window + 1), top + 1):
        try:
            buf.add(gen_dir(out, g) / "selfplay")
        except datasets.DatasetError as e:
            raise CheckpointError(str(e), str(gen_dir(out, g) / "selfplay"), g) from None
    return model, opt, buf, unchecked


def initial_net(cfg: TrainConfig) -> PolicyValueNet:
    """Generation 0's network: ``cfg.init``'s weights, or a fresh one (seeded by the caller).
    A start network of another tier, trunk or rules than the run's is refused (ValueError)
    with both; a damaged one with :class:`~yutenv.az.net.NetFileError`."""
    if not cfg.init:
        return PolicyValueNet(TIER_SIZES[cfg.tier], cfg.hidden, tier=cfg.tier, rules=cfg.rules)
    model = load_start_net(cfg.init)
    have = {"tier": model.tier, "hidden": list(model.hidden), "rules": model.rules}
    want = {"tier": cfg.tier, "hidden": list(cfg.hidden), "rules": cfg.rules}
    diff = [f"{k} {have[k]!r}, the run's {want[k]!r}" for k in want if have[k] != want[k]]
    if diff:
        raise ValueError(
            f"--init {cfg.init}: the network does not fit the run ({'; '.join(diff)}): pass the run's settings to match it"
        )
    return model


def _open_checked(
    cfg: TrainConfig, start: PolicyValueNet | None = None
) -> tuple[int, str, PolicyValueNet, torch.optim.Optimizer, ReplayBuffer]:
    """:func:`_open_run`, then :func:`_resume`; a damaged generation is refused with the fix,
    or with ``redo_damaged`` deleted with every later one (and the resume retried)."""
    out = Path(cfg.out)
    top, run_id = _open_run(cfg)
    while True:
        try:
            model, opt, buf, unchecked = _resume(cfg, out, top, run_id, start)
            break
        except CheckpointError as e:
            d = top if e.generation is None else e.generation
            if not cfg.redo_damaged:
                raise CheckpointError(f"{e}: {_fix(d, top)}", e.path, e.generation) from None
            warnings.warn(f"{e}: deleting {_span(d, top)} to train again", CheckpointWarning, stacklevel=3)
            for g in range(d, top + 1):
                shutil.rmtree(gen_dir(out, g), ignore_errors=True)
            top = d - 1
    if unchecked:
        warnings.warn(
            f"no checksums in the gen.json of {'; '.join(unchecked)} (written by an older yutenv): "
            "these files were checked for structure only", CheckpointWarning, stacklevel=3,
        )  # fmt: skip
    return top, run_id, model, opt, buf


def run(cfg: TrainConfig) -> RunResult:
    """Run (or resume) the loop of ``cfg`` up to ``cfg.generations``; see the module doc."""
    cfg.check()
    torch.set_num_threads(cfg.threads)
    out = Path(cfg.out)
    # A start network that does not fit is refused before the run directory is made.
    start = initial_net(cfg) if cfg.init and not (gen_dir(out, 0) / "gen.json").exists() else None
    last, run_id, model, opt, buf = _open_checked(cfg, start)
    prog = _Progress(cfg, max(last, 0))
    if last >= 0:
        prog.say(f"resuming {out} after generation {last}")
    try:
        for g in range(last + 1, cfg.generations + 1):
            t0 = time.perf_counter()
            d = gen_dir(out, g)
            d.mkdir()
            summary: dict[str, Any] = {"generation": g}
            if g == 0 and cfg.init:
                summary["init"] = {"path": cfg.init, "sha256": sha256_bytes(start_net_bytes(cfg.init))}
            if g > 0:
                gcfg = cfg.at(g)  # this generation's games and simulations
                prog.say(
                    f"gen {g}: self-play ({gcfg.games} games, {cfg.selfplay}, {gcfg.sims} sims{f', fast {cfg.fast_sims} at p={1 - cfg.full_prob:g}' if cfg.fast_sims else ''})"
                )
                summary["selfplay"] = _selfplay(gcfg, model, g, d / "selfplay")
                buf.add(d / "selfplay")
                prog.say(f"gen {g}: training on {len(buf)} rows from {len(buf.paths)} generation(s)")
                summary["train"] = _train(cfg, model, opt, buf, g, cfg.progress)
            _checkpoint(d, cfg, model, opt, g, run_id)
            if g % cfg.eval_every == 0 or g == cfg.generations:
                summary["eval"], search = _evaluate(cfg, model, g, d / "net.ynet")
                if search:
                    summary["eval_search"] = search
            summary["seconds"] = time.perf_counter() - t0
            # written last: the generation is complete, and every file it holds is as checksummed here
            summary["checkpoint"] = {"version": CHECKSUM_VERSION, "run": run_id, "generation": g, "files": file_records(d)}
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


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: run the loop, print the report's table."""
    fmt = warnings.formatwarning
    warnings.formatwarning = lambda message, *args, **kwargs: f"yutenv.az.train: warning: {message}\n"  # one line
    try:
        cfg = config_from_args(argv)
        res = run(cfg)
    except (YutEnvError, ValueError, RuntimeError, OSError) as e:  # OSError: the disk is full, a folder is not writable, ...
        print(f"yutenv.az.train: {error_text(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("yutenv.az.train: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    finally:
        warnings.formatwarning = fmt
    print(res.report_md.read_text(encoding="utf-8"))
    print(f"report: {res.report_md} {res.report_png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
