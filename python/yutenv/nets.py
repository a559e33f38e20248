"""Network files from Stable-Baselines3 and torch policies: play them server-side as ``net:PATH``.

Example (not run by the tests: it needs a trained run, a cluster or real data)::

    from sb3_contrib import MaskablePPO
    import yutenv
    from yutenv.sb3 import YutSB3VecEnv
    model = MaskablePPO("MlpPolicy", YutSB3VecEnv(64, opponent="greedy", tier="compact")).learn(1_000_000)
    yutenv.nets.export(model, "ppo.ynet")           # the policy and value networks, as a file
    env = yutenv.make(opponent="net:ppo.ynet")      # a trained opponent, played server-side
    yutenv.Game().analyse(states, "net:ppo.ynet")   # its actions at given positions

and from the shell: ``yutenv eval --a net:ppo.ynet --b greedy``.

:func:`export` writes a ``yutenv-net`` file (docs/FORMATS.md) that the binary's agent
``net:PATH`` plays: the legal action with the largest logit, or a search guided by the network
with ``net:PATH,sims=N``. It takes

* an sb3-contrib ``MaskablePPO`` model (or its ``.policy``), or a Stable-Baselines3 ``PPO`` or
  ``A2C`` one, with an ``MlpPolicy`` of any ``net_arch`` and any supported ``activation_fn``
  (the policy network ``mlp_extractor.policy_net`` + ``action_net`` and the value network
  ``mlp_extractor.value_net`` + ``value_net``; an extractor that also has a ``shared_net``, as
  Stable-Baselines3 before 1.8 built them, gives the shared layers). Its features extractor must
  be the ``FlattenExtractor`` of a flat ``Box`` observation, its action space ``Discrete(180)``;
  a model whose env normalizes observations (``VecNormalize(norm_obs=True)``) is refused: the
  file holds no normalization (a policy given alone cannot be checked for it);
* an ``nn.Sequential`` MLP: ``nn.Linear`` layers, each but the last followed by the same
  supported activation (``nn.Flatten()`` and ``nn.Identity`` are skipped), the last giving the
  180 action logits. It has no value head: the file's value head is zeros (value 0 for every
  position: ``net:PATH`` plays the same, and a search with ``sims`` relies on its priors alone);
* a :class:`yutenv.az.PolicyValueNet`, or a :class:`yutenv.az.net.FileNet`.

The activations are those of :data:`yutenv.az.net.ACTIVATIONS` (``nn.ReLU``, ``nn.Tanh``,
``nn.LeakyReLU()`` with torch's default slope, ``nn.ELU()`` with alpha 1, ``nn.SiLU``), one per
network. Anything else (another activation or layer, a CNN, a custom forward that computes
something besides its layers in order) is refused with :class:`UnsupportedModelError`
naming what and where. Before writing, :func:`export` checks that the file's network computes
the model's own outputs (SB3's ``get_distribution`` and ``predict_values``; the module's
forward) on random observations.

The value head's output is the model's raw value; the Go agent reports ``tanh`` of it (an SB3
critic trained on the outcome in [-1, 1] stays in that range).

torch is imported on first use: this module needs the ``az`` extra (``pip install
'yutenv[az]'``) only to export or load, and Stable-Baselines3 only for its models.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._extras import import_extra
from ._files import atomic_write
from ._protocol import NUM_ACTIONS, TIER_SIZES
from .errors import YutEnvError

if TYPE_CHECKING:
    from .az.net import FileNet

__all__ = ["UnsupportedModelError", "export", "load"]

#: Random observations the exported network is checked on against the model.
_CHECK_ROWS = 64


class UnsupportedModelError(YutEnvError, ValueError):
    """:func:`export` was given a model a network file cannot hold; the message names what and where."""


def export(model: Any, path: str | os.PathLike[str], *, tier: str | None = None, rules: str | None = None) -> Path:
    """Write ``model``'s network as a ``yutenv-net`` file at ``path`` (atomically); return the path.

    Args:
        model: a ``MaskablePPO`` (or SB3 ``PPO``/``A2C``) model or its policy, an ``nn.Sequential``
            MLP ending in 180 logits, a :class:`~yutenv.az.PolicyValueNet` or a
            :class:`~yutenv.az.net.FileNet` (see the module's documentation).
        path: the file to write (its folder is created).
        tier: the observation tier the model reads; by default the tier whose observations have
            the model's input size (a PolicyValueNet's or FileNet's own tier).
        rules: the rules string recorded in the file (informative); by default a
            PolicyValueNet's or FileNet's own, else empty.

    The file is version 1 when it can be (ReLU and one trunk: a PolicyValueNet, a ReLU
    ``nn.Sequential``), else version 2.

    Raises:
        UnsupportedModelError: a model, layer or activation the format cannot hold, an input size
            that is no tier's (or not ``tier``'s), or a network that does not compute the model's
            outputs.
        ValueError: a weight that is NaN, infinite or above the sane magnitude.
        FileRefusedError: ``path`` exists and is not a regular file (a device, a FIFO, a folder:
            it is never replaced), or is a link to one; a link to a regular file is written
            through.
        MissingExtraError: torch is not installed.
    """
    net = _net_module()
    model = _unwrap(model)
    data = net.file_net_bytes(_convert(net, model, tier, rules))
    _check(net, model, data)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(p, lambda f: f.write(data))


def load(path: str | os.PathLike[str]) -> FileNet:
    """Read any ``yutenv-net`` file into a torch :class:`~yutenv.az.net.FileNet`, which computes
    what the Go agent computes: ``logits, value_raw = load(path)(obs)``. Raises
    :class:`~yutenv.az.net.NetFileError`."""
    out: FileNet = _net_module().load_file_net(path)
    return out


def _net_module() -> Any:
    import_extra("torch", "az", "yutenv.nets")
    from .az import net

    return net


def _sb3(module: str, name: str) -> Any:
    """A Stable-Baselines3 class, if its package is already imported (a model of it exists)."""
    if module.split(".")[0] not in sys.modules:
        return None
    import importlib

    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def _is_sb3_policy(model: Any) -> bool:
    classes = [
        _sb3("stable_baselines3.common.policies", "ActorCriticPolicy"),
        _sb3("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"),
    ]
    return any(c is not None and isinstance(model, c) for c in classes)


def _unwrap(model: Any) -> Any:
    """An SB3 model's policy (refusing one whose env normalizes observations); anything else as is."""
    algorithm = _sb3("stable_baselines3.common.base_class", "BaseAlgorithm")
    if algorithm is None or not isinstance(model, algorithm):
        return model
    vn = model.get_vec_normalize_env()
    if vn is not None and getattr(vn, "norm_obs", False):
        raise UnsupportedModelError(
            f"{type(model).__name__}'s env normalizes observations (VecNormalize(norm_obs=True)): a network file holds "
            "no normalization, and the server's agent reads raw observations; train with norm_obs=False"
        )
    return model.policy


def _convert(net: Any, model: Any, tier: str | None, rules: str | None) -> FileNet:
    """model's network as a FileNet (weights copied), refusing what the format cannot hold."""
    from torch import nn

    if isinstance(model, net.FileNet):
        t = _tier(model.obs_size, tier or model.tier, "the FileNet")
        trunk, pi, vf = model.linears()
        return _build(net, t, model.rules if rules is None else rules, model.activation, trunk, pi, vf, model.policy, model.value)
    if isinstance(model, net.PolicyValueNet):
        t = _tier(model.obs_size, tier or model.tier, "the PolicyValueNet")
        trunk = [m for m in model.trunk if isinstance(m, nn.Linear)]
        return _build(net, t, model.rules if rules is None else rules, "relu", trunk, [], [], model.policy, model.value)
    if _is_sb3_policy(model):
        return _from_sb3(net, model, tier, rules or "")
    if isinstance(model, nn.Sequential):
        return _from_sequential(net, model, tier, rules or "")
    raise UnsupportedModelError(
        "yutenv.nets.export takes a MaskablePPO (or PPO, A2C) model or its policy, an nn.Sequential MLP, a PolicyValueNet "
        f"or a FileNet; got {type(model).__module__}.{type(model).__qualname__}"
    )


def _tier(size: int, tier: str | None, what: str) -> str:
    """The tier of a model reading size values: tier (which must have that size), or the one that has."""
    if tier is not None:
        if tier not in TIER_SIZES:
            raise UnsupportedModelError(f"tier {tier!r}, want one of {', '.join(TIER_SIZES)}")
        if TIER_SIZES[tier] != size:
            raise UnsupportedModelError(f"{what} reads observations of {size} values, but tier {tier!r} has {TIER_SIZES[tier]}")
        return tier
    found = [t for t, n in TIER_SIZES.items() if n == size]
    if len(found) != 1:
        sizes = ", ".join(f"{t} {n}" for t, n in TIER_SIZES.items())
        why = "no observation tier's size" if not found else f"the size of the tiers {found}: pass tier="
        raise UnsupportedModelError(f"{what} reads observations of {size} values, {why} ({sizes})")
    return found[0]


def _activation(module: Any, where: str) -> str | None:
    """The file's name of the activation module, or None for an nn.Linear; refuses anything else."""
    from torch import nn

    if type(module) is nn.Linear:
        return None
    net = _net_module()
    for name, (cls, params) in net.ACTIVATIONS.items():
        if type(module) is cls:
            if any(getattr(module, k) != v for k, v in params.items()):
                want = ", ".join(f"{k}={v}" for k, v in params.items())
                raise UnsupportedModelError(f"{where} is {module}: the format holds {cls.__name__}({want}) only")
            return str(name)
    known = ", ".join(cls.__name__ for cls, _ in net.ACTIVATIONS.values())
    raise UnsupportedModelError(
        f"{where} is {type(module).__name__}: a network file holds nn.Linear layers and one of the activations {known}"
    )


def _layers(mods: list[tuple[str, Any]], acts: dict[str, str]) -> list[tuple[str, Any]]:
    """The nn.Linear layers of mods (where, module), which must alternate Linear, activation,
    Linear, ...; records each activation's name in acts by its place."""
    out = []
    for k, (where, m) in enumerate(mods):
        name = _activation(m, where)
        if k % 2 == 0 and name is not None:
            after = f" after {mods[k - 1][0]}" if k else ""
            raise UnsupportedModelError(
                f"{where} is {type(m).__name__}{after}, want an nn.Linear (one activation after each layer)"
            )
        if k % 2 == 1 and name is None:
            raise UnsupportedModelError(f"{where} is an nn.Linear right after {mods[k - 1][0]}: want an activation between them")
        if name is None:
            out.append((where, m))
        else:
            acts[where] = name
    return out


def _one_activation(acts: dict[str, str]) -> str:
    """The one activation of a network (relu, unused, without hidden layers)."""
    first: dict[str, str] = {}
    for where, name in acts.items():
        first.setdefault(name, where)
    if len(first) > 1:
        both = " and ".join(f"{n} ({w})" for n, w in first.items())
        raise UnsupportedModelError(f"the network mixes the activations {both}: a network file has one activation")
    return next(iter(first), "relu")


def _from_sequential(net: Any, seq: Any, tier: str | None, rules: str) -> FileNet:
    import torch
    from torch import nn

    def skipped(m: Any) -> bool:
        return type(m) is nn.Identity or (type(m) is nn.Flatten and (m.start_dim, m.end_dim) == (1, -1))

    mods = [(f"Sequential[{i}]", m) for i, m in enumerate(seq) if not skipped(m)]
    acts: dict[str, str] = {}
    linears = _layers(mods, acts)
    if not linears:
        raise UnsupportedModelError("the nn.Sequential has no nn.Linear layer")
    if len(mods) % 2 == 0:
        raise UnsupportedModelError(
            f"{mods[-1][0]} is an activation after the last nn.Linear, whose outputs must be the {NUM_ACTIONS} logits"
        )
    where, last = linears[-1]
    if last.out_features != NUM_ACTIONS:
        raise UnsupportedModelError(f"{where} gives {last.out_features} outputs, want the {NUM_ACTIONS} action logits")
    value = nn.Linear(last.in_features, 1)  # no value head: zeros
    with torch.no_grad():
        value.weight.zero_()
        value.bias.zero_()
    t = _tier(linears[0][1].in_features, tier, "the nn.Sequential")
    return _build(net, t, rules, _one_activation(acts), [m for _, m in linears[:-1]], [], [], last, value)


def _from_sb3(net: Any, policy: Any, tier: str | None, rules: str) -> FileNet:
    import gymnasium
    from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor
    from torch import nn

    what = type(policy).__name__
    obs_space, act_space = policy.observation_space, policy.action_space
    if not isinstance(obs_space, gymnasium.spaces.Box) or len(obs_space.shape) != 1:
        raise UnsupportedModelError(f"{what}.observation_space is {obs_space}: a network file reads one flat Box observation")
    if not isinstance(act_space, gymnasium.spaces.Discrete) or int(act_space.n) != NUM_ACTIONS:
        raise UnsupportedModelError(f"{what}.action_space is {act_space}, want Discrete({NUM_ACTIONS})")
    for name in ("features_extractor", "pi_features_extractor", "vf_features_extractor"):
        fe = getattr(policy, name, None)
        if fe is not None and type(fe) is not FlattenExtractor:
            raise UnsupportedModelError(
                f"{what}.{name} is {type(fe).__name__}: only the FlattenExtractor of an MlpPolicy can be exported"
            )
    ex = policy.mlp_extractor
    nets = ["policy_net", "value_net"]
    if type(ex) is not MlpExtractor:
        nets.insert(0, "shared_net")
        if not all(type(getattr(ex, n, None)) is nn.Sequential for n in nets):
            raise UnsupportedModelError(
                f"{what}.mlp_extractor is {type(ex).__name__}: want SB3's MlpExtractor, or an extractor of nn.Sequential "
                "shared_net, policy_net and value_net"
            )
    acts: dict[str, str] = {}
    layers = {}
    for n in nets:
        mods = [(f"{what}.mlp_extractor.{n}[{i}]", m) for i, m in enumerate(getattr(ex, n))]
        layers[n] = [m for _, m in _layers(mods, acts)]
        if len(mods) % 2:
            raise UnsupportedModelError(f"{mods[-1][0]} is an nn.Linear without an activation after it")
    for name, out in (("action_net", NUM_ACTIONS), ("value_net", 1)):
        head = getattr(policy, name)
        if type(head) is not nn.Linear or head.out_features != out:
            raise UnsupportedModelError(f"{what}.{name} is {head}, want an nn.Linear of {out} outputs")
    t = _tier(int(obs_space.shape[0]), tier, f"the {what}")
    shared = layers.get("shared_net", [])
    return _build(
        net,
        t,
        rules,
        _one_activation(acts),
        shared,
        layers["policy_net"],
        layers["value_net"],
        policy.action_net,
        policy.value_net,
    )


def _build(
    net: Any, tier: str, rules: str, activation: str, trunk: list[Any], pi: list[Any], vf: list[Any], policy: Any, value: Any
) -> FileNet:
    """A FileNet of these torch linear layers (weights copied, as float32 on the CPU; a layer
    without bias gets zeros)."""
    import torch

    out: FileNet = net.FileNet(TIER_SIZES[tier], [m.out_features for m in trunk], [m.out_features for m in pi], [m.out_features for m in vf],
                               activation=activation, tier=tier, rules=rules)  # fmt: skip
    t, p, v = out.linears()
    with torch.no_grad():
        for dst, src in zip([*t, *p, *v, out.policy, out.value], [*trunk, *pi, *vf, policy, value]):
            if tuple(dst.weight.shape) != tuple(src.weight.shape):
                raise UnsupportedModelError(f"a layer of {src.in_features} inputs follows one of {dst.in_features} outputs")
            dst.weight.copy_(src.weight.detach().to(torch.float32).cpu())
            dst.bias.copy_(src.bias.detach().to(torch.float32).cpu() if src.bias is not None else torch.zeros_like(dst.bias))
    out.eval()
    return out


def _check(net: Any, model: Any, data: bytes) -> None:
    """Refuse the file unless its network computes model's outputs on random observations."""
    import numpy as np
    import torch

    file_net = net._parse_file_net(data, "the exported network")
    x = torch.from_numpy(np.random.default_rng(0).uniform(-1, 1, size=(_CHECK_ROWS, file_net.obs_size)).astype(np.float32))
    training = model.training
    model.train(False)
    try:
        with torch.no_grad():
            logits, value = file_net(x)
            if _is_sb3_policy(model):  # the distribution's logits (normalized) and the critic
                obs = x.to(model.device)
                want_logits, want_value = model.get_distribution(obs).distribution.logits, model.predict_values(obs).squeeze(-1)
            elif isinstance(model, (net.PolicyValueNet, net.FileNet)):
                want_logits, want_value = model(x.to(next(model.parameters()).device))
            else:  # an nn.Sequential: no value head, the file's is zero
                want_logits, want_value = model(x.to(next(model.parameters()).device)), torch.zeros_like(value)
    finally:
        model.train(training)
    pairs = (
        ("logits", torch.log_softmax(logits, -1), torch.log_softmax(want_logits.cpu().float(), -1)),
        ("value", value, want_value.cpu().float()),
    )
    for what, got, want in pairs:
        err = float((got - want).abs().max())
        if not err <= 1e-4 * (1 + float(want.abs().max())):
            raise UnsupportedModelError(
                f"the exported network's {what} differ from the model's by {err:.3g} on random observations: the model "
                "computes something besides its layers in order (a custom forward?), which a network file cannot hold"
            )
