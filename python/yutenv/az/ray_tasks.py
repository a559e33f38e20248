"""Running the ``yutenv`` binary on Ray's workers, and Ray's task loop: what the self-play
(:mod:`.distributed`) and the evaluations (:mod:`.distributed_eval`) fanned out on Ray share.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
from typing import Any, Callable, Sequence

from .._extras import import_extra
from ..connection.server import binary_path

__all__ = ["WorkerCrash"]


class WorkerCrash(RuntimeError):
    """The ``yutenv`` process of a task was killed: Ray retries such a task."""


def _die_with_parent() -> None:
    # Linux: the yutenv process gets SIGKILL when the Ray worker that started it dies,
    # so a killed worker leaves no orphan playing on.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _run_yutenv(args: list[str], what: str, error: type[Exception], cwd: str | None = None) -> str:
    """Run the package's ``yutenv`` binary (in folder ``cwd``, if given); its stdout. A process
    killed by a signal raises :class:`WorkerCrash` (retried by Ray), a failure ``error``."""
    pre = _die_with_parent if sys.platform.startswith("linux") else None
    proc = subprocess.run([str(binary_path()), *args], capture_output=True, text=True, preexec_fn=pre, check=False, cwd=cwd)  # noqa: PLW1509
    if proc.returncode < 0:
        raise WorkerCrash(f"{what} was killed by signal {-proc.returncode}")
    if proc.returncode != 0:
        raise error(f"{what} failed: {proc.stderr.strip()}")
    return proc.stdout


def _run_tasks(
    ray: Any, submit: Sequence[Callable[[], Any]], max_tasks: int | None, done: Callable[[int, Any], None]
) -> list[Any]:
    """Submit the tasks, at most ``max_tasks`` in flight (None: all at once), call
    ``done(k, result)`` as task ``k`` ends, and return the results in task order. The
    first error cancels the tasks still running and is raised."""
    if max_tasks is not None and max_tasks < 1:
        raise ValueError(f"max_tasks must be at least 1, got {max_tasks}")
    limit = len(submit) if max_tasks is None else max_tasks
    results: list[Any] = [None] * len(submit)
    pending: dict[Any, int] = {}
    nxt = 0
    try:
        while nxt < len(submit) or pending:
            while nxt < len(submit) and len(pending) < limit:
                pending[submit[nxt]()] = nxt
                nxt += 1
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                k = pending.pop(ref)
                results[k] = ray.get(ref)  # raises the task's error
                done(k, results[k])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
    return results


def _ray_init(address: str | None, num_cpus: int | None) -> Any:
    ray = import_extra("ray", "ray", "yutenv.az.distributed")
    if not ray.is_initialized():
        if address and address != "local":
            ray.init(address=address, log_to_driver=False)
        else:  # a new Ray here: never the cluster RAY_ADDRESS or another user's `ray start` announces
            ray.init(address="local", num_cpus=num_cpus, log_to_driver=False)
    return ray
