"""TorchRL's door: :class:`yutenv.integrations.torchrl.YutTorchRLEnv` checked by TorchRL's own tools
(``check_env_specs``, ``SerialEnv``/``ParallelEnv``, the ``ActionMask`` transform, a collector,
``MaskedCategorical``, ``ClipPPOLoss`` through the example), its games against the vector env's,
and what bad input gets. Real TorchRL, real servers."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
from conftest import wait_dead

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from torchrl.collectors import Collector  # noqa: E402
from torchrl.envs import ActionMask, ParallelEnv, SerialEnv, TransformedEnv  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

import yutenv  # noqa: E402
from yutenv import AutoresetMode  # noqa: E402
from yutenv._protocol import NUM_ACTIONS, NUM_SOURCES, NUM_THROWS, TIER_SIZES  # noqa: E402
from yutenv.integrations.torchrl import YutClosedError, YutTorchRLEnv, masked_random_policy  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server() -> Iterator[yutenv.Server]:
    s = yutenv.Server()
    yield s
    s.close()


@pytest.mark.parametrize("tier", sorted(TIER_SIZES))
def test_check_env_specs_passes_for_every_tier(server: yutenv.Server, tier: str) -> None:
    env = YutTorchRLEnv(6, opponent="greedy", seat="random", tier=tier, server=server)
    try:
        assert env.batch_size == torch.Size([6])
        assert env.observation_spec["observation"].shape == (6, TIER_SIZES[tier])
        assert env.observation_spec["action_mask"].shape == (6, NUM_ACTIONS)
        check_env_specs(env, seed=3)
    finally:
        env.close()


@pytest.mark.parametrize("batched", [SerialEnv, ParallelEnv])
def test_serial_and_parallel_env_over_it(server: yutenv.Server, batched: Any) -> None:
    """TorchRL's batched envs run it: its ``check_env_specs`` passes with the ``ActionMask``
    transform (which keeps the batched action spec's mask current), and a rollout across many
    games' ends (partial resets) takes only legal actions from the masks in the data."""
    address, token = server.address, server.token
    env = TransformedEnv(batched(2, lambda: YutTorchRLEnv(3, opponent="random", address=address, token=token)), ActionMask())
    try:
        check_env_specs(env, seed=1)
        td = env.rollout(150, policy=masked_random_policy, break_when_any_done=False)
        assert td.batch_size == torch.Size([2, 3, 150])
        assert int(td["next", "done"].sum()) > 0, "games ended and were reset inside the rollout"
        legal = td["action_mask"].gather(-1, td["action"].unsqueeze(-1))
        assert bool(legal.all())
    finally:
        env.close()


def test_a_collector_gathers_legal_frames_and_resets_ended_games(server: yutenv.Server) -> None:
    env = YutTorchRLEnv(8, opponent="greedy", server=server)
    try:
        collector = Collector(env, masked_random_policy, frames_per_batch=8 * 50, total_frames=8 * 150)
        batches = list(collector)
        collector.shutdown()
        assert len(batches) == 3
        for b in batches:
            assert b.batch_size == torch.Size([8, 50])
            assert bool(b["action_mask"].gather(-1, b["action"].unsqueeze(-1)).all())
            ended = b["next", "done"].squeeze(-1)
            assert bool((b["next", "reward"].squeeze(-1)[~ended] == 0).all()), "reward only at the end (win reward)"
        assert sum(int(b["next", "done"].sum()) for b in batches) > 0
    finally:
        env.close()


def test_the_games_are_the_vector_envs_for_the_same_seeds(server: yutenv.Server) -> None:
    """First-legal play through the TorchRL env and through a same-step ``YutVectorEnv`` with the
    same seed: the same observations, rewards and ends; an ended game's last observation is in
    ``next`` and the reset gives the next game's first, which the vector env returned at once."""
    n = 4
    env = YutTorchRLEnv(n, opponent="greedy", seat="random", server=server)
    venv = yutenv.make(num_envs=n, opponent="greedy", seat="random", server=server, autoreset_mode=AutoresetMode.SAME_STEP)
    try:
        env.set_seed(11)
        td = env.reset()
        obs, _ = venv.reset(seed=11)
        np.testing.assert_array_equal(td["observation"].numpy(), obs)
        ends = 0
        for _ in range(400):
            mask = venv.action_masks()
            np.testing.assert_array_equal(td["action_mask"].numpy(), mask)
            actions = mask.argmax(axis=1)
            td["action"] = torch.as_tensor(actions, dtype=torch.int64)
            out, td = env.step_and_maybe_reset(td)
            obs, reward, terminated, truncated, infos = venv.step(actions)
            ended = terminated | truncated
            np.testing.assert_array_equal(out["next", "reward"].squeeze(-1).numpy(), reward)
            np.testing.assert_array_equal(out["next", "terminated"].squeeze(-1).numpy(), terminated)
            np.testing.assert_array_equal(out["next", "done"].squeeze(-1).numpy(), ended)
            for i in np.flatnonzero(ended):
                np.testing.assert_array_equal(out["next", "observation"][i].numpy(), infos["final_obs"][i])
                assert not bool(out["next", "action_mask"][i].any()), "an ended game has no legal action"
            np.testing.assert_array_equal(td["observation"].numpy(), obs)  # after the partial reset
            ends += int(ended.sum())
        assert ends > 5
    finally:
        env.close()
        venv.close()


def test_the_same_seed_gives_the_same_rollout(server: yutenv.Server) -> None:
    env = YutTorchRLEnv(4, opponent="mc:8", server=server)
    try:
        runs = []
        for _ in range(2):
            torch.manual_seed(0)
            env.set_seed(5)
            runs.append(env.rollout(120, policy=masked_random_policy, break_when_any_done=False))
        for key in ("action", ("next", "observation"), ("next", "reward"), ("next", "done")):
            assert torch.equal(runs[0][key], runs[1][key]), key
    finally:
        env.close()


def test_bad_input_gets_one_clear_error_and_the_env_goes_on(server: yutenv.Server) -> None:
    env = YutTorchRLEnv(3, opponent="random", server=server)
    try:
        td = env.reset()
        illegal = (~td["action_mask"]).to(torch.int64).argmax(-1)
        with pytest.raises(yutenv.IllegalActionError, match="illegal action"):
            env.step(td.clone().set("action", illegal))
        for bad, match in [
            (torch.zeros(4, dtype=torch.int64), r"shape \(4,\); want \(3,\)"),
            (torch.zeros(3, NUM_ACTIONS, dtype=torch.int64), r"shape \(3, 180\)"),
            (torch.zeros(3), "dtype torch.float32; want integer action ids"),
        ]:
            with pytest.raises(ValueError, match=match):
                env._step(td.clone().set("action", bad, inplace=False) if bad.shape[:1] == (3,) else _raw(td, bad))
        with pytest.raises(RuntimeError, match="(?i)expected a tensordict with shape"):
            env.step(td[:2].clone())
        out = env.step(env.rand_action(td.clone()))  # after the caller's errors, a legal step goes through
        assert out["next", "observation"].shape == (3, TIER_SIZES["compact"])
        running = torch.tensor([[True], [False], [False]])
        with pytest.raises(ValueError, match="running games; a partial reset may name only envs whose game ended"):
            env.reset(out["next"].clone().set("_reset", running))
    finally:
        env.close()
    with pytest.raises(YutClosedError, match="step: the env is closed"):
        env._step(td)


def _raw(td: Any, action: Any) -> Any:
    """``td`` with an ``action`` entry of another shape than the batch (as TorchRL would not build)."""
    from tensordict import TensorDict

    return TensorDict({"action": action}, batch_size=[])


def test_a_dead_server_is_a_clear_error() -> None:
    srv = yutenv.Server()
    env = YutTorchRLEnv(2, opponent="random", server=srv)
    try:
        td = env.reset()
        os.kill(srv.pid, signal.SIGKILL)
        assert wait_dead(srv.pid)
        with pytest.raises(yutenv.ServerDiedError):
            env.step(env.rand_action(td))
    finally:
        env.close()
        srv.close()


def _ppo_example() -> Any:
    sys.path.insert(0, str(REPO / "python" / "examples"))
    try:
        import torchrl_ppo
    finally:
        sys.path.pop(0)
    return torchrl_ppo


# TorchRL 0.14 warns that 0.15 will add an InitTracker to the env of any module policy; the
# example's policy is feed-forward and says so, keeping the env it trains on the one tested here.
@pytest.mark.filterwarnings("error:The env passed to Collector is missing transforms:FutureWarning")
def test_the_ppo_example_trains_and_rates_its_policy() -> None:
    """python/examples/torchrl_ppo.py, small: TorchRL's collector, MaskedCategorical actor, GAE and
    ClipPPOLoss train for two iterations, then the policy is rated on the published scale."""
    out = _ppo_example().main(
        ["--num-envs", "16", "--steps", "16", "--frames", "512", "--epochs", "1", "--minibatch", "128", "--rating-games", "8"]
    )
    assert out["frames"] == 512
    assert np.isfinite(out["rating"]["elo"])
    assert sum(g for g, _ in out["rating"]["games"].values()) == 4 * 8


def test_the_action_scorer_trains_for_a_time_budget_and_is_saved(tmp_path: Path) -> None:
    """``--net actions``: the per-action scorer of the tactical tier (two layers deep) trains for
    ``--minutes`` (one iteration at least, the learning rate falling over the budget), is rated
    although it slices its input (its ``obs_size``), and its weights saved in ``--out`` play the
    same actions."""
    ppo = _ppo_example()
    argv = ["--net", "actions", "--tier", "tactical", "--num-envs", "8", "--steps", "8", "--minutes", "0.0001"]
    argv += ["--opponent", "random;greedy", "--selfplay", "1"]  # a copy joins the mixture after iteration 0
    argv += ["--depth", "2", "--gamma", "1", "--ent-coef", "0.02", "--ent-anneal"]  # each action's own MLP two layers deep
    argv += ["--luck", "--source-threat"]  # GAE reads the values ThrowLuck sets; an 11th input an action
    out = ppo.main([*argv, "--epochs", "1", "--minibatch", "64", "--rating-games", "4", "--out", str(tmp_path)])
    assert out["frames"] == 64  # the budget was spent in the first iteration
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["frames"] == 64 and saved["args"]["net"] == "actions"
    assert (saved["args"]["depth"], saved["args"]["gamma"], saved["args"]["ent_coef"]) == (2, 1.0, 0.02)
    assert saved["args"]["luck"] and saved["args"]["source_threat"]
    assert np.isfinite(saved["rating"]["elo"])
    with pytest.raises(SystemExit):
        ppo.main(["--net", "actions", "--tier", "compact"])  # the scorer reads the tactical tier's features
    with pytest.raises(SystemExit):
        ppo.main(["--net", "actions", "--tier", "tactical", "--depth", "0"])  # not silently one layer
    state = torch.load(tmp_path / "policy.pt")["logits_net"]
    env = yutenv.make(4, tier="tactical", opponent="greedy")
    try:
        obs, _ = env.reset(seed=3)
        where = env.obs_part(np.arange(obs.shape[1], dtype=np.float32), "actions")
        threat = env.obs_part(np.arange(obs.shape[1], dtype=np.float32), "threat")
        net = ppo.ActionScorer(int(where[0, 0]), int(where.shape[1]), 256, 32, 2, ppo.span(threat))
        net.load_state_dict(state)  # strict: the second layer's weights were saved
        assert net.obs_size == obs.shape[1]
        logits = net(torch.as_tensor(obs)).detach().numpy()
        legal = env.obs_part(obs, "actions")[..., 0] > 0
        assert legal.any(axis=1).all()
        assert (logits[~legal] == 0).all()  # only legal actions are scored
        full = np.zeros_like(logits)
        for i in range(len(obs)):  # the same scores as scoring every legal action alone
            for a in np.flatnonzero(legal[i]):
                one = obs[i : i + 1].copy()
                feats = env.obs_part(one, "actions")
                feats[0, [b for b in range(feats.shape[1]) if b != a], :] = 0
                full[i, a] = net(torch.as_tensor(one)).detach().numpy()[0, a]
        np.testing.assert_allclose(logits[legal], full[legal], rtol=1e-5, atol=1e-6)
    finally:
        env.close()


def test_the_source_threat_reaches_only_the_actions_that_move_from_that_station() -> None:
    """``--source-threat``: with the state's context held fixed, raising the threat on one station
    changes the scores of exactly the actions whose stack leaves it (and of no entry)."""
    ppo = _ppo_example()
    env = yutenv.make(tier="tactical", opponent="random")
    try:
        obs, _ = env.reset(seed=2)
        rng = np.random.default_rng(0)
        sources: set[int] = set()
        while len(sources) < 2:  # a position with two stacks on the board
            legal = np.flatnonzero(env.obs_part(obs, "actions")[:, 0] > 0)
            sources = {int(a) % NUM_SOURCES for a in legal} - {NUM_SOURCES - 1}
            if len(sources) < 2:
                obs, _, term, trunc, _ = env.step(int(rng.choice(legal)))
                if term or trunc:
                    obs, _ = env.reset()
        offsets = np.arange(obs.size, dtype=np.float32)
        where, threat = env.obs_part(offsets, "actions"), env.obs_part(offsets, "threat").astype(int)
        torch.manual_seed(0)
        net = ppo.ActionScorer(int(where[0, 0]), int(where.shape[1]), 32, 16, 2, ppo.span(threat))
        with torch.no_grad():
            net.trunk[-1].weight.zero_()  # the context no longer reads the state
        s = min(sources)
        raised = obs.copy()
        raised[threat[s]] += 0.5
        before, after = (net(torch.as_tensor(o[None])).detach().numpy()[0] for o in (obs, raised))
        changed = set(np.flatnonzero(np.abs(after - before) > 1e-7))
        assert changed == {int(a) for a in legal if a % NUM_SOURCES == s}
    finally:
        env.close()


def _learner_transitions(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` real (observation, action, next observation) steps of the tactical tier against
    `random`, from decisions where the learner's next decision follows new throws of its own and
    it has a stack on the board (the steps :class:`ThrowLuck` adjusts)."""
    env = yutenv.make(tier="tactical", opponent="random")
    rng = np.random.default_rng(5)
    obs_, acts, nexts = [], [], []
    try:
        obs, _ = env.reset(seed=11)
        pool = env.obs_part(np.arange(obs.size, dtype=np.float32), "pool").astype(int)
        own = env.obs_part(np.arange(obs.size, dtype=np.float32), "board")[0].astype(int)  # the learner's cells
        while len(acts) < n:
            legal = np.flatnonzero(env.obs_part(obs, "actions")[:, 0] > 0)
            a = int(rng.choice(legal))
            nxt, _, term, trunc, _ = env.step(a)
            if term or trunc:
                obs, _ = env.reset()
                continue
            drawn = nxt[pool] - (obs[pool] - np.eye(NUM_THROWS)[a // NUM_SOURCES])
            if (drawn >= 0).all() and drawn[:4].sum() == 1 and nxt[own].sum() > 0:
                obs_.append(obs)
                acts.append(a)
                nexts.append(nxt)
            obs = nxt
    finally:
        env.close()
    return np.array(obs_), np.array(acts), np.array(nexts)


def test_throw_luck_draws_the_sequences_that_start_with_a_yut_or_a_mo_by_the_rules() -> None:
    """The one sampled part of ``--luck``'s expectation: sequences that start with a yut or a mo,
    drawn as often as the rules' throw probabilities make them (every multiset of up to three
    throws against its exact probability, enumerated here, within five standard errors)."""
    from collections import Counter
    from itertools import product

    chance = yutenv.Game("standard").chance
    luck = _ppo_example().ThrowLuck(chance, slice(0, 6), slice(0, 1), seed=3)
    m = 200_000
    drawn = luck.sequences(m).numpy().astype(int)
    assert (drawn[:, :4].sum(1) == 1).all() and (drawn[:, 4:].sum(1) >= 1).all()  # bonus throws, then one plain
    exact: Counter[tuple[int, ...]] = Counter()
    bonus = chance[4] + chance[5]
    for k in (1, 2):  # k bonus throws, the first of them given
        for seq in product((4, 5), repeat=k):
            for plain in range(4):
                prob = chance[seq[0]] / bonus * np.prod([chance[t] for t in seq[1:]]) * chance[plain]
                exact[tuple(np.bincount([*seq, plain], minlength=6))] += prob
    seen = Counter(map(tuple, drawn))
    for key, prob in exact.items():
        se = np.sqrt(prob * (1 - prob) / m)
        assert abs(seen[key] / m - prob) < 5 * se + 1e-9, (key, seen[key] / m, prob)


def test_throw_luck_keeps_the_mean_and_takes_out_the_learner_throws() -> None:
    """The example's ``--luck``: on real positions, a step's next value becomes the critic's
    expectation over the learner's throw sequences. Its mean is the raw next value's (the next
    pool drawn from the rules' throw probabilities, independently of the code under test), its
    spread is only the one sampled yut-or-mo sequence's, and a step that drew no throw (the
    learner moving again from the same pool) keeps its raw value."""
    from tensordict import TensorDict

    ppo = _ppo_example()
    obs, acts, nexts = _learner_transitions(3)
    probe = yutenv.make(tier="tactical")
    try:
        size = obs.shape[1]
        pool = probe.obs_part(np.arange(size, dtype=np.float32), "pool").astype(int)
        n_state = int(probe.obs_part(np.arange(size, dtype=np.float32), "actions")[0, 0])  # the critic's part
        own = probe.obs_part(np.arange(size, dtype=np.float32), "board")[0].astype(int)  # the learner's cells
    finally:
        probe.close()
    chance = yutenv.Game("standard").chance
    luck = ppo.ThrowLuck(chance, ppo.span(pool), ppo.span(own), seed=1)

    class Critic(torch.nn.Module):  # any critic: a fixed nonlinear function of the pool and the board
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            w = torch.tensor([-0.7, 0.2, 0.5, 0.9, 1.6, 2.3])
            return torch.tanh(x[..., pool] @ w * 0.4 + x[..., own].sum(-1) * 0.1 - 0.5).unsqueeze(-1)

    rng = np.random.default_rng(7)

    def sequence() -> np.ndarray:  # one throw sequence by the rules: yut and mo throw again
        counts = np.zeros(6)
        while True:
            t = rng.choice(6, p=np.asarray(chance) / sum(chance))
            counts[t] += 1
            if t < 4:
                return counts

    m = 20_000
    for o, a, nx in zip(obs, acts, nexts):
        left = o[pool] - np.eye(NUM_THROWS)[a // NUM_SOURCES]
        nxt = np.repeat(nx[None], m, 0)
        nxt[:, pool] = left + np.array([sequence() for _ in range(m)])  # the same step, its throws redrawn
        batch = TensorDict(
            {
                "observation": torch.as_tensor(np.repeat(o[None], m, 0)).unsqueeze(1),
                "action": torch.full((m, 1), int(a)),
                "next": {"observation": torch.as_tensor(nxt).unsqueeze(1), "done": torch.zeros(m, 1, 1, dtype=torch.bool)},
            },
            batch_size=[m, 1],
        )
        raw = Critic()(batch["next", "observation"][..., :n_state]).flatten().numpy()
        assert luck(batch, Critic(), n_state) == 1.0  # every step drew a sequence of its own
        adjusted = batch["next", "state_value"].flatten().numpy()
        se = np.hypot(raw.std(), adjusted.std()) / np.sqrt(m)
        assert abs(raw.mean() - adjusted.mean()) < 4 * se  # unbiased
        assert adjusted.std() < raw.std() / 2  # the learner's own throws are gone from it

        same = batch[:1].clone()  # the learner moves again from what was left: no throw, no change
        same["next", "observation"][..., pool] = torch.as_tensor(left, dtype=torch.float32)
        assert luck(same, Critic(), n_state) == 0.0
        torch.testing.assert_close(same["next", "state_value"], Critic()(same["next", "observation"][..., :n_state]))


def test_the_benchmark_runs_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m yutenv.tools.bench_torchrl``, tiny: the native env and GymWrapper side by side."""
    from yutenv.tools import bench_torchrl

    assert bench_torchrl.main(["--sizes", "1,2", "--steps", "5", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    for row in ("YutTorchRLEnv", "GymWrapper(yutenv.make())", "SerialEnv(2, GymWrapper)"):
        assert row in out
