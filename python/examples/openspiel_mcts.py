"""OpenSpiel's MCTSBot (with chance nodes) plays yutenv's built-in baselines.

    pip install 'yutenv[openspiel]'
    python examples/openspiel_mcts.py [--games 20] [--sims 100] [--rollouts 1] [--opponents random,greedy]

The game is ``pyspiel.load_game("python_yutenv")`` (yutenv.integrations.openspiel); the bot is
open_spiel.python.algorithms.mcts.MCTSBot with its RandomRolloutEvaluator, which handles
the explicit chance nodes itself (it samples them). The opponent is a yutenv agent
asked for its move with ``yutenv.Game.analyse``. Seats alternate; a Markdown table of
the bot's wins per opponent is printed.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from open_spiel.python.algorithms import mcts

import yutenv
import yutenv.integrations.openspiel


def play(game: yutenv.integrations.openspiel.YutSpielGame, bot: mcts.MCTSBot, opponent: str, bot_seat: int, seed: int) -> float:
    """One game; returns the bot's outcome."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state(seed=seed)
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        elif state.current_player() == bot_seat:
            state.apply_action(bot.step(state))
        else:
            a = game.yut.analyse([state.yut], opponent, seed=seed + state.yut.packed[1]).actions[0]
            state.apply_action(int(a))
    return float(state.returns()[bot_seat])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=20, help="games per opponent (seats alternate)")
    ap.add_argument("--sims", type=int, default=100, help="MCTSBot max_simulations")
    ap.add_argument("--rollouts", type=int, default=1, help="random rollouts per leaf")
    ap.add_argument("--opponents", default="random,greedy")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    game = yutenv.integrations.openspiel.load_game("standard")
    rows = []
    for opp in args.opponents.split(","):
        wins = 0
        t0 = time.perf_counter()
        for g in range(args.games):
            evaluator = mcts.RandomRolloutEvaluator(args.rollouts, np.random.RandomState(args.seed + g))
            bot = mcts.MCTSBot(game, 2.0, args.sims, evaluator, random_state=np.random.RandomState(args.seed + g))
            wins += play(game, bot, opp, g % 2, args.seed + g) > 0
        dt = time.perf_counter() - t0
        p = wins / args.games
        half = 1.96 * math.sqrt(p * (1 - p) / args.games)
        rows.append(
            f"| MCTSBot({args.sims} sims, {args.rollouts} rollout) | {opp} | {args.games} | {wins} | {100 * p:.0f}% ± {100 * half:.0f} | {dt / args.games:.1f} s |"
        )
        print(rows[-1], flush=True)
    print("\n| bot | opponent | games | bot wins | win rate (95% normal CI) | time per game |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
