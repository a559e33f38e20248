"""Network-guided self-play in the Go server (protocol methods ``selfplay_*``).

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from yutenv.az import SelfPlay
    sp = SelfPlay(rules="standard", tier="compact", sims=64, games_in_flight=64, seed=0)
    summary = sp.run(evaluate, games=200, out="runs/gen3/selfplay")

The server plays ``games_in_flight`` games at once, each with its own MCTS (explicit
chance nodes: the six throws weighted by their probabilities). Whenever searches need a
leaf valued it gathers one leaf per waiting game into a batch and hands it to
:meth:`SelfPlay.run`, which calls ``evaluate(obs, mask)`` and sends the answer back:

* ``obs``: ``float32 (B, D)``, the tier's observation of the seat to move;
* ``mask``: ``bool (B, 180)``, its legal actions;
* ``evaluate`` returns ``(priors, values)``: ``priors`` ``float32 (B, 180)`` (need not be
  normalised or masked: the server keeps the legal ones and normalises), ``values``
  ``float32 (B,)``, the mover's expected outcome in [-1, 1].

Finished games go to a dataset directory in the ``yutenv selfplay --tier`` format
(:mod:`yutenv.datasets`) with one more array, ``visits`` (the raw root visit counts).
The directory is written by the server, so ``out`` is a path on the server's machine (the
bundled server runs on this one, and writes wherever its user may). A server started by hand
(``address=``) writes only inside its ``--out-dir`` folders (docs/PROTOCOL.md, "Paths a client
names"); elsewhere the run raises :class:`~yutenv.InvalidArgumentError`. A run with the same
settings resumes a dataset.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._progress import progress_bar
from .._protocol import SELFPLAY_DEFAULTS as _DEFAULTS
from ..connection.server import Server
from ..envs.batch import NUM_ACTIONS, Session

__all__ = ["Evaluate", "SelfPlay", "SelfPlaySummary"]

#: ``evaluate(obs, mask) -> (priors, values)``.
Evaluate = Callable[
    [npt.NDArray[np.float32], npt.NDArray[np.bool_]],
    tuple[npt.ArrayLike, npt.ArrayLike],
]


@dataclass(frozen=True)
class SelfPlaySummary:
    """What :meth:`SelfPlay.run` did.

    Attributes:
        games: games in the dataset (including any written by an earlier run it resumed).
        decisions: rows of the dataset.
        leaves: leaves evaluated by this run; batches: batches they came in.
        seconds: wall time of the run; eval_seconds: of it, time spent in ``evaluate``.
        out: the dataset directory.
    """

    games: int
    decisions: int
    leaves: int
    batches: int
    seconds: float
    eval_seconds: float
    out: str

    @property
    def leaves_per_second(self) -> float:
        """Leaves evaluated per second of wall time."""
        return self.leaves / self.seconds if self.seconds > 0 else 0.0

    @property
    def mean_batch(self) -> float:
        """Average leaves per batch."""
        return self.leaves / self.batches if self.batches else 0.0


class SelfPlay:
    """Settings of network-guided self-play; :meth:`run` plays with an evaluator.

    Args:
        rules: the rules (a rules string such as ``"standard"`` or ``"players=3"``, or a map).
        tier: the observation tier the evaluator reads (``compact``, ``tactical``, ``planes``).
        sims: MCTS simulations per decision.
        games_in_flight: games played at once; a batch holds at most one leaf of each.
            With ``games_in_flight = 2 * max_batch`` half the games search while the other
            half's leaves are evaluated (docs/BENCHMARKS.md: 60,000 leaves/s at batch 256).
        c_puct: the PUCT exploration constant.
        dirichlet_alpha, dirichlet_frac: root noise, ``(1-frac)·prior + frac·Dir(alpha)``
            (``alpha`` 0 turns it off).
        temperature_moves: the first N decisions of every game sample an action in
            proportion to its visits (temperature 1); later ones play the most visited.
        resign: resignation threshold. Only ``None`` (never resign) is supported.
        seed: game g has the game seed ``seed + g`` and every search is reseeded from it
            (the one seed scheme, docs/PROTOCOL.md): with an evaluator that is a function of
            its input, the dataset is the same whatever the batching.
        eval_timeout: seconds the server waits for an answer before it cancels the run
            (:class:`~yutenv.EvalTimeoutError`).
        max_batch: cap on leaves per batch (default ``games_in_flight``).
        shard_games: games per dataset shard.
        fast_sims, full_prob: playout cap randomization (KataGo): with ``fast_sims`` > 0 a
            decision runs the full ``sims`` with probability ``full_prob`` (its row's policy is
            a target), else a fast search of ``fast_sims`` without root noise or temperature
            (its row's ``policy_target`` is 0; the value target is kept). 0: off.
        extra: more ``selfplay_new`` parameters, passed as they are (a search option of a
            newer server, e.g. ``{"gumbel": 1}``; the server refuses one it does not know).
            They may not repeat a parameter set by the arguments above.
        address, token, server: where the server is (default: the bundled one).
    """

    def __init__(
        self,
        rules: str | Mapping[str, Any] = "standard",
        tier: str = _DEFAULTS.tier,
        sims: int = _DEFAULTS.sims,
        games_in_flight: int = _DEFAULTS.games_in_flight,
        c_puct: float = _DEFAULTS.c,
        dirichlet_alpha: float = _DEFAULTS.dirichlet_alpha,
        dirichlet_frac: float = _DEFAULTS.dirichlet_frac,
        temperature_moves: int = _DEFAULTS.temperature_moves,
        resign: float | None = None,
        seed: int = 0,
        eval_timeout: float = _DEFAULTS.eval_timeout,
        *,
        max_batch: int | None = None,
        shard_games: int = _DEFAULTS.shard_games,
        fast_sims: int = _DEFAULTS.fast_sims,
        full_prob: float = _DEFAULTS.full_prob,
        extra: Mapping[str, Any] | None = None,
        address: str | None = None,
        token: str | None = None,
        server: Server | None = None,
    ) -> None:
        if resign is not None:
            raise ValueError("resign: resignation is not implemented; pass None (games are played to the end)")
        self.rules = rules
        self.tier = tier
        self.sims = sims
        self.games_in_flight = games_in_flight
        self.c_puct = c_puct
        self.dirichlet_alpha = dirichlet_alpha
        self.dirichlet_frac = dirichlet_frac
        self.temperature_moves = temperature_moves
        self.resign = resign
        self.seed = seed
        self.eval_timeout = eval_timeout
        self.max_batch = max_batch
        self.shard_games = shard_games
        self.fast_sims = fast_sims
        self.full_prob = full_prob
        self.extra = dict(extra or {})
        self._address, self._token, self._server = address, token, server

    def params(self, games: int, out: str | os.PathLike[str], first_game: int = 0) -> dict[str, Any]:
        """The ``selfplay_new`` parameters of a run (docs/PROTOCOL.md)."""
        p: dict[str, Any] = {
            "rules": self.rules if isinstance(self.rules, str) else dict(self.rules),
            "tier": self.tier,
            "sims": int(self.sims),
            "c": float(self.c_puct),
            "dirichlet_alpha": float(self.dirichlet_alpha),
            "dirichlet_frac": float(self.dirichlet_frac),
            "temperature_moves": int(self.temperature_moves),
            "seed": int(self.seed),
            "games": int(games),
            "games_in_flight": int(self.games_in_flight),
            "eval_timeout": float(self.eval_timeout),
            "out": os.path.abspath(os.fspath(out)),
            "shard_games": int(self.shard_games),
        }
        if self.max_batch is not None:
            p["max_batch"] = int(self.max_batch)
        if first_game:
            p["first_game"] = int(first_game)
        if self.fast_sims:  # only when on: a server without playout cap randomization still takes the rest
            p["fast_sims"], p["full_prob"] = int(self.fast_sims), float(self.full_prob)
        clash = sorted(set(self.extra) & set(p))
        if clash:
            raise ValueError(f"extra: {', '.join(clash)} set by SelfPlay's own arguments; pass them there")
        p.update(self.extra)
        return p

    def run(
        self, evaluate: Evaluate, games: int, out: str | os.PathLike[str], first_game: int = 0, progress: bool | None = None
    ) -> SelfPlaySummary:
        """Play ``games`` games (in total, counting those ``out`` already holds), answering
        every batch of leaves with ``evaluate``, and return the summary.

        ``first_game`` (a multiple of ``shard_games``) makes ``out`` one part of a larger
        dataset: the run plays games ``first_game .. first_game+games-1`` (game seeds
        ``seed + g``), and its shards are named and filled as in one run of all the games
        (as ``yutenv selfplay --first-game``; :func:`yutenv.az.distributed.az_selfplay` plays
        the parts on Ray and merges them).

        Errors: a refused answer (wrong shape, a value outside [-1, 1]) raises
        :class:`~yutenv.InvalidArgumentError` naming the field; an exception in ``evaluate``
        cancels the run and propagates. The shards finished so far stay in ``out``.

        ``progress``: the bar of games played (rate, ETA) on stderr: ``None`` on a terminal
        only, ``True`` always, ``False`` never.
        """
        t0 = time.perf_counter()
        eval_s = 0.0
        leaves = batches = 0
        with Session(self._address, self._token, server=self._server) as s:
            info = s.client.call("selfplay_new", self.params(games, out, first_game))
            rid, d = info["id"], int(info["obs_size"])
            params: dict[str, Any] = {"id": rid}
            bar = progress_bar(games, "selfplay", show=progress)
            try:
                while True:
                    res = s.client.call("selfplay_next", params)
                    if bar is not None:
                        bar.update(int(res["games"]) - bar.n)
                    n = int(res["n"])
                    if n == 0:
                        break
                    obs = np.frombuffer(res["obs"], dtype="<f4").reshape(n, d)
                    mask = np.frombuffer(res["mask"], dtype=np.uint8).reshape(n, NUM_ACTIONS).view(np.bool_)
                    te = time.perf_counter()
                    priors, values = evaluate(obs, mask)
                    eval_s += time.perf_counter() - te
                    leaves += n
                    batches += 1
                    params = {
                        "id": rid,
                        "priors": np.ascontiguousarray(priors, dtype="<f4").tobytes(),
                        "values": np.ascontiguousarray(values, dtype="<f4").tobytes(),
                    }
            finally:
                if bar is not None:
                    bar.close()
                try:
                    s.client.call("selfplay_close", {"id": rid})
                except Exception:  # the connection may be gone; the server cleans up after it
                    pass
        return SelfPlaySummary(
            games=int(res["games"]),
            decisions=int(res["decisions"]),
            leaves=leaves,
            batches=batches,
            seconds=time.perf_counter() - t0,
            eval_seconds=eval_s,
            out=str(info["out"]),
        )


class _NumpyMLP:
    """A small random MLP (obs -> hidden -> ReLU -> policy logits and value) in numpy,
    batched: the evaluator of the throughput benchmark below. Sized on its first batch."""

    def __init__(self, hidden: int = 64, seed: int = 0) -> None:
        self.hidden, self.seed = hidden, seed
        self.w1 = self.wp = self.wv = np.zeros((0, 0), np.float32)

    def __call__(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_]) -> tuple[np.ndarray, np.ndarray]:
        if self.w1.shape[0] != obs.shape[1]:
            r = np.random.default_rng(self.seed)
            d, h = obs.shape[1], self.hidden
            self.w1 = (r.normal(size=(d, h)) / np.sqrt(d)).astype(np.float32)
            self.wp = (r.normal(size=(h, NUM_ACTIONS)) / np.sqrt(h)).astype(np.float32)
            self.wv = (r.normal(size=(h, 1)) / np.sqrt(h)).astype(np.float32)
        hid = np.maximum(obs @ self.w1, 0)
        logits = hid @ self.wp
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        return p, np.tanh(hid @ self.wv)[:, 0]


def main(argv: list[str] | None = None) -> None:
    """``python -m yutenv.az.selfplay``: leaf evaluations per second through the
    protocol with a small numpy MLP (docs/BENCHMARKS.md)."""
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(prog="python -m yutenv.az.selfplay", description=main.__doc__)
    ap.add_argument("--games", type=int, default=256, help="games to play (default 256)")
    ap.add_argument("--in-flight", type=int, default=256, help="games searched at once (default 256)")
    ap.add_argument("--max-batch", type=int, default=None, help="leaves per batch at most (default: --in-flight)")
    ap.add_argument("--sims", type=int, default=32, help="MCTS simulations a decision (default 32)")
    ap.add_argument("--hidden", type=int, default=64, help="hidden units of the benchmark's numpy MLP (default 64)")
    ap.add_argument("--tier", default="compact", help="observation tier (default compact)")
    ap.add_argument("--out", default=None, help="dataset directory (default: a temporary one)")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = a.out or os.path.join(tmp, "selfplay")
        net = _NumpyMLP(a.hidden)
        s = SelfPlay(tier=a.tier, sims=a.sims, games_in_flight=a.in_flight, max_batch=a.max_batch, seed=1).run(
            net, games=a.games, out=out
        )
    print(
        f"{s.games} games, {s.decisions} decisions, {s.leaves} leaves in {s.batches} batches "
        f"(mean {s.mean_batch:.1f}) in {s.seconds:.2f}s: {s.leaves_per_second:,.0f} leaves/s; "
        f"evaluator {s.eval_seconds:.2f}s ({100 * s.eval_seconds / s.seconds:.0f}%)"
    )


if __name__ == "__main__":
    main()
