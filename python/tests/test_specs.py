"""yutenv._specs: the quoting rule of a spec's PATH, held to the table the Go parser is tested
against (env/agent/testdata/spec_paths.json), and played by the server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import yutenv
from yutenv._specs import net_spec, path_spec, quote_path, spec_path, split_specs

REPO = Path(__file__).resolve().parents[2]
CASES = json.loads((REPO / "env" / "agent" / "testdata" / "spec_paths.json").read_text())
GO_NET = REPO / "nnet" / "testdata" / "go-tiny.ynet"


@pytest.mark.parametrize("case", CASES, ids=[c["path"] for c in CASES])
def test_paths_are_quoted_as_go_quotes_them(case: dict[str, str]) -> None:
    path, quoted = case["path"], case["quoted"]
    assert quote_path(path) == quoted
    assert net_spec(path, sims=8, gumbel=1) == f"net:{quoted},sims=8,gumbel=1"
    assert path_spec("optimal", path) == f"optimal:{quoted}"
    assert spec_path(f"net:{quoted},sims=8, gumbel=1") == ("net", path, ",sims=8, gumbel=1")
    assert spec_path(f" optimal: {quoted}") == ("optimal", path, "")
    assert split_specs(f"net:{quoted},sims=4;greedy; optimal:{quoted};") == [
        f"net:{quoted},sims=4",
        "greedy",
        f"optimal:{quoted}",
    ]


@pytest.mark.parametrize(
    "spec, want",
    [
        ("net:a.ynet", ("net", "a.ynet", "")),
        ("net:runs/a,b.ynet,sims=2", ("net", "runs/a,b.ynet", ",sims=2")),  # a bare PATH runs to the first option
        ("net:o'brien.ynet", ("net", "o'brien.ynet", "")),  # a quote inside a bare PATH is a character
        ("net:'a.ynet", None),  # an unclosed quote
        ("net:'a'b", None),  # text after the closing quote
        ("net:", None),
        ("greedy", None),
        ("mcts:400,c=2", None),
        ("az,sims=8", None),
    ],
)
def test_spec_path_reads_what_the_server_reads(spec: str, want: Any) -> None:
    assert spec_path(spec) == want


@pytest.mark.parametrize(
    "text, want",
    [  # the cases of Go's TestSplitSpecs that split
        ("mcts:400;random", ["mcts:400", "random"]),
        (
            "mcts:200,c=1.4,workers=2; mc:100,rollout=greedy ;greedy;",
            ["mcts:200,c=1.4,workers=2", "mc:100,rollout=greedy", "greedy"],
        ),
        ("mcts:400,mcts:400", ["mcts:400", "mcts:400"]),
        ("mcts:400,c=2,random,greedy", ["mcts:400,c=2", "random", "greedy"]),
        ("random", ["random"]),
        (" ; ; ", []),
        (" , ", []),
        ("random,net:'a,b=c;d.ynet',sims=2,greedy", ["random", "net:'a,b=c;d.ynet',sims=2", "greedy"]),
        ("net:'a;b.ynet'", ["net:'a;b.ynet'"]),
    ],
)
def test_split_specs_splits_as_go_does(text: str, want: list[str]) -> None:
    assert split_specs(text) == want


def test_path_spec_refuses_an_agent_without_a_path() -> None:
    with pytest.raises(ValueError, match="'mcts' takes no PATH"):
        path_spec("mcts", "a.ynet")


@pytest.mark.parametrize("folder", ["a,seed=3", "a;b", "c:d", "it's", "x=y, z"])
def test_a_network_under_any_folder_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str) -> None:
    """The server opens a network whose path holds the grammar's separators, by an absolute
    path and by a relative one (made absolute by the package), alone and in a mixture."""
    d = tmp_path / folder
    d.mkdir()
    (d / "n.ynet").write_bytes(GO_NET.read_bytes())
    monkeypatch.chdir(tmp_path)
    for opponent in (
        net_spec(d / "n.ynet"),
        [net_spec(d / "n.ynet", sims=2), "random"],
        net_spec(Path(folder) / "n.ynet", sims=2),
        {net_spec(Path(folder) / "n.ynet"): 1},
    ):
        env = yutenv.make(opponent=opponent, tier="compact")
        try:
            _, info = env.reset(seed=1)
            env.step(int(info["action_mask"].argmax()))
        finally:
            env.close()
