"""Self-play datasets and evaluations on a Ray cluster (``pip install 'yutenv[ray]'``).

The work is cut into ranges of game indices. Game ``g`` of a run with seed ``S`` is fully
determined by ``(S, g)`` (its game seed is ``S + g``, and the agent moving seat ``j`` at
decision ``d`` is reseeded with ``Seed(S + g, 1, j, d)``: yutenv's one seed scheme,
docs/DATASETS.md), so a range can be played by any worker, at any
time, as often as needed, and always gives the same games. One Ray task plays one range
with its own ``yutenv selfplay --first-game G --games N`` process (the Go binary shipped in
the package) into a local scratch directory, then copies the shard files and, last, the
range's part manifest to the dataset's storage. When every range is there,
:func:`merge` writes ``manifest.json``: the dataset is then the very dataset that
``yutenv selfplay`` writes on one machine with the same flags, shard for shard and byte
for byte (only the manifest's timestamps and the extra ``parts/`` folder differ).

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from yutenv import distributed
    m = distributed.selfplay("s3://bucket/mcts200", games=100_000, agents="mcts:200",
                             tier="compact", seed=7, address="auto")
    m["games"], m["complete"]
    # -> (100000, True)

The same from a shell (without ``--address`` it starts a Ray on this machine)::

    python -m yutenv.az.distributed selfplay --address auto --games 10000 \\
        --agents 'mcts:200;mcts:200' --tier compact --out DIR_OR_URI --seed 7
    python -m yutenv.az.distributed eval --address auto --a mcts:200 --b greedy --games 20000

Storage is anything `fsspec <https://filesystem-spec.readthedocs.io>`_ opens: a local
folder (a shared NFS mount on a cluster), ``file://``, ``s3://``, ``gs://``, ``abfs://``
(with the matching fsspec package installed). Every worker writes there directly; nothing
goes through the driver but the small part manifests.

Resuming: a run killed at any moment (workers, nodes or the driver) is resumed by running
the same call again. A range counts as done only when its part manifest
(``parts/part-G.json``, written after its shard files) is there and its files have the
listed sizes; every other range is played again, giving the same games. Ray retries a
task whose worker died (``max_retries``); a range is never listed twice, and :func:`merge`
refuses parts that overlap or leave a gap.

Network-guided self-play (the learning loop's, :mod:`yutenv.az`): :func:`az_selfplay` puts
a :class:`~yutenv.az.PolicyValueNet`'s weights once in Ray's object store; every task
rebuilds the network on its worker, starts its own yutenv server there and plays its range
with :class:`~yutenv.az.SelfPlay` (``first_game``), the network's inference running in the
worker beside the server (:class:`AzPlayRange`, a :data:`PlayRange`). The parts are
merged as above: the dataset, with its ``visits`` array, is the one ``SelfPlay(...).run``
writes on one machine with the same weights and seed.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from yutenv.az import SelfPlay
    m = distributed.az_selfplay("runs/gen3/selfplay", 10_000, model, SelfPlay(sims=64, seed=3),
                                range_games=200, address="auto")

Evaluation: :func:`evaluate_agents` plays built-in agents (``yutenv eval`` on each worker)
and :func:`evaluate_policy` a Python policy (shipped once to the object store, then to every
worker), each in chunks merged by :func:`merge_results` into one
:class:`~yutenv.evaluation.evaluate.EvalResult` with its Wilson interval.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Mapping

from .._extras import import_extra
from .._progress import progress_bar
from ..data.datasets import MANIFEST, DatasetError
from .selfplay import SelfPlay

__all__ = [
    "AzPlayRange",
    "PlayRange",
    "RangeTask",
    "WorkerCrash",
    "az_selfplay",
    "evaluate_agents",
    "evaluate_policy",
    "main",
    "merge",
    "merge_results",
    "play_range_cli",
    "plan_ranges",
    "selfplay",
]

from .distributed_eval import SEAT_GROUPS as SEAT_GROUPS
from .distributed_eval import _eval_agents_chunk as _eval_agents_chunk
from .distributed_eval import evaluate_agents, evaluate_policy, merge_results
from .ray_tasks import WorkerCrash, _ray_init, _run_tasks, _run_yutenv

#: The folder of the dataset that holds one manifest per finished range.
PARTS = "parts"

# Manifest fields every part of a dataset must share.
_SAME = (
    "format",
    "version",
    "rules",
    "rules_text",
    "agents",
    "tier",
    "obs_size",
    "obs_parts",
    "obs_layout",
    "seed",
    "seed_scheme",
    "shard_games",
    "arrays",
    "game_arrays",
)


@dataclass(frozen=True)
class RangeTask:
    """One unit of work: games ``first .. first+games-1`` of a self-play run."""

    first: int
    games: int
    agents: str
    tier: str
    seed: int
    rules: str
    shard_games: int
    #: Games one task plays at once (``yutenv selfplay --workers``).
    threads: int = 1
    #: The folder ``yutenv selfplay`` runs in (None: the worker's own): ``agents`` may name network
    #: files relative to it (``net:selfplay.ynet``), so the dataset records the same names as a
    #: run from that folder on one machine. Every worker must see it.
    cwd: str | None = None


#: Plays one :class:`RangeTask` into an empty local directory, as a dataset part: what
#: ``yutenv selfplay --first-game G --games N --tier T --out DIR`` writes (a manifest with
#: ``first_game`` and the range's shards, named as in one run). The default is
#: :func:`play_range_cli`. This is the hook for the network-guided self-play of a learning
#: loop: pass a function that plays the range with the current network (its weights
#: captured by the function, which Ray ships to the workers) and writes the same format.
PlayRange = Callable[[RangeTask, str], None]


def play_range_cli(task: RangeTask, out_dir: str) -> None:
    """Play ``task`` with the package's ``yutenv selfplay`` binary into ``out_dir``."""
    args = [
        "selfplay", "--quiet",
        "--agents", task.agents, "--tier", task.tier, "--seed", str(task.seed), "--rules", task.rules,
        "--shard-games", str(task.shard_games), "--first-game", str(task.first), "--games", str(task.games),
        "--workers", str(task.threads), "--out", out_dir,
    ]  # fmt: skip
    _run_yutenv(args, f"yutenv selfplay for games {task.first}..{task.first + task.games - 1}", DatasetError, task.cwd)


def _fs(url: str) -> tuple[Any, str]:
    fsspec = import_extra("fsspec", "ray", "yutenv.az.distributed")
    fs, root = fsspec.core.url_to_fs(url)
    return fs, str(root).rstrip("/")


def _put_atomic(fs: Any, data: bytes | None, local: str | None, path: str) -> None:
    """Write a file under a temporary name of its own and move it into place (a rename
    on a file system; object stores make each object appear whole anyway). Two attempts
    at the same range (a retry while a lost worker still runs) write the same bytes, and
    never into each other's temporary file."""
    tmp = f"{path}.{uuid.uuid4().hex[:12]}.tmp"
    if local is not None:
        fs.put_file(local, tmp)
    else:
        fs.pipe_file(tmp, data)
    fs.mv(tmp, path)


def _part_name(first: int) -> str:
    return f"part-{first:09d}.json"


def _run_range(task: RangeTask, url: str, play: PlayRange) -> dict[str, Any]:
    """Play one range locally and copy it to the dataset storage; returns its part manifest."""
    fs, root = _fs(url)
    with tempfile.TemporaryDirectory(prefix="yutenv-range-") as tmp:
        play(task, tmp)
        with open(os.path.join(tmp, MANIFEST), encoding="utf-8") as f:
            part = json.load(f)
        if part.get("first_game", 0) != task.first or part.get("games") != task.games:
            raise DatasetError(f"the part written for games {task.first}..{task.first + task.games - 1} holds "
                               f"{part.get('games')} games from {part.get('first_game', 0)}")  # fmt: skip
        fs.makedirs(f"{root}/{PARTS}", exist_ok=True)
        for sh in part["shards"]:
            for name in (sh["file"], sh["records"]):
                _put_atomic(fs, None, os.path.join(tmp, name), f"{root}/{name}")
        _put_atomic(fs, json.dumps(part, indent=2, ensure_ascii=False).encode(), None, f"{root}/{PARTS}/{_part_name(task.first)}")
    return dict(part)


def plan_ranges(games: int, shard_games: int, range_games: int, start: int = 0) -> list[tuple[int, int]]:
    """Cut games ``start .. games-1`` into ``(first, count)`` ranges of ``range_games``
    (a multiple of ``shard_games``; ``start`` must be one too, unless the dataset is complete)."""
    if shard_games < 1 or range_games < shard_games or range_games % shard_games:
        raise ValueError(f"range_games ({range_games}) must be a positive multiple of shard_games ({shard_games})")
    if start >= games:  # complete: a run asked again has nothing to play
        return []
    if start % shard_games:
        raise ValueError(
            f"a dataset holding {start} games (not a multiple of shard_games={shard_games}) is extended by yutenv selfplay, not by ranges"
        )
    return [(g, min(range_games, games - g)) for g in range(start, games, range_games)]


def _read_json(fs: Any, path: str) -> dict[str, Any]:
    try:
        d = json.loads(fs.cat_file(path))
    except (ValueError, UnicodeDecodeError) as e:
        raise DatasetError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(d, dict):
        raise DatasetError(f"{path}: not a JSON object")
    return d


def _files_ok(fs: Any, root: str, part: Mapping[str, Any]) -> bool:
    try:
        return all(
            fs.size(f"{root}/{sh[name]}") == sh[size]
            for sh in part["shards"]
            for name, size in (("file", "bytes"), ("records", "records_bytes"))
        )
    except (FileNotFoundError, KeyError, TypeError):
        return False


def _done_parts(fs: Any, root: str) -> tuple[dict[str, Any] | None, dict[int, dict[str, Any]]]:
    """The dataset's manifest (None if none yet) and the finished parts not in it, by first game."""
    # Listings cached by this process (s3fs, ftp, ...) miss what the workers wrote since.
    fs.invalidate_cache()
    base = _read_json(fs, f"{root}/{MANIFEST}") if fs.exists(f"{root}/{MANIFEST}") else None
    have = base["games"] if base else 0
    parts: dict[int, dict[str, Any]] = {}
    if fs.exists(f"{root}/{PARTS}"):
        for p in sorted(fs.ls(f"{root}/{PARTS}", detail=False)):
            p = str(p)
            if not p.endswith(".json"):
                continue
            part = _read_json(fs, p)
            first = part.get("first_game", 0)
            if isinstance(first, int) and first >= have and _files_ok(fs, root, part):
                parts[first] = part
    return base, parts


def merge(url: str, games_target: int | None = None) -> dict[str, Any]:
    """Write the dataset's ``manifest.json`` from its manifest so far and its finished parts.

    Refuses (:class:`DatasetError`) parts made by another run (rules, agents, tier,
    seed, ...), parts that overlap, and gaps between them. Parts beyond a gap are kept
    for a later merge. Returns the manifest written.
    """
    fs, root = _fs(url)
    base, parts = _done_parts(fs, root)
    if base is None and not parts:
        raise DatasetError(f"{url}: no manifest and no finished parts to merge")
    pieces = ([base] if base else []) + [parts[k] for k in sorted(parts)]
    ref = pieces[0]
    for p in pieces[1:]:
        for key in _SAME:
            if p.get(key) != ref.get(key):
                raise DatasetError(f"{url}: the part of games from {p.get('first_game', 0)} was made with {key} "
                                   f"{p.get(key)!r}, the rest with {ref.get(key)!r}")  # fmt: skip
    shards: list[dict[str, Any]] = []
    nxt = 0
    for p in pieces:
        first = p.get("first_game", 0)
        if first < nxt:
            raise DatasetError(
                f"{url}: the part of games {first}..{first + p['games'] - 1} overlaps games already listed (up to {nxt - 1})"
            )
        if first > nxt:
            break  # a gap: the missing range is not played yet
        shards.extend(p["shards"])
        nxt = first + p["games"]
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    m = {k: v for k, v in ref.items() if k != "first_game"}
    target = max(games_target or 0, base["games_target"] if base else 0, nxt)
    created = [p.get("created", now) for p in pieces]
    m.update(
        games_target=target,
        games=nxt,
        decisions=sum(int(s["decisions"]) for s in shards),
        complete=nxt >= target,
        shards=shards,
        created=min(created),
        updated=now,
    )
    _put_atomic(fs, (json.dumps(m, indent=2, ensure_ascii=False) + "\n").encode(), None, f"{root}/{MANIFEST}")
    return m


def selfplay(
    out: str,
    games: int,
    *,
    agents: str = "random",
    tier: str = "compact",
    seed: int = 1,
    rules: str = "standard",
    shard_games: int = 100,
    range_games: int | None = None,
    address: str | None = None,
    num_cpus: int | None = None,
    threads_per_task: int = 1,
    max_retries: int = 3,
    max_tasks: int | None = None,
    play_range: PlayRange | None = None,
    progress: bool | None = False,
    cwd: str | None = None,
) -> dict[str, Any]:
    """Write a self-play dataset of ``games`` games to ``out`` (a path or fsspec URI) on Ray.

    Arguments are those of ``yutenv selfplay --tier``; the result is the dataset
    that command writes with the same ``agents``, ``tier``, ``seed``, ``rules`` and
    ``shard_games``. ``range_games`` (a multiple of ``shard_games``, default
    ``shard_games``) is the work unit of one task. ``address`` is the Ray cluster
    (``"auto"``; None or ``"local"`` starts a new local Ray with ``num_cpus`` CPUs, or joins
    the one this process already initialized). Each task takes ``threads_per_task`` CPUs and plays that many
    games at once; ``max_tasks`` caps the tasks in flight (None: as many as the cluster
    runs), to leave a shared cluster room or to measure scaling. ``play_range`` replaces the ``yutenv selfplay`` process that plays a
    range (see :data:`PlayRange`). ``cwd`` is the folder every ``yutenv selfplay`` runs in
    (:attr:`RangeTask.cwd`: for network files named relative to it; the workers must see it).
    Returns the merged manifest.
    """
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    plan_ranges(games, shard_games, range_games or shard_games)  # check the sizes before touching out
    fs, root = _fs(out)
    fs.makedirs(root, exist_ok=True)
    base, parts = _done_parts(fs, root)
    if base is not None:
        for key, want in (("seed", seed), ("tier", tier), ("shard_games", shard_games)):
            if base.get(key) != want:
                raise DatasetError(
                    f"{out} was made with {key} {base.get(key)!r}, this run asks for {want!r}: use the same arguments to resume, or another out"
                )
    todo = [
        r for r in plan_ranges(games, shard_games, range_games or shard_games, base["games"] if base else 0)
        if r[0] not in parts
    ]  # fmt: skip
    if todo:
        ray = _ray_init(address, num_cpus)
        url = fs.unstrip_protocol(root)  # absolute: a worker's working directory is not this one
        run = ray.remote(_run_range).options(num_cpus=threads_per_task, max_retries=max_retries, retry_exceptions=[WorkerCrash])
        play = play_range or play_range_cli
        bar = progress_bar(sum(n for _, n in todo), "selfplay", show=progress)
        tasks = [RangeTask(first, n, agents, tier, seed, rules, shard_games, threads_per_task, cwd) for first, n in todo]

        def submit(task: RangeTask) -> Callable[[], Any]:
            return lambda: run.remote(task, url, play)

        def done(k: int, _: Any) -> None:
            if bar is not None:
                bar.update(tasks[k].games)

        try:
            _run_tasks(ray, [submit(t) for t in tasks], max_tasks, done)
        finally:
            if bar is not None:
                bar.close()
    m = merge(out, games)
    # Every task has ended: a .tmp file left now is from an attempt killed mid-copy.
    for d in (root, f"{root}/{PARTS}"):
        for p in fs.ls(d, detail=False) if fs.exists(d) else []:
            if str(p).endswith(".tmp"):
                fs.rm_file(p)
    return m


# --- network-guided self-play ---------------------------------------------------------


@dataclass(frozen=True)
class AzPlayRange:
    """A :data:`PlayRange` that plays a range with network-guided MCTS self-play
    (:class:`~yutenv.az.SelfPlay` with a :class:`~yutenv.az.NetEvaluator`).

    ``net`` is ``{"spec": model.spec(), "state": model.state_dict()}`` or, better, a Ray
    ``ObjectRef`` to it (:func:`az_selfplay` puts it in the object store once, and every
    task fetches it from there). ``settings`` holds the search settings (``sims``,
    ``c_puct``, noise, ``games_in_flight``, ...). On the worker the network is rebuilt, a
    yutenv server is started, and games ``task.first .. task.first+task.games-1`` are
    played with ``task``'s tier, rules, seed and shard size, torch using ``task.threads``
    threads. Needs the ``az`` extra on the workers.
    """

    net: Any
    settings: SelfPlay

    def __call__(self, task: RangeTask, out_dir: str) -> None:
        """Play ``task`` into the empty local directory ``out_dir`` (a dataset part)."""
        torch = import_extra("torch", "az", "yutenv.az.distributed's network-guided self-play")
        from .net import NetEvaluator, PolicyValueNet

        # The threads of torch's kernels decide the order of float sums: fixed, so that a
        # range gives the same bits on every worker (and as a one-machine run with as many).
        torch.set_num_threads(max(1, task.threads))
        net = self.net
        if not isinstance(net, Mapping):
            import ray

            net = ray.get(net)
        model = PolicyValueNet(**net["spec"])
        model.load_state_dict(net["state"])
        if model.tier != task.tier:
            raise ValueError(f"the network reads tier {model.tier!r}, the run's tier is {task.tier!r}")
        sp = _local_copy(self.settings)
        sp.tier, sp.rules, sp.seed, sp.shard_games = task.tier, task.rules, task.seed, task.shard_games
        sp.run(NetEvaluator(model), games=task.games, out=out_dir, first_game=task.first)


def _local_copy(settings: SelfPlay) -> SelfPlay:
    """A copy of a :class:`~yutenv.az.SelfPlay` without its server: every task starts its own."""
    import copy

    sp = copy.copy(settings)
    sp._address = sp._token = sp._server = None
    return sp


def az_selfplay(out: str, games: int, model: Any, settings: SelfPlay, **run: Any) -> dict[str, Any]:
    """Network-guided self-play of ``games`` games with ``model`` (a
    :class:`~yutenv.az.PolicyValueNet`) and the settings of ``settings`` (a
    :class:`~yutenv.az.SelfPlay`: rules, sims, noise, seed, shard_games, ...) on Ray, into
    one dataset at ``out`` (a path or fsspec URI).

    The result is the dataset that ``settings.run(NetEvaluator(model), games, out)`` writes
    on one machine with ``torch.set_num_threads(threads_per_task)``: the same games, shard
    for shard (with ``visits``). The weights go to Ray's object store once; each task of
    ``range_games`` games (default ``shard_games``) plays on a worker with its own server
    (``settings``' server or address is not used) and the network's inference there
    (:class:`AzPlayRange`). ``run`` holds the other arguments of :func:`selfplay`
    (``range_games``, ``address``, ``num_cpus``, ``threads_per_task``, ``max_retries``,
    ``max_tasks``, ``progress``); resuming is as there (a dataset directory belongs to one
    network: give each generation its own ``out``). Returns the merged manifest.
    """
    rules = settings.rules
    if not isinstance(rules, str):
        raise ValueError("az_selfplay: give the settings' rules as a rules string")
    if settings.tier != model.tier:
        raise ValueError(f"the network reads tier {model.tier!r}, the settings' tier is {settings.tier!r}")
    ray = _ray_init(run.get("address"), run.get("num_cpus"))
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    ref = ray.put({"spec": model.spec(), "state": state})
    sp = _local_copy(settings)
    return selfplay(out, games, agents=f"az:{sp.sims}", tier=sp.tier, seed=sp.seed, rules=rules,
                    shard_games=sp.shard_games, play_range=AzPlayRange(ref, sp), **run)  # fmt: skip


# --- evaluation ---------------------------------------------------------------------


# --- command line ---------------------------------------------------------------------


def _count(text: str) -> int:
    """An argparse type: a count of at least 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} must be at least 1")
    return n


def parser() -> argparse.ArgumentParser:
    """The command line of ``python -m yutenv.az.distributed``."""
    p = argparse.ArgumentParser(
        prog="python -m yutenv.az.distributed", description="yutenv self-play datasets and evaluations on Ray"
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("selfplay", help="play games on the cluster into one dataset (one part per range of games)",
                   description="Play --games games of --agents on a Ray cluster into one self-play dataset at "
                   "--out, one task per range of games; the result equals one machine's `yutenv selfplay` "
                   "with the same seed.")  # fmt: skip
    sub.add_parser("eval", help="evaluate agent --a against --b, chunks of games spread over the cluster",
                   description="Play --games games between agents --a and --b (seats balanced) on a Ray "
                   "cluster, in chunks of --chunk-games, and print the win rate with its interval.")  # fmt: skip
    for s in sub.choices.values():
        s.add_argument(
            "--address",
            default=None,
            help="Ray cluster address ('auto': the one RAY_ADDRESS or `ray start` announces); default: a new local Ray",
        )
        s.add_argument("--num-cpus", type=_count, default=None, help="CPUs of the local Ray (without --address)")
        s.add_argument(
            "--seed", type=int, default=1, help="seed of the run: every game's and agent's seed derives from it (default 1)"
        )
        s.add_argument("--rules", default="standard", help="rules string or preset, as `yutenv --rules` (default standard)")
        s.add_argument("--threads-per-task", type=_count, default=1, help="CPUs (games at once) of one task")
        s.add_argument(
            "--max-tasks", type=_count, default=None, help="tasks in flight at most (default: as many as the cluster runs)"
        )
    sp = sub.choices["selfplay"]
    sp.add_argument("--games", type=_count, default=100, help="games to play (default 100)")
    sp.add_argument(
        "--agents", default="random", help="agent spec of every seat (';'-separated), or one spec for all seats (default random)"
    )
    sp.add_argument(
        "--tier", default="compact", help="observation tier of the dataset: compact, tactical or planes (default compact)"
    )
    sp.add_argument("--out", required=True, help="dataset folder or fsspec URI")
    sp.add_argument("--shard-games", type=_count, default=100, help="games per shard file (default 100)")
    sp.add_argument("--range-games", type=_count, default=None, help="games of one task (a multiple of --shard-games)")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")
    ev = sub.choices["eval"]
    ev.add_argument("--a", required=True, help="agent spec of the player evaluated")
    ev.add_argument("--b", required=True, help="agent spec of its opponent")
    ev.add_argument("--games", type=_count, default=2000, help="games in all, seats balanced (default 2000)")
    ev.add_argument("--chunk-games", type=_count, default=200, help="games of one task (default 200)")
    ev.add_argument("--json", action="store_true", help="print the result as JSON")
    return p


def main(argv: Iterable[str] | None = None) -> int:
    """``python -m yutenv.az.distributed selfplay|eval ...``: see the module docs."""
    p = parser()
    args = p.parse_args(None if argv is None else list(argv))
    try:
        if args.cmd == "selfplay":
            t0 = time.perf_counter()
            m = selfplay(args.out, args.games, agents=args.agents, tier=args.tier, seed=args.seed, rules=args.rules,
                         shard_games=args.shard_games, range_games=args.range_games, address=args.address,
                         num_cpus=args.num_cpus, threads_per_task=args.threads_per_task, max_tasks=args.max_tasks,
                         progress=False if args.quiet else None)  # fmt: skip
            print(
                f"{args.out}: {m['games']} games, {m['decisions']} decisions in {len(m['shards'])} shards ({time.perf_counter() - t0:.1f} s)"
            )
        else:
            r = evaluate_agents(args.a, args.b, args.games, seed=args.seed, rules=args.rules, chunk_games=args.chunk_games,
                                address=args.address, num_cpus=args.num_cpus, threads_per_task=args.threads_per_task,
                                max_tasks=args.max_tasks)  # fmt: skip
            print(json.dumps(r.as_dict(), indent=2) if args.json else r)
    except (DatasetError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
