"""Measure Python search over yutenv states: raw batched throughput, and expectimax
node rates one node per call (examples/expectimax.py) versus level by level in batches.

    python examples/bench_search.py [--depth 4] [--positions 5]

Prints a Markdown table (docs/BENCHMARKS.md records it).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from expectimax import expectimax

import yutenv

_FIN = 4 + 6 + 4  # offset of the finished counts in a packed state (env/packed.go)


def leaf_values(game: yutenv.Game, rows: np.ndarray, me: int) -> np.ndarray:
    """evaluate() of examples/expectimax.py, for many rows at once."""
    v = (rows[:, _FIN + me].astype(np.float64) - rows[:, _FIN + 1 - me]) / game.pieces
    over = game.phases(rows) == 2
    if over.any():
        v[over] = game.returns(rows[over])[:, me]
    return v


def expectimax_batched(game: yutenv.Game, root: yutenv.State, depth: int, me: int) -> tuple[float, int]:
    """The same value as expectimax(root, depth, me), expanding a whole level per call."""
    levels = [game._array([root])]
    links = []  # per level: (parent index, chance prob or nan) of each child
    for _ in range(depth):
        rows = levels[-1]
        phase = game.phases(rows)
        kids, parent, prob = [], [], []
        ch = np.flatnonzero(phase == 0)
        if len(ch):
            for t, p in enumerate(game.chance):
                if p > 0:
                    kids.append(game.apply_throws(rows[ch], np.full(len(ch), t)))
                    parent.append(ch)
                    prob.append(np.full(len(ch), p))
        mv = np.flatnonzero(phase == 1)
        if len(mv):
            r, a = np.nonzero(game.legal_masks(rows[mv]))
            kids.append(game.apply_actions(rows[mv][r], a))
            parent.append(mv[r])
            prob.append(np.full(len(r), np.nan))
        if not kids:
            break
        levels.append(np.concatenate(kids))
        links.append((np.concatenate(parent), np.concatenate(prob)))
    value = leaf_values(game, levels[-1], me)
    for d in range(len(links) - 1, -1, -1):
        rows = levels[d]
        parent, prob = links[d]
        v = leaf_values(game, rows, me)  # rows without children keep their own value
        chance = ~np.isnan(prob)
        v[np.unique(parent[chance])] = 0
        np.add.at(v, parent[chance], prob[chance] * value[chance])
        mover = rows[:, 1] == me
        for i in np.unique(parent[~chance]):
            child = value[~chance][parent[~chance] == i]
            v[i] = child.max() if mover[i] else child.min()
        value = v
    return float(value[0]), sum(len(lv) for lv in levels[1:])


def count_nodes(s: yutenv.State, depth: int) -> int:
    if depth == 0 or s.is_terminal():
        return 0
    moves = [t for t, _ in s.chance_outcomes()] if s.is_chance_node() else s.legal_actions()
    return sum(1 + count_nodes(s.child(m), depth - 1) for m in moves)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--positions", type=int, default=5)
    ap.add_argument("--batch", type=int, default=1024)
    args = ap.parse_args()
    game = yutenv.Game("standard")
    rng = np.random.default_rng(0)

    # Raw throughput: apply to batches of --batch states (throws at chance nodes, random legal actions).
    rows = game.initial_states(args.batch, seed=1)
    n, t_apply = 0, 0.0
    for _ in range(60):
        phase = game.phases(rows)
        t0 = time.perf_counter()
        if (phase == 2).any():
            rows[phase == 2] = game.initial_states(int((phase == 2).sum()), seed=int(rng.integers(2**62)))
        out = rows.copy()
        if (phase == 0).any():
            out[phase == 0] = game.apply_throws(rows[phase == 0], -1)
        m = phase == 1
        if m.any():
            mask = game.legal_masks(rows[m])
            out[m] = game.apply_actions(rows[m], np.argmax(mask * rng.random(mask.shape), axis=1))
        t_apply += time.perf_counter() - t0
        n += int((phase < 2).sum())
        rows = out
    print(f"| random playout steps in batches of {args.batch} (apply + legal masks) | {n / t_apply:,.0f} states/s |")

    decisions = game.initial_states(args.batch, seed=2)
    decisions = game.apply_throws(decisions, 2)  # gae: every state at a decision, gae@enter legal
    acts = np.full(args.batch, 89)
    t0 = time.perf_counter()
    for _ in range(50):
        game.apply_actions(decisions, acts)
    print(f"| apply_actions alone, batches of {args.batch} | {50 * args.batch / (time.perf_counter() - t0):,.0f} states/s |")

    # Expectimax to --depth steps from a few positions, one node per call vs batched.
    roots = []
    s = game.new_initial_state(seed=3)
    while len(roots) < args.positions and not s.is_terminal():
        if s.is_chance_node():
            s.sample_throw()
        else:
            roots.append(s.clone())
            s.apply_action(int(rng.choice(s.legal_actions())))
    nodes = single_t = batched_t = 0.0
    for r in roots:
        me = r.to_move
        t0 = time.perf_counter()
        v1 = expectimax(r, args.depth, me)
        single_t += time.perf_counter() - t0
        t0 = time.perf_counter()
        v2, k = expectimax_batched(game, r, args.depth, me)
        batched_t += time.perf_counter() - t0
        assert abs(v1 - v2) < 1e-9, (v1, v2)
        assert k == count_nodes(r, args.depth)
        nodes += k
    print(f"| expectimax depth {args.depth}, one node per call ({int(nodes)} nodes) | {nodes / single_t:,.0f} nodes/s |")
    print(f"| expectimax depth {args.depth}, a level per call (same nodes, same values) | {nodes / batched_t:,.0f} nodes/s |")


if __name__ == "__main__":
    main()
