"""Label positions with a search policy, in one batched call: data for distillation or DAgger.

    python examples/label_positions.py [--n 10000] [--agent mcts:400] [--out labels.npz]

Plays random games in batches to collect N decision positions, then asks the server's
agent (here mcts:400) for its action, visit policy over the 180 actions and value at
every one of them in ONE call (searched in parallel on the server's workers), and saves
observations, masks, policies and values as numpy arrays.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import yutenv


def collect_positions(game: yutenv.Game, n: int, seed: int) -> np.ndarray:
    """n packed decision states from random playouts, sampled along the games."""
    rng = np.random.default_rng(seed)
    rows = game.initial_states(min(n, 1024), seed=seed)
    found: list[np.ndarray] = []
    total = 0
    while total < n:
        phase = game.phases(rows)
        if (phase == 2).any():  # start a new game wherever one ended
            rows = rows.copy()
            rows[phase == 2] = game.initial_states(int((phase == 2).sum()), seed=int(rng.integers(2**63)))
            continue
        chance, moves = phase == 0, phase == 1
        if moves.any():
            keep = rows[moves][rng.random(int(moves.sum())) < 0.25]  # a quarter of the decisions seen
            found.append(keep)
            total += len(keep)
            mask = game.legal_masks(rows[moves])
            # a random legal action per row: argmax of noise on the legal entries
            acts = np.argmax(mask * rng.random(mask.shape), axis=1)
            rows = rows.copy()
            rows[moves] = game.apply_actions(rows[moves], acts)
        if chance.any():
            rows = rows.copy()
            rows[chance] = game.apply_throws(rows[chance], -1)
    return np.concatenate(found)[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--agent", default="mcts:400")
    ap.add_argument("--tier", default="tactical")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="labels.npz")
    args = ap.parse_args()

    game = yutenv.Game("standard")
    states = collect_positions(game, args.n, args.seed)
    t0 = time.perf_counter()
    labels = game.analyse(states, args.agent, seed=args.seed)  # one round trip for all N
    dt = time.perf_counter() - t0
    q = game.query(states, mask=True, obs=args.tier)
    np.savez_compressed(
        args.out,
        states=states,
        obs=q["obs"],
        mask=q["mask"],
        action=labels.actions,
        policy=labels.policy,
        value=labels.value,
    )
    print(f"{len(states)} positions labelled by {labels.agent} in {dt:.1f} s ({len(states) / dt:.0f} positions/s) -> {args.out}")


if __name__ == "__main__":
    main()
