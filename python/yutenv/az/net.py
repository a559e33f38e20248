"""The policy+value network of :mod:`yutenv.az` and its ``yutenv-net`` file.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from yutenv.az.net import PolicyValueNet, export_net, load_net, NetPolicy
    model = PolicyValueNet(obs_size=213, hidden=(256, 256), tier="compact", rules="standard")
    export_net(model, "gen3.ynet")          # what the Go side (`net:gen3.ynet`) reads
    model = load_net("gen3.ynet")           # and back, bit for bit
    yutenv.evaluate(NetPolicy(model), opponent="greedy", tier="compact")

The network is an MLP: a trunk of fully connected layers, each followed by a ReLU, then
two linear heads on the trunk's output: ``policy`` (180 logits, one per action of the
standard encoding; illegal actions are masked out before the softmax) and ``value``
(one number; ``tanh`` of it is the mover's expected outcome in [-1, 1]).

The ``.ynet`` file (docs/TRAINING.md) is a msgpack map::

    {"format": "yutenv-net", "version": 1, "tier": T, "obs_layout": L, "rules": R,
     "trunk": [{"in": I, "out": O, "w": bytes, "b": bytes}, ...],
     "policy": {"in": H, "out": 180, "w": ..., "b": ...},
     "value": {"in": H, "out": 1, "w": ..., "b": ...}}

where ``L`` is the observation layout (``yutenv.core.OBS_LAYOUT``; a file without it is layout
1, and a file of another layout is refused), ``w`` is float32 little-endian, O*I values row-major (``w[o*I+i]``, torch's
``Linear.weight`` layout) and ``b`` O float32 little-endian values.

:func:`export_net` writes version 1. Version 2 (docs/FORMATS.md) adds an activation per network
and separate policy and value trunks after the shared one, as Stable-Baselines3 builds its
policies: :func:`yutenv.nets.export` writes it, :class:`FileNet` is any file's network in torch
(:func:`load_file_net`), and :func:`load_net` reads a version 2 file when it is a
:class:`PolicyValueNet` (ReLU, one trunk of at least one layer) and refuses the others, naming why.

torch is imported by this module: install the ``az`` extra (``pip install 'yutenv[az]'``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Final, Sequence

import msgpack
import numpy as np
import numpy.typing as npt

from .._extras import import_extra

import_extra("torch", "az", "yutenv.az")
import torch  # noqa: E402
from torch import nn  # noqa: E402

from .._files import atomic_write, read_regular
from .._layout import OBS_LAYOUT, check_layout
from .._protocol import NET_LEAKY_SLOPE, NET_MAX_LAYERS, NET_MAX_WIDTH, NET_VERSION, RECOMMENDED_NET, SHIPPED_NET, SHIPPED_NETS
from .._protocol import NUM_ACTIONS as NUM_ACTIONS
from .._protocol import TIER_SIZES as TIER_SIZES  # generated from the encoder
from ..errors import YutEnvError

__all__ = [
    "FORMAT",
    "VERSION",
    "NET_VERSION",
    "ACTIVATIONS",
    "FileNet",
    "MAX_ABS_WEIGHT",
    "MAX_NET_BYTES",
    "TIER_SIZES",
    "OBS_LAYOUT",
    "NetFileError",
    "PolicyValueNet",
    "NetEvaluator",
    "NetPolicy",
    "export_net",
    "load_net",
    "load_file_net",
    "file_net_bytes",
    "load_start_net",
    "start_net_bytes",
    "shipped_net_bytes",
    "SHIPPED",
    "SHIPPED_NAMES",
    "RECOMMENDED",
    "masked_logits",
    "infer",
]

#: The ``format`` a network file names in its header (``nnet.Format`` of the Go reader).
FORMAT = "yutenv-net"
#: The version :func:`export_net` writes (a :class:`PolicyValueNet` needs no more); the readers
#: know every version from 1 to :data:`NET_VERSION`.
VERSION = 1
#: The largest weight or bias (in magnitude) a network may hold: a trained network's weights are
#: orders of magnitude smaller, and anything larger is damage (a flipped exponent bit) or a
#: diverged run. :func:`export_net`, :func:`load_net` and checkpoints refuse it.
MAX_ABS_WEIGHT = 1e4
#: The largest ``.ynet`` file :func:`load_net` reads by default (64 MiB, about 16M weights).
MAX_NET_BYTES = 64 << 20
#: The logit given to illegal actions before a softmax (finite, so 0 * log p stays 0).
MASKED = -1e9


class NetFileError(YutEnvError, ValueError):
    """A ``.ynet`` file is missing, damaged, not a ``yutenv-net`` network, or (:func:`load_net`)
    not a :class:`PolicyValueNet`."""


#: The activations of a version 2 file (``yutenv._protocol.NET_ACTIVATIONS``, from the Go reader)
#: as torch modules: the class, and the parameters it must have (torch's defaults).
ACTIVATIONS: Final[dict[str, tuple[type, dict[str, float]]]] = {
    "relu": (nn.ReLU, {}),
    "tanh": (nn.Tanh, {}),
    "leaky_relu": (nn.LeakyReLU, {"negative_slope": NET_LEAKY_SLOPE}),
    "elu": (nn.ELU, {"alpha": 1.0}),
    "silu": (nn.SiLU, {}),
}


class PolicyValueNet(nn.Module):  # type: ignore[misc]  # torch is not followed (pyproject: mypy overrides)
    """An MLP with a policy head (180 logits) and a value head (one raw value).

    Args:
        obs_size: the observation's length (the tier's size).
        hidden: the width of every trunk layer (at least one).
        tier: the observation tier the net reads (recorded in the ``.ynet`` file).
        rules: the rules string it is trained on (informative).
    """

    def __init__(
        self, obs_size: int, hidden: Sequence[int] = (256, 256), *, tier: str = "compact", rules: str = "standard"
    ) -> None:
        super().__init__()
        if obs_size < 1 or not hidden or any(h < 1 for h in hidden):
            raise ValueError(f"obs_size {obs_size} and hidden {list(hidden)} must be positive, with at least one hidden layer")
        if tier in TIER_SIZES and TIER_SIZES[tier] != obs_size:
            raise ValueError(f"tier {tier!r} has observations of {TIER_SIZES[tier]} values, not {obs_size}")
        self.obs_size = int(obs_size)
        self.hidden = tuple(int(h) for h in hidden)
        self.tier = tier
        self.rules = rules
        layers: list[nn.Module] = []
        width = self.obs_size
        for h in self.hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, NUM_ACTIONS)
        self.value = nn.Linear(width, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The policy logits [B, 180] and the raw value [B] (``tanh`` it for the outcome)."""
        h = self.trunk(obs)
        return self.policy(h), self.value(h).squeeze(-1)

    def spec(self) -> dict[str, Any]:
        """What rebuilds the architecture: ``PolicyValueNet(**model.spec())``."""
        return {"obs_size": self.obs_size, "hidden": list(self.hidden), "tier": self.tier, "rules": self.rules}


def activation_module(name: str) -> nn.Module:
    """The torch module of the activation ``name`` (one of :data:`ACTIVATIONS`)."""
    cls, params = ACTIVATIONS[name]
    module: nn.Module = cls(**params)
    return module


def _mlp(sizes: Sequence[int], activation: str) -> nn.Sequential:
    """Linear layers from sizes[0] through sizes[1:], each followed by the activation."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), activation_module(activation)]
    return nn.Sequential(*layers)


class FileNet(nn.Module):  # type: ignore[misc]  # torch is not followed (pyproject: mypy overrides)
    """The network of any ``yutenv-net`` file, computed by torch as the Go reader computes it.

    A shared ``trunk``, then the ``policy_trunk`` and the ``policy`` head (180 logits) and, apart,
    the ``value_trunk`` and the ``value`` head (one raw value); every trunk layer is followed by
    the activation. A version 1 file, and a :class:`PolicyValueNet`, is one trunk with ReLU; a
    Stable-Baselines3 policy has no shared layers and separate policy and value trunks.

    Args:
        obs_size: the observation's length (the tier's size).
        trunk, policy_trunk, value_trunk: the widths of each trunk's layers (each may be empty).
        activation: one of :data:`ACTIVATIONS`.
        tier: the observation tier the net reads.
        rules: the rules string it was trained on (informative).
    """

    def __init__(
        self,
        obs_size: int,
        trunk: Sequence[int] = (),
        policy_trunk: Sequence[int] = (),
        value_trunk: Sequence[int] = (),
        *,
        activation: str = "relu",
        tier: str = "compact",
        rules: str = "",
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r}, want one of {', '.join(ACTIVATIONS)}")
        widths = [obs_size, *trunk, *policy_trunk, *value_trunk]
        if any(w < 1 or w > NET_MAX_WIDTH for w in widths) or any(
            len(t) > NET_MAX_LAYERS for t in (trunk, policy_trunk, value_trunk)
        ):
            raise ValueError(f"sizes {widths} must be 1..{NET_MAX_WIDTH}, with at most {NET_MAX_LAYERS} layers a trunk")
        if tier in TIER_SIZES and TIER_SIZES[tier] != obs_size:
            raise ValueError(f"tier {tier!r} has observations of {TIER_SIZES[tier]} values, not {obs_size}")
        self.obs_size, self.tier, self.rules, self.activation = int(obs_size), tier, rules, activation
        self.trunk = _mlp([obs_size, *trunk], activation)
        h = ([obs_size, *trunk])[-1]
        self.policy_trunk = _mlp([h, *policy_trunk], activation)
        self.value_trunk = _mlp([h, *value_trunk], activation)
        self.policy = nn.Linear(([h, *policy_trunk])[-1], NUM_ACTIONS)
        self.value = nn.Linear(([h, *value_trunk])[-1], 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The policy logits [B, 180] and the raw value [B] (``tanh`` it for the outcome)."""
        h = self.trunk(obs)
        return self.policy(self.policy_trunk(h)), self.value(self.value_trunk(h)).squeeze(-1)

    def linears(self) -> tuple[list[nn.Linear], list[nn.Linear], list[nn.Linear]]:
        """The linear layers of the trunk, the policy trunk and the value trunk."""
        return tuple([m for m in t if isinstance(m, nn.Linear)] for t in (self.trunk, self.policy_trunk, self.value_trunk))  # type: ignore[return-value]

    def spec(self) -> dict[str, Any]:
        """What rebuilds the architecture: ``FileNet(**model.spec())``."""
        t, p, v = ([lin.out_features for lin in ls] for ls in self.linears())
        return {"obs_size": self.obs_size, "trunk": t, "policy_trunk": p, "value_trunk": v,
                "activation": self.activation, "tier": self.tier, "rules": self.rules}  # fmt: skip

    def version(self) -> int:
        """The oldest file version that holds the network: 1 for ReLU and one trunk of at least
        one layer (a :class:`PolicyValueNet`), else 2."""
        t, p, v = self.linears()
        return 1 if self.activation == "relu" and t and not p and not v else 2


def weight_problem(tensors: Any) -> str | None:
    """What is wrong with a network's parameters (``(name, tensor)`` pairs), or None: a NaN or
    infinity, or a magnitude over :data:`MAX_ABS_WEIGHT`."""
    for name, t in tensors:
        if not torch.is_tensor(t) or not t.is_floating_point():
            continue
        if not bool(torch.isfinite(t).all()):
            return f"parameter {name} has a NaN or an infinity"
        if t.numel() and float(t.abs().max()) > MAX_ABS_WEIGHT:
            return f"parameter {name} holds {float(t.abs().max()):.3g}, over the sane magnitude {MAX_ABS_WEIGHT:g}"
    return None


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every action ``mask`` forbids set to a large negative number."""
    return logits.masked_fill(~mask, MASKED)


def _layer(lin: nn.Linear) -> dict[str, Any]:
    w = lin.weight.detach().to(torch.float32).cpu().numpy()
    b = lin.bias.detach().to(torch.float32).cpu().numpy()
    return {
        "in": int(w.shape[1]),
        "out": int(w.shape[0]),
        "w": np.ascontiguousarray(w, dtype="<f4").tobytes(),
        "b": np.ascontiguousarray(b, dtype="<f4").tobytes(),
    }


def _linears(model: PolicyValueNet) -> list[nn.Linear]:
    return [m for m in model.trunk if isinstance(m, nn.Linear)]


def net_bytes(model: PolicyValueNet) -> bytes:
    """The ``yutenv-net`` v1 encoding of ``model`` (what :func:`export_net` writes)."""
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "tier": model.tier,
        "obs_layout": OBS_LAYOUT,
        "rules": model.rules,
        "trunk": [_layer(lin) for lin in _linears(model)],
        "policy": _layer(model.policy),
        "value": _layer(model.value),
    }
    return _pack(doc, model)


def file_net_bytes(model: FileNet) -> bytes:
    """The ``yutenv-net`` encoding of ``model`` in the oldest version that holds it
    (:meth:`FileNet.version`): what :func:`yutenv.nets.export` writes."""
    trunk, policy_trunk, value_trunk = model.linears()
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": model.version(),
        "tier": model.tier,
        "obs_layout": OBS_LAYOUT,
        "rules": model.rules,
    }
    if doc["version"] > 1:
        doc["activation"] = model.activation
    doc["trunk"] = [_layer(lin) for lin in trunk]
    if policy_trunk:
        doc["policy_trunk"] = [_layer(lin) for lin in policy_trunk]
    if value_trunk:
        doc["value_trunk"] = [_layer(lin) for lin in value_trunk]
    doc["policy"], doc["value"] = _layer(model.policy), _layer(model.value)
    return _pack(doc, model)


def _pack(doc: dict[str, Any], model: nn.Module) -> bytes:
    bad = weight_problem(model.state_dict().items())
    if bad:
        raise ValueError(f"{bad}: refusing to export a broken network")
    out: bytes = msgpack.packb(doc, use_bin_type=True)
    return out


def export_net(model: PolicyValueNet, path: str | os.PathLike[str]) -> Path:
    """Write ``model`` as a ``yutenv-net`` v1 file at ``path`` (atomically) and return the path.

    An existing ``path`` that is not a regular file (a device, a FIFO, a folder) raises
    :class:`~yutenv.errors.FileRefusedError` and is left as it was."""
    p = Path(path)
    data = net_bytes(model)
    p.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(p, lambda f: f.write(data))


def _read_layer(
    where: str, d: Any, want_in: int | None, want_out: int | None
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    if not isinstance(d, dict):
        raise NetFileError(f"{where}: not a map")
    n_in, n_out = d.get("in"), d.get("out")
    if (
        not isinstance(n_in, int)
        or not isinstance(n_out, int)
        or not (0 < n_in <= NET_MAX_WIDTH)
        or not (0 < n_out <= NET_MAX_WIDTH)
    ):
        raise NetFileError(f"{where}: sizes in={n_in!r} out={n_out!r} are not positive integers up to {NET_MAX_WIDTH}")
    if want_in is not None and n_in != want_in:
        raise NetFileError(f"{where}: in={n_in}, but the layer before it has {want_in} outputs")
    if want_out is not None and n_out != want_out:
        raise NetFileError(f"{where}: out={n_out}, want {want_out}")
    w, b = d.get("w"), d.get("b")
    if not isinstance(w, bytes) or len(w) != 4 * n_in * n_out:
        raise NetFileError(f"{where}: w is {len(w) if isinstance(w, bytes) else type(w).__name__} bytes, want {4 * n_in * n_out}")
    if not isinstance(b, bytes) or len(b) != 4 * n_out:
        raise NetFileError(f"{where}: b is {len(b) if isinstance(b, bytes) else type(b).__name__} bytes, want {4 * n_out}")
    wa = np.frombuffer(w, dtype="<f4").reshape(n_out, n_in)
    ba = np.frombuffer(b, dtype="<f4")
    if not (np.isfinite(wa).all() and np.isfinite(ba).all()):
        raise NetFileError(f"{where}: a weight is NaN or infinite")
    big = max(float(np.abs(wa).max(initial=0)), float(np.abs(ba).max(initial=0)))
    if big > MAX_ABS_WEIGHT:
        raise NetFileError(f"{where}: a weight is {big:.3g}, over the sane magnitude {MAX_ABS_WEIGHT:g} (damaged or diverged)")
    return wa.astype(np.float32), ba.astype(np.float32)


def load_net(path: str | os.PathLike[str], *, max_bytes: int = MAX_NET_BYTES) -> PolicyValueNet:
    """Read a ``yutenv-net`` file (checked like the Go reader does) into a :class:`PolicyValueNet`.

    Only a regular file of at most ``max_bytes`` bytes is read (a FIFO, a device or a
    directory is refused without reading it); a weight must be finite and at most
    :data:`MAX_ABS_WEIGHT` in magnitude. A version 2 file is read when it is a
    :class:`PolicyValueNet` (ReLU, one trunk of at least one layer); any other (another
    activation, a policy or value trunk, no hidden layer) is refused naming why:
    :func:`load_file_net` reads every file. Raises :class:`NetFileError`.
    """
    return _parse_net(_read_net_file(Path(path), max_bytes), str(path))


def load_file_net(path: str | os.PathLike[str], *, max_bytes: int = MAX_NET_BYTES) -> FileNet:
    """Read any ``yutenv-net`` file (version 1 to :data:`NET_VERSION`, checked as :func:`load_net`
    does) into a :class:`FileNet`, in evaluation mode. Raises :class:`NetFileError`."""
    return _parse_file_net(_read_net_file(Path(path), max_bytes), str(path))


def _read_net_file(p: Path, max_bytes: int) -> bytes:
    try:
        return read_regular(p, max_bytes)
    except OSError as e:
        hint = " (load_net(..., max_bytes=N) reads larger files)" if "limit" in str(e.strerror) else ""
        raise NetFileError(f"{p}: {e.strerror or e}{hint}") from None


#: The name of the first network shipped inside the ``yutenv`` binary, as in the agent spec
#: ``az``: it plays the same network forever. :func:`load_start_net` (``--init az``) reads it
#: from the binary.
SHIPPED: Final = SHIPPED_NET
#: The names of every network shipped inside the binary (:data:`SHIPPED` first), each an agent
#: spec and a name ``--init`` takes (``yutenv net`` lists them).
SHIPPED_NAMES: Final[tuple[str, ...]] = SHIPPED_NETS
#: The shipped network the docs recommend, one of :data:`SHIPPED_NAMES`.
RECOMMENDED: Final = RECOMMENDED_NET


def shipped_net_bytes(name: str = SHIPPED) -> bytes:
    """The ``yutenv-net`` file of the shipped network ``name`` (one of :data:`SHIPPED_NAMES`), as
    the binary ships it (``yutenv net NAME --out -``): the bytes agent ``name`` plays, checked
    there against their declared SHA-256. The network lives once, inside the binary; the package
    holds no copy. Raises :class:`NetFileError`, also for a name the binary does not ship."""
    from ..connection.server import binary_path  # the package's binary (or $YUTENV_BINARY)

    if name not in SHIPPED_NAMES:
        raise NetFileError(f"no shipped network {name!r}: the binary ships {', '.join(SHIPPED_NAMES)}")
    try:
        r = subprocess.run([str(binary_path()), "net", name, "--out", "-"], capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        raise NetFileError(f"the shipped network {name!r}: could not run the yutenv binary: {e}") from None
    if r.returncode != 0:
        raise NetFileError(f"the shipped network {name!r}: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def start_net_bytes(init: str) -> bytes:
    """The bytes of the network ``--init`` names: a name of :data:`SHIPPED_NAMES` (``"az"``, ...)
    for that network shipped inside the binary, anything else a ``yutenv-net`` file's path
    (``./az`` for a file named ``az``). Raises :class:`NetFileError`."""
    return shipped_net_bytes(init) if init in SHIPPED_NAMES else _read_net_file(Path(init), MAX_NET_BYTES)


def load_start_net(init: str) -> PolicyValueNet:
    """The network ``--init`` names (see :func:`start_net_bytes`), checked as :func:`load_net` does."""
    return _parse_net(start_net_bytes(init), f"the shipped network {init!r}" if init in SHIPPED_NAMES else init)


def _parse_net(raw: bytes, p: str) -> PolicyValueNet:
    fn = _parse_file_net(raw, p)
    trunk, policy_trunk, value_trunk = fn.linears()
    why = [what for what, bad in (
        (f"activation {fn.activation!r}", fn.activation != "relu"),
        ("a policy trunk", bool(policy_trunk)),
        ("a value trunk", bool(value_trunk)),
        ("no shared hidden layer", not trunk),
    ) if bad]  # fmt: skip
    if why:
        raise NetFileError(
            f"{p}: a network with {', '.join(why)} is not a PolicyValueNet (ReLU and one shared trunk); yutenv.nets.load reads it"
        )
    model = PolicyValueNet(fn.obs_size, [lin.out_features for lin in trunk], tier=fn.tier, rules=fn.rules)
    with torch.no_grad():
        pairs = [*zip(_linears(model), trunk), (model.policy, fn.policy), (model.value, fn.value)]
        for dst, src in pairs:
            dst.weight.copy_(src.weight)
            dst.bias.copy_(src.bias)
    model.eval()
    return model


def _read_layers(
    where: str, layers: Any, width: int, least: int
) -> list[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]:
    """The layers of one trunk (a list of least..NET_MAX_LAYERS), the first taking width values."""
    if not isinstance(layers, list) or not least <= len(layers) <= NET_MAX_LAYERS:
        raise NetFileError(f"{where} must be a list of {least} to {NET_MAX_LAYERS} layers")
    out = []
    for i, d in enumerate(layers):
        w, b = _read_layer(f"{where}[{i}]", d, width, None)
        out.append((w, b))
        width = w.shape[0]
    return out


def _parse_file_net(raw: bytes, p: str) -> FileNet:
    try:
        doc = msgpack.unpackb(raw, raw=False)
    except Exception as e:  # msgpack raises several unrelated classes for damaged input
        raise NetFileError(f"{p}: not a msgpack document: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise NetFileError(f"{p}: format {doc.get('format') if isinstance(doc, dict) else None!r}, want {FORMAT!r}")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= NET_VERSION:
        raise NetFileError(f"{p}: version {version!r}; this reader knows versions 1 to {NET_VERSION}")
    why = check_layout(doc.get("obs_layout"))
    if why is not None:
        raise NetFileError(f"{p}: {why}; export the net again from a model trained on this layout")
    tier, rules = doc.get("tier"), doc.get("rules", "")
    if tier not in TIER_SIZES:
        raise NetFileError(f"{p}: tier {tier!r}, want one of {sorted(TIER_SIZES)}")
    if not isinstance(rules, str):
        raise NetFileError(f"{p}: rules is not a string")
    activation = doc.get("activation") if version > 1 else "relu"  # version 1: ReLU, one trunk; version 2's keys are unknown keys
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise NetFileError(f"{p}: activation {activation!r}, want one of {', '.join(ACTIVATIONS)}")

    def layers(key: str) -> Any:  # version 2: absent or nil is no layers
        value = doc.get(key)
        return ([] if value is None else value) if version > 1 else value

    width: int = TIER_SIZES[tier]
    trunk = _read_layers(f"{p}: trunk", layers("trunk"), width, 1 if version == 1 else 0)
    h = trunk[-1][0].shape[0] if trunk else width
    branches = {
        key: _read_layers(f"{p}: {key}", layers(key) if version > 1 else [], h, 0) for key in ("policy_trunk", "value_trunk")
    }
    p_in = branches["policy_trunk"][-1][0].shape[0] if branches["policy_trunk"] else h
    v_in = branches["value_trunk"][-1][0].shape[0] if branches["value_trunk"] else h
    heads = [
        _read_layer(f"{p}: policy", doc.get("policy"), p_in, NUM_ACTIONS),
        _read_layer(f"{p}: value", doc.get("value"), v_in, 1),
    ]
    sizes = [[w.shape[0] for w, _ in ls] for ls in (trunk, branches["policy_trunk"], branches["value_trunk"])]
    model = FileNet(width, *sizes, activation=activation, tier=tier, rules=rules)
    t, pt, vt = model.linears()
    with torch.no_grad():
        for lin, (w, b) in zip(
            [*t, *pt, *vt, model.policy, model.value], [*trunk, *branches["policy_trunk"], *branches["value_trunk"], *heads]
        ):
            lin.weight.copy_(torch.from_numpy(w))
            lin.bias.copy_(torch.from_numpy(b))
    model.eval()
    return model


def _tensor(a: npt.ArrayLike, dtype: type) -> torch.Tensor:
    """A tensor sharing ``a``'s memory when it is a writable C-contiguous array of ``dtype``,
    else of a copy (torch warns about read-only arrays, such as the server's zero-copy ones)."""
    arr: np.ndarray[Any, Any] = np.asarray(a, dtype=dtype)
    if not (arr.flags.writeable and arr.flags.c_contiguous):
        arr = np.array(arr, dtype=dtype, order="C", copy=True)
    return torch.from_numpy(arr)


#: Batches are padded to a multiple of this many rows (see :func:`infer`).
PAD_ROWS = 16


def infer(model: PolicyValueNet | FileNet, obs: npt.ArrayLike, mask: npt.ArrayLike) -> tuple[torch.Tensor, torch.Tensor]:
    """The masked logits [B, 180] and raw values [B] of a batch, in evaluation mode, without
    gradients (the model's mode is restored).

    The batch is padded with zero rows to a multiple of :data:`PAD_ROWS`: torch's CPU kernels
    for very small batches (1 to a few rows) sum in another order, so without the padding a
    row's outputs would differ in the last bit depending on the batch it came in, and
    self-play, whose batches depend on timing, would not be reproducible bit for bit.
    """
    x = _tensor(obs, np.float32)
    n = x.shape[0]
    pad = -n % PAD_ROWS
    if pad:
        x = torch.cat([x, x.new_zeros((pad, x.shape[1]))])
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            logits, v = model(x)
            return masked_logits(logits[:n], _tensor(mask, np.bool_)), v[:n]
    finally:
        model.train(was_training)


class NetEvaluator:
    """The ``evaluate(obs, mask) -> (priors, values)`` callable self-play asks for.

    ``priors`` are the masked softmax of the policy logits (float32 [B, 180]) and
    ``values`` the ``tanh`` of the value head (float32 [B], the mover's outcome).
    """

    def __init__(self, model: PolicyValueNet | FileNet) -> None:
        self.model = model
        self.calls = 0
        self.rows = 0

    def __call__(
        self, obs: npt.NDArray[np.float32], mask: npt.NDArray[Any]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        self.calls += 1
        self.rows += len(obs)
        logits, v = infer(self.model, obs, mask)
        return torch.softmax(logits, dim=-1).numpy(), torch.tanh(v).numpy()


class NetPolicy:
    """The network as a policy without search: the legal action with the largest logit.

    A batched callable ``policy(obs, mask) -> actions``, as :func:`yutenv.evaluate`
    takes it: ``yutenv.evaluate(NetPolicy(model), opponent="greedy", tier=model.tier)``.
    """

    def __init__(self, model: PolicyValueNet | FileNet, name: str = "net") -> None:
        self.model = model
        self.__name__ = name

    def __call__(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
        logits, _ = infer(self.model, obs, mask)
        out: npt.NDArray[np.int64] = logits.argmax(dim=-1).numpy().astype(np.int64)
        return out
