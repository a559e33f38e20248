"""Verified checkpoints of :mod:`yutenv.az.train` runs (docs/TRAINING.md, "Verified checkpoints").

A generation's ``gen.json`` ends with a ``checkpoint`` record::

    "checkpoint": {"version": 1, "run": RUN_ID, "generation": G,
                   "files": {"model.pt": {"sha256": HEX, "bytes": N}, "net.ynet": {...},
                             "selfplay/manifest.json": {...}, "selfplay/shard-00000.npz": {...}}}

``RUN_ID`` is the run's identity (``config.json``'s ``run_id``, drawn when the run was made);
``files`` lists every file of the generation's directory but ``gen.json`` itself. A resume
checks the generations it reads against their records (:func:`check_generation`) and loads
the last one's ``model.pt`` with :func:`load_checkpoint`, which also checks the generation
number, the run, the architecture and the weights (finite, at most ``MAX_ABS_WEIGHT``).
Every problem is a :class:`~yutenv.errors.CheckpointError` whose message names the file.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any, Mapping

import torch

from .._files import FileRefused, read_regular, sha256_file
from ..errors import CheckpointError
from .net import PolicyValueNet, weight_problem

__all__ = ["CHECKSUM_VERSION", "MAX_CHECKPOINT_BYTES", "file_records", "check_generation", "read_json", "load_checkpoint"]

#: The version of gen.json's ``checkpoint`` record.
CHECKSUM_VERSION = 1
#: The largest ``model.pt`` read (weights, optimiser state and config: about 4x the network).
MAX_CHECKPOINT_BYTES = 1 << 30
#: The largest ``config.json`` or ``gen.json`` read.
MAX_JSON_BYTES = 16 << 20


def _why(e: OSError) -> str:
    if isinstance(e, FileNotFoundError):
        return "missing"
    if isinstance(e, FileRefused):
        return str(e.strerror)
    return f"unreadable ({e.strerror or e})"


def file_records(d: Path) -> dict[str, dict[str, Any]]:
    """``{relative path: {"sha256", "bytes"}}`` of every file under generation directory ``d``
    but its ``gen.json`` (and temporary files of an unfinished write)."""
    out: dict[str, dict[str, Any]] = {}
    for p in sorted(d.rglob("*")):
        rel = p.relative_to(d).as_posix()
        if rel == "gen.json" or p.name.endswith(".tmp") or not p.is_file():
            continue
        digest, size = sha256_file(p)
        out[rel] = {"sha256": digest, "bytes": size}
    return out


def read_json(path: Path, what: str, generation: int | None = None) -> Any:
    """The JSON document in ``path`` (a regular file of at most 16 MiB), or CheckpointError
    ``"PATH: WHAT is PROBLEM"``."""
    try:
        data = read_regular(path, MAX_JSON_BYTES)
    except OSError as e:
        raise CheckpointError(f"{path}: {what} is {_why(e)}", str(path), generation) from None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: {what} is not valid JSON (damaged: {e})", str(path), generation) from None


def check_generation(d: Path, g: int, run_id: str, summary: Mapping[str, Any]) -> list[str]:
    """Check generation ``g``'s files against the checkpoint record of its ``gen.json``
    (``summary``, whose ``generation`` the caller has checked).

    Returns the names of the files that could not be verified because the record has no
    checksums (a generation written by an older yutenv: ``[]`` otherwise). Raises
    :class:`CheckpointError` (without the fix, which the caller adds) for a wrong generation
    or run, a missing, damaged or replaced file.
    """
    gp = d / "gen.json"

    def bad(path: Path, problem: str) -> CheckpointError:
        return CheckpointError(f"{path}: {problem}", str(path), g)

    rec = summary.get("checkpoint")
    if rec is None:
        return sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file() and p.name != "gen.json")
    if not isinstance(rec, dict) or rec.get("version") != CHECKSUM_VERSION or not isinstance(rec.get("files"), dict):
        raise bad(gp, f"its checkpoint record is not a version {CHECKSUM_VERSION} record (damaged)")
    if rec.get("generation") != g:
        raise bad(
            gp,
            f"its checkpoint record says generation {rec.get('generation')!r}, but it is in {d.name} (copied from another generation)",
        )
    if rec.get("run") != run_id:
        raise bad(gp, f"belongs to run {rec.get('run')!r}, not to this run ({run_id}): copied from another run")
    files: dict[str, Any] = rec["files"]
    for need in ("model.pt", "net.ynet"):
        if need not in files:
            raise bad(gp, f"its checkpoint record lists no {need} (damaged)")
    for rel, want in sorted(files.items()):
        parts = Path(rel).parts
        if not isinstance(want, dict) or Path(rel).is_absolute() or ".." in parts or not parts:
            raise bad(gp, f"its checkpoint record has a bad entry {rel!r} (damaged)")
        p = d / rel
        try:
            digest, size = sha256_file(p)
        except OSError as e:
            raise bad(p, _why(e)) from None
        if size != want.get("bytes"):
            raise bad(p, f"{size} bytes, gen.json says {want.get('bytes')!r} (truncated or replaced)")
        if digest != want.get("sha256"):
            raise bad(p, "its SHA-256 differs from gen.json's (damaged or replaced)")
    return []


def load_checkpoint(
    path: str | os.PathLike[str],
    *,
    generation: int | None = None,
    run_id: str | None = None,
    spec: Mapping[str, Any] | None = None,
) -> tuple[PolicyValueNet, dict[str, Any]]:
    """A generation's ``model.pt``: the network (in eval mode) and the whole checkpoint dict.

    The file must be a regular file of at most :data:`MAX_CHECKPOINT_BYTES`, a torch checkpoint
    of this package (weights, optimiser state, architecture), of ``generation`` and of run
    ``run_id`` when given (checkpoints written by an older yutenv name no run), of the
    architecture ``spec`` (``hidden`` and ``tier``) when given, and its weights and optimiser
    state must be finite, the weights at most ``MAX_ABS_WEIGHT``. Raises
    :class:`~yutenv.errors.CheckpointError` naming the file otherwise.
    """
    p = Path(path)

    def bad(problem: str) -> CheckpointError:
        return CheckpointError(f"{p}: {problem}", str(p), generation)

    try:
        data = read_regular(p, MAX_CHECKPOINT_BYTES)
    except OSError as e:
        raise bad(_why(e)) from None
    if not data:
        raise bad("empty (0 bytes)")
    try:
        ck = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001
        # model.pt is bytes from disk: torch's zip reader and its restricted unpickler raise a
        # dozen unrelated types on damage (RuntimeError, UnpicklingError, EOFError, ValueError,
        # KeyError, struct.error, UnicodeDecodeError, ...). All mean a damaged checkpoint.
        raise bad(f"not a readable torch checkpoint ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
    if not isinstance(ck, dict) or not all(isinstance(ck.get(k), dict) for k in ("spec", "model", "optimizer")):
        raise bad("not a yutenv.az checkpoint (no spec, model and optimizer)")
    if generation is not None and ck.get("generation") != generation:
        raise bad(f"holds generation {ck.get('generation')!r}, not {generation} (copied from another generation)")
    if run_id is not None and ck.get("run", run_id) != run_id:
        raise bad(f"belongs to run {ck.get('run')!r}, not to this run ({run_id}): copied from another run")
    sp = ck["spec"]
    if spec is not None and (list(sp.get("hidden", [])) != list(spec["hidden"]) or sp.get("tier") != spec["tier"]):
        raise bad(
            f"holds a network of hidden={sp.get('hidden')!r} tier={sp.get('tier')!r}, this run trains hidden={list(spec['hidden'])} tier={spec['tier']!r}"
        )
    why = weight_problem(ck["model"].items())
    if why:
        raise bad(f"{why} (damaged or diverged)")
    state = ck["optimizer"].get("state", {})
    opt = [(f"optimizer.{k}.{n}", t) for k, s in state.items() if isinstance(s, dict) for n, t in s.items()]
    if any(torch.is_tensor(t) and t.is_floating_point() and not bool(torch.isfinite(t).all()) for _, t in opt):
        raise bad("the optimiser state has a NaN or an infinity (damaged)")
    try:
        model = PolicyValueNet(**sp)
        model.load_state_dict(ck["model"])
    except Exception as e:  # noqa: BLE001  # a damaged spec or state dict: any type at all
        raise bad(f"its weights do not fit its architecture ({type(e).__name__}: {str(e).splitlines()[0]})") from None
    model.eval()
    return model, ck
