"""The files a user names, read and written safely (``yutenv._files``, the Python side of Go's
``internal/userfile``): a FIFO, a device, a socket or a folder is refused at once, in one line
naming the file, by every reader (the datasets' manifest, shards and records, through
``datasets.load``, ``transitions`` and the PyTorch stream) and every atomic writer; a manifest
that overstates its counts is refused before anything is allocated for them."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from conftest import selfplay
from yutenv.datasets import DatasetError

import yutenv
from yutenv import datasets
from yutenv._files import FileRefused, atomic_write, read_regular

#: How long a call may take before it counts as blocked (it returns in milliseconds).
BLOCKED = 60.0


def bounded(fn: Callable[[], Any], fifos: list[Path]) -> BaseException | None:
    """Run ``fn`` in a thread and return what it raised (None if nothing). A call that blocks
    (a FIFO opened for reading waits for a writer) fails the test, after the FIFOs are opened
    for writing so that the thread ends."""
    box: list[BaseException | None] = [None]

    def run() -> None:
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            box[0] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(BLOCKED)
    if t.is_alive():
        for f in fifos:
            try:
                os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        t.join(10)
        pytest.fail(f"blocked for {BLOCKED} s")
    return box[0]


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """One of each kind of file that is not regular, under the test's folder: a FIFO, a folder,
    a socket, a link to the FIFO and, as root, a character device with the null device's
    numbers (never the machine's /dev/null; mknod needs root)."""
    out = {"fifo": tmp_path / "fifo", "folder": tmp_path / "folder", "socket": tmp_path / "sock"}
    os.mkfifo(out["fifo"])
    out["folder"].mkdir()
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(out["socket"]))
    if os.geteuid() == 0:
        out["device"] = tmp_path / "null"
        os.mknod(out["device"], 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    out["link to the fifo"] = tmp_path / "link"
    out["link to the fifo"].symlink_to(out["fifo"])
    yield out
    s.close()


def test_read_regular_refuses_what_is_not_regular_without_blocking(nodes: dict[str, Path]) -> None:
    for name, p in nodes.items():
        e = bounded(lambda p=p: read_regular(p, 1 << 20), [nodes["fifo"]])  # type: ignore[misc]
        assert isinstance(e, FileRefused) and isinstance(e, yutenv.FileRefusedError), (name, e)
        assert isinstance(e, OSError) and isinstance(e, yutenv.YutEnvError)
        assert str(e).startswith(f"{p}: not a regular file"), (name, str(e))
        assert "\n" not in str(e)


def test_read_regular_bounds_the_read(tmp_path: Path) -> None:
    p = tmp_path / "f"
    p.write_bytes(b"hello")
    assert read_regular(p, 5) == b"hello"
    with pytest.raises(FileRefused, match="5 bytes, over the limit of 4"):
        read_regular(p, 4)
    sparse = tmp_path / "sparse"
    with open(sparse, "wb") as f:
        f.truncate(1 << 30)  # 1 GiB, nothing on disk
    with pytest.raises(FileRefused, match=f"^{sparse}: 1073741824 bytes, over the limit"):
        read_regular(sparse, 1 << 20)


def test_atomic_write_refuses_what_is_not_regular(nodes: dict[str, Path], tmp_path: Path) -> None:
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nothing")
    for name, p in {**nodes, "dangling link": dangling}.items():
        before = os.lstat(p)
        called: list[object] = []
        e = bounded(lambda p=p, called=called: atomic_write(p, called.append), [nodes["fifo"]])  # type: ignore[misc]
        assert isinstance(e, yutenv.FileRefusedError), (name, e)
        assert str(e).startswith(f"{p}: not a regular file"), (name, str(e))
        assert not called, f"{name}: refused before anything was written"
        after = os.lstat(p)
        assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino), f"{name}: left as it was"
    assert not list(tmp_path.glob(".*.tmp")), "no temporary file left"


def test_atomic_write_writes_through_a_link_to_a_regular_file(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    assert atomic_write(link, lambda f: f.write(b"new")) == link
    assert link.is_symlink() and os.readlink(link) == "real.json", "the link is kept"
    assert real.read_text() == "new"
    fresh = tmp_path / "fresh"
    atomic_write(fresh, lambda f: f.write(b"x"))
    assert fresh.read_bytes() == b"x"


def test_nets_export_refuses_a_device_node(nodes: dict[str, Path]) -> None:
    """A writer of the package (a network's export) goes through the same check."""
    if "device" not in nodes:
        pytest.skip("mknod needs root")
    pytest.importorskip("torch")
    from yutenv.az import net

    before = os.lstat(nodes["device"])
    with pytest.raises(yutenv.FileRefusedError, match="not a regular file .a character device"):
        net.export_net(net.PolicyValueNet(213, (8,)), nodes["device"])
    assert os.lstat(nodes["device"]).st_rdev == before.st_rdev


# ---- datasets --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("uf") / "data"
    selfplay(d, "--tier", "compact", "--games", "3", "--shard-games", "2", "--agents", "greedy;random", "--seed", "2")
    return d


@pytest.fixture
def copy(made: Path, tmp_path: Path) -> Path:
    d = tmp_path / "copy"
    shutil.copytree(made, d)
    return d


def _stream(d: Path) -> None:
    from yutenv.datasets import torch as ytorch

    for _ in ytorch.ShardStream(d, batch_size=8):
        pass


READERS: dict[str, Callable[[Path], Any]] = {
    "load": datasets.load,
    "iter_shards": lambda d: list(datasets.iter_shards(d)),
    "transitions": datasets.transitions,
    "ShardStream": _stream,
}


@pytest.mark.parametrize("reader, what", [(r, w) for r in READERS for w in ("manifest", "shard")] + [("transitions", "records")])
def test_dataset_readers_refuse_a_fifo_at_once(copy: Path, reader: str, what: str) -> None:
    if reader == "ShardStream":
        pytest.importorskip("torch")
    m = json.loads((copy / "manifest.json").read_text())
    name = {"manifest": "manifest.json", "shard": m["shards"][0]["file"], "records": m["shards"][0]["records"]}[what]
    p = copy / name
    p.unlink()
    os.mkfifo(p)
    e = bounded(lambda: READERS[reader](copy), [p])
    assert isinstance(e, DatasetError), e
    assert str(e).startswith(f"{p}: ") and "not a regular file (a FIFO)" in str(e), str(e)


def test_a_manifest_linked_to_dev_zero_is_refused(copy: Path) -> None:
    (copy / "manifest.json").unlink()
    (copy / "manifest.json").symlink_to("/dev/zero")
    with pytest.raises(DatasetError, match=r"manifest.json: cannot read the manifest: not a regular file \(a character device\)"):
        datasets.load(copy)


def test_an_overstated_row_shape_is_refused_before_allocating(copy: Path) -> None:
    """A row shape whose product overflows 64 bits is counted exactly, not wrapped around."""
    mp = copy / "manifest.json"
    m = json.loads(mp.read_text())
    m["arrays"][0]["shape"] = [1 << 32, 1 << 32]
    mp.write_text(json.dumps(m))
    with pytest.raises(DatasetError, match=r"need \d+ bytes of arrays, more than a shard of"):
        datasets.load(copy)


@pytest.mark.parametrize("reader", ["load", "iter_shards", "transitions"])
def test_overstated_counts_are_refused_before_allocating(copy: Path, reader: str) -> None:
    """A manifest claiming 2**40 decisions in a shard of a few kB: load asked numpy for hundreds
    of TiB. The counts are checked against the shard files' real sizes first."""
    mp = copy / "manifest.json"
    m = json.loads(mp.read_text())
    m["shards"][0]["decisions"] = 1 << 40
    m["decisions"] = sum(s["decisions"] for s in m["shards"])
    mp.write_text(json.dumps(m))
    with pytest.raises(
        DatasetError, match=r"shard-\S+npz: the manifest's counts \(1099511627776 decisions.*more than a shard of \d+ bytes"
    ):
        READERS[reader](copy)
