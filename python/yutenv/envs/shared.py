"""The shared-memory data plane of an env batch (docs/PROTOCOL.md, ``share``).

After ``share``, a batch's rows (observations, masks, rewards, flags) and its actions live in one
memory region mapped by both the server and this process: a step writes the actions in place and
rings, and the server writes the rows in place. Nothing but a doorbell crosses the socket, and
nothing is copied on the way in: the rows are numpy views of the region.

Ringing: the client writes the actions, then the request kind (``op``), then the next request
counter (``req``). While the server polls the region (``awake`` is 1, for ``spin_us`` after each
request), it sees the counter change and serves at once; the client polls ``done`` until it equals
``req``. Otherwise (or when ``awake`` drops while the client waits) the client rings over the
socket with a tiny ``step {shared, seq}`` request and waits for its reply. Polling needs the
stores of one side to reach the other in program order, which x86's memory model gives; on other
CPUs the client always rings over the socket, whose system calls order the memory.

The region's layout is the server's (``share``'s ``fields``): nothing here hard-codes an offset.
"""

from __future__ import annotations

import mmap
import os
import platform
import sys
import time
from typing import Any, Callable, Mapping

import msgpack
import numpy as np
import numpy.typing as npt

from .._protocol import MAX_SHARE_SPIN_US, SHARED_LAYOUT_VERSION
from .._wire.client import Client
from ..errors import ProtocolError, YutEnvError, YutTimeoutError

#: The layout version this package reads (the server's ``vecenv.SharedVersion``, generated).
LAYOUT_VERSION = SHARED_LAYOUT_VERSION

_MAGIC = b"YUTSHM\x00\x00"

_TYPES = {"u8": np.uint8, "i8": np.int8, "u32": np.uint32, "i32": np.int32, "f32": np.float32}

#: How long (seconds) a client polls the region before ringing over the socket anyway: a server
#: that polls serves long before; one that died or stalls is then found by the socket.
POLL_LIMIT = 0.005

#: The longest poll the front ends ask the server for (microseconds): the server polls for about
#: twice the client's usual time between steps, and not at all when that is longer.
DEFAULT_SPIN_US = MAX_SHARE_SPIN_US

#: The request kinds of a region's ring: the learner's step, and an opponent's step.
STEP = 1
#: See :data:`STEP`.
OPPONENT_STEP = 2


def polling_orders_memory() -> bool:
    """Whether this CPU keeps stores in program order for the other process (x86): only then
    may a client poll the region instead of ringing over the socket."""
    return platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")


def supported(client: Client) -> bool:
    """Whether a region can be shared over ``client``: a Unix socket on Linux or macOS,
    little-endian."""
    return sys.platform.startswith(("linux", "darwin")) and sys.byteorder == "little" and client.passes_fds


class Region:
    """One handle's shared region, mapped.

    Attributes:
        bytes: the same fields as read-only memoryviews, as the socket's reply carries them.
        views: every array field of the region by name (``obs`` [N, D], ``mask`` [N, A] int8,
            ``reward``, ``terminated``/``truncated`` as bool, ``to_move``, and the optional
            ``final_*``, ``opponent``, ``pending``): read-only numpy views, overwritten by the
            next reset or step.
        actions: the writable [N] int32 view the next step reads its actions from.
    """

    def __init__(self, client: Client, handle: int, spin_us: int = 0) -> None:
        self._client = client
        self.handle = handle
        result, fd = client.call_fd("share", {"handle": handle, "spin_us": int(spin_us)})
        try:
            size = int(result["size"])
            self._mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        if bytes(self._mm[:8]) != _MAGIC or int(result["version"]) != LAYOUT_VERSION:
            self._mm.close()
            raise ProtocolError(
                f"share: a region of layout version {result.get('version')!r}; this package reads version {LAYOUT_VERSION}"
            )
        self.spin_us = int(result["spin_us"])
        self.poll = self.spin_us > 0 and polling_orders_memory()
        ro = memoryview(self._mm).toreadonly()
        self.views: dict[str, npt.NDArray[Any]] = {}
        self.bytes: dict[str, memoryview] = {}
        words: dict[str, npt.NDArray[np.uint32]] = {}
        for f in result["fields"]:
            name, off, typ = str(f["name"]), int(f["offset"]), str(f["type"])
            shape = tuple(int(d) for d in f.get("shape") or ())
            count = int(np.prod(shape)) if shape else 1
            dtype = np.dtype(_TYPES[typ]).newbyteorder("<")
            if name in ("req", "op", "done", "awake"):
                words[name] = np.frombuffer(self._mm, dtype=dtype, count=1, offset=off)
                continue
            if name in ("magic", "version"):
                continue
            if name == "actions":
                self.actions: npt.NDArray[np.int32] = np.frombuffer(self._mm, dtype=dtype, count=count, offset=off)
                continue
            self.bytes[name] = ro[off : off + count * dtype.itemsize]
            v = np.frombuffer(ro, dtype=dtype, count=count, offset=off)
            if name in ("terminated", "truncated"):
                v = v.view(np.bool_)
            self.views[name] = v.reshape(shape)
        missing = {"req", "op", "done", "awake"} - set(words)
        if missing or not hasattr(self, "actions"):
            self._mm.close()
            raise ProtocolError(f"share: the region lacks the fields {sorted(missing | {'actions'})}")
        self._req, self._op, self._done, self._awake = words["req"], words["op"], words["done"], words["awake"]
        self.seq = int(self._req[0])
        pk = msgpack.Packer(use_bin_type=True)
        head = pk.pack("handle") + pk.pack(handle) + pk.pack("shared") + pk.pack(True) + pk.pack("seq")
        self._ring_prefix = (b"\x83" + head, b"\x84" + pk.pack("info") + pk.pack(True) + head)
        self._owner = os.getpid()
        self._pending = self._rung = self._info = False
        #: A request still pending whose caller was interrupted: settle() finishes it before
        #: the next one, so the server cannot serve it after (a reset, say).
        self._abandoned = False
        #: Yield the CPU between polls of a request's completion: a batch of several envs is
        #: stepped by the server's workers on every core, and a client that spins without
        #: yielding takes one of them (on 2 cores a 256-env step then takes about twice as long).
        self.yield_cpu = self.views["to_move"].shape[0] > 1 and hasattr(os, "sched_yield")
        self._method = "step"
        self.closed = False

    def request(self, op: int, info: bool = False) -> Mapping[str, Any]:
        """Serve the actions written in :attr:`actions` as request ``op`` (:data:`STEP` or
        :data:`OPPONENT_STEP`); returns the ring's reply (``seq``, ``info``), or ``{}`` when
        the server served it while polling. The rows are in :attr:`views` on return."""
        self.send(op, info)
        return self.wait()

    def send(self, op: int, info: bool = False) -> None:
        """Start request ``op`` (see :meth:`request`) without waiting for it: the server works
        on it while this process goes on; :meth:`wait` ends it. One request at a time."""
        if self.closed:
            raise YutEnvError("step: the shared region is closed")
        self.settle()
        if os.getpid() != self._owner:
            # A forked child inherits the map: writing to it would step the parent's games.
            raise YutEnvError(
                "a yutenv env or client cannot be used in a forked child process: "
                "create it in the child (or use the 'spawn'/'forkserver' start method)"
            )
        if self._pending:
            raise YutEnvError("step: the last request was sent and not waited for (call wait first)")
        k = (self.seq + 1) & 0xFFFFFFFF
        self._op[0] = op
        self._req[0] = k
        self.seq = k
        self._method = "step" if op == STEP else "opponent_step"
        self._info = info
        self._pending = True
        self._rung = False  # until _ring has sent it
        try:
            if not (self.poll and not info and self._awake[0]):
                self._ring()
        except BaseException:
            if self._client.closed:
                self._pending = False  # the client closed a half-sent ring: nothing is pending
            else:
                self._abandoned = True  # the ring may have gone out: settle() finishes it
            raise

    def _ring(self) -> None:
        self._client.send_packed(self._method, self._ring_prefix[self._info] + msgpack.packb(self.seq))
        self._rung = True

    @property
    def polled(self) -> bool:
        """Whether a request is in flight and was left to the server's poll (not rung): only
        then is polling :meth:`ready` the way to see it served; else the socket's reply is."""
        return self._pending and not self._rung

    def ready(self) -> bool:
        """Whether the request sent is served, without blocking (a ring whose reply is still in
        the socket counts as served only once :meth:`wait` reads it)."""
        if not self._pending:
            return True
        if self._rung:
            return self._client.reply_waiting()
        if self._done[0] == self.seq:
            return True
        if not self._awake[0]:
            self._ring()  # the server stopped polling before it saw the request
        return False

    def wait(self, idle: Callable[[], None] | None = None) -> Mapping[str, Any]:
        """End the request :meth:`send` started: returns as :meth:`request` does. ``idle``, if
        given, is called once while the server works, before this process waits."""
        if not self._pending:
            raise YutEnvError("step: no request was sent")
        try:
            if idle is not None:
                idle()
            served = False  # by the server's poll of the region: no reply on the socket
            if not self._rung:
                k, done, awake = self.seq, self._done, self._awake
                until = time.perf_counter() + POLL_LIMIT
                i = 0
                yield_ = os.sched_yield if self.yield_cpu else None
                while True:
                    if done[0] == k:
                        served = True
                        break
                    if not awake[0]:
                        break
                    i += 1
                    if yield_ is not None:
                        yield_()
                    if i & 255 == 0 and time.perf_counter() > until:
                        break
                if not served:
                    served = done[0] == k
                    if not served:
                        self._ring()
            reply: Mapping[str, Any] = {} if served else self._client.recv_reply(self._method)
        except YutEnvError:
            self._pending = False  # answered (a refusal) or the connection is gone
            raise
        except BaseException:
            # Interrupted while the server may still serve the request: it stays pending,
            # abandoned, and settle() finishes it before the next one.
            self._abandoned = True
            raise
        self._pending = False
        return reply

    def settle(self) -> None:
        """Finish a request its caller was interrupted in (see :meth:`wait`): wait until the
        region says the server has served it, so that it cannot land after the next request (a
        reset, say). Its reply on the socket, if any, is skipped by the client's next read.
        Nothing to do otherwise."""
        if not self._abandoned:
            return
        self._abandoned = False
        self._client.abandon()
        k, rung = self.seq, self._rung
        limit = self._client.timeout
        until = None if limit is None else time.monotonic() + limit
        while self._done[0] != k:
            if not rung and not self._awake[0]:
                self._ring()  # nothing serves it until rung (a second ring of k is answered, not rerun)
                self._client.abandon()
                rung = True
            if until is not None and limit is not None and time.monotonic() > until:
                raise YutTimeoutError(
                    f"step: the server did not finish an interrupted step within {limit:g} s", method="step", timeout=limit
                )
            time.sleep(0.0002)
        self._pending = False

    def close(self) -> None:
        """Unmap the region (the views then fail to read: drop them first). Idempotent."""
        if self.closed:
            return
        self.closed = True
        self.views.clear()
        self.bytes.clear()
        del self.actions, self._req, self._op, self._done, self._awake
        try:
            self._mm.close()
        except BufferError:
            pass  # views still exported: the map goes when the last one does
