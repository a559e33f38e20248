"""``python -m yutenv.tools.bench_torchrl``: TorchRL env steps a second, the native door beside
the Gymnasium env it replaces.

Side by side, in interleaved rounds on one machine, each configuration stepping ``rollout``
with a random legal action per env drawn from the ``action_mask`` in the data
(:func:`yutenv.integrations.torchrl.masked_random_policy`), against the server's ``random``:

* ``native``: :class:`~yutenv.integrations.torchrl.YutTorchRLEnv` of N envs, one server batch;
* ``GymWrapper``: what a TorchRL user builds without the door: ``GymWrapper(yutenv.make(...,
  illegal="penalty"), categorical_action_encoding=True)`` with an info reader for
  ``action_mask`` (the workarounds it needs: TorchRL's spec check draws unmasked actions, and
  its default action encoding is one-hot), and N of them in a ``SerialEnv``.

A "step" is one learner decision of one env; the opponent's replies, throws and resets happen
inside it. Needs the ``torchrl`` extra.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

from tabulate import tabulate

from .._extras import import_extra

import_extra("torchrl", "torchrl", "python -m yutenv.tools.bench_torchrl")
import torch  # noqa: E402
from torchrl.data import Categorical  # noqa: E402
from torchrl.envs import EnvBase, GymWrapper, SerialEnv  # noqa: E402
from torchrl.envs.libs.gym import default_info_dict_reader  # noqa: E402

from .._protocol import NUM_ACTIONS  # noqa: E402
from ..connection.server import Server  # noqa: E402
from ..envs.gym_env import YutEnv  # noqa: E402
from ..integrations.torchrl import YutTorchRLEnv, masked_random_policy  # noqa: E402

__all__ = ["main"]


def gym_wrapper(server: Server, opponent: str) -> EnvBase:
    """One ``yutenv.make()`` env (a ``YutEnv``) behind TorchRL's ``GymWrapper``, with the workarounds it needs."""
    env = GymWrapper(YutEnv(opponent=opponent, illegal="penalty", server=server), categorical_action_encoding=True)
    spec = {"action_mask": Categorical(2, shape=(NUM_ACTIONS,), dtype=torch.bool)}
    env.set_info_dict_reader(default_info_dict_reader(["action_mask"], spec=spec))
    return env


def _policy(td: Any) -> Any:
    td.set("action_mask", td["action_mask"].to(torch.bool))  # the info reader's int8 mask
    return masked_random_policy(td)


def configs(server: Server, sizes: list[int], opponent: str) -> list[tuple[str, int, Callable[[], EnvBase]]]:
    """The configurations measured: each size as the native env and as GymWrapper envs."""
    out: list[tuple[str, int, Callable[[], EnvBase]]] = []
    for n in sizes:
        out.append(("YutTorchRLEnv", n, lambda n=n: YutTorchRLEnv(n, opponent=opponent, server=server)))  # type: ignore[misc]
        if n == 1:
            out.append(("GymWrapper(yutenv.make())", 1, lambda: gym_wrapper(server, opponent)))
        else:
            out.append((f"SerialEnv({n}, GymWrapper)", n, lambda n=n: SerialEnv(n, lambda: gym_wrapper(server, opponent))))  # type: ignore[misc]
    return out


def measure(envs: list[tuple[str, int, EnvBase]], steps: int, rounds: int) -> list[dict[str, Any]]:
    """The median over ``rounds`` interleaved rounds of each env's steps a second."""
    rates: dict[tuple[str, int], list[float]] = {(name, n): [] for name, n, _ in envs}
    for env in (e for _, _, e in envs):
        env.rollout(10, policy=_policy, break_when_any_done=False)  # warm-up
    for _ in range(rounds):
        for name, n, env in envs:
            t = time.perf_counter()
            env.rollout(steps, policy=_policy, break_when_any_done=False)
            rates[name, n].append(n * steps / (time.perf_counter() - t))
    return [{"configuration": name, "envs": n, "steps_per_s": statistics.median(rates[name, n])} for name, n, _ in envs]


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table; ``argv`` as on the command line."""
    ap = argparse.ArgumentParser(prog="python -m yutenv.tools.bench_torchrl", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,64", help="env counts (default 1,64)")
    ap.add_argument("--steps", type=int, default=300, help="rollout steps per round (default 300)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the median is reported (default 3)")
    ap.add_argument("--opponent", default="random", help="the server-side opponent (default random)")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    sizes = [int(s) for s in args.sizes.split(",")]
    # One connection per GymWrapper: a server of its own, with room for all of them.
    with Server(args=["--max-conns", str(2 * sum(sizes) + 16)]) as server:
        made = [(name, n, build()) for name, n, build in configs(server, sizes, args.opponent)]
        try:
            rows = measure(made, args.steps, args.rounds)
        finally:
            for _, _, env in made:
                env.close(raise_if_closed=False)
    base = {r["envs"]: r["steps_per_s"] for r in rows if r["configuration"] != "YutTorchRLEnv"}
    table = [
        [r["configuration"], r["envs"], f"{r['steps_per_s']:,.0f}", f"{r['steps_per_s'] / base[r['envs']]:.1f}x"] for r in rows
    ]
    fmt = "github" if args.markdown else "simple"
    print(
        tabulate(
            table,
            headers=["configuration", "envs", "env steps/s", "vs GymWrapper"],
            tablefmt=fmt,
            colalign=("left", "right", "right", "right"),
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
