"""yutenv.az: the network and its .ynet file, the replay buffer, and the whole learning loop
(self-play, training, evaluation against real server agents, checkpoints, report, resume after
a real kill -9, determinism)."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest
import torch
from conftest import run_main
from yutenv.evaluate import run_eval_json

import yutenv
from yutenv.az import buffer, golden, judge, net, report, train

REPO = Path(__file__).resolve().parents[2]
# Network-guided self-play (yutenv.az.selfplay) and the Go agent net:PATH come from the az-go
# branch; until it is merged the loop runs with --selfplay mcts and the net: checks are skipped.
HAVE_SELFPLAY = importlib.util.find_spec("yutenv.az.selfplay") is not None
needs_selfplay = pytest.mark.skipif(not HAVE_SELFPLAY, reason="yutenv.az.selfplay (az-go) is not merged yet")
GOLDEN = REPO / "nnet" / "testdata"


def selfplay(out: Path, games: int, seed: int) -> Path:
    cmd = [str(yutenv.binary_path()), "selfplay", "--quiet", "--out", str(out), "--tier", "compact",
           "--games", str(games), "--agents", "mcts:6", "--seed", str(seed), "--workers", "1"]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    return out


def outputs(model: net.PolicyValueNet | net.FileNet, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with torch.no_grad():
        logits, v = model(torch.from_numpy(obs))
    return logits.numpy(), v.numpy()


# --- the network file -------------------------------------------------------------------------


def md_rows(md: str) -> list[list[str]]:
    """The cells of every row of the markdown tables in md (separator rows too)."""
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in md.splitlines() if line.lstrip().startswith("|")]


def test_export_load_round_trip(tmp_path: Path) -> None:
    torch.manual_seed(1)
    model = net.PolicyValueNet(213, (32, 16), tier="compact", rules="players=3")
    p = net.export_net(model, tmp_path / "m.ynet")
    doc = msgpack.unpackb(p.read_bytes(), raw=False)
    assert (doc["format"], doc["version"], doc["tier"], doc["rules"]) == ("yutenv-net", 1, "compact", "players=3")
    assert [(t["in"], t["out"]) for t in doc["trunk"]] == [(213, 32), (32, 16)]
    assert (doc["policy"]["in"], doc["policy"]["out"], doc["value"]["in"], doc["value"]["out"]) == (16, 180, 16, 1)
    # w is row-major [out][in]: w[o*I+i] is torch's weight[o, i]
    w0 = np.frombuffer(doc["trunk"][0]["w"], dtype="<f4")
    assert w0[3 * 213 + 7] == model.trunk[0].weight[3, 7].item()
    back = net.load_net(p)
    obs = np.random.default_rng(0).normal(size=(5, 213)).astype(np.float32)
    for a, b in zip(outputs(model, obs), outputs(back, obs)):
        np.testing.assert_array_equal(a, b)
    assert net.net_bytes(back) == p.read_bytes()  # bit for bit


@pytest.mark.parametrize("expected", sorted(p.name for p in GOLDEN.glob("*.expected.json")))
def test_golden_matches_the_committed_outputs(expected: str) -> None:
    """nnet/testdata/*.expected.json: the goldens written by this package (tiny, and the version 2
    tanh-split) and by the Go writer (go-tiny); both readers must reproduce them to 1e-5: every
    file as a FileNet, and a version 1 file as a PolicyValueNet too."""
    exp = json.loads((GOLDEN / expected).read_text())
    models: list[Any] = [net.load_file_net(GOLDEN / exp["net"])]
    if msgpack.unpackb((GOLDEN / exp["net"]).read_bytes(), raw=False)["version"] == 1:
        models.append(net.load_net(GOLDEN / exp["net"]))
    obs = np.asarray(exp["obs"], dtype=np.float32)
    mask = np.asarray(exp["mask"], dtype=bool)
    for model in models:
        logits, v = outputs(model, obs)
        np.testing.assert_allclose(logits, exp["logits"], atol=1e-5)
        np.testing.assert_allclose(v, exp["value_raw"], atol=1e-5)
        priors, values = net.NetEvaluator(model)(obs, mask)
        np.testing.assert_allclose(priors, exp["priors"], atol=1e-5)
        np.testing.assert_allclose(values, exp["value"], atol=1e-5)


def test_the_python_golden_is_there() -> None:
    assert (GOLDEN / "tiny.ynet").is_file() and (GOLDEN / "tiny.expected.json").is_file()


def test_write_golden_is_consistent(tmp_path: Path) -> None:
    ynet, expected = golden.write_golden(tmp_path)
    exp = json.loads(expected.read_text())
    logits, _ = outputs(net.load_net(ynet), np.asarray(exp["obs"], dtype=np.float32))
    np.testing.assert_allclose(logits, exp["logits"], atol=1e-6)


def _damage(doc: dict[str, Any], what: str) -> dict[str, Any]:
    if what == "format":
        doc["format"] = "other"
    elif what == "version":
        doc["version"] = 3
    elif what == "version 0":
        doc["version"] = 0
    elif what == "tier":
        doc["tier"] = "huge"
    elif what == "short w":
        doc["trunk"][0]["w"] = doc["trunk"][0]["w"][:-4]
    elif what == "nan":
        w = bytearray(doc["policy"]["w"])
        w[0:4] = struct.pack("<f", float("nan"))
        doc["policy"]["w"] = bytes(w)
    elif what == "chain":
        doc["policy"]["in"] = 7
    elif what == "no trunk":
        doc["trunk"] = []
    elif what == "policy out":
        doc["policy"]["out"] = 179
    return doc


@pytest.mark.parametrize("what", ["format", "version", "version 0", "tier", "short w", "nan", "chain", "no trunk", "policy out"])
def test_damaged_files_are_refused(tmp_path: Path, what: str) -> None:
    model = net.PolicyValueNet(213, (8,))
    doc = msgpack.unpackb(net.net_bytes(model), raw=False)
    p = tmp_path / "bad.ynet"
    p.write_bytes(msgpack.packb(_damage(doc, what), use_bin_type=True))
    with pytest.raises(net.NetFileError):
        net.load_net(p)


def test_net_of_another_observation_layout_is_refused(tmp_path: Path) -> None:
    """A .ynet records its observation layout; a file without it (layout1-tiny.ynet, kept from
    before layouts were recorded) or of another layout is refused, naming both layouts."""
    doc = msgpack.unpackb(net.net_bytes(net.PolicyValueNet(213, (8,))), raw=False)
    assert doc["obs_layout"] == net.OBS_LAYOUT == 2
    with pytest.raises(net.NetFileError, match="made for observation layout 1, this build reads layout 2"):
        net.load_net(GOLDEN / "layout1-tiny.ynet")
    doc["obs_layout"] = 5
    p = tmp_path / "future.ynet"
    p.write_bytes(msgpack.packb(doc, use_bin_type=True))
    with pytest.raises(net.NetFileError, match="made for observation layout 5, this build reads layout 2"):
        net.load_net(p)


def test_truncated_and_missing_files(tmp_path: Path) -> None:
    good = net.net_bytes(net.PolicyValueNet(213, (8,)))
    p = tmp_path / "t.ynet"
    for cut in (0, 1, len(good) // 2, len(good) - 1):
        p.write_bytes(good[:cut])
        with pytest.raises(net.NetFileError):
            net.load_net(p)
    with pytest.raises(net.NetFileError, match="nope.ynet"):
        net.load_net(tmp_path / "nope.ynet")
    assert issubclass(net.NetFileError, yutenv.YutEnvError)


def test_load_net_reads_only_regular_files_within_the_cap(tmp_path: Path) -> None:
    """A FIFO, a device, a directory or a file over the cap is refused before a byte is read
    (a FIFO used to block forever, /dev/zero to read until MemoryError)."""
    fifo = tmp_path / "pipe.ynet"
    os.mkfifo(fifo)
    code = f"from yutenv.az import net\ntry:\n    net.load_net({str(fifo)!r})\nexcept net.NetFileError as e:\n    print(e)"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)  # a hang guard
    assert p.returncode == 0 and "not a regular file" in p.stdout, p.stderr
    for path in ("/dev/zero", tmp_path):
        with pytest.raises(net.NetFileError, match="not a regular file"):
            net.load_net(path)
    big = tmp_path / "big.ynet"
    with open(big, "wb") as f:
        f.truncate(net.MAX_NET_BYTES + 1)  # sparse: no disk used
    with pytest.raises(net.NetFileError, match="over the limit.*max_bytes"):
        net.load_net(big)
    good = net.export_net(net.PolicyValueNet(net.TIER_SIZES["compact"], (8,)), tmp_path / "good.ynet")
    with pytest.raises(net.NetFileError, match="over the limit"):
        net.load_net(good, max_bytes=100)
    assert net.load_net(good, max_bytes=good.stat().st_size).hidden == (8,)


@pytest.mark.parametrize("value", [3e38, -3.1e36, 1e5])
def test_huge_finite_weights_are_refused(tmp_path: Path, value: float) -> None:
    model = net.PolicyValueNet(net.TIER_SIZES["compact"], (8,))
    doc = msgpack.unpackb(net.net_bytes(model), raw=False)
    w = bytearray(doc["trunk"][0]["w"])
    w[4:8] = struct.pack("<f", value)
    doc["trunk"][0]["w"] = bytes(w)
    p = tmp_path / "huge.ynet"
    p.write_bytes(msgpack.packb(doc, use_bin_type=True))
    with pytest.raises(net.NetFileError, match="sane magnitude"):
        net.load_net(p)
    with torch.no_grad():
        model.policy.weight[0, 0] = value
    with pytest.raises(ValueError, match="sane magnitude"):
        net.export_net(model, tmp_path / "x.ynet")


def test_export_refuses_non_finite_weights(tmp_path: Path) -> None:
    model = net.PolicyValueNet(213, (8,))
    with torch.no_grad():
        model.value.bias.fill_(float("inf"))
    with pytest.raises(ValueError, match="NaN or an infinity"):
        net.export_net(model, tmp_path / "x.ynet")
    assert not list(tmp_path.iterdir())


def test_evaluator_and_policy_respect_the_mask() -> None:
    torch.manual_seed(0)
    model = net.PolicyValueNet(213, (16,))
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(64, 213)).astype(np.float32)
    mask = rng.random((64, 180)) < 0.05
    mask[:, 179] = True
    priors, values = net.NetEvaluator(model)(obs, mask)
    assert priors.dtype == np.float32 and priors.shape == (64, 180) and values.shape == (64,)
    np.testing.assert_allclose(priors.sum(axis=1), 1, atol=1e-5)
    assert (priors[~mask] == 0).all() and (np.abs(values) <= 1).all()
    acts = net.NetPolicy(model)(obs, mask.astype(np.uint8))
    assert mask[np.arange(64), acts].all()
    np.testing.assert_array_equal(acts, np.argmax(np.where(mask, priors, -1), axis=1))


def test_net_policy_plays_real_games() -> None:
    """The torch net as a pure-Python policy (no search) through yutenv.evaluate."""
    torch.manual_seed(0)
    model = net.PolicyValueNet(213, (16,), tier="compact")
    r = yutenv.evaluate(net.NetPolicy(model, name="tiny"), opponent="random", games=6, tier="compact", num_envs=3, progress=False)
    assert r.games == 6 and r.a == "tiny" and 0 <= r.win_rate_a <= 1


# --- the replay buffer ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three_gens(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    d = tmp_path_factory.mktemp("gens")
    return [selfplay(d / f"g{i}", 2, seed=i) for i in range(3)]


def test_buffer_keeps_the_last_k_generations(three_gens: list[Path]) -> None:
    buf = buffer.ReplayBuffer(window=2)
    sizes = [buf.add(p) for p in three_gens]
    assert buf.paths == [str(p) for p in three_gens[1:]]
    assert len(buf) == sizes[1] + sizes[2]
    ds = yutenv.datasets.load(three_gens[2])
    rng = np.random.default_rng(0)
    batches = list(buf.batches(rng, batch_size=32, steps=3))
    assert len(batches) == 3
    for b in batches:
        assert b.obs.shape == (32, 213) and b.mask.dtype == np.bool_ and b.policy.shape == (32, 180)
        assert np.allclose(b.policy.sum(axis=1), 1, atol=1e-5)
        assert (b.policy[~b.mask] == 0).all()  # visit targets only on legal actions
    assert set(np.unique(ds.value)) <= {-1.0, 1.0}


def test_buffer_batches_gather_each_generation_in_place(three_gens: list[Path]) -> None:
    """Rows are numbered across generations, oldest first, and gathered from each
    generation's own arrays: a batch is exactly the concatenation's rows, and the buffer
    keeps the arrays it read (no second copy of the data)."""
    buf = buffer.ReplayBuffer(window=3)
    for p in three_gens:
        buf.add(p)
    loaded = [yutenv.datasets.load(p) for p in three_gens]
    obs = np.concatenate([d.obs for d in loaded])
    policy = np.concatenate([d.policy for d in loaded])
    value = np.concatenate([d.value for d in loaded])
    idx = np.random.default_rng(3).integers(0, len(buf), size=64)
    (b,) = buf.batches(np.random.default_rng(3), batch_size=64, steps=1)
    np.testing.assert_array_equal(b.obs, obs[idx])
    np.testing.assert_array_equal(b.policy, policy[idx])
    np.testing.assert_array_equal(b.value, value[idx])
    assert len({len(d) for d in loaded}) > 1  # generations of different sizes, so the offsets matter
    all_rows = buf._arrays()
    np.testing.assert_array_equal(all_rows[0], obs)
    single = buffer.ReplayBuffer(window=1)
    single.add(three_gens[0])
    assert single._arrays()[0] is single._gens[0].obs  # one generation: its own arrays, not a copy


def test_buffer_value_mix_and_errors(three_gens: list[Path]) -> None:
    ds = yutenv.datasets.load(three_gens[0])
    buf = buffer.ReplayBuffer(window=1, value_mix=0.5)
    buf.add(three_gens[0])
    searched = ds.mask.astype(bool).sum(axis=1) > 1
    np.testing.assert_allclose(buf._arrays()[3], np.where(searched, 0.5 * ds.value + 0.5 * ds.search_value, ds.value), atol=1e-6)
    with pytest.raises(ValueError):
        buffer.ReplayBuffer(window=0)
    with pytest.raises(ValueError, match="empty"):
        next(buffer.ReplayBuffer().batches(np.random.default_rng(0), 8, 1))
    with pytest.raises(yutenv.datasets.DatasetError):
        buffer.ReplayBuffer().add(three_gens[0] / "nothing")


# --- the whole loop ---------------------------------------------------------------------------

TINY = ["--games", "4", "--sims", "8", "--hidden", "16", "--batch", "32", "--steps", "150",
        "--eval", "greedy", "--eval-games", "4", "--eval-envs", "2", "--seed", "5", "--workers", "1",
        "--games-in-flight", "4", "--quiet"]  # fmt: skip
TINY += ["--eval-sims", "4"] if HAVE_SELFPLAY else ["--selfplay", "mcts"]


def train_cmd(out: Path, generations: int) -> list[str]:
    return [sys.executable, "-m", "yutenv.az.train", "--out", str(out), "--generations", str(generations), *TINY]


def weights(path: Path) -> dict[str, torch.Tensor]:
    ck = torch.load(path, map_location="cpu", weights_only=True)
    sd: dict[str, torch.Tensor] = ck["model"]
    return sd


def shard_bytes(gen: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted((gen / "selfplay").glob("shard-*.npz"))]


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CI-sized uninterrupted run: 2 generations."""
    out = tmp_path_factory.mktemp("az") / "run"
    p = subprocess.run(train_cmd(out, 2), capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    assert any(r[0] == "gen" for r in md_rows(p.stdout)), p.stdout
    return out


def is_png(path: Path) -> bool:
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    pos, chunks = 8, []
    while pos < len(data):  # every chunk's CRC, up to IEND
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n : pos + 12 + n])
        if zlib.crc32(kind + body) != crc:
            return False
        chunks.append(kind)
        pos += 12 + n
    return chunks[0] == b"IHDR" and chunks[-1] == b"IEND" and b"IDAT" in chunks


def test_the_loop_connects(full_run: Path) -> None:
    cfg = json.loads((full_run / "config.json").read_text())
    assert cfg["generations"] == 2 and cfg["seed"] == 5
    for g in (0, 1, 2):
        d = train.gen_dir(full_run, g)
        summary = json.loads((d / "gen.json").read_text())
        assert summary["generation"] == g
        assert "greedy" in summary["eval"] and summary["eval"]["greedy"]["games"] == 4
        if HAVE_SELFPLAY:
            assert summary["eval_search"]["greedy"]["games"] == 4  # net:PATH,sims=4 in the Go binary
        e = summary["eval"]["greedy"]
        assert e["low"] <= e["win_rate"] <= e["high"]
        model, ck = train.load_checkpoint(d / "model.pt")
        assert ck["generation"] == g and "optimizer" in ck
        back = net.load_net(d / "net.ynet")  # the exported file holds the checkpoint's weights
        obs = np.random.default_rng(g).normal(size=(3, 213)).astype(np.float32)
        np.testing.assert_array_equal(outputs(model, obs)[0], outputs(back, obs)[0])
        if g:
            ds = yutenv.datasets.load(d / "selfplay")
            assert ds.manifest["games"] == 4 and len(ds) == summary["selfplay"]["rows"] > 0
            if HAVE_SELFPLAY:  # the network valued the leaves
                assert summary["selfplay"]["summary"]["leaves"] == summary["selfplay"]["evaluations"] > 0
            assert summary["train"]["steps"] == 150 and np.isfinite(summary["train"]["policy_loss"])
    assert json.loads((full_run / "gen-0002" / "gen.json").read_text())["train"]["buffer"] == ["gen-0001", "gen-0002"]
    assert not torch.equal(
        weights(full_run / "gen-0000/model.pt")["policy.weight"], weights(full_run / "gen-0002/model.pt")["policy.weight"]
    )
    assert is_png(full_run / "report.png")
    md = (full_run / "report.md").read_text()
    assert "vs greedy" in md and md.count("\n| ") == 4  # header + gens 0..2
    assert ("search vs greedy" in md) == HAVE_SELFPLAY


def test_report_png_is_valid_and_reads_back(full_run: Path, tmp_path: Path) -> None:
    import matplotlib.image

    img = matplotlib.image.imread(full_run / "report.png")
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    damaged = tmp_path / "x.png"
    data = bytearray((full_run / "report.png").read_bytes())
    data[40] ^= 0xFF
    damaged.write_bytes(bytes(data))
    assert not is_png(damaged)
    assert report.main([str(full_run)]) == 0


def test_resume_after_kill_9_mid_generation(full_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen(train_cmd(out, 2), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while not (out / "gen-0002" / "selfplay").exists():  # generation 1 complete, generation 2's self-play started
            assert proc.poll() is None, "the run ended before generation 2 started"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGKILL)  # the whole process group: the loop and its servers
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "gen-0002" / "gen.json").exists(), "killed too late: generation 2 had finished"
    gen1 = {p.name: p.read_bytes() for p in (out / "gen-0001").iterdir() if p.is_file()}
    p = subprocess.run(train_cmd(out, 2), capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    # generation 1 was kept as it was (not redone), generation 2 redone in full
    assert {q.name: q.read_bytes() for q in (out / "gen-0001").iterdir() if q.is_file()} == gen1
    assert (out / "gen-0002" / "gen.json").exists()
    # and the resumed run ends exactly where the uninterrupted one did
    assert shard_bytes(out / "gen-0002") == shard_bytes(full_run / "gen-0002")
    for k, v in weights(full_run / "gen-0002/model.pt").items():
        assert torch.equal(v, weights(out / "gen-0002/model.pt")[k]), k
    # rerunning a finished run does nothing; asking for more generations extends it
    again = subprocess.run(train_cmd(out, 2), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and (out / "gen-0002" / "gen.json").exists() and not (out / "gen-0003").exists()


def test_same_seed_same_first_generation(full_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    p = subprocess.run(train_cmd(out, 1), capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    assert shard_bytes(out / "gen-0001") == shard_bytes(full_run / "gen-0001")
    a, b = weights(out / "gen-0001/model.pt"), weights(full_run / "gen-0001/model.pt")
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_other_settings_are_refused_on_resume(full_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="other settings"):
        train.run(train.config_from_args(["--out", str(full_run), "--generations", "2", *TINY, "--lr", "0.5"]))


def test_init_starts_from_another_runs_network(full_run: Path, tmp_path: Path) -> None:
    """--init: generation 0 is the file's network, recorded with its SHA-256; the run trains on from it."""
    start = full_run / "gen-0002" / "net.ynet"
    out = tmp_path / "run"
    res = train.run(train.config_from_args(["--out", str(out), "--generations", "1", *TINY, "--init", str(start)]))
    assert [g["generation"] for g in res.generations] == [0, 1]
    assert res.generations[0]["init"] == {"path": str(start.resolve()), "sha256": hashlib.sha256(start.read_bytes()).hexdigest()}
    for k, v in weights(full_run / "gen-0002/model.pt").items():  # generation 0 is the start network itself
        assert torch.equal(v, weights(out / "gen-0000/model.pt")[k]), k
    assert (out / "gen-0000" / "net.ynet").read_bytes() == start.read_bytes()
    assert not torch.equal(
        weights(out / "gen-0000/model.pt")["policy.weight"], weights(out / "gen-0001/model.pt")["policy.weight"]
    )
    with pytest.raises(ValueError, match="other settings"):  # the start network is part of the run
        train.run(
            train.config_from_args(
                ["--out", str(out), "--generations", "1", *TINY, "--init", str(full_run / "gen-0001" / "net.ynet")]
            )
        )


def test_init_az_starts_from_the_shipped_network(tmp_path: Path) -> None:
    """--init az: generation 0 is the network shipped inside the binary, recorded as 'az' with its SHA-256."""
    meta = json.loads((REPO / "nnet" / "shipped" / "az.json").read_text())
    out = tmp_path / "run"
    args = ["--out", str(out), "--generations", "1", *TINY, "--hidden", ",".join(map(str, meta["hidden"])), "--init", "az"]
    res = train.run(train.config_from_args(args))
    assert res.generations[0]["init"] == {"path": "az", "sha256": meta["sha256"]}
    assert (out / "gen-0000" / "net.ynet").read_bytes() == net.shipped_net_bytes()


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        (["--hidden", "32"], r"hidden \[16\], the run's \[32\]"),
        (["--tier", "planes"], r"tier 'compact', the run's 'planes'"),
        (["--rules", "players=3"], r"rules 'standard', the run's 'players=3'"),
    ],
)
def test_init_refuses_a_network_that_does_not_fit(full_run: Path, tmp_path: Path, extra: list[str], why: str) -> None:
    args = [
        "--out",
        str(tmp_path / "run"),
        "--generations",
        "1",
        *TINY,
        *extra,
        "--init",
        str(full_run / "gen-0001" / "net.ynet"),
    ]
    p = run_main("yutenv.az.train", *args)
    assert p.returncode == 1
    assert re.search(why, p.stderr) and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "run").exists(), "a refused start leaves no run behind"
    damaged = tmp_path / "damaged.ynet"
    damaged.write_bytes((full_run / "gen-0001" / "net.ynet").read_bytes()[:100])
    p = run_main("yutenv.az.train", *args[:-1], str(damaged))
    assert p.returncode == 1 and "damaged.ynet" in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_help_documents_the_options() -> None:
    p = run_main("yutenv.az.train", "--help")
    assert p.returncode == 0
    for opt in ("--out", "--generations", "--games", "--sims", "--window", "--eval", "--selfplay", "--seed", "--redo-damaged"):
        assert opt in p.stdout


def test_import_yutenv_az_needs_no_torch() -> None:
    code = "import sys, yutenv, yutenv.az; assert 'torch' not in sys.modules and 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_bench_evaluator(capsys: pytest.CaptureFixture[str]) -> None:
    from yutenv.az import bench_net as bench

    assert bench.main(["--hidden", "16", "--batch", "8", "--seconds", "0.2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["evaluator"]["batch"] == 8 and out["evaluator"]["rows_per_second"] > 0


def test_read_only_zero_copy_arrays_are_taken_without_warnings() -> None:
    import warnings

    model = net.PolicyValueNet(213, (8,))
    obs = np.frombuffer(np.ones((3, 213), np.float32).tobytes(), np.float32).reshape(3, 213)
    mask = np.frombuffer(np.ones((3, 180), np.bool_).tobytes(), np.bool_).reshape(3, 180)
    assert not obs.flags.writeable
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        priors, values = net.NetEvaluator(model)(obs, mask)
        acts = net.NetPolicy(model)(obs, mask)
    assert priors.shape == (3, 180) and values.shape == (3,) and acts.shape == (3,)


def test_a_rows_outputs_do_not_depend_on_its_batch() -> None:
    """Self-play batches depend on timing: a row must give the same bits in any batch."""
    torch.manual_seed(0)
    model = net.PolicyValueNet(213, (64, 64))
    rng = np.random.default_rng(1)
    obs = rng.uniform(-1, 1, size=(256, 213)).astype(np.float32)
    mask = np.ones((256, 180), dtype=bool)
    ev = net.NetEvaluator(model)
    priors, values = ev(obs, mask)
    for n in (1, 2, 3, 5, 17, 100, 255):
        idx = rng.permutation(256)[:n]
        p, v = ev(obs[idx], mask[idx])
        np.testing.assert_array_equal(p, priors[idx], err_msg=f"batch of {n}")
        np.testing.assert_array_equal(v, values[idx], err_msg=f"batch of {n}")


def test_mcts_warm_start(tmp_path: Path) -> None:
    """--selfplay mcts: the baseline agents play, the network only learns."""
    args = TINY[:-2] if HAVE_SELFPLAY else TINY  # without --eval-sims
    res = train.run(
        train.config_from_args(["--out", str(tmp_path / "run"), "--generations", "1", *args, "--selfplay", "mcts", "--eval", ""])
    )
    g1 = res.generations[-1]
    assert g1["generation"] == 1 and g1["selfplay"]["command"][:3] == ["selfplay", "--agents", "mcts:8"]
    assert yutenv.datasets.load(tmp_path / "run" / "gen-0001" / "selfplay").manifest["agents"] == ["mcts:8", "mcts:8"]


@needs_selfplay
def test_a_checkpoint_plays_in_go(full_run: Path) -> None:
    """A checkpoint's net.ynet as a Go agent: as the evaluated policy and as the opponent."""
    path = full_run / "gen-0002" / "net.ynet"
    r = yutenv.evaluate(f"net:{path}", opponent="greedy", games=4, progress=False)
    assert r.games == 4
    model = net.load_net(path)
    r = yutenv.evaluate(net.NetPolicy(model), opponent=f"net:{path},sims=4", games=4, tier="compact", num_envs=2, progress=False)
    assert r.games == 4


@needs_selfplay
def test_bench_through_selfplay(capsys: pytest.CaptureFixture[str]) -> None:
    from yutenv.az import bench_net as bench

    assert bench.main(["--hidden", "16", "--batch", "4", "--seconds", "0.1", "--selfplay", "--games", "4", "--sims", "4"]) == 0
    sp = json.loads(capsys.readouterr().out)["selfplay"]
    assert sp["games"] == 4 and sp["leaves"] > 0 and sp["leaves_per_second"] > 0


def test_ladder_judges_generations_and_the_final_network(full_run: Path, tmp_path: Path) -> None:
    # Every complete generation against every other (a real `yutenv eval` round robin of the
    # networks' files), then the last one with search against mcts at the same sims and alone
    # against a baseline.
    assert judge.pick_generations(full_run, every=0) == [0, 1, 2]
    assert judge.pick_generations(full_run, every=2) == [0, 2]
    assert judge.pick_generations(full_run, gens=[1, 2]) == [1, 2]
    with pytest.raises(ValueError, match=r"\[7\]"):
        judge.pick_generations(full_run, gens=[1, 7])
    assert judge.main([str(full_run), "--every", "0", "--games", "4", "--search-sims", "4",
                        "--baselines", "greedy", "--against", "random;greedy", "--quiet"]) == 0  # fmt: skip
    md = (full_run / "ladder.md").read_text()
    rows = md_rows(md)
    # every generation against the fixed agents: a row each, the JSON and the plot
    assert ["gen", "vs `random`", "vs `greedy`"] in rows, md
    assert [r[0] for r in rows if len(r) == 3 and r[0] in ("0", "1", "2")] == ["0", "1", "2"], md
    assert "![win rate by generation](ladder.png)" in md
    assert is_png(full_run / "ladder.png")
    for row in (
        ["gen 1", "gen 0"],
        ["gen 2", "gen 1"],
        ["gen 2 with search, sims=4", "`mcts:4`"],
        ["gen 2 alone (no search)", "`greedy`"],
    ):
        assert any(r[:2] == row for r in rows), md
    rep = json.loads((full_run / "ladder.json").read_text())
    assert rep["generations"] == [0, 1, 2]
    # The generations and random, on the published scale's fit (random = 0).
    assert len(rep["ladder"]["pairs"]) == 6 and all(m["games"] == 4 for m in rep["ladder"]["pairs"])
    assert {e["agent"] for e in rep["ladder"]["ratings"]} == {"random", *(judge.net_spec(full_run, g) for g in (0, 1, 2))}
    assert rep["ladder"]["anchor"] == "random"
    assert next(e for e in rep["ladder"]["ratings"] if e["agent"] == "random")["elo"] == 0
    assert any(r[1] == "random" and r[2] == "+0" for r in rows), md
    assert [f["opponent"] for f in rep["final"]] == ["mcts:4", "greedy"]
    for b in ("random", "greedy"):
        assert [m["generation"] for m in rep["against"][b]] == [0, 1, 2]
        assert all(m["b"] == b and m["games"] == 4 for m in rep["against"][b])
        assert [m["a"] for m in rep["against"][b]] == [judge.net_spec(full_run, g) for g in (0, 1, 2)]
    assert rep["final"][0]["a"] == judge.net_spec(full_run, 2, 4)
    for f in rep["final"]:
        assert f["wins_a"] + f["wins_b"] <= f["games"] == 4
        assert f["win_rate_a_low"] <= f["win_rate_a"] <= f["win_rate_a_high"]
    # a run with no complete generation, and a bad agent, are clear errors
    assert judge.main([str(tmp_path), "--quiet"]) == 2
    with pytest.raises(yutenv.errors.InvalidArgumentError, match="nope"):
        run_eval_json(["--a", "nope", "--b", "greedy", "--games", "2"])


def test_ladder_against_fixed_agents_without_the_round_robin(full_run: Path) -> None:
    # A run trained with --eval= measured after the fact: the chosen generations against one
    # agent, and no round robin of the generations.
    assert judge.main([str(full_run), "--gens", "1,2", "--games", "2", "--against", "random", "--baselines", "",
                        "--no-round-robin", "--quiet"]) == 0  # fmt: skip
    rep = json.loads((full_run / "ladder.json").read_text())
    assert "ladder" not in rep and "final" not in rep
    assert [m["generation"] for m in rep["against"]["random"]] == [1, 2]
    md = (full_run / "ladder.md").read_text()
    assert "Generation against generation" not in md and "vs `random`" in md
    assert rep["plot"] == "ladder.png" and is_png(full_run / "ladder.png") and "(ladder.png)" in md
    # judged again without --against: no plot, and the old one is not left to pass for the new judgement
    assert judge.main([str(full_run), "--gens", "1,2", "--games", "2", "--baselines", "", "--quiet"]) == 0
    assert not (full_run / "ladder.png").exists() and "plot" not in json.loads((full_run / "ladder.json").read_text())


def test_judge_grades_every_generation_against_the_exact_optimum(tmp_path: Path) -> None:
    # A run on a variant the solver solves (kata, 0.1 s), its generations' regret against the
    # solved table beside the baselines': each figure is a real `yutenv grade` of that spec.
    from yutenv.connection.server import binary_path
    from yutenv.evaluation.grade import grade

    table = tmp_path / "kata.ysolve"
    subprocess.run([str(binary_path()), "solve", "--rules", "kata", "--out", str(table), "--progress", "never"],
                   check=True, capture_output=True, timeout=120)  # fmt: skip
    out = tmp_path / "run"
    p = subprocess.run([*train_cmd(out, 1), "--rules", "kata", "--eval="], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    ref = f"optimal:{table}"
    assert judge.main([str(out), "--every", "0", "--games", "2", "--no-round-robin", "--baselines", "", "--reference", ref,
                       "--regret-games", "6", "--regret-baselines", "random;greedy", "--quiet"]) == 0  # fmt: skip
    rep = json.loads((out / "ladder.json").read_text())["regret"]
    assert rep["reference"] == ref and rep["games"] == 6
    assert [e["generation"] for e in rep["generations"]] == [0, 1]
    assert list(rep["baselines"]) == ["random", "greedy"]
    direct = grade(judge.net_spec(out, 1), opponent="greedy", games=6, reference=ref, rules="kata", seed=1)
    assert rep["generations"][1]["mean_loss"] == direct.mean_loss and rep["generations"][1]["decisions"] == direct.decisions
    g = grade("greedy", opponent="greedy", games=6, reference=ref, rules="kata", seed=1)
    assert rep["baselines"]["greedy"]["mean_loss"] == g.mean_loss
    # random gives up more than greedy against perfect play, every figure within its interval
    assert rep["baselines"]["random"]["mean_loss"] > rep["baselines"]["greedy"]["mean_loss"] > 0
    for e in [*rep["generations"], *rep["baselines"].values()]:
        assert e["mean_loss_low"] <= e["mean_loss"] <= e["mean_loss_high"]
    md = (out / "ladder.md").read_text()
    rows = md_rows(md)
    assert ["agent", "regret (points)", "> 1 point", "decisions"] in rows, md
    assert [r[0] for r in rows if r[0].startswith(("gen ", "`"))] == ["gen 0", "gen 1", "`random`", "`greedy`"], md
    assert f"{50 * g.mean_loss:.2f} [{50 * g.mean_loss_low:.2f}, " in md  # percentage points: loss 0.02 is one
    assert "(regret.png)" in md and is_png(out / "regret.png")
    # judged again without --reference: the old plot does not pass for the new judgement
    assert judge.main([str(out), "--gens", "1", "--games", "2", "--baselines", "", "--no-round-robin", "--quiet"]) == 0
    assert not (out / "regret.png").exists() and "regret" not in json.loads((out / "ladder.json").read_text())
    assert judge.main([str(out), "--reference", ref, "--regret-games", "0", "--quiet"]) == 2


def test_ladder_tables_read_from_the_newer_side() -> None:
    # yutenv eval lists a pair once, in either order; the table must show the newer generation's
    # win rate and Elo difference whichever way round the match was played.
    old, new = "net:r/gen-0000/net.ynet", "net:r/gen-0001/net.ynet"
    for a, b, wr, elo in ((old, new, 0.2, -240.8), (new, old, 0.8, 240.8)):
        m = {"a": a, "b": b, "games": 100, "win_rate_a": wr, "win_rate_a_low": wr - 0.05,
             "win_rate_a_high": wr + 0.05, "elo_diff": elo}  # fmt: skip
        md = judge._ladder_markdown([0, 1], [old, new], {"matches": [m], "ranking": []})
        rows = md_rows(md)
        assert ["gen 1", "gen 0", "80.0% [75.0, 85.0]", "+241"] in rows, md
        assert ["gen 0", "", "20%"] in rows and ["gen 1", "80%", ""] in rows, md


# --- verified checkpoints ---------------------------------------------------------------------


def _flip_weight(path: Path, value: float = -3.1e36) -> None:
    """Overwrite one float of policy.weight inside model.pt's bytes (torch stores tensors raw)."""
    w = weights(path)["policy.weight"].reshape(-1)
    data = bytearray(path.read_bytes())
    for i in range(len(w)):
        old = struct.pack("<f", float(w[i]))
        if data.count(old) == 1:
            at = data.index(old)
            data[at : at + 4] = struct.pack("<f", value)
            path.write_bytes(bytes(data))
            return
    raise AssertionError("no unique weight to flip")


def _edit_json(path: Path, fn: Any) -> None:
    path.write_text(json.dumps(fn(json.loads(path.read_text()))))


def _damage_run(out: Path, what: str) -> str:
    """Damage the run in ``out``; return a regex the error must match (the file it names)."""
    g2, g0 = out / "gen-0002", out / "gen-0000"
    if what == "flipped weight":
        _flip_weight(g2 / "model.pt")
        return "gen-0002/model.pt"
    if what == "gen 0 model copied":
        (g2 / "model.pt").write_bytes((g0 / "model.pt").read_bytes())
        return "gen-0002/model.pt"
    if what == "gen 0 copied whole":
        for p in g0.iterdir():
            (g2 / p.name).write_bytes(p.read_bytes())
        return "gen-0002/gen.json.*generation 0"
    if what == "empty model.pt":
        (g2 / "model.pt").write_bytes(b"")
        return "gen-0002/model.pt"
    if what == "missing model.pt":
        (g2 / "model.pt").unlink()
        return "gen-0002/model.pt.*missing"
    if what == "truncated model.pt":
        data = (g2 / "model.pt").read_bytes()
        (g2 / "model.pt").write_bytes(data[: len(data) // 2])
        return "gen-0002/model.pt"
    if what == "model.pt a directory":
        (g2 / "model.pt").unlink()
        (g2 / "model.pt").mkdir()
        return "gen-0002/model.pt.*not a regular file"
    if what == "flipped net.ynet":
        data = bytearray((g2 / "net.ynet").read_bytes())
        data[-3] ^= 0x7F
        (g2 / "net.ynet").write_bytes(bytes(data))
        return "gen-0002/net.ynet"
    if what == "damaged shard":
        shard = sorted((out / "gen-0001" / "selfplay").glob("shard-*.npz"))[0]
        data = bytearray(shard.read_bytes())
        data[len(data) // 2] ^= 0xFF
        shard.write_bytes(bytes(data))
        return f"gen-0001/selfplay/{shard.name}"
    if what == "missing gen.json before a complete one":
        (out / "gen-0001" / "gen.json").unlink()
        return "gen-0001/gen.json.*missing"
    if what == "gen.json garbage":
        (g2 / "gen.json").write_bytes(b"\x00\xffnot json")
        return "gen-0002/gen.json.*not valid JSON"
    if what == "gen.json truncated":
        data = (g2 / "gen.json").read_bytes()
        (g2 / "gen.json").write_bytes(data[: len(data) // 2])
        return "gen-0002/gen.json.*not valid JSON"
    if what == "gen.json a list":
        (g2 / "gen.json").write_text("[1, 2]")
        return "gen-0002/gen.json.*not a JSON object"
    if what == "gen of another run":
        _edit_json(g2 / "gen.json", lambda d: {**d, "checkpoint": {**d["checkpoint"], "run": "someone-else"}})
        return "gen-0002/gen.json.*another run"
    if what == "config.json a list":
        (out / "config.json").write_text("[1, 2, 3]")
        return "config.json.*another --out"
    if what == "config.json garbage":
        (out / "config.json").write_bytes(b'{"generations": 2, ')
        return "config.json.*not valid JSON.*another --out"
    if what == "config.json missing":
        (out / "config.json").unlink()
        return "config.json.*missing.*another --out"
    raise AssertionError(what)


DAMAGES = ["flipped weight", "gen 0 model copied", "gen 0 copied whole", "empty model.pt", "missing model.pt",
           "truncated model.pt", "model.pt a directory", "flipped net.ynet", "damaged shard",
           "missing gen.json before a complete one", "gen.json garbage", "gen.json truncated", "gen.json a list",
           "gen of another run", "config.json a list", "config.json garbage", "config.json missing"]  # fmt: skip
# The damages a run written before checksums (gen.json without its checkpoint record) still catches
# from the files' structure: the generation number, the weights' magnitude, torch's own format.
LEGACY = ["flipped weight", "gen 0 model copied", "gen 0 copied whole", "empty model.pt", "missing model.pt",
          "truncated model.pt", "model.pt a directory", "damaged shard", "gen.json a list", "config.json a list"]  # fmt: skip


def _legacy(out: Path) -> None:
    """Make ``out`` look like a run written before checksums (no records, no run id)."""
    for gj in out.glob("gen-*/gen.json"):
        _edit_json(gj, lambda d: {k: v for k, v in d.items() if k != "checkpoint"})
    _edit_json(out / "config.json", lambda d: {k: v for k, v in d.items() if k not in ("run_id", "redo_damaged")})
    for mp in out.glob("gen-*/model.pt"):
        ck = torch.load(mp, map_location="cpu", weights_only=True)
        ck.pop("run", None)
        torch.save(ck, mp)


def _resume_args(out: Path) -> list[str]:
    return ["--out", str(out), "--generations", "2", *TINY]


@pytest.mark.parametrize(
    "what,legacy",
    [(w, False) for w in DAMAGES] + [(w, True) for w in LEGACY],
    ids=[*DAMAGES, *(f"{w} (no checksums)" for w in LEGACY)],
)
def test_a_damaged_checkpoint_is_refused_with_one_clear_line(
    full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str, legacy: bool
) -> None:
    """Every damage: the API raises CheckpointError naming the file and the fix; the command
    line exits 1 with that one line (no traceback); nothing of the run is deleted."""
    out = tmp_path / "run"
    shutil.copytree(full_run, out)
    if legacy:
        _legacy(out)
    names = _damage_run(out, what)
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    with pytest.raises(yutenv.CheckpointError, match=names) as err:
        train.run(train.config_from_args(_resume_args(out)))
    assert "another --out" in str(err.value) or "--redo-damaged" in str(err.value)
    assert isinstance(err.value, yutenv.YutEnvError)
    capsys.readouterr()
    assert train.main(_resume_args(out)) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("yutenv.az.train: ") and re.search(names, lines[0]), lines
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before


def test_load_checkpoint_of_damaged_bytes_raises_only_checkpoint_error(full_run: Path, tmp_path: Path) -> None:
    """model.pt is bytes from disk: 300 random byte flips and cuts raise CheckpointError or load
    a network whose weights pass the checks, never another exception."""
    good = (full_run / "gen-0002" / "model.pt").read_bytes()
    rng = np.random.default_rng(22)
    p = tmp_path / "model.pt"
    refused = 0
    for i in range(300):
        data = bytearray(good)
        if i % 3 == 0:
            data = data[: int(rng.integers(0, len(data)))]
        else:
            for at in rng.integers(0, len(data), size=int(rng.integers(1, 8))):
                data[at] ^= int(rng.integers(1, 256))
        p.write_bytes(bytes(data))
        try:
            model, _ = train.load_checkpoint(p, generation=2)
        except yutenv.CheckpointError as e:
            assert str(p) in str(e)
            refused += 1
            continue
        assert net.weight_problem(model.state_dict().items()) is None
    assert refused >= 100


def test_the_flipped_byte_of_the_probe_exits_1_from_the_real_command(full_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(full_run, out)
    _flip_weight(out / "gen-0002" / "model.pt")
    p = subprocess.run(train_cmd(out, 3), capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert "gen-0002/model.pt" in p.stderr and "--redo-damaged" in p.stderr
    assert not (out / "gen-0003").exists()  # nothing was trained on it


def test_redo_damaged_trains_the_damaged_generation_again(full_run: Path, tmp_path: Path) -> None:
    """--redo-damaged deletes the damaged generation and trains it again from the last good
    one: every draw is seeded from (seed, g), so it is the same network as before the damage."""
    out = tmp_path / "run"
    shutil.copytree(full_run, out)
    _flip_weight(out / "gen-0002" / "model.pt")
    with pytest.warns(train.CheckpointWarning, match="gen-0002/model.pt.*deleting generation 2 to train again"):
        res = train.run(train.config_from_args([*_resume_args(out), "--redo-damaged"]))
    assert [g["generation"] for g in res.generations] == [0, 1, 2]
    for k, v in weights(full_run / "gen-0002/model.pt").items():
        assert torch.equal(v, weights(out / "gen-0002/model.pt")[k]), k
    train.run(train.config_from_args(_resume_args(out)))  # and it verifies


def test_a_run_without_checksums_resumes_with_a_warning_naming_its_files(full_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(full_run, out)
    _legacy(out)
    with pytest.warns(train.CheckpointWarning, match=r"no checksums.*gen-0002 \(model.pt, net.ynet, selfplay/manifest.json"):
        train.run(train.config_from_args(_resume_args(out)))
    assert json.loads((out / "config.json").read_text())["run_id"]  # the run has an id from now on
    _legacy(out)
    p = subprocess.run(train_cmd(out, 2), capture_output=True, text=True, timeout=300)  # the command line: one warning line
    assert p.returncode == 0, p.stderr
    warned = [line for line in p.stderr.splitlines() if "no checksums" in line]
    assert len(warned) == 1 and warned[0].startswith("yutenv.az.train: warning: ") and "gen-0000 (model.pt" in warned[0], p.stderr


def test_gen_json_records_every_file_run_and_generation(full_run: Path) -> None:
    run_id = json.loads((full_run / "config.json").read_text())["run_id"]
    for g in (0, 1, 2):
        d = train.gen_dir(full_run, g)
        rec = json.loads((d / "gen.json").read_text())["checkpoint"]
        assert (rec["version"], rec["run"], rec["generation"]) == (1, run_id, g)
        on_disk = sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file() and p.name != "gen.json")
        assert sorted(rec["files"]) == on_disk and {"model.pt", "net.ynet"} <= set(on_disk)
        assert torch.load(d / "model.pt", map_location="cpu", weights_only=True)["run"] == run_id


def test_a_crash_while_saving_leaves_no_half_written_generation(
    full_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The disk fills up half way through gen-0003/model.pt: the command exits 1 with one line,
    no temporary file and no gen.json are left (the generation does not look complete), the
    generations before it are untouched, and the next run redoes generation 3."""
    out = tmp_path / "run"
    shutil.copytree(full_run, out)
    before = {p: p.read_bytes() for p in out.glob("gen-000[0-2]/**/*") if p.is_file()}
    real_save = torch.save

    def full_disk(obj: Any, f: Any) -> None:
        buf = io.BytesIO()
        real_save(obj, buf)
        f.write(buf.getvalue()[: len(buf.getvalue()) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(train.torch, "save", full_disk)
    assert train.main(["--out", str(out), "--generations", "3", *TINY]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0], err
    assert sorted(p.name for p in (out / "gen-0003").iterdir()) == ["selfplay"]  # no model.pt, no temp file, no gen.json
    assert {p: p.read_bytes() for p in out.glob("gen-000[0-2]/**/*") if p.is_file()} == before
    monkeypatch.setattr(train.torch, "save", real_save)
    res = train.run(train.config_from_args(["--out", str(out), "--generations", "3", *TINY]))
    assert [g["generation"] for g in res.generations] == [0, 1, 2, 3]


@pytest.mark.parametrize("body", [b"[1, 2]", b"\xff garbage", b'{"eval": {}}'])
def test_the_report_of_a_damaged_run_is_one_line(
    full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], body: bytes
) -> None:
    out = tmp_path / "run"
    shutil.copytree(full_run, out)
    (out / "gen-0001" / "gen.json").write_bytes(body)
    assert report.main([str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gen-0001/gen.json" in err[0], err


@pytest.mark.parametrize(
    ("given", "want"), [("random", ("random",)), ("greedy; mc:100", ("greedy", "mc:100")), (("mcts:4",), ("mcts:4",)), ("", ())]
)
def test_train_config_eval_takes_a_string_or_specs(given: Any, want: tuple[str, ...]) -> None:
    # TrainConfig(eval="random") once meant the six opponents "r", "a", "n", ... and failed late.
    cfg = train.TrainConfig(out="unused", eval=given)
    assert tuple(cfg.eval) == want
    cfg.check()


@pytest.mark.parametrize("bad", [("greedy", ""), ("greedy;random",), (3,)])
def test_train_config_refuses_bad_eval_specs_early(bad: Any) -> None:
    with pytest.raises(ValueError, match="eval: want agent specs"):
        train.TrainConfig(out="unused", eval=bad).check()
