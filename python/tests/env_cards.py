"""The generated parts of docs/ENVIRONMENTS.md (the env cards), and its board pictures.

Each card's spec table and the table of ``make()``'s keyword arguments are written here from the
code: the spaces from envs made by the real server, the ids, names and modes from the front ends'
metadata, the arguments from :class:`yutenv.EnvConfig`'s fields, defaults and docstring (and the
vector env's own keywords from its signature and docstring). The board pictures are the SVG the
binary draws (``yutenv replay --svg``) of a fixed game. ``python/tests/test_env_cards.py`` fails
when the page or a picture is stale; rewrite them with::

    .venv/bin/python python/tests/env_cards.py --update
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

import yutenv
from yutenv import _protocol
from yutenv.envs.config import EnvConfig
from yutenv.envs.pettingzoo import SINGLE_AGENT_OPTIONS, YutAECEnv
from yutenv.envs.pettingzoo_parallel import YutParallelEnv
from yutenv.envs.vector import YutVectorEnv

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "ENVIRONMENTS.md"
BEGIN = "<!-- BEGIN GENERATED: {} (python/tests/env_cards.py --update; do not edit) -->"
END = "<!-- END GENERATED -->"

# The board pictures: (file under docs/img, rules, agents, game seed, position after that many events).
BOARDS = [
    ("board-standard.svg", "standard", "mcts:50;mcts:50", 3, 50),
    ("board-kata.svg", "kata", "greedy;greedy", 3, 20),
]


def _box(space: Any) -> str:
    low, high = float(np.min(space.low)), float(np.max(space.high))
    return f"`Box({low:g}, {high:g}, {tuple(space.shape)}, {np.dtype(space.dtype).name})`"


def _tiers(make: Callable[[str], Any], space_of: Callable[[Any], Any]) -> str:
    parts = []
    for tier in _protocol.TIERS:
        env = make(tier)
        try:
            default = " (the default)" if tier == _default_tier() else ""
            parts.append(f'{_box(space_of(env))} with `tier="{tier}"`{default}')
        finally:
            env.close()
    return "; ".join(parts)


_DEFAULT_TIER: list[str] = []


def _default_tier() -> str:
    if not _DEFAULT_TIER:
        env = yutenv.make()
        _DEFAULT_TIER.append(env.tier)
        env.close()
    return _DEFAULT_TIER[0]


def _table(rows: list[tuple[str, str]]) -> str:
    return "| | |\n|---|---|\n" + "".join(f"| {k} | {v} |\n" for k, v in rows)


def _rewards() -> str:
    # The ranges follow from the rules of docs/PROTOCOL.md, "Rewards": outcomes in [-1, 1], and
    # potentials in [-0.5, 0.5] (vecenv's progressScale), so a shaped step lies in [-1.5, 1.5].
    ranges = {"win": "[-1, 1], at the last step only", "progress": "[-1.5, 1.5], every step"}
    if set(ranges) != set(_protocol.REWARDS):
        raise SystemExit(f"reward schemes {_protocol.REWARDS}: say each one's range in env_cards._rewards")
    return "; ".join(f'`reward="{r}"`{" (the default)" if r == EnvConfig.reward else ""}: {ranges[r]}' for r in _protocol.REWARDS)


def _players() -> str:
    o = next(o for o in _protocol.RULE_OPTIONS if o.key == "players")
    return f"{o.min:g} to {o.max:g} seats (rules `players`, {o.default} by default)"


def gymnasium_spec() -> str:
    env = yutenv.make(obs_type="dict")
    try:
        dict_space = "`Dict('action_mask': " + _box(env.observation_space["action_mask"]).strip("`") + ", 'observation': ...)`"
        rows = [
            ("Import", f'`env = yutenv.make()`, or `gymnasium.make("{yutenv.ENV_ID}")` after `import yutenv`'),
            ("Class", "`yutenv.YutEnv` (a `gymnasium.Env`)"),
            ("Env id", f"`{yutenv.ENV_ID}`"),
            ("Action space", f"`{env.action_space}`: `throw * {_protocol.NUM_SOURCES} + source`"),
            ("Observation space", _tiers(lambda t: yutenv.make(tier=t), lambda e: e.observation_space)),
            ('With `obs_type="dict"`', dict_space),
            ("Action mask", '`info["action_mask"]` (int8), `env.action_masks()` (bool)'),
            ("Reward range", _rewards()),
            ("Agents", f"one learner seat; the server plays the others; {_players()}"),
            ("Render modes", ", ".join(f"`{m}`" for m in env.metadata["render_modes"])),
        ]
    finally:
        env.close()
    return _table(rows)


def vector_spec() -> str:
    n = 4
    env = yutenv.make(num_envs=n)
    try:
        modes = " or ".join(f"`{m.name}`" for m in (type(env.autoreset_mode).NEXT_STEP, type(env.autoreset_mode).SAME_STEP))
        rows = [
            ("Import", f'`venv = yutenv.make(num_envs=N)`, or `gymnasium.make_vec("{yutenv.ENV_ID}", num_envs=N)`'),
            ("Class", "`yutenv.YutVectorEnv` (a `gymnasium.vector.VectorEnv`)"),
            (f"Action space (N = {n})", f"`{env.action_space}`; `single_action_space` `{env.single_action_space}`"),
            (
                f"Observation space (N = {n})",
                f"{_box(env.observation_space)}; `single_observation_space` as `YutEnv`'s, by tier: "
                + _tiers(lambda t: yutenv.make(num_envs=1, tier=t), lambda e: e.single_observation_space),
            ),
            ("Action masks", '`infos["action_mask"]` (int8 [N, 180]), `venv.action_masks()` (bool [N, 180])'),
            ("Reward range", "float32 [N], each as `YutEnv`'s: " + _rewards()),
            ("Autoreset", f"on the server; `autoreset_mode` {modes} (default `{env.metadata['autoreset_mode'].name}`)"),
            ("Render modes", ", ".join(f"`{m}`" for m in env.metadata["render_modes"])),
        ]
    finally:
        env.close()
    return _table(rows)


def pettingzoo_spec() -> str:
    aec = YutAECEnv()
    par = YutParallelEnv()
    three = YutAECEnv(rules="players=3")
    try:
        a0 = aec.possible_agents[0]
        space = aec.observation_space(a0)
        rows = [
            ("Import", "`yutenv.pettingzoo.env()` (AEC), `yutenv.envs.pettingzoo_parallel.parallel_env()` (Parallel)"),
            (
                "Classes",
                "`yutenv.pettingzoo.YutAECEnv` (a `pettingzoo.AECEnv`), `yutenv.envs.pettingzoo_parallel.YutParallelEnv`",
            ),
            ("Names", f"`{aec.metadata['name']}` (AEC), `{par.metadata['name']}` (Parallel)"),
            ("Agents", f'`{aec.possible_agents}`; with `rules="players=3"` `{three.possible_agents}`; {_players()}'),
            ("Action space", f"`{aec.action_space(a0)}` for every agent"),
            (
                "Observation space",
                "`Dict('action_mask': "
                + _box(space["action_mask"]).strip("`")
                + ", 'observation': ...)`, the observation by tier: "
                + _tiers(lambda t: YutAECEnv(tier=t), lambda e: e.observation_space(a0)["observation"]),
            ),
            ("Reward range", "every agent's, as `YutEnv`'s: " + _rewards()),
            ("Parallel API", f"yes (`parallel_env`); `is_parallelizable` {aec.metadata['is_parallelizable']} (turns repeat)"),
            ("Render modes", ", ".join(f"`{m}`" for m in aec.metadata["render_modes"])),
        ]
    finally:
        aec.close()
        par.close()
        three.close()
    return _table(rows)


def kata_spec() -> str:
    env = yutenv.make(rules="kata")
    std = yutenv.make()
    try:
        spaces = next(o for o in _protocol.RULE_OPTIONS if o.key == "spaces")
        rows = [
            ("Import", '`yutenv.make(rules="kata")`, or `rules="kata"` in any front end (a preset: `"kata,players=3"`)'),
            ("Rules", f"`{env.rules}`: a line of spaces (`spaces`, {spaces.min:g} to {spaces.max:g}), docs/RULES.md"),
            ("Action space", f"`{env.action_space}`, the same codec: sources are spaces and `{_protocol.ENTER_SOURCE}` (enter)"),
            (
                "Observation space",
                f"{_box(env.observation_space)} (tier `{env.tier}`)"
                + (": every tier keeps its size on the line" if env.observation_space == std.observation_space else ""),
            ),
            ("Agents", f"{env.players} seats by default, as the standard rules"),
        ]
    finally:
        env.close()
        std.close()
    return _table(rows)


# ---- the arguments -------------------------------------------------------------------


def _doc_entries(doc: str) -> dict[str, str]:
    """``name: text`` entries of a Google-style docstring's Attributes/Args sections, joined."""
    out: dict[str, str] = {}
    current = None
    for line in doc.split("\n"):
        m = re.match(r"^        (\w+): (.*)$", line)
        if m:
            current = m.group(1)
            out[current] = m.group(2).strip()
        elif current and re.match(r"^            \S", line):
            out[current] += " " + line.strip()
        else:
            current = None
    return out


def _markdown(text: str) -> str:
    """A docstring's reStructuredText as Markdown: ``x`` and :role:`~a.b` become `x` and `a.b`."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`").replace("|", "&#124;")


def _default(value: Any) -> str:
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value}`"


def arguments() -> str:
    docs = _doc_entries(EnvConfig.__doc__ or "")
    vec_docs = _doc_entries(YutVectorEnv.__doc__ or "")
    rows = []
    for f in dataclasses.fields(EnvConfig):
        if f.name not in docs:
            raise SystemExit(f"EnvConfig.{f.name} has no entry in EnvConfig's docstring: document it there")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        where = "single-agent envs (not PettingZoo)" if f.name in SINGLE_AGENT_OPTIONS else "all"
        if f.name == "render_mode":
            where = 'all (`"human"`: one-game envs)'
        rows.append((f.name, _default(default), where, docs[f.name]))
    sig = inspect.signature(YutVectorEnv.__init__)
    for name in ("autoreset_mode", "copy"):
        d = sig.parameters[name].default
        default = f"`{type(d).__name__}.{d.name}`" if hasattr(d, "name") else _default(d)
        rows.append((name, default, "vector env", vec_docs[name]))
    lines = ["| argument | default | front ends | what it does |", "|---|---|---|---|"]
    for name, default, where, text in rows:
        lines.append(f"| `{name}` | {default} | {where} | {_markdown(text)} |")
    return "\n".join(lines) + "\n"


REGIONS: dict[str, Callable[[], str]] = {
    "gymnasium spec": gymnasium_spec,
    "vector spec": vector_spec,
    "pettingzoo spec": pettingzoo_spec,
    "kata spec": kata_spec,
    "arguments": arguments,
}


def render(page: str) -> str:
    """The page with every generated region written anew."""
    for name, fn in REGIONS.items():
        begin = BEGIN.format(name)
        i = page.find(begin)
        if i < 0:
            raise SystemExit(f"docs/ENVIRONMENTS.md has no line {begin}")
        start = i + len(begin)
        n = page.find(END, start)
        if n < 0:
            raise SystemExit(f"docs/ENVIRONMENTS.md: region {name!r} has no {END}")
        page = page[:start] + "\n" + fn() + page[n:]
    return page


def board_svg(rules: str, agents: str, seed: int, position: int) -> bytes:
    """The SVG ``yutenv replay --svg`` draws of one position of a game of ``yutenv selfplay``."""
    binary = str(yutenv.binary_path())
    with tempfile.TemporaryDirectory() as tmp:
        record, boards = Path(tmp) / "game.jsonl", Path(tmp) / "boards"
        run = [binary, "selfplay", "--rules", rules, "--agents", agents, "--games", "1", "--seed", str(seed)]
        subprocess.run([*run, "--out", str(record), "--quiet"], check=True, capture_output=True)
        subprocess.run([binary, "replay", str(record), "--svg", str(boards), "--quiet"], check=True, capture_output=True)
        return (boards / f"game0-{position:04d}.svg").read_bytes()


def main(argv: list[str]) -> int:
    if argv != ["--update"]:
        print(__doc__, file=sys.stderr)
        return 2
    PAGE.write_text(render(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    for name, rules, agents, seed, position in BOARDS:
        (REPO / "docs" / "img" / name).write_bytes(board_svg(rules, agents, seed, position))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
