"""yutenv.nets.export: Stable-Baselines3 and torch policies as network files the server plays.

The parity tests take real sb3-contrib MaskablePPO models and torch MLPs (untrained, randomly
initialised), export them, and compare torch's greedy masked action with the Go agent
``net:PATH``'s, played server-side (``Game.analyse``), on 10,000 positions of real games of
every observation tier.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import msgpack
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize  # noqa: E402
from torch import nn  # noqa: E402

import yutenv  # noqa: E402
from yutenv import nets  # noqa: E402
from yutenv._protocol import NET_ACTIVATIONS, NET_VERSION, TIER_SIZES, TIERS  # noqa: E402
from yutenv.az import golden, net  # noqa: E402

GOLDEN = Path(__file__).resolve().parents[2] / "nnet" / "testdata"
POSITIONS = 10_000
#: Below this gap between the two largest legal logits, float32 rounding (torch's and Go's sums
#: run in other orders) may pick the other action.
NEAR_TIE = 1e-4


# --- real positions ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def positions() -> tuple[Any, np.ndarray]:
    """POSITIONS decisions of at least two legal actions from random games (a fixed seed), with
    their legal masks."""
    game = yutenv.Game("standard")
    rng = np.random.default_rng(0)
    states = game.initial_states(128, seed=0).copy()
    found, n, seed = [], 0, 128
    while n < POSITIONS:
        phase = game.phases(states)
        throw, move, over = phase == 0, phase == 1, phase == 2
        if throw.any():
            states[throw] = game.apply_throws(states[throw], -1)
        if move.any():
            mask = game.legal_masks(states[move]).astype(bool)
            choice = mask.sum(axis=1) >= 2
            found.append(states[move][choice])
            n += int(choice.sum())
            states[move] = game.apply_actions(states[move], (rng.random(mask.shape) * mask).argmax(axis=1))
        if over.any():
            states[over] = game.initial_states(int(over.sum()), seed=seed)
            seed += int(over.sum())
    rows = np.concatenate(found)[:POSITIONS]
    return rows, game.legal_masks(rows).astype(bool)


@pytest.fixture(scope="module")
def observations(positions: tuple[Any, np.ndarray]) -> dict[str, np.ndarray]:
    game = yutenv.Game("standard")
    return {tier: game.observations(positions[0], tier) for tier in TIERS}


def go_actions(path: Path, rows: Any) -> np.ndarray:
    """The actions of the Go agent net:PATH at the positions, played server-side."""
    return yutenv.Game("standard").analyse(rows, f"net:{path}").actions.astype(np.int64)


def masked_greedy(logits: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The legal action of the largest logit (the first of equals), and the gap to the second."""
    masked = np.where(mask, logits.astype(np.float64), -np.inf)
    top2 = -np.sort(-masked, axis=1)[:, :2]
    return masked.argmax(axis=1), top2[:, 0] - top2[:, 1]


def assert_same_actions(torch_actions: np.ndarray, gap: np.ndarray, go: np.ndarray) -> None:
    clear = gap > NEAR_TIE
    differ = torch_actions != go
    assert not (differ & clear).any(), (
        f"{int((differ & clear).sum())} positions of a clear choice differ, e.g. row {int(np.flatnonzero(differ & clear)[0])}"
    )
    # a near-tie may go either way; with SB3's initialisation (action_net's gain 0.01, logits of
    # about 0.01) several hundred positions are near-ties, of which one or two differ
    assert int(differ.sum()) <= 5, f"{int(differ.sum())} near-ties of {int((~clear).sum())} differ"


# --- the models -------------------------------------------------------------------------------


class SharedExtractor(nn.Module):
    """An mlp_extractor with shared layers before the policy and value layers (Stable-Baselines3's
    layout before 1.8, rebuilt by a custom policy's _build_mlp_extractor)."""

    def __init__(self, features: int, activation: type[nn.Module], shared: list[int], pi: list[int], vf: list[int]) -> None:
        super().__init__()

        def mlp(sizes: list[int]) -> nn.Sequential:
            layers: list[nn.Module] = []
            for a, b in zip(sizes, sizes[1:]):
                layers += [nn.Linear(a, b), activation()]
            return nn.Sequential(*layers)

        self.shared_net = mlp([features, *shared])
        self.policy_net = mlp([shared[-1], *pi])
        self.value_net = mlp([shared[-1], *vf])
        self.latent_dim_pi, self.latent_dim_vf = pi[-1], vf[-1]

    def forward(self, features: Any) -> tuple[Any, Any]:
        h = self.shared_net(features)
        return self.policy_net(h), self.value_net(h)

    def forward_actor(self, features: Any) -> Any:
        return self.policy_net(self.shared_net(features))

    def forward_critic(self, features: Any) -> Any:
        return self.value_net(self.shared_net(features))


class SharedPolicy(MaskableActorCriticPolicy):  # type: ignore[misc]
    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SharedExtractor(self.features_dim, self.activation_fn, [48], [32], [24, 16])


class SkippingExtractor(SharedExtractor):
    """A custom forward that skips its shared layers: not what its layers in order compute."""

    def forward_actor(self, features: Any) -> Any:
        return self.policy_net(features[:, : self.shared_net[0].out_features])


class SkippingPolicy(MaskableActorCriticPolicy):  # type: ignore[misc]
    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SkippingExtractor(self.features_dim, self.activation_fn, [48], [32], [16])


class MLPExtractor(BaseFeaturesExtractor):  # type: ignore[misc]
    def __init__(self, space: Any) -> None:
        super().__init__(space, 32)
        self.net = nn.Sequential(nn.Linear(space.shape[0], 32), nn.ReLU())

    def forward(self, obs: Any) -> Any:
        return self.net(obs)


def ppo(tier: str, policy: Any = "MlpPolicy", **kwargs: Any) -> Any:
    env = yutenv.make(tier=tier)
    torch.manual_seed(TIERS.index(tier))
    return MaskablePPO(policy, env, n_steps=16, batch_size=16, seed=1, device="cpu", policy_kwargs=kwargs)


def sb3_tanh(tier: str) -> Any:
    """SB3's default PPO architecture, smaller: separate pi and vf MLPs with tanh."""
    return ppo(tier, net_arch={"pi": [64, 32], "vf": [64, 64]}, activation_fn=nn.Tanh)


def sb3_relu_shared(tier: str) -> Any:
    return ppo(tier, SharedPolicy, activation_fn=nn.ReLU)


def torch_mlp(tier: str) -> Any:
    torch.manual_seed(10 + TIERS.index(tier))
    return nn.Sequential(nn.Linear(TIER_SIZES[tier], 64), nn.Tanh(), nn.Linear(64, 48), nn.Tanh(), nn.Linear(48, 180))


def sb3_logits(model: Any, obs: np.ndarray) -> np.ndarray:
    """The raw action logits of an SB3 policy: action_net of the policy latent."""
    policy = model.policy
    with torch.no_grad():
        x = torch.from_numpy(obs)
        features = policy.extract_features(x, policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()


MODELS: dict[str, tuple[Callable[[str], Any], Callable[[Any, np.ndarray], np.ndarray]]] = {
    "sb3 tanh pi/vf": (sb3_tanh, sb3_logits),
    "sb3 relu shared": (sb3_relu_shared, sb3_logits),
    "torch mlp": (torch_mlp, lambda m, obs: m(torch.from_numpy(obs)).detach().numpy()),
}


@pytest.mark.parametrize("kind", list(MODELS))
@pytest.mark.parametrize("tier", TIERS)
def test_go_plays_the_exported_policy_as_torch_does(
    tier: str, kind: str, positions: tuple[Any, np.ndarray], observations: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """On every tier, the Go agent net:PATH picks torch's greedy masked action on 10,000 real
    positions, and MaskablePPO's predict(deterministic=True) picks it too."""
    build, logits_of = MODELS[kind]
    model = build(tier)
    path = nets.export(model, tmp_path / "m.ynet")
    rows, mask = positions
    obs = observations[tier]
    want, gap = masked_greedy(logits_of(model, obs), mask)
    if isinstance(model, MaskablePPO):
        sample = slice(0, 500)
        predicted, _ = model.predict(obs[sample], deterministic=True, action_masks=mask[sample])
        np.testing.assert_array_equal(predicted, want[sample])
    assert_same_actions(want, gap, go_actions(path, rows))
    assert len(set(want.tolist())) > 10  # the positions ask for many different actions


def test_every_activation_plays_the_same_in_go(
    positions: tuple[Any, np.ndarray], observations: dict[str, np.ndarray], tmp_path: Path
) -> None:
    rows, mask = positions[0][:2000], positions[1][:2000]
    obs = observations["compact"][:2000]
    for name in NET_ACTIVATIONS:
        torch.manual_seed(3)
        act = net.activation_module
        model = nn.Sequential(nn.Linear(213, 48), act(name), nn.Linear(48, 32), act(name), nn.Linear(32, 180))
        path = nets.export(model, tmp_path / f"{name}.ynet")
        with torch.no_grad():
            want, gap = masked_greedy(model(torch.from_numpy(obs)).numpy(), mask)
        assert_same_actions(want, gap, go_actions(path, rows))


# --- what the files hold ----------------------------------------------------------------------


def doc_of(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = msgpack.unpackb(path.read_bytes(), raw=False)
    return out


def test_an_sb3_policy_is_a_version_2_file(tmp_path: Path) -> None:
    model = sb3_tanh("compact")
    doc = doc_of(nets.export(model.policy, tmp_path / "p.ynet", rules="standard"))
    assert (doc["version"], doc["activation"], doc["tier"], doc["rules"]) == (2, "tanh", "compact", "standard")
    assert doc["trunk"] == [] and "policy_trunk" in doc and "value_trunk" in doc
    assert [(d["in"], d["out"]) for d in doc["policy_trunk"]] == [(213, 64), (64, 32)]
    assert [(d["in"], d["out"]) for d in doc["value_trunk"]] == [(213, 64), (64, 64)]
    back = nets.load(tmp_path / "p.ynet")
    obs = torch.rand(8, 213)
    with torch.no_grad():
        logits, value = back(obs)
        np.testing.assert_allclose(value.numpy(), model.policy.predict_values(obs).squeeze(-1).numpy(), atol=1e-6)
        np.testing.assert_allclose(logits.numpy(), sb3_logits(model, obs.numpy()), atol=1e-6)
    with pytest.raises(
        net.NetFileError,
        match="activation 'tanh', a policy trunk, a value trunk, no shared hidden layer.*is not a PolicyValueNet",
    ):
        net.load_net(tmp_path / "p.ynet")


def test_a_relu_mlp_and_a_policy_value_net_stay_version_1(tmp_path: Path) -> None:
    """What version 1 holds is written as version 1: a PolicyValueNet's file is export_net's, byte
    for byte; a ReLU nn.Sequential gets a value head of zeros."""
    torch.manual_seed(2)
    pvn = net.PolicyValueNet(TIER_SIZES["planes"], (16, 8), tier="planes", rules="players=3")
    assert nets.export(pvn, tmp_path / "a.ynet").read_bytes() == net.export_net(pvn, tmp_path / "b.ynet").read_bytes()
    seq = nn.Sequential(nn.Flatten(), nn.Linear(213, 16), nn.ReLU(), nn.Linear(16, 180))
    p = nets.export(seq, tmp_path / "seq.ynet")
    doc = doc_of(p)
    assert (doc["version"], doc["rules"]) == (1, "") and "activation" not in doc
    assert not any(np.frombuffer(doc["value"]["w"] + doc["value"]["b"], dtype="<f4"))
    back = net.load_net(p)
    x = torch.rand(4, 213)
    with torch.no_grad():
        np.testing.assert_array_equal(back(x)[0].numpy(), seq(x).numpy())
        assert not back(x)[1].any()


def test_write_golden_split_is_consistent(tmp_path: Path) -> None:
    """tanh-split: the version 2 golden both readers reproduce (TestGolden; test_az's golden test
    reads every *.expected.json)."""
    ynet, expected = golden.write_golden_split(tmp_path)
    doc, exp = doc_of(ynet), json.loads(expected.read_text())
    assert (doc["version"], doc["activation"]) == (NET_VERSION, "tanh")
    assert [len(doc[k]) for k in ("trunk", "policy_trunk", "value_trunk")] == [1, 1, 2]
    with torch.no_grad():
        logits, value = nets.load(ynet)(torch.tensor(exp["obs"]))
    np.testing.assert_allclose(logits.numpy(), exp["logits"], atol=1e-6)
    np.testing.assert_allclose(value.numpy(), exp["value_raw"], atol=1e-6)
    assert (GOLDEN / "tanh-split.ynet").is_file() and (GOLDEN / "tanh-split.expected.json").is_file()


# --- refusals ---------------------------------------------------------------------------------


def vec_normalized() -> Any:
    venv = VecNormalize(DummyVecEnv([lambda: yutenv.make(tier="compact")]), norm_obs=True)
    return MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=16, device="cpu")


REFUSED: list[tuple[str, Callable[[], Any], dict[str, Any], str]] = [
    (
        "gelu",
        lambda: nn.Sequential(nn.Linear(213, 8), nn.GELU(), nn.Linear(8, 180)),
        {},
        r"Sequential\[1\] is GELU: a network file holds nn.Linear layers and one of the activations ReLU, Tanh",
    ),
    (
        "leaky slope",
        lambda: nn.Sequential(nn.Linear(213, 8), nn.LeakyReLU(0.2), nn.Linear(8, 180)),
        {},
        r"LeakyReLU\(negative_slope=0.2\): the format holds LeakyReLU\(negative_slope=0.01\) only",
    ),
    (
        "mixed",
        lambda: nn.Sequential(nn.Linear(213, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 180)),
        {},
        r"mixes the activations relu \(Sequential\[1\]\) and tanh \(Sequential\[3\]\)",
    ),
    (
        "two linears",
        lambda: nn.Sequential(nn.Linear(213, 8), nn.Linear(8, 180)),
        {},
        r"Sequential\[1\] is an nn.Linear right after Sequential\[0\]",
    ),
    (
        "dropout",
        lambda: nn.Sequential(nn.Linear(213, 8), nn.ReLU(), nn.Dropout(), nn.Linear(8, 180)),
        {},
        r"Sequential\[2\] is Dropout: a network file holds nn.Linear layers",
    ),
    (
        "outputs",
        lambda: nn.Sequential(nn.Linear(213, 8), nn.ReLU(), nn.Linear(8, 9)),
        {},
        r"Sequential\[2\] gives 9 outputs, want the 180 action logits",
    ),
    (
        "last activation",
        lambda: nn.Sequential(nn.Linear(213, 180), nn.ReLU()),
        {},
        r"Sequential\[1\] is an activation after the last nn.Linear",
    ),
    (
        "no tier",
        lambda: nn.Sequential(nn.Linear(200, 180)),
        {},
        r"reads observations of 200 values, no observation tier's size \(compact 213, tactical 2042, planes 598\)",
    ),
    (
        "tier mismatch",
        lambda: nn.Sequential(nn.Linear(213, 180)),
        {"tier": "tactical"},
        r"reads observations of 213 values, but tier 'tactical' has 2042",
    ),
    (
        "unknown tier",
        lambda: nn.Sequential(nn.Linear(213, 180)),
        {"tier": "huge"},
        r"tier 'huge', want one of compact, tactical, planes",
    ),
    (
        "chain",
        lambda: nn.Sequential(nn.Linear(213, 8), nn.ReLU(), nn.Linear(9, 180)),
        {},
        r"a layer of 9 inputs follows one of 8 outputs",
    ),
    ("conv", lambda: nn.Conv1d(1, 1, 3), {}, r"takes a MaskablePPO .* got torch.nn.modules.conv.Conv1d"),
    (
        "extractor",
        lambda: ppo("compact", features_extractor_class=MLPExtractor),
        {},
        r"MaskableActorCriticPolicy.features_extractor is MLPExtractor: only the FlattenExtractor",
    ),
    ("sb3 activation", lambda: ppo("compact", activation_fn=nn.GELU), {}, r"mlp_extractor.policy_net\[1\] is GELU"),
    ("vec normalize", vec_normalized, {}, r"normalizes observations \(VecNormalize\(norm_obs=True\)\)"),
    (
        "custom forward",
        lambda: ppo("compact", SkippingPolicy),
        {},
        r"the exported network's logits differ from the model's by .*\(a custom forward\?\)",
    ),
]


@pytest.mark.parametrize(("make", "kwargs", "why"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_unsupported_models_are_refused_in_one_line(
    make: Callable[[], Any], kwargs: dict[str, Any], why: str, tmp_path: Path
) -> None:
    with pytest.raises(nets.UnsupportedModelError, match=why) as info:
        nets.export(make(), tmp_path / "x.ynet", **kwargs)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "x.ynet").exists()


def test_nan_weights_are_refused(tmp_path: Path) -> None:
    seq = nn.Sequential(nn.Linear(213, 180))
    with torch.no_grad():
        seq[0].weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN or an infinity"):
        nets.export(seq, tmp_path / "x.ynet")


def v2_doc() -> dict[str, Any]:
    out: dict[str, Any] = msgpack.unpackb((GOLDEN / "tanh-split.ynet").read_bytes(), raw=False)
    return out


def nan_bytes(b: bytes) -> bytes:
    return struct.pack("<f", float("nan")) + b[4:]


DAMAGED: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("version 3", lambda d: d.update(version=3), "version 3; this reader knows versions 1 to 2"),
    (
        "unknown activation",
        lambda d: d.update(activation="gelu"),
        "activation 'gelu', want one of relu, tanh, leaky_relu, elu, silu",
    ),
    ("no activation", lambda d: d.pop("activation"), "activation None"),
    (
        "policy trunk chain",
        lambda d: d["policy_trunk"][0].update({"in": 9}),
        r"policy_trunk\[0\]: in=9, but the layer before it has 16 outputs",
    ),
    (
        "value trunk chain",
        lambda d: d["value_trunk"][1].update({"in": 9}),
        r"value_trunk\[1\]: in=9, but the layer before it has 10 outputs",
    ),
    ("value head", lambda d: d.pop("value_trunk"), "value: in=6, but the layer before it has 16 outputs"),
    (
        "value trunk nan",
        lambda d: d["value_trunk"][0].update(w=nan_bytes(d["value_trunk"][0]["w"])),
        r"value_trunk\[0\]: a weight is NaN",
    ),
    ("too deep", lambda d: d.update(policy_trunk=[{}] * 65), "policy_trunk must be a list of 0 to 64 layers"),
    ("not a list", lambda d: d.update(value_trunk="x"), "value_trunk must be a list"),
]


@pytest.mark.parametrize(("damage", "why"), [d[1:] for d in DAMAGED], ids=[d[0] for d in DAMAGED])
def test_damaged_version_2_files_are_refused_by_both_readers(
    damage: Callable[[dict[str, Any]], None], why: str, tmp_path: Path
) -> None:
    doc = v2_doc()
    damage(doc)
    p = tmp_path / "bad.ynet"
    p.write_bytes(msgpack.packb(doc, use_bin_type=True))
    with pytest.raises(net.NetFileError, match=why) as info:
        nets.load(p)
    assert "\n" not in str(info.value)
    with pytest.raises(yutenv.NetError, match="yutenv-net"):  # the server's reader: bad_net
        yutenv.make(opponent=f"net:{p}")


def test_export_without_torch_names_the_extra() -> None:
    code = (
        "import sys\n"
        "class Missing:\n"
        "    @staticmethod\n"
        "    def find_spec(name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'torch':\n"
        "            raise ModuleNotFoundError(name, name=name)\n"
        "sys.meta_path.insert(0, Missing)\n"
        "import yutenv\n"
        "try:\n"
        "    yutenv.nets.export(object(), 'x.ynet')\n"
        "except yutenv.MissingExtraError as e:\n"
        "    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "yutenv.nets needs the 'az' extra" in r.stdout and "pip install 'yutenv[az]'" in r.stdout
