"""Behaviour cloning from self-play datasets, streamed from disk in bounded memory.

A dataset of ``yutenv selfplay --tier TIER --out DIR`` holds every decision of strong agents
(``az``, ``mcts:400``): the observation, the legal mask, the action played and the game's
outcome. :func:`batches` streams it as shuffled minibatches with at most ``buffer_shards`` shards
in memory (whatever the dataset's size), and :func:`clone` trains an sb3-contrib
``MaskablePPO`` policy on them: the masked log-likelihood of the actions played, plus the value
head's squared error to the outcome, so that the critic PPO fine-tunes with starts from a
sensible estimate. It needs the ``sb3`` extra.

::

    yutenv selfplay --agents az --games 10000 --tier compact --out az-data/
    python -m yutenv.recipes league --clone az-data/ --minutes 30 --out runs/league

>>> import yutenv.imitation as im
>>> callable(im.clone) and callable(im.batches)
True
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

import numpy as np
import numpy.typing as npt

from .data import datasets
from .data.stream import shuffled_batches

__all__ = ["batches", "clone"]


def batches(
    path: str | os.PathLike[str],
    batch_size: int,
    *,
    arrays: Sequence[str] = ("obs", "mask", "action", "value"),
    buffer_shards: int = 2,
    epochs: int = 1,
    seed: int = 0,
    verify: bool = True,
) -> Iterator[dict[str, npt.NDArray[Any]]]:
    """Yield shuffled minibatches of ``batch_size`` rows (the last one of an epoch may be
    smaller), as dicts of the named ``arrays``.

    Each epoch reads the shards in a shuffled order, ``buffer_shards`` at a time; the rows of
    those shards are shuffled together and cut into batches (rows left over join the next
    shards' rows). Memory holds at most ``buffer_shards`` shards plus one batch, whatever
    the number of shards. The same ``seed`` gives the same batches.
    (:func:`yutenv.data.stream.shuffled_batches`, which ``yutenv.datasets.torch`` shares.)
    """
    names = list(arrays)
    n = len(datasets.read_manifest(path)["shards"])

    def read(order: Sequence[int]) -> Iterator[dict[str, npt.NDArray[Any]]]:
        return (s.arrays() for s in datasets.iter_shards(path, verify=verify, arrays=names, order=order))

    return shuffled_batches(read, range(n), batch_size, names, buffer_shards=buffer_shards, epochs=epochs, seed=seed)


def _forward(policy: Any, obs: Any, mask: Any) -> tuple[Any, Any]:
    """One forward pass of an SB3 actor-critic policy: the action logits with the illegal
    actions at -1e8 (as sb3-contrib's masked distribution sets them) and the values. The same
    log-likelihood as ``policy.evaluate_actions``, and the accuracy from the same pass."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        pi_features, vf_features = features
        latent_pi = policy.mlp_extractor.forward_actor(pi_features)
        latent_vf = policy.mlp_extractor.forward_critic(vf_features)
    logits = policy.action_net(latent_pi).masked_fill(~mask, -1e8)
    return logits, policy.value_net(latent_vf)


def clone(
    model: Any,
    path: str | os.PathLike[str],
    *,
    epochs: int = 1,
    batch_size: int = 1024,
    lr: float = 1e-3,
    value_coef: float = 0.5,
    buffer_shards: int = 2,
    seed: int = 0,
    progress: bool | None = None,
) -> dict[str, float]:
    """Train ``model`` (an sb3-contrib ``MaskablePPO``, or its policy) to play the actions of the
    dataset at ``path`` (:func:`batches`): the loss is the negative log-likelihood of the action
    under the masked policy plus ``value_coef`` times the squared error of the value head to the
    game's outcome. The dataset's tier must be the model's (its observation size). Returns the
    last epoch's mean loss, the policy's accuracy (its most likely legal action is the one played)
    and the rows seen."""
    import torch

    from ._progress import progress_bar

    policy = getattr(model, "policy", model)
    m = datasets.read_manifest(path)
    want = int(policy.observation_space.shape[0])
    got = int(m["obs_size"])
    if got != want:
        raise ValueError(
            f"{path}: the dataset's observations have {got} values (tier {m.get('tier')!r}); "
            f"the model reads {want}: make the dataset with the model's tier"
        )
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    total_rows = int(sum(e["decisions"] for e in m["shards"])) * epochs
    bar = progress_bar(total_rows, "behaviour cloning", show=progress)
    policy.set_training_mode(True)
    stats = {"loss": 0.0, "accuracy": 0.0, "rows": 0.0}
    try:
        for epoch in range(epochs):
            loss_sum = acc_sum = 0.0
            rows = 0
            for b in batches(path, batch_size, buffer_shards=buffer_shards, seed=seed + epoch):
                obs = torch.as_tensor(b["obs"], device=policy.device)
                mask = torch.as_tensor(b["mask"].astype(bool), device=policy.device)
                act = torch.as_tensor(b["action"].astype(np.int64), device=policy.device)
                target = torch.as_tensor(b["value"], device=policy.device)
                logits, values = _forward(policy, obs, mask)
                log_prob = torch.log_softmax(logits, dim=1).gather(1, act[:, None]).squeeze(1)
                loss = -log_prob.mean() + value_coef * torch.nn.functional.mse_loss(values.flatten(), target)
                opt.zero_grad()
                loss.backward()
                opt.step()
                acc_sum += float((logits.detach().argmax(dim=1) == act).float().sum())
                loss_sum += float(loss.detach()) * len(act)
                rows += len(act)
                if bar is not None:
                    bar.update(len(act))
            stats = {"loss": loss_sum / max(rows, 1), "accuracy": acc_sum / max(rows, 1), "rows": float(rows)}
    finally:
        if bar is not None:
            bar.close()
        policy.set_training_mode(False)
    return stats
