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

The network: ``--net mlp`` (two 256x256 MLPs of the whole observation) or ``--net actions``
(:class:`ActionScorer` over the tactical tier: each legal action scored from its own features,
the same weights for every action; it learns far faster; ``--depth`` layers deep). ``--gamma``,
``--lmbda`` and ``--ent-coef`` set GAE and the entropy bonus. ``--minutes`` trains for a wall-time
budget instead of ``--frames`` (the learning rate falling to 0 over it, and with ``--ent-anneal``
the entropy bonus too), ``--selfplay N`` adds a frozen copy of the policy to the opponents every N
iterations, ``--luck`` takes the luck of the learner's own throws out of the advantage
(:class:`ThrowLuck`), ``--source-threat`` lets each action read the threat on the station its
stack leaves, and ``--out DIR`` saves ``policy.pt`` and ``result.json``. The 30-minute runs of
docs/TRAINING.md ("From scratch in 30 minutes") are this script; the best of them::

    python python/examples/torchrl_ppo.py --net actions --tier tactical --num-envs 256 \
        --steps 32 --minutes 30 --rating-games 1000 --width 64 --depth 2 \
        --opponent 'random;greedy;mcts:25' --source-threat --out runs/recipe
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

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

    from yutenv._protocol import NUM_SOURCES, THROW_NAMES
    from yutenv._specs import split_specs
    from yutenv.integrations.torchrl import YutTorchRLEnv
except ImportError as e:  # pragma: no cover - an optional extra
    raise SystemExit(f"this example needs TorchRL: pip install 'yutenv[torchrl]' ({e})") from None


def span(offsets: np.ndarray) -> slice:
    """The slice of the observation one part (or one row of it) covers, from its offsets
    (``obs_part`` of ``np.arange``)."""
    return slice(int(offsets.flat[0]), int(offsets.flat[-1]) + 1)


def mlp(n_in: int, n_out: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, n_out))


class ActionScorer(nn.Module):
    """Logits of the tactical tier's 180 actions, each scored from its own ten features.

    A trunk reads the state part (everything before ``actions``) and proposes a context; every
    action's score is a small MLP of that context, the action's features and a learned
    embedding of its id (throw and source), the same weights for every action. An action is
    judged by what it does (captures, joins, finishes, lands exposed), so what is learned of one
    move holds for every move alike. With ``threat`` (the slice of the ``threat`` part) each
    action also reads the threat on the station its stack leaves, which the ten features do not
    hold (``exposure`` is the threat where it lands).
    """

    def __init__(
        self, n_state: int, n_features: int, hidden: int, width: int, depth: int = 1, threat: slice | None = None
    ) -> None:
        super().__init__()
        self.n_state, self.n_features, self.threat = n_state, n_features, threat
        self.obs_size = n_state + yutenv.NUM_ACTIONS * n_features  # what yutenv.evaluate checks
        self.trunk = nn.Sequential(nn.Linear(n_state, hidden), nn.Tanh(), nn.Linear(hidden, width))
        self.features = nn.Linear(n_features + (threat is not None), width, bias=False)
        self.ids = nn.Parameter(torch.zeros(yutenv.NUM_ACTIONS, width))
        deeper: list[nn.Module] = []
        for _ in range(depth - 1):  # more layers of each action's own MLP
            deeper += [nn.Linear(width, width), nn.Tanh()]
        self.deeper = nn.Sequential(*deeper)
        self.score = nn.Linear(width, 1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        state = obs[..., : self.n_state]
        feats = obs[..., self.n_state :].unflatten(-1, (yutenv.NUM_ACTIONS, self.n_features))
        context = self.trunk(state)
        legal = feats[..., 0] > 0  # feature 0 is `legal`: score only the few legal actions
        where = legal.nonzero(as_tuple=True)
        f = feats[where]
        if self.threat is not None:  # the threat where the moved stack stands now (0 for an entry)
            threat = nn.functional.pad(obs[..., self.threat], (0, NUM_SOURCES - (self.threat.stop - self.threat.start)))
            f = torch.cat([f, threat[(*where[:-1], where[-1] % NUM_SOURCES)].unsqueeze(-1)], -1)
        h = torch.tanh(context[where[:-1]] + self.features(f) + self.ids[where[-1]])
        logits = torch.zeros(legal.shape, dtype=obs.dtype, device=obs.device)
        return logits.index_put(where, self.score(self.deeper(h)).squeeze(-1))  # illegal ones: masked away


class ThrowLuck:
    """The luck of the learner's own throws, taken out of GAE's advantage (``--luck``).

    When the learner's next decision follows new throws of its own (a new turn, or a capture's
    extra throw), GAE's ``V(next)`` carries the luck of that throw sequence. This replaces it
    by the critic's expectation over the sequences: the same next state with every pool the
    throws could have left (what was left of the pool plus one sequence). The four sequences of
    a single throw (back-do, do, gae, geol) are exact; the ones that start with a yut or a mo
    (an extra throw each) are one sample drawn for each decision. The expectation's mean is the
    mean of ``V(next)`` whatever the critic, so the advantage stays unbiased and loses the
    variance of the learner's throws (its opponents' throws stay in it).

    Applied only when the learner has a stack on the board at the next decision: then every
    throw has a move, so no sequence passes the turn and every alternative pool is a decision
    the learner would have faced. Its critic is read on the state part, where the pool is the
    only part the throws change (the ``threat`` part depends on the board alone).
    """

    def __init__(self, chance: tuple[float, ...], pool: slice, own_board: slice, seed: int) -> None:
        self.p = torch.tensor(chance, dtype=torch.float32)
        self.pool, self.own_board = pool, own_board
        self.is_bonus = torch.tensor([name in ("yut", "mo") for name in THROW_NAMES])  # these throw again
        self.bonus, self.plain = self.is_bonus.nonzero().flatten(), (~self.is_bonus).nonzero().flatten()
        self.one_plain = torch.eye(len(chance))[self.plain]  # one back-do, do, gae or geol: a whole sequence
        self.p_bonus = float(self.p[self.bonus].sum())
        self.gen = torch.Generator().manual_seed(seed)

    def sequences(self, m: int) -> torch.Tensor:
        """``m`` throw sequences that start with a yut or a mo, as counts per throw ``[m, 6]``."""
        counts = torch.zeros(m, len(self.p))
        rows = torch.arange(m)
        throws = self.bonus[torch.multinomial(self.p[self.bonus], m, replacement=True, generator=self.gen)]
        while rows.numel():
            counts[rows, throws] += 1
            rows = rows[self.is_bonus[throws]]
            throws = torch.multinomial(self.p, rows.numel(), replacement=True, generator=self.gen) if rows.numel() else throws
        return counts

    def __call__(self, batch: Any, value_net: nn.Module, n_state: int) -> float:
        """Sets ``state_value`` and ``("next", "state_value")`` of ``batch`` (``[N, T]``) for GAE;
        returns the share of steps whose next value is the expectation."""
        obs, nxt = batch["observation"][..., :n_state], batch["next", "observation"][..., :n_state]
        batch["state_value"] = value_net(obs)
        v_next = value_net(nxt)
        left = obs[..., self.pool] - nn.functional.one_hot(batch["action"] // NUM_SOURCES, len(self.p)).to(obs.dtype)
        drawn = nxt[..., self.pool] - left  # the throws between the two decisions
        new = (
            ~batch["next", "done"].squeeze(-1)
            & (drawn >= 0).all(-1)
            & (drawn[..., self.plain].sum(-1) == 1)  # one sequence: bonus throws, then one plain throw
            & (nxt[..., self.own_board].sum(-1) > 0)
        )
        if new.any():
            rows, kept = nxt[new], left[new]
            k = len(self.plain)
            alts = rows.unsqueeze(1).repeat(1, k + 1, 1)  # each plain throw, then one drawn bonus sequence
            alts[..., self.pool] = kept.unsqueeze(1) + torch.cat(
                [self.one_plain.expand(len(rows), k, -1), self.sequences(len(rows)).unsqueeze(1)], 1
            )
            v = value_net(alts).squeeze(-1)  # [M, k + 1]
            v_next[new] = (v[:, :k] @ self.p[self.plain] + self.p_bonus * v[:, k]).unsqueeze(-1)
        batch["next", "state_value"] = v_next
        return float(new.float().mean())


class StateValue(nn.Module):
    """The critic of :class:`ActionScorer`: an MLP of the state part alone."""

    def __init__(self, n_state: int, hidden: int) -> None:
        super().__init__()
        self.n_state = n_state
        self.net = mlp(n_state, 1, hidden)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs[..., : self.n_state])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--frames", type=int, default=2_000_000, help="environment steps in all")
    p.add_argument(
        "--minutes", type=float, default=0, help="a wall-time budget of training instead of --frames (the rating comes after it)"
    )
    p.add_argument("--steps", type=int, default=64, help="steps of every env per iteration")
    p.add_argument("--opponent", default="random", help="an agent spec, or several separated by ';': a mixture drawn per game")
    p.add_argument(
        "--selfplay",
        type=int,
        default=0,
        help="every N iterations a frozen copy of the policy (its most likely action) joins the opponents; 0: never",
    )
    p.add_argument("--pool", type=int, default=3, help="the copies kept among the opponents with --selfplay")
    p.add_argument("--tier", default="compact")
    p.add_argument(
        "--net",
        choices=("mlp", "actions"),
        default="mlp",
        help="mlp: two MLPs of the whole observation; actions: ActionScorer (tier tactical)",
    )
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--width", type=int, default=32, help="the per-action width of --net actions")
    p.add_argument("--depth", type=int, default=1, help="the per-action layers of --net actions")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.99, help="GAE's discount (1: the critic learns the chance of winning)")
    p.add_argument("--lmbda", type=float, default=0.95, help="GAE's lambda")
    p.add_argument("--ent-coef", type=float, default=0.01, help="the entropy bonus")
    p.add_argument(
        "--ent-anneal", action="store_true", help="with --minutes, the entropy bonus falls to 0 with the learning rate"
    )
    p.add_argument(
        "--luck",
        action="store_true",
        help="take the luck of the learner's own throws out of the advantage (ThrowLuck; --net actions)",
    )
    p.add_argument(
        "--source-threat",
        action="store_true",
        help="each action also reads the threat on the station its stack leaves (--net actions)",
    )
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=0, help="torch threads; 0: torch's default")
    p.add_argument(
        "--out", default="", help="a folder for policy.pt (the logits network's weights and these arguments) and result.json"
    )
    p.add_argument("--rating-games", type=int, default=200, help="games a seat per anchor for the rating; 0: no rating")
    args = p.parse_args(argv)
    if args.depth < 1:
        p.error(f"--depth must be at least 1, got {args.depth}")

    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    specs = split_specs(args.opponent)  # the package's one splitter: a quoted PATH may hold ';'
    opponent = specs if len(specs) > 1 or args.selfplay else args.opponent
    env = YutTorchRLEnv(args.num_envs, opponent=opponent, seat="random", tier=args.tier)
    env.set_seed(args.seed)
    n_obs, n_act = env.observation_spec["observation"].shape[-1], env.action_spec.space.n
    luck: ThrowLuck | None = None
    if args.net == "actions":
        if args.tier != "tactical":
            p.error("--net actions reads the per-action features of --tier tactical")
        offsets = np.arange(n_obs, dtype=np.float32)  # each part of it read as the offsets it spans
        where = env.venv.obs_part(offsets, "actions")  # [180, F]
        n_state, n_features = int(where[0, 0]), int(where.shape[-1])
        threat = None
        if args.source_threat:
            threat = span(env.venv.obs_part(offsets, "threat"))
        logits_net: nn.Module = ActionScorer(n_state, n_features, args.hidden, args.width, args.depth, threat)
        value_net: nn.Module = StateValue(n_state, args.hidden)
        if args.luck:
            pool, board = (env.venv.obs_part(offsets, k) for k in ("pool", "board"))
            luck = ThrowLuck(
                yutenv.Game("standard").chance,
                span(pool),
                span(board[0]),  # the learner's own cells
                args.seed,
            )
    else:
        if args.luck or args.source_threat:
            p.error("--luck and --source-threat read the state part of --net actions")
        logits_net, value_net = mlp(n_obs, n_act, args.hidden), mlp(n_obs, 1, args.hidden)
    actor = ProbabilisticActor(
        TensorDictModule(logits_net, in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"},
        out_keys=["action"],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    critic = ValueOperator(value_net, in_keys=["observation"])
    frames_per_batch = args.num_envs * args.steps
    collector = Collector(
        env,
        actor,
        frames_per_batch=frames_per_batch,
        total_frames=-1 if args.minutes else args.frames,
        auto_register_policy_transforms=False,  # a feed-forward policy: no InitTracker (0.15 would add one)
    )
    # with --luck the values are set by ThrowLuck, and GAE reads them
    gae = GAE(gamma=args.gamma, lmbda=args.lmbda, value_network=None if args.luck else critic, average_gae=True)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=args.ent_coef, critic_coeff=0.5)
    optim = torch.optim.Adam(loss.parameters(), lr=args.lr)
    buffer = ReplayBuffer(
        storage=LazyTensorStorage(frames_per_batch), sampler=SamplerWithoutReplacement(), batch_size=args.minibatch
    )

    snapshots: list[nn.Module] = []
    frames, start = 0, time.perf_counter()
    for i, batch in enumerate(collector):
        frames += batch.numel()
        done = batch["next", "done"].squeeze(-1)
        ended = batch["next", "reward"].squeeze(-1)[done]
        with torch.no_grad():
            if luck is not None:
                luck(batch, value_net, n_state)
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
        if args.selfplay and i % args.selfplay == args.selfplay - 1:  # from each env's next game on
            snapshots = [*snapshots, copy.deepcopy(logits_net).requires_grad_(False).eval()][-args.pool :]
            env.venv.set_opponents([*opponent, *snapshots])
        if args.minutes:  # the learning rate falls linearly to 0 over the budget
            left = max(0.0, 1 - (time.perf_counter() - start) / (60 * args.minutes))
            for group in optim.param_groups:
                group["lr"] = args.lr * left
            if args.ent_anneal:
                loss.entropy_coeff.fill_(args.ent_coef * left)
        mean = f"{ended.mean().item():+.3f}" if ended.numel() else "   n/a"
        print(
            f"iter {i:4d}  frames {frames:>9,}  {frames / (time.perf_counter() - start):>8,.0f} frames/s  return {mean}",
            flush=True,
        )
        if args.minutes and time.perf_counter() - start >= 60 * args.minutes:
            break
    collector.shutdown()
    env.close()

    seconds = time.perf_counter() - start
    out: dict[str, Any] = {
        "args": vars(args),
        "frames": frames,
        "seconds": round(seconds, 1),
        "frames_per_second": round(frames / seconds),
    }
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        torch.save({"args": vars(args), "logits_net": logits_net.state_dict()}, Path(args.out) / "policy.pt")
    if args.rating_games:
        logits_net.eval()
        result = yutenv.evaluate(logits_net, opponent="random", games=args.rating_games, tier=args.tier, rating=True)
        print(result)
        if result.rating is not None:
            out["rating"] = {
                "elo": result.rating,
                "low": result.rating_low,
                "high": result.rating_high,
                "games": result.rating_games,
            }
    if args.out:
        (Path(args.out) / "result.json").write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
