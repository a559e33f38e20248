"""Masked PPO on Yut Nori with TorchRL's own parts, then the policy rated on the published scale.

    pip install 'yutenv[torchrl]'
    python python/examples/torchrl_ppo.py --num-envs 64 --frames 2000000

TorchRL's pieces, none rewritten: :class:`yutenv.integrations.torchrl.YutTorchRLEnv` (one
server batch of ``--num-envs`` games, the action mask in its specs), a ``Collector``, a
``ProbabilisticActor`` whose ``MaskedCategorical`` reads the env's ``action_mask``, ``GAE`` and
``ClipPPOLoss``, minibatches from a ``ReplayBuffer``. Every iteration prints the frames, the
frames a second and the mean return of the games finished in it (+1 win, -1 loss). At the end
the actor's logits network plays ``yutenv.evaluate`` against the rating anchors and the script
prints its rating on the published scale (``--rating-games`` games a seat and anchor).
"""

from __future__ import annotations

import argparse
import time

import yutenv

try:
    import torch
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, ReplayBuffer, SamplerWithoutReplacement
    from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    from yutenv.integrations.torchrl import YutTorchRLEnv
except ImportError as e:  # pragma: no cover - an optional extra
    raise SystemExit(f"this example needs TorchRL: pip install 'yutenv[torchrl]' ({e})") from None


def mlp(n_in: int, n_out: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, n_out))


def main(argv: list[str] | None = None) -> dict[str, float]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--frames", type=int, default=2_000_000, help="environment steps in all")
    p.add_argument("--steps", type=int, default=64, help="steps of every env per iteration")
    p.add_argument("--opponent", default="random", help="an agent spec, or several separated by ';': a mixture drawn per game")
    p.add_argument("--tier", default="compact")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rating-games", type=int, default=200, help="games a seat per anchor for the rating; 0: no rating")
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    opponent = args.opponent.split(";") if ";" in args.opponent else args.opponent
    env = YutTorchRLEnv(args.num_envs, opponent=opponent, seat="random", tier=args.tier)
    env.set_seed(args.seed)
    n_obs, n_act = env.observation_spec["observation"].shape[-1], env.action_spec.space.n
    logits_net = mlp(n_obs, n_act, args.hidden)
    actor = ProbabilisticActor(
        TensorDictModule(logits_net, in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"},
        out_keys=["action"],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    critic = ValueOperator(mlp(n_obs, 1, args.hidden), in_keys=["observation"])
    frames_per_batch = args.num_envs * args.steps
    collector = Collector(env, actor, frames_per_batch=frames_per_batch, total_frames=args.frames)
    gae = GAE(gamma=0.99, lmbda=0.95, value_network=critic, average_gae=True)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, critic_coeff=0.5)
    optim = torch.optim.Adam(loss.parameters(), lr=args.lr)
    buffer = ReplayBuffer(
        storage=LazyTensorStorage(frames_per_batch), sampler=SamplerWithoutReplacement(), batch_size=args.minibatch
    )

    frames, start = 0, time.perf_counter()
    for i, batch in enumerate(collector):
        frames += batch.numel()
        done = batch["next", "done"].squeeze(-1)
        ended = batch["next", "reward"].squeeze(-1)[done]
        with torch.no_grad():
            gae(batch)
        buffer.extend(batch.reshape(-1))
        for _ in range(args.epochs):
            for mb in buffer:
                out = loss(mb)
                total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                optim.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optim.step()
        collector.update_policy_weights_()
        mean = f"{ended.mean().item():+.3f}" if ended.numel() else "   n/a"
        print(
            f"iter {i:4d}  frames {frames:>9,}  {frames / (time.perf_counter() - start):>8,.0f} frames/s  return {mean}",
            flush=True,
        )
    collector.shutdown()
    env.close()

    out = {"frames": float(frames), "seconds": time.perf_counter() - start}
    if args.rating_games:
        logits_net.eval()
        result = yutenv.evaluate(logits_net, opponent="random", games=args.rating_games, tier=args.tier, rating=True)
        print(result)
        if result.rating is not None:
            out["rating"] = float(result.rating)
    return out


if __name__ == "__main__":
    main()
