"""How the positions layer talks to the server: each state method called on the process's shared
session, a rule set declared once per connection, requests and replies cut into chunks below the
frame limit, packed states of older versions upgraded, per-state arguments checked. :mod:`.state`
builds :class:`~.state.Game` and :class:`~.state.State` over these.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Mapping, TypeVar, cast

import numpy as np
import numpy.typing as npt

from .._protocol import PACKED_STATE_SIZE, PACKED_STATE_V1_SIZE, PACKED_STATE_VERSION
from ..connection.session import forget_shared_session, shared_session
from ..errors import ClosedError, ServerDiedError


def _upgrade_packed(b: bytes) -> bytes:
    """A version 1 packed state (an old pickle, a saved array) as this version, as the engine reads
    one: the same bytes, then zeros (version 2 appended the missed turns: nobody misses one)."""
    if len(b) == PACKED_STATE_V1_SIZE and b[:1] == b"\x01":
        return bytes([PACKED_STATE_VERSION]) + b[1:] + bytes(PACKED_STATE_SIZE - PACKED_STATE_V1_SIZE)
    return b


# Requests and replies are split into chunks of about this many bytes, below the
# server's default 16 MiB frame limit.
_CHUNK_BYTES = 8 << 20


def _join(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Join the answers of consecutive chunks of rows: arrays end to end, other values from the first."""
    return {key: np.concatenate([p[key] for p in parts]) if isinstance(v, np.ndarray) else v for key, v in parts[0].items()}


_T = TypeVar("_T")


def in_chunks(b: bytes, n: int, state_size: int, per_row: int, fn: Callable[[int, int, bytes], _T]) -> _T:
    """Run fn(lo, hi, packed rows) over chunks of the ``n`` packed states ``b`` (``state_size`` bytes
    each) whose request and reply (at most per_row bytes a row each) fit one frame, and join the
    results (arrays, or dicts)."""
    step = max(1, _CHUNK_BYTES // per_row)
    if n <= step:
        return fn(0, n, b)
    k = state_size
    parts = [fn(lo, min(n, lo + step), b[lo * k : min(n, lo + step) * k]) for lo in range(0, n, step)]
    if isinstance(parts[0], dict):
        return cast(_T, _join(cast(list[dict[str, Any]], parts)))
    return cast(_T, np.concatenate(cast(list[npt.NDArray[Any]], parts)))


_lock = threading.Lock()


def _call(method: str, params: Mapping[str, Any], rules: str | None = None) -> Any:
    """Call a state method on the process's shared session; ``rules`` adds its game id
    (declared once per connection). A ``game`` reply's id is remembered for its rules."""
    session = shared_session()
    try:
        p = dict(params)
        if rules is not None:
            with _lock:
                gid = session.game_ids.get(rules)
                if gid is None:
                    gid = int(session.call("game", {"rules": rules})["game"])
                    session.game_ids[rules] = gid
            p["game"] = gid
        r = session.call(method, p)
    except (ClosedError, ServerDiedError):  # the next call starts afresh
        forget_shared_session(session)
        raise
    if method == "game":
        with _lock:
            session.game_ids.setdefault(str(r["rules"]), int(r["game"]))
    return r


_infos: dict[str, dict[str, Any]] = {}


def _declare(rules: str | dict[str, Any]) -> dict[str, Any]:
    """The server's description of a rule set (asked once per process)."""
    key = rules if isinstance(rules, str) else json.dumps(rules, sort_keys=True)
    info = _infos.get(key)
    if info is None:
        info = dict(_call("game", {"rules": rules}))
        _infos[key] = info
    return info


def _per_state(values: npt.ArrayLike, n: int, method: str, what: str) -> npt.NDArray[np.integer[Any]]:
    """One integer per state (a scalar applies to all), or ValueError."""
    a = np.asarray(values)
    if a.ndim == 0:
        a = np.full(n, a)
    if a.shape != (n,) or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{method}: want {n} integer {what}, got shape {a.shape} dtype {a.dtype}")
    return a


def _seat_error(seat: int, players: int) -> int:
    raise ValueError(f"seat {seat} out of range 0..{players - 1}")


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what}: want an integer, got {v!r}")
    return int(v)
