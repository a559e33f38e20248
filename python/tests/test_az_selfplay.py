"""yutenv.az.SelfPlay against a real server: batches, answers, errors, the dataset."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import yutenv
from yutenv import datasets
from yutenv.az import SelfPlay

NA = yutenv.NUM_ACTIONS


def uniform(obs: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_]) -> tuple[np.ndarray, np.ndarray]:
    return np.ones((len(obs), NA), np.float32), np.zeros(len(obs), np.float32)


class TinyMLP:
    """A fixed random MLP evaluated row by row (a function of each row alone, so the
    answers do not depend on how the server batched the leaves)."""

    def __init__(self, d: int, seed: int = 0) -> None:
        r = np.random.default_rng(seed)
        self.w1 = r.normal(size=(d, 32)) / np.sqrt(d)
        self.wp = r.normal(size=(32, NA))
        self.wv = r.normal(size=32) / 8
        self.sizes: list[int] = []

    def __call__(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_]) -> tuple[np.ndarray, np.ndarray]:
        self.sizes.append(len(obs))
        pri = np.empty((len(obs), NA), np.float32)
        val = np.empty(len(obs), np.float32)
        for i, x in enumerate(obs.astype(np.float64)):
            h = np.maximum(x @ self.w1, 0)
            logits = h @ self.wp
            p = np.exp(logits - logits.max())
            pri[i] = p
            val[i] = np.tanh(h @ self.wv)
        return pri, val


def sp(**kw: object) -> SelfPlay:
    args: dict[str, object] = dict(sims=8, games_in_flight=3, seed=4, temperature_moves=4, shard_games=2)
    args.update(kw)
    return SelfPlay(**args)  # type: ignore[arg-type]


def digest(d: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(d.glob("shard-*")):
        h.update(p.read_bytes())
    return h.hexdigest()


def test_run_writes_a_dataset_with_visits(srv: yutenv.Server, tmp_path: Path) -> None:
    out = tmp_path / "sp"
    s = sp(server=srv).run(uniform, games=4, out=out)
    assert s.games == 4 and s.decisions > 0 and s.leaves > 0 and s.batches > 0
    assert 1 <= s.mean_batch <= 3
    ds = datasets.load(out)
    assert ds.manifest["complete"] and ds.manifest["tier"] == "compact"
    assert ds.visits is not None and ds.visits.shape == (len(ds), NA)
    assert "visits" in ds.arrays() and ds["visits"] is ds.visits
    searched = ds.mask.sum(axis=1) > 1
    assert searched.any()
    np.testing.assert_allclose(ds.visits[searched].sum(axis=1), 8)  # every simulation visits one root child
    np.testing.assert_allclose(ds.policy[searched], ds.visits[searched] / 8, atol=1e-6)
    assert (ds.visits[~searched] == 0).all()
    assert set(np.unique(ds.value)) <= {-1.0, 1.0}
    assert (ds.visits[ds.mask == 0] == 0).all()
    # The same settings again: the dataset is complete, nothing is played.
    again = sp(server=srv).run(uniform, games=4, out=out)
    assert again.leaves == 0 and again.games == 4


def test_same_seed_same_dataset_whatever_the_batching(srv: yutenv.Server, tmp_path: Path) -> None:
    net = TinyMLP(213)  # the compact tier
    a = sp(server=srv).run(net, games=3, out=tmp_path / "a")
    net.sizes.clear()
    b = sp(server=srv, games_in_flight=1).run(net, games=3, out=tmp_path / "b")
    assert set(net.sizes) == {1}
    assert a.decisions == b.decisions
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    sp(server=srv, seed=5).run(net, games=3, out=tmp_path / "c")
    assert digest(tmp_path / "c") != digest(tmp_path / "a")


def test_first_game_plays_one_part_of_the_whole_run(srv: yutenv.Server, tmp_path: Path) -> None:
    """first_game: games 2..4 of a run, in shards named and filled as in the whole run."""
    net = TinyMLP(213)
    sp(server=srv).run(net, games=5, out=tmp_path / "whole")
    s = sp(server=srv).run(net, games=3, out=tmp_path / "part", first_game=2)
    assert s.games == 3
    part = json.loads((tmp_path / "part" / datasets.MANIFEST).read_text())  # a part: read_manifest wants a whole dataset
    assert part["first_game"] == 2 and [sh["first_game"] for sh in part["shards"]] == [2, 4]
    files = sorted(p.name for p in (tmp_path / "part").glob("shard-*"))
    assert files == [f"shard-00000{k}.{ext}" for k in (1, 2) for ext in ("npz", "records.jsonl")]
    for name in files:
        assert (tmp_path / "part" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    with pytest.raises(yutenv.InvalidArgumentError, match="first_game"):
        sp(server=srv).run(net, games=2, out=tmp_path / "odd", first_game=3)


def test_wrong_shapes_are_refused_by_field(srv: yutenv.Server, tmp_path: Path) -> None:
    def short_priors(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.ones((len(obs), NA - 1), np.float32), np.zeros(len(obs), np.float32)

    def long_values(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.ones((len(obs), NA), np.float32), np.zeros(len(obs) + 1, np.float32)

    def out_of_range(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.ones((len(obs), NA), np.float32), np.full(len(obs), 2.0, np.float32)

    for i, (ev, field) in enumerate([(short_priors, "priors"), (long_values, "values"), (out_of_range, "values")]):
        with pytest.raises(yutenv.InvalidArgumentError, match=f"params.{field}"):
            sp(server=srv).run(ev, games=2, out=tmp_path / str(i))


def test_a_client_that_never_answers_times_out(srv: yutenv.Server, tmp_path: Path) -> None:
    def slow(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        time.sleep(0.5)
        return uniform(obs, mask)

    with pytest.raises(yutenv.EvalTimeoutError, match="eval_timeout"):
        sp(server=srv, eval_timeout=0.1).run(slow, games=2, out=tmp_path / "t")


def test_evaluate_errors_propagate_and_the_server_lives_on(srv: yutenv.Server, tmp_path: Path) -> None:
    def boom(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        sp(server=srv).run(boom, games=2, out=tmp_path / "x")
    assert sp(server=srv).run(uniform, games=1, out=tmp_path / "y").games == 1


def test_bad_settings(srv: yutenv.Server, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="resign"):
        SelfPlay(resign=-0.9)
    with pytest.raises(yutenv.InvalidArgumentError, match="sims"):
        sp(server=srv, sims=0).run(uniform, games=1, out=tmp_path / "z")
    with pytest.raises(yutenv.InvalidRulesError):
        sp(server=srv, rules="players=9").run(uniform, games=1, out=tmp_path / "r")


GO_NET = Path(__file__).resolve().parents[2] / "nnet" / "testdata" / "go-tiny.ynet"


def test_a_network_file_plays_through_evaluate() -> None:
    """A ``net:`` spec as the policy (the Go forward pass) and as the server-side opponent."""
    r = yutenv.evaluate(f"net:{GO_NET}", opponent="random", games=4, seed=3)
    assert r.games == 4 and r.a == f"net:{GO_NET}" and r.b == "random" and r.wins_a + r.wins_b == 4
    r = yutenv.evaluate(f"net:{GO_NET},sims=4", opponent="random", games=2, name="tiny+mcts")
    assert r.a == "tiny+mcts" and r.games == 2

    def first_legal(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return mask.argmax(axis=1)

    r = yutenv.evaluate(first_legal, opponent=f"net:{GO_NET},sims=2", games=4, num_envs=2, progress=False)
    assert r.games == 4 and r.b == f"net:{GO_NET},sims=2"
    with pytest.raises(yutenv.InvalidArgumentError, match="nope.ynet"):
        yutenv.evaluate("net:/nope.ynet", opponent="random", games=2)


@pytest.mark.parametrize(("progress", "bar"), [(None, False), (True, True), (False, False)])
def test_progress_bar(
    srv: yutenv.Server, tmp_path: Path, capsys: pytest.CaptureFixture[str], progress: bool | None, bar: bool
) -> None:
    # None: on a terminal only (pytest's captured stderr is not one); True: always.
    sp(server=srv).run(uniform, games=2, out=tmp_path / "sp", progress=progress)
    err = capsys.readouterr().err
    assert ("selfplay" in err and "2/2" in err) == bar, err


def test_selfplay_defaults_are_the_servers() -> None:
    """SelfPlay's defaults are the server's (az.Settings, generated into _protocol.py): a
    run from SelfPlay() plays what a bare selfplay_new plays."""
    import inspect

    from yutenv._protocol import SELFPLAY_DEFAULTS

    sig = inspect.signature(SelfPlay.__init__).parameters
    key = {"c_puct": "c"}
    checked = 0
    for name, p in sig.items():
        field = key.get(name, name)
        if field in SELFPLAY_DEFAULTS._fields and p.default is not None:
            assert p.default == getattr(SELFPLAY_DEFAULTS, field), name
            checked += 1
    assert checked >= 8
    params = SelfPlay().params(1, "out", 0)
    for field in ("sims", "c", "dirichlet_alpha", "dirichlet_frac", "temperature_moves", "games_in_flight"):
        assert params[field] == getattr(SELFPLAY_DEFAULTS, field), field


def test_out_dir_confines_a_servers_writes(tmp_path: Path) -> None:
    """A server given ``--out-dir`` writes datasets only inside it: a path elsewhere (absent,
    an existing file or folder) is refused with one message naming only the path, and
    nothing is created; the package's own server (no ``--out-dir``) writes where asked."""
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    target = outside / "sp"
    with yutenv.Server(args=["--out-dir", str(allowed)]) as srv:
        s = sp(server=srv)
        messages = []
        for make in (lambda: None, lambda: target.write_text("x"), lambda: (target.unlink(), target.mkdir())):
            make()
            with pytest.raises(yutenv.InvalidArgumentError) as e:
                s.run(uniform, games=1, out=target)
            messages.append(str(e.value))
        assert len(set(messages)) == 1, messages
        assert "is not a path this server may write (it writes only inside its --out-dir folders)" in messages[0]
        target.rmdir()
        assert list(outside.iterdir()) == []
        summary = s.run(uniform, games=1, out=allowed / "sp")
        assert summary.games == 1 and (allowed / "sp" / "manifest.json").is_file()
    assert sp().run(uniform, games=1, out=outside / "bundled").games == 1
