"""A depth-limited expectimax over yutenv states, playing one game against itself.

    python examples/expectimax.py [--depth 4] [--seed 1]

The search is plain Python over yutenv.State: chance nodes average over
state.chance_outcomes(), decisions maximise for the seat to move, and a leaf is
scored by finished pieces. Two-seat games (the standard rules).
"""

from __future__ import annotations

import argparse

import yutenv


def evaluate(s: yutenv.State, me: int) -> float:
    if s.is_terminal():
        return s.returns()[me]
    return (s.finished(me) - s.finished(1 - me)) / s.game.pieces


def expectimax(s: yutenv.State, depth: int, me: int) -> float:
    if depth == 0 or s.is_terminal():
        return evaluate(s, me)
    if s.is_chance_node():
        return sum(p * expectimax(s.child(t), depth - 1, me) for t, p in s.chance_outcomes())
    values = [expectimax(s.child(a), depth - 1, me) for a in s.legal_actions()]
    return max(values) if s.to_move == me else min(values)


def best_action(s: yutenv.State, depth: int) -> int:
    me = s.to_move
    return max(s.legal_actions(), key=lambda a: expectimax(s.child(a), depth - 1, me))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-decisions", type=int, default=1000)
    args = ap.parse_args()
    s = yutenv.Game("standard").new_initial_state(seed=args.seed)
    decisions = 0
    while not s.is_terminal() and decisions < args.max_decisions:
        if s.is_chance_node():
            s.sample_throw()
        else:
            s.apply_action(best_action(s, args.depth))
            decisions += 1
    print(s.render())
    print(f"decisions {decisions}, winner {s.winner()}, places {s.places()}")


if __name__ == "__main__":
    main()
