"""Network files named to the server (``net:PATH`` agents): its folder policy and ``bad_net``."""

from __future__ import annotations

from pathlib import Path

import pytest

import yutenv

GO_NET = Path(__file__).resolve().parents[2] / "nnet" / "testdata" / "go-tiny.ynet"


def test_the_private_server_opens_its_users_networks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server the package starts serves one local user: absolute and relative names work."""
    (tmp_path / "mine.ynet").write_bytes(GO_NET.read_bytes())
    monkeypatch.chdir(tmp_path)
    with yutenv.Server() as srv:
        for spec in (f"net:{GO_NET}", "net:mine.ynet", "net:mine.ynet,sims=4"):
            env = yutenv.make(opponent=spec, server=srv)
            env.reset(seed=1)
            env.close()


def test_net_dir_limits_the_names_and_refuses_alike(tmp_path: Path) -> None:
    """With ``--net-dir``, a name outside it is a NetError whose text does not say whether the file exists."""
    allowed = tmp_path / "nets"
    allowed.mkdir()
    (allowed / "mine.ynet").write_bytes(GO_NET.read_bytes())
    with yutenv.Server(args=["--net-dir", str(allowed)]) as srv:
        env = yutenv.make(opponent="net:mine.ynet", server=srv)
        env.reset(seed=1)
        env.close()
        messages = []
        for name in (str(GO_NET), str(tmp_path / "missing.ynet"), "../nets/../../x.ynet", "/etc/passwd"):
            with pytest.raises(yutenv.NetError) as ei:
                yutenv.make(opponent=f"net:{name}", server=srv)
            assert ei.value.code == "bad_net" and isinstance(ei.value, yutenv.InvalidArgumentError)
            messages.append(str(ei.value).replace(name, "NAME"))
        assert len(set(messages)) == 1, messages


def test_a_damaged_network_is_a_net_error(tmp_path: Path) -> None:
    """A file that is not a network, or is nested too deep, is the client's error, and the server lives on."""
    junk = tmp_path / "junk.ynet"
    junk.write_bytes(b"\x91" * 1_000_000 + b"\xc0")
    with yutenv.Server() as srv:
        with pytest.raises(yutenv.NetError, match="nested deeper"):
            yutenv.make(opponent=f"net:{junk}", server=srv)
        env = yutenv.make(opponent=f"net:{GO_NET}", server=srv)
        env.reset(seed=1)
        env.close()


def test_a_missing_net_is_said_plainly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The package's own server opens networks anywhere: a missing file is "no such network
    file", not a refusal that reads like a permission problem."""
    monkeypatch.chdir(tmp_path)
    with yutenv.Server() as srv:
        for name in ("nope.ynet", str(tmp_path / "nope.ynet")):
            with pytest.raises(
                yutenv.NetError, match=r"no such network file: .*nope\.ynet.* is in none of the server's --net-dir folders"
            ):
                yutenv.make(opponent=f"net:{name}", server=srv)
