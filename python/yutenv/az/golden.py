"""The golden network files that the Go reader (package nnet) and this package's reader are both
tested against: a version 1 and a version 2 network, each with the outputs both must reproduce.

Regenerate them with ``python -m yutenv.az.golden nnet/testdata`` (needs the ``az`` extra).
"""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
from typing import Sequence

import numpy as np
import numpy.typing as npt
import torch

from .._files import atomic_write
from .net import NUM_ACTIONS, TIER_SIZES, FileNet, PolicyValueNet, export_net, file_net_bytes, load_file_net, masked_logits

__all__ = ["write_golden", "write_golden_split"]


def _golden_obs(n: int, size: int, seed: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    rng = np.random.default_rng(seed)
    obs = rng.uniform(-1.0, 1.0, size=(n, size)).astype(np.float32)
    obs[0] = 0.0  # an all-zero observation: the biases alone
    mask = rng.random((n, NUM_ACTIONS)) < 0.1
    mask[:, 0] = True
    return obs, mask


def write_golden(
    directory: str | os.PathLike[str], *, seed: int = 14, hidden: Sequence[int] = (16, 8), rows: int = 4
) -> tuple[Path, Path]:
    """Write ``tiny.ynet`` and ``tiny.expected.json`` into ``directory``: the shared golden of a
    version 1 network (a :class:`PolicyValueNet`).

    The JSON holds fixed observations (``obs``, ``[rows][213]``, compact tier), masks, and
    the outputs both readers must reproduce to 1e-5: the raw ``logits`` ``[rows][180]``,
    the raw ``value_raw`` and ``value`` = tanh(value_raw), and ``priors`` (the masked
    softmax).
    """
    d = Path(directory)
    torch.manual_seed(seed)
    model = PolicyValueNet(TIER_SIZES["compact"], hidden, tier="compact", rules="standard")
    return _write_golden(export_net(model, d / "tiny.ynet"), seed, rows)


def write_golden_split(directory: str | os.PathLike[str], *, seed: int = 15, rows: int = 4) -> tuple[Path, Path]:
    """Write ``tanh-split.ynet`` and ``tanh-split.expected.json`` into ``directory``: the shared
    golden of a version 2 network (tanh; a shared layer, then a policy trunk and a separate,
    deeper value trunk), in the JSON of :func:`write_golden`."""
    d = Path(directory)
    torch.manual_seed(seed)
    model = FileNet(TIER_SIZES["compact"], (16,), (12,), (10, 6), activation="tanh", tier="compact", rules="standard")
    for lin in (*model.linears()[0], model.value):  # larger weights: tanh saturates, the value is far from 0
        with torch.no_grad():
            lin.weight.mul_(3.0)
    data = file_net_bytes(model)
    net = atomic_write(d / "tanh-split.ynet", lambda f: f.write(data))
    return _write_golden(net, seed, rows)


def _write_golden(net: Path, seed: int, rows: int) -> tuple[Path, Path]:
    """Write the expected outputs of the network file ``net`` next to it (``NAME.expected.json``)."""
    model = load_file_net(net)  # the outputs of what the file holds
    obs, mask = _golden_obs(rows, model.obs_size, seed)
    with torch.no_grad():
        logits, v = model(torch.from_numpy(obs))
        priors = torch.softmax(masked_logits(logits, torch.from_numpy(mask)), dim=-1)
    doc = {
        "net": net.name,
        "tier": model.tier,
        "tolerance": 1e-5,
        "obs": obs.tolist(),
        "mask": mask.astype(int).tolist(),
        "logits": logits.numpy().tolist(),
        "value_raw": v.numpy().tolist(),
        "value": torch.tanh(v).numpy().tolist(),
        "priors": priors.numpy().tolist(),
    }
    for key in ("logits", "value_raw", "priors"):
        assert all(math.isfinite(x) for x in np.asarray(doc[key], dtype=np.float64).reshape(-1))
    exp = net.with_name(net.name.removesuffix(".ynet") + ".expected.json")
    exp.write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n", encoding="utf-8")
    return net, exp


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m yutenv.az.golden [DIR]``: regenerate the shared goldens."""
    ap = argparse.ArgumentParser(
        prog="python -m yutenv.az.golden",
        description="Write the golden network files (a version 1 and a version 2 network, each with the outputs "
        "its readers must reproduce) that package nnet and yutenv.az are both tested against.",
    )
    ap.add_argument("dir", nargs="?", default="nnet/testdata", help="the folder to write them in (default: %(default)s)")
    args = ap.parse_args(argv)
    for write in (write_golden, write_golden_split):
        for written in write(args.dir):
            print(written)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
