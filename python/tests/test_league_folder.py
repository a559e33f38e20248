"""yutenv.league's folder: one writer at a time (a lock that dies with its process, tested with
real processes), forged ``league.json`` files refused when the league is opened, naming the file
and the field, and the temporary files of killed writers removed. No torch: a snapshot file here
is any bytes with its SHA-256 recorded (nothing loads it)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from yutenv._files import process_alive
from yutenv.league import League, LeagueError

HOLD = textwrap.dedent(
    """
    import sys, time
    from yutenv.league import League
    league = League(sys.argv[1], fixed=("greedy",), rate_games=0)
    print("holding", flush=True)
    time.sleep(600)
    """
)


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[Callable[[Path], subprocess.Popen[str]]]:
    """Starts a process that opens a league as its writer and keeps it; kills them all at the end."""
    procs: list[subprocess.Popen[str]] = []

    def start(folder: Path) -> subprocess.Popen[str]:
        p = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(p)
        assert p.stdout is not None
        line = p.stdout.readline()  # blocks until the child holds the league (or dies)
        assert line.strip() == "holding", p.stderr.read() if p.stderr else ""
        return p

    yield start
    for p in procs:
        p.kill()
        p.communicate()


def test_a_second_trainer_is_refused_and_a_killed_one_blocks_nothing(tmp_path: Path, holder: Any) -> None:
    folder = tmp_path / "lg"
    first = holder(folder)
    with pytest.raises(LeagueError) as e:
        League(folder)
    msg = str(e.value)
    assert str(folder) in msg and f"process {first.pid} on " in msg and "\n" not in msg
    reader = League.open(folder)  # a reader beside the writer
    assert [m.name for m in reader.members] == ["greedy"]
    with pytest.raises(LeagueError, match=r"read-only \(opened by League.open\)"):
        reader.record({"greedy": {"wins": 1}})
    with pytest.raises(LeagueError, match="read-only"):
        reader.rate(reader.member("greedy"))  # refused before any game
    assert reader.member("greedy").games == 0
    first.kill()  # kill -9: the lock dies with its process
    first.communicate()
    with League(folder) as second:
        second.record({"greedy": {"wins": 1, "losses": 1}})
    assert League.open(folder).member("greedy").games == 2


FORK = textwrap.dedent(
    """
    import os, sys, time
    from yutenv.league import League
    league = League(sys.argv[1], fixed=("greedy",), rate_games=0)
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:  # a worker forked by the trainer, that outlives it (off the test's pipes)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.write(ready_w, b"up")  # past os.fork: its hook has closed the lock's descriptor
        time.sleep(600)
        os._exit(0)
    # Until the worker has run at all, it holds a copy of the lock; a trainer killed in that
    # moment would leave the lock to the worker until its fork hook runs.
    os.read(ready_r, 2)
    print(child, flush=True)
    time.sleep(600)
    """
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork: POSIX only")
def test_a_forked_child_does_not_keep_a_killed_trainers_lock(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    p = subprocess.Popen([sys.executable, "-c", FORK, str(folder)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None
    line = p.stdout.readline()
    assert line.strip().isdigit(), p.stderr.read() if p.stderr else ""
    child = int(line)
    try:
        with pytest.raises(LeagueError, match=f"process {p.pid} on "):
            League(folder)
        p.kill()
        p.wait()
        assert process_alive(child), "the forked worker runs on"
        League(folder).close()  # the lock went with the trainer
    finally:
        p.kill()
        p.communicate(timeout=60)
        try:
            os.kill(child, 9)
        except ProcessLookupError:
            pass


def test_two_writers_in_one_process_and_close(tmp_path: Path) -> None:
    first = League(tmp_path / "lg", rate_games=0)
    with pytest.raises(LeagueError, match=f"process {os.getpid()} on "):
        League(tmp_path / "lg")
    first.close()
    with pytest.raises(LeagueError, match=r"read-only \(closed\)"):
        first.record({"greedy": {"wins": 1}})
    League(tmp_path / "lg").close()


def test_temporary_files_of_dead_writers_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    League(folder, rate_games=0).close()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    assert not process_alive(dead_pid)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        stale = [
            folder / f".league.json.{dead_pid}.tmp",
            folder / "snapshots" / f".snap-000001.ynet.{dead_pid}.tmp",
            folder / f".learner.zip.{dead_pid}.tmp.zip",
        ]
        kept = [folder / f".league.json.{live.pid}.tmp", folder / "notes.tmp", folder / f"league.json.{dead_pid}.tmp"]
        for p in stale + kept:
            p.write_bytes(b"half")
        League(folder).close()
        assert [p.name for p in stale if p.exists()] == []
        assert [p.name for p in kept if not p.exists()] == []
    finally:
        live.kill()
        live.wait()


# ---- forged league.json ---------------------------------------------------------------------


def _league(folder: Path) -> dict[str, Any]:
    """A league with one fixed member and one snapshot (bytes with their SHA-256), as a dict."""
    League(folder, fixed=("greedy",), rate_games=0).close()
    snap = folder / "snapshots" / "snap-000001.ynet"
    snap.write_bytes(b"not a network; nothing loads it here")
    doc: dict[str, Any] = json.loads((folder / "league.json").read_text())
    doc.pop("sha256")
    doc["members"].append(
        {**doc["members"][0], "name": "snap-000001", "spec": "net:x", "step": 10, "file": "snapshots/snap-000001.ynet",
         "sha256": hashlib.sha256(snap.read_bytes()).hexdigest()}
    )  # fmt: skip
    return doc


def _write(folder: Path, doc: dict[str, Any]) -> None:
    """``doc`` as league.json, re-hashed as a forger would."""
    body = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    (folder / "league.json").write_text(json.dumps({**doc, "sha256": hashlib.sha256(body.encode()).hexdigest()}))


def _member(i: int, **changes: Any) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        doc["members"][i].update(changes)

    return edit


def _config(**changes: Any) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        doc["config"].update(changes)

    return edit


def _many_fixed(doc: dict[str, Any]) -> None:
    extra = [{**doc["members"][0], "name": f"mc:{n}", "spec": f"mc:{n}"} for n in range(1, 71)]
    doc["members"][1:1] = extra


def _many_fixed_in_config(doc: dict[str, Any]) -> None:
    _many_fixed(doc)
    doc["config"]["fixed"] = [m["name"] for m in doc["members"] if not m["file"]]


def _deep(doc: dict[str, Any]) -> None:
    doc["members"][0]["name"] = json.loads("[" * 50 + "]" * 50)


FORGED: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    (
        "parent path",
        _member(1, file="../../../../etc/passwd"),
        r"members\[1\]\.file: must name a file in the league's snapshots/",
    ),
    ("absolute path", _member(1, file="/etc/passwd"), r"members\[1\]\.file: must name a file in the league's snapshots/"),
    ("nested path", _member(1, file="snapshots/../../x.ynet"), r"members\[1\]\.file: must name a file"),
    ("temp name", _member(1, file="snapshots/.snap-000001.ynet.7.tmp"), r"members\[1\]\.file: must name a file"),
    ("games a string", _member(0, games="abc"), r"members\[0\]\.games: must be an integer 0\.\.2\*\*53, got 'abc'"),
    ("negative wins", _member(0, wins=-5), r"members\[0\]\.wins: must be an integer"),
    ("huge wins", _member(0, games=10, wins=1e308), r"members\[0\]\.wins: must be an integer"),
    ("bool games", _member(0, games=True), r"members\[0\]\.games: must be an integer"),
    ("more wins than games", _member(0, games=3, wins=4), r"members\[0\]\.wins: 4 wins in 3 games"),
    ("NaN rating", _member(1, rating=float("nan"), rating_low=0, rating_high=1), r"members\[1\]\.rating: .*must be numbers"),
    ("half a rating", _member(1, rating=5.0), r"members\[1\]\.rating: .*must be numbers"),
    ("bad sha256", _member(1, sha256="abc"), r"members\[1\]\.sha256: must be 64 hex digits"),
    ("snapshot step", _member(1, step=-3), r"members\[1\]\.step: must be an integer"),
    ("unknown member field", _member(0, evil=1), r"members\[0\]\.evil: not a field of a member"),
    ("name twice", _member(1, name="greedy"), r"members\[1\]\.name: 'greedy' names two members"),
    ("fixed spec not its name", _member(0, spec="mcts:2000"), r"members\[0\]: a fixed member is its spec alone"),
    ("fixed a string", _config(fixed="greedy"), r"config: fixed must be a list of agent specs, got 'greedy'"),
    ("anchors numbers", _config(anchors=[1, 2]), r"config: anchors must be a list of agent specs"),
    ("unknown tier", _config(tier="huge"), r"config: tier must be one of"),
    ("p_latest a string", _config(p_latest="1"), r"config: p_latest must be in \[0, 1\]"),
    ("unknown setting", _config(speed=3), r"config\.speed: not a setting of a league"),
    ("71 members", _many_fixed, r"members: the fixed members .* are not config\.fixed"),
    ("71 fixed specs", _many_fixed_in_config, r"config: fixed holds 71 specs; a mixture holds 64 entries"),
    ("step a float", lambda d: d.update(step=1.5), r"step: must be an integer"),
    ("members a dict", lambda d: d.update(members={}), r"members: must be a list"),
    ("unknown field", lambda d: d.update(extra=[]), r"extra: not a field of a league state"),
    ("deep nesting", _deep, r"members\[0\]\.name: must be a non-empty string"),
]


@pytest.mark.parametrize("edit, match", [pytest.param(e, m, id=name) for name, e, m in FORGED])
def test_a_forged_league_is_refused_naming_the_field(tmp_path: Path, edit: Callable[[dict[str, Any]], None], match: str) -> None:
    folder = tmp_path / "lg"
    doc = _league(folder)
    _write(folder, doc)
    assert [m.name for m in League.open(folder).members] == ["greedy", "snap-000001"], "the unforged league opens"
    edit(doc)
    _write(folder, doc)
    for opener in (League, League.open):
        with pytest.raises(LeagueError, match=match) as e:
            opener(folder)
        assert str(e.value).startswith(f"{folder / 'league.json'}: ") and "\n" not in str(e.value)


def test_a_snapshot_linked_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    doc = _league(folder)
    outside = tmp_path / "secret"
    outside.write_bytes((folder / "snapshots" / "snap-000001.ynet").read_bytes())
    (folder / "snapshots" / "snap-000001.ynet").unlink()
    (folder / "snapshots" / "snap-000001.ynet").symlink_to(outside)
    _write(folder, doc)
    with pytest.raises(LeagueError, match=r"members\[1\]\.file: snapshots/snap-000001.ynet leads out of the league's snapshots/"):
        League.open(folder)


def test_json_nested_too_deeply_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    League(folder, rate_games=0).close()
    (folder / "league.json").write_text('{"format": "yutenv-league", "version": 1, "x": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(LeagueError, match="not a league state \\(JSON nested too deeply\\)"):
        League(folder)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"fixed": "greedy"}, "fixed must be a list of agent specs"),
        ({"fixed": ("greedy", "greedy")}, "fixed names a spec twice"),
        ({"max_members": True}, "max_members must be"),
        ({"rate_games": 2.0}, "rate_games must be an integer"),
        ({"p_latest": float("nan")}, r"p_latest must be in \[0, 1\]"),
    ],
)
def test_settings_are_checked_when_a_league_is_made(tmp_path: Path, options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        League(tmp_path / "lg", **options)
    League(tmp_path / "lg", rate_games=0).close()  # the refused attempt left no lock behind
