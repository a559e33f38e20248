"""A CleanRL-style single-file PPO with action masking, straight on :class:`yutenv.YutVectorEnv`.

    pip install 'yutenv[sb3]'            # for torch
    python python/examples/cleanrl_ppo.py --num-envs 64 --total-timesteps 500000

The loop is CleanRL's ``ppo.py`` (rollout buffers as tensors, GAE, clipped surrogate, value
loss, entropy bonus, minibatch epochs) with two changes for Yut Nori: the policy's logits of
illegal actions are masked with the env's ``action_masks()`` (also stored for the update), and
the vector env resets games in the same step (``autoreset_mode=SAME_STEP``): the observation
after a finished game is the next game's first, as CleanRL's loop expects. All envs are one
server-side batch: one round trip per step. Every iteration prints the mean return of the games
finished in it (+1 win, -1 loss) and the timesteps per second.

With ``--league DIR`` the agent trains in a :class:`yutenv.league.League` instead of against one
opponent: every ``--snapshot-every`` iterations its actor joins the league as a network file that
the server plays (``net:PATH``), and the next games draw their opponents from the league (the
latest self, past selves by prioritized fictitious self-play, the ``--opponent`` specs). The
agent is saved in the league's folder, so the same command resumes after a kill::

    python python/examples/cleanrl_ppo.py --league runs/cleanrl-league --opponent greedy,mc:100
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import yutenv
from yutenv import AutoresetMode

try:
    import torch
    from torch import nn
    from torch.distributions import Categorical
except ImportError as e:  # pragma: no cover - an optional extra
    raise SystemExit(f"this example needs torch: pip install 'yutenv[sb3]' ({e})") from None


class Agent(nn.Module):
    def __init__(self, obs_size: int, n_actions: int, hidden: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1)
        )
        self.actor = nn.Sequential(
            nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, n_actions)
        )

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def act(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
        logits = self.actor(x).masked_fill(~mask, -1e8)  # illegal actions: probability 0
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x)


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--num-steps", type=int, default=64, help="steps per env per rollout")
    ap.add_argument("--total-timesteps", type=int, default=500_000)
    ap.add_argument("--opponent", default="random")
    ap.add_argument("--lr", type=float, default=2.5e-4)
    ap.add_argument("--gamma", type=float, default=0.995)
    ap.add_argument("--gae-lambda", type=float, default=0.95)
    ap.add_argument("--num-minibatches", type=int, default=4)
    ap.add_argument("--update-epochs", type=int, default=4)
    ap.add_argument("--clip-coef", type=float, default=0.2)
    ap.add_argument("--ent-coef", type=float, default=0.01)
    ap.add_argument("--vf-coef", type=float, default=0.5)
    ap.add_argument("--max-grad-norm", type=float, default=0.5)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--league", default=None, help="train in a league kept in this folder (resumes it)")
    ap.add_argument("--snapshot-every", type=int, default=10, help="iterations between league snapshots")
    ap.add_argument("--rate-games", type=int, default=200, help="games against each anchor to rate a snapshot (0: none)")
    args = ap.parse_args(argv)

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    n, steps = args.num_envs, args.num_steps
    fixed = args.opponent.split(",") if args.league else args.opponent
    envs = yutenv.YutVectorEnv(n, opponent=fixed, seat="random", autoreset_mode=AutoresetMode.SAME_STEP, copy=True)
    obs_size = envs.single_observation_space.shape[0]
    n_actions = int(envs.single_action_space.n)
    agent = Agent(obs_size, n_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    league, first = None, 1
    if args.league:
        from yutenv.league import League

        league = League(args.league, fixed=tuple(fixed), tier=envs.tier, rules=envs.rules, rate_games=args.rate_games)
        saved = league.folder / "cleanrl.pt"
        if saved.exists():  # resume: the agent, its optimizer and the iteration it had reached
            ckpt = torch.load(saved)
            agent.load_state_dict(ckpt["agent"])
            optimizer.load_state_dict(ckpt["optimizer"])
            first = ckpt["iteration"] + 1
        if league.latest is None:
            league.snapshot(agent.actor, 0)
        envs.set_opponents(league.mixture())

    obs_buf = torch.zeros((steps, n, obs_size))
    mask_buf = torch.zeros((steps, n, n_actions), dtype=torch.bool)
    actions = torch.zeros((steps, n), dtype=torch.long)
    logprobs = torch.zeros((steps, n))
    rewards = torch.zeros((steps, n))
    dones = torch.zeros((steps, n))
    values = torch.zeros((steps, n))

    obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(obs)
    next_mask = torch.as_tensor(envs.action_masks())
    next_done = torch.zeros(n)
    batch = n * steps
    minibatch = batch // args.num_minibatches
    iterations = max(1, args.total_timesteps // batch)
    start = time.perf_counter()
    last: dict[str, float] = {}
    for it in range(first, iterations + 1):
        returns_seen: list[float] = []
        for t in range(steps):
            obs_buf[t], mask_buf[t], dones[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.act(next_obs, next_mask)
            actions[t], logprobs[t], values[t] = action, logprob, value
            obs, reward, terminated, truncated, _ = envs.step(action.numpy())
            done = np.logical_or(terminated, truncated)
            rewards[t] = torch.as_tensor(reward)
            returns_seen.extend(reward[done].tolist())  # win reward: the return is the last reward
            next_obs = torch.as_tensor(obs)
            next_mask = torch.as_tensor(envs.action_masks())
            next_done = torch.as_tensor(done, dtype=torch.float32)

        with torch.no_grad():  # GAE
            next_value = agent.value(next_obs)
            advantages = torch.zeros_like(rewards)
            lastgaelam = torch.zeros(n)
            for t in reversed(range(steps)):
                nonterminal = 1.0 - (next_done if t == steps - 1 else dones[t + 1])
                nxt = next_value if t == steps - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * nxt * nonterminal - values[t]
                lastgaelam = delta + args.gamma * args.gae_lambda * nonterminal * lastgaelam
                advantages[t] = lastgaelam
            returns = advantages + values

        b_obs, b_mask = obs_buf.reshape(batch, obs_size), mask_buf.reshape(batch, n_actions)
        b_actions, b_logprobs = actions.reshape(batch), logprobs.reshape(batch)
        b_adv, b_returns = advantages.reshape(batch), returns.reshape(batch)
        for _ in range(args.update_epochs):
            for idx in torch.randperm(batch).split(minibatch):
                _, newlogprob, entropy, newvalue = agent.act(b_obs[idx], b_mask[idx], b_actions[idx])
                ratio = (newlogprob - b_logprobs[idx]).exp()
                adv = b_adv[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((newvalue - b_returns[idx]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        if league is not None and it % args.snapshot_every == 0:  # a league round: results, snapshot, new opponents
            league.record_env(envs.opponent_stats(reset=True), step=it * batch)
            ckpt_tmp = league.folder / ".cleanrl.pt.tmp"
            torch.save({"agent": agent.state_dict(), "optimizer": optimizer.state_dict(), "iteration": it}, ckpt_tmp)
            ckpt_tmp.replace(league.folder / "cleanrl.pt")
            league.snapshot(agent.actor, it * batch)
            envs.set_opponents(league.mixture())
            print(league.table(), flush=True)
        sps = (it - first + 1) * batch / (time.perf_counter() - start)
        mean_return = float(np.mean(returns_seen)) if returns_seen else float("nan")
        last = {
            "iteration": it,
            "timesteps": it * batch,
            "games": len(returns_seen),
            "mean_return": mean_return,
            "sps": sps,
            "loss": loss.item(),
        }
        print(
            f"iteration {it}/{iterations}: {it * batch} timesteps, {len(returns_seen)} games, "
            f"mean return {mean_return:+.3f}, loss {loss.item():.4f}, {sps:.0f} steps/s",
            flush=True,
        )
    envs.close()
    if league is not None:
        league.close()  # the folder's writer lock: the next run may open it
    return last


if __name__ == "__main__":
    main()
