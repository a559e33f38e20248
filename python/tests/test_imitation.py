"""Behaviour cloning from self-play datasets: streamed batches in bounded memory, and a real
MaskablePPO policy that learns the dataset's moves."""

from __future__ import annotations

import subprocess
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import yutenv
from yutenv import imitation


def selfplay(out: Path, games: int, shard_games: int, agents: str = "greedy", tier: str = "compact") -> Path:
    subprocess.run(
        [
            str(yutenv.binary_path()),
            "selfplay",
            "--agents",
            agents,
            "--games",
            str(games),
            "--tier",
            tier,
            "--shard-games",
            str(shard_games),
            "--seed",
            "3",
            "--out",
            str(out),
            "--quiet",
        ],
        check=True,
    )
    return out


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return selfplay(tmp_path_factory.mktemp("bc") / "greedy", games=48, shard_games=4)


def test_batches_cover_every_row_once_per_epoch(data: Path) -> None:
    ds = yutenv.datasets.load(data)
    seen = []
    for b in imitation.batches(data, 100, arrays=("game", "decision", "action"), epochs=2, seed=5):
        assert len(b["action"]) <= 100
        seen.append(np.stack([b["game"], b["decision"]], axis=1))
    rows = np.concatenate(seen)
    assert len(rows) == 2 * len(ds)
    want = np.stack([ds.game, ds.decision], axis=1)
    for epoch in np.split(rows, 2):
        assert sorted(map(tuple, epoch)) == sorted(map(tuple, want)), "each row once per epoch"
    first = [b["action"] for b in imitation.batches(data, 100, seed=5)]
    again = [b["action"] for b in imitation.batches(data, 100, seed=5)]
    other = [b["action"] for b in imitation.batches(data, 100, seed=6)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))
    shuffled = np.concatenate([b["action"] for b in imitation.batches(data, 10_000, arrays=("action",), buffer_shards=20)])
    assert not np.array_equal(shuffled, ds.action), "rows are shuffled"


def test_memory_is_bounded_by_the_buffer_not_the_dataset(tmp_path: Path) -> None:
    """The peak of numpy's allocations while streaming is the same for 4 and 16 shards."""
    small = selfplay(tmp_path / "small", games=16, shard_games=4, tier="tactical")
    large = selfplay(tmp_path / "large", games=64, shard_games=4, tier="tactical")

    def peak(path: Path) -> int:
        tracemalloc.start()
        try:
            for _ in imitation.batches(path, 64, buffer_shards=2):
                pass
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    shard = yutenv.datasets.load(large).obs.nbytes / 16
    p_small, p_large = peak(small), peak(large)
    assert p_large < 1.5 * p_small + shard, (p_small, p_large)
    assert p_large < 8 * shard, "a few shards' worth, not the 16 of the data set"


def test_clone_learns_the_datasets_moves(data: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from yutenv.sb3 import vec_env

    torch.set_num_threads(1)
    venv = vec_env(2, opponent="random", tier="compact")
    try:
        model = MaskablePPO("MlpPolicy", venv, seed=0, policy_kwargs={"net_arch": [64, 64]})
        before = imitation.clone(model, data, epochs=1, lr=0.0)
        after = imitation.clone(model, data, epochs=6, lr=3e-3, seed=1)
        assert after["rows"] == before["rows"] == len(yutenv.datasets.load(data))
        assert after["loss"] < before["loss"]
        assert after["accuracy"] > max(0.6, before["accuracy"] + 0.2), (before, after)
        ds = yutenv.datasets.load(data)
        acts, _ = model.predict(ds.obs, action_masks=ds.mask.astype(bool), deterministic=True)
        assert np.mean(acts == ds.action) == pytest.approx(after["accuracy"], abs=0.1), "what predict() plays"
    finally:
        venv.close()
    with pytest.raises(ValueError, match="the model reads"):
        other = vec_env(1, tier="tactical")
        try:
            imitation.clone(MaskablePPO("MlpPolicy", other), data)
        finally:
            other.close()


@pytest.mark.parametrize("share", [True, False])
def test_one_forward_pass_is_evaluate_actions(data: Path, share: bool) -> None:
    # clone() takes the log-likelihood, values and accuracy from one forward pass: the same
    # numbers as sb3-contrib's evaluate_actions, with shared or separate feature extractors.
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO
    from yutenv.sb3 import vec_env

    venv = vec_env(2, opponent="random", tier="compact")
    model = MaskablePPO("MlpPolicy", venv, seed=1, policy_kwargs={"net_arch": [32], "share_features_extractor": share})
    b = next(imitation.batches(data, 64))
    obs = torch.as_tensor(b["obs"])
    mask = torch.as_tensor(b["mask"].astype(bool))
    act = torch.as_tensor(b["action"].astype(np.int64))
    with torch.no_grad():
        values, log_prob, _ = model.policy.evaluate_actions(obs, act, action_masks=mask.numpy())
        logits, v = imitation._forward(model.policy, obs, mask)
    ours = torch.log_softmax(logits, dim=1).gather(1, act[:, None]).squeeze(1)
    np.testing.assert_allclose(ours.numpy(), log_prob.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v.numpy(), values.numpy(), rtol=1e-6)
    venv.close()
