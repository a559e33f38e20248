"""Evaluate a Python policy against a server-side baseline agent.

>>> import numpy as np
>>> from yutenv.evaluate import evaluate
>>> def first_legal(obs, mask):                     # a batch: obs [N, D], mask [N, 180]
...     return mask.argmax(axis=1)
>>> r = evaluate(first_legal, opponent="greedy", games=200)
>>> r.games, r.win_rate_a_low <= r.win_rate_a <= r.win_rate_a_high   # a win rate, its 95% interval
(200, True)
>>> print(r)                                          # the same table as `yutenv eval`  # doctest: +ELLIPSIS
rules standard, 200 games (seat orders balanced), seed 0, ... s
+-------------+------+----------+-...
|       agent | wins | win rate |  ...

The policy plays one seat and the opponent (any agent spec: ``random``, ``greedy``,
``mc:N``, ``mcts:N,...``) every other seat, inside the server, through one
:class:`~yutenv.YutVectorEnv` per learner seat. Seat orders are balanced: the policy
plays every seat equally often, with the same game seeds in every seat, as
``yutenv eval`` does. The statistics and their names are those of ``yutenv eval
--json`` (docs/BASELINES.md).
"""

from __future__ import annotations

import inspect
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
from tabulate import tabulate

from .._progress import progress_bar
from .._protocol import NUM_ACTIONS
from ..envs.opponents import check_obs_size, is_torch_module, torch_actions
from ..envs.vector import YutVectorEnv
from ..errors import IllegalActionError
from .stats import elo_diff, luck_adjusted, wilson

# wilson and elo_diff live in yutenv.stats; they stay importable from here.
__all__ = ["EvalResult", "RATING_ANCHORS", "evaluate", "wilson", "elo_diff"]

Policy = Callable[[Any, npt.NDArray[np.bool_]], Any]


@dataclass
class EvalResult:
    """How a policy (``a``) did against an opponent (``b``); fields as in ``yutenv eval --json``.

    ``ms_per_decision_a`` is the policy's time per decision (measured around its
    calls, batched calls divided by their rows). ``ms_per_decision_b`` is measured
    from the client: the wall time of the env steps divided by the opponents'
    decisions, so it includes the round trip and the throws (an upper bound).
    ``per_seat`` maps each learner seat to ``(games, wins)``.
    """

    a: str
    b: str
    games: int
    wins_a: int
    wins_b: int
    win_rate_a: float
    win_rate_a_low: float
    win_rate_a_high: float
    chance_rate: float
    elo_diff: float | None
    elo_diff_low: float | None
    elo_diff_high: float | None
    mean_outcome_a: float
    decisions_per_game: float
    a_decisions_per_game: float
    b_decisions_per_game: float
    ms_per_decision_a: float
    ms_per_decision_b: float
    rules: str = "standard"
    seed: int = 0
    truncated: int = 0
    seconds: float = 0.0
    per_seat: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: With ``rating=True``: the policy's rating on the published scale (``random`` = 0), its
    #: standard error and 95% interval, and ``(games, wins)`` against each ladder anchor.
    rating: float | None = None
    rating_se: float | None = None
    rating_low: float | None = None
    rating_high: float | None = None
    rating_games: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Against a mixture of opponents: ``(games, wins)`` against each entry, by name.
    per_opponent: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: The luck-adjusted result (docs/BASELINES.md, "Luck-adjusted results"), as ``yutenv
    #: eval`` reports it; ``None`` with ``luck="off"``. ``luck``
    #: names the value function; the score is on the win rate's scale, its interval from the
    #: per-game adjusted results (each game's outcome minus its luck times the coefficient
    #: fitted on the other half of the games, ``luck_coefficients``: :func:`yutenv.evaluation.stats.control_variate`;
    #: the raw result when that is not narrower); ``luck_variance_ratio`` is raw over adjusted
    #: variance (1 for the raw result).
    luck: str | None = None
    luck_adjusted_score_a: float | None = None
    luck_adjusted_score_a_low: float | None = None
    luck_adjusted_score_a_high: float | None = None
    luck_adjusted_elo_diff: float | None = None
    luck_adjusted_elo_diff_low: float | None = None
    luck_adjusted_elo_diff_high: float | None = None
    luck_variance_ratio: float | None = None
    luck_coefficients: tuple[float, float] | None = None
    mean_luck_a: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The result as a plain dict (JSON-ready)."""
        d = asdict(self)
        d["per_seat"] = {str(k): list(v) for k, v in self.per_seat.items()}
        d["rating_games"] = {k: list(v) for k, v in self.rating_games.items()}
        d["per_opponent"] = {k: list(v) for k, v in self.per_opponent.items()}
        return d

    def __str__(self) -> str:
        def pct(x: float) -> str:
            return f"{100 * x:.1f}%"

        def elo(x: float | None) -> str:
            return "inf" if x is None else f"{x:+.0f}"

        elo_cell = (
            f"{elo(self.elo_diff)} [{elo(self.elo_diff_low)}, {elo(self.elo_diff_high)}]"
            if self.chance_rate == 0.5
            else "n/a (more than 2 seats)"
        )
        head = ["agent", "wins", "win rate", "95% Wilson", "Elo diff (95%)", "decisions/game", "ms/decision"]
        rows = [
            [
                self.a,
                str(self.wins_a),
                pct(self.win_rate_a),
                f"[{pct(self.win_rate_a_low)}, {pct(self.win_rate_a_high)}]",
                elo_cell,
                f"{self.a_decisions_per_game:.1f}",
                f"{self.ms_per_decision_a:.4g}",
            ],
            [
                self.b,
                str(self.wins_b),
                pct(1 - self.win_rate_a),
                f"[{pct(1 - self.win_rate_a_high)}, {pct(1 - self.win_rate_a_low)}]",
                "",
                f"{self.b_decisions_per_game:.1f}",
                f"{self.ms_per_decision_b:.4g}",
            ],
        ]
        out = [
            f"rules {self.rules}, {self.games} games (seat orders balanced), seed {self.seed}, {self.seconds:.1f} s",
            tabulate(rows, headers=head, tablefmt="pretty", stralign="right", disable_numparse=True),
        ]
        out.append(
            f"{self.games} games, {self.decisions_per_game:.1f} decisions per game; {self.a} wins "
            f"{pct(self.win_rate_a)} (chance: {pct(self.chance_rate)})"
        )
        if self.per_opponent:
            out.append(
                "against each opponent: "
                + ", ".join(f"{k} {w}/{g} ({pct(w / g) if g else 'n/a'})" for k, (g, w) in self.per_opponent.items())
            )
        if self.luck_adjusted_score_a is not None:
            lo, hi = self.luck_adjusted_score_a_low or 0.0, self.luck_adjusted_score_a_high or 0.0
            ratio = "n/a" if self.luck_variance_ratio is None else f"{self.luck_variance_ratio:.2f}"
            out.append(
                f"luck-adjusted (value {self.luck}): {self.a} scores {pct(self.luck_adjusted_score_a)} "
                f"[{pct(lo)}, {pct(hi)}]; variance raw/adjusted {ratio}"
                + ("" if self.luck_coefficients is None else ", luck coefficients {:.2f}/{:.2f}".format(*self.luck_coefficients))
            )
        if self.rating is not None:
            against = ", ".join(f"{k} {w}/{g}" for k, (g, w) in self.rating_games.items())
            out.append(
                f"rating {self.rating:+.0f} [{self.rating_low:+.0f}, {self.rating_high:+.0f}] on the published "
                f"scale (random = 0), from its wins against {against}"
            )
        return "\n".join(out)


def _adapter(
    policy: Any, deterministic: bool, batched: bool
) -> tuple[Callable[[Any, npt.NDArray[np.bool_]], npt.NDArray[np.int64]], str]:
    """A batched callable (obs, mask) -> actions, and a name for the policy."""
    predict = getattr(policy, "predict", None)
    if callable(predict):  # a Stable-Baselines3 model (MaskablePPO passes action_masks)
        try:
            masked = "action_masks" in inspect.signature(predict).parameters
        except (TypeError, ValueError):
            masked = False

        def run_model(obs: Any, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
            if masked:
                act, _ = predict(obs, action_masks=mask, deterministic=deterministic)
            else:
                act, _ = predict(obs, deterministic=deterministic)
            return np.asarray(act).reshape(-1)

        return run_model, type(policy).__name__
    if is_torch_module(policy):  # obs -> 180 logits; the legal action of highest logit
        return (lambda obs, mask: torch_actions(policy, obs, mask)), type(policy).__name__
    if not callable(policy):
        raise TypeError(
            f"policy must be a callable (obs, mask) -> actions, an sb3 model with predict() or a torch module, got {type(policy).__name__}"
        )
    name = getattr(policy, "__name__", type(policy).__name__)
    if batched:
        return (lambda obs, mask: np.asarray(policy(obs, mask)).reshape(-1)), name

    def one_by_one(obs: Any, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        rows = len(mask)
        if isinstance(obs, Mapping):
            return np.array([int(policy({k: v[i] for k, v in obs.items()}, mask[i])) for i in range(rows)])
        return np.array([int(policy(obs[i], mask[i])) for i in range(rows)])

    return one_by_one, name


def _rows(obs: Any, idx: npt.NDArray[np.intp]) -> Any:
    if isinstance(obs, Mapping):
        return {k: np.asarray(v)[idx] for k, v in obs.items()}
    return np.asarray(obs)[idx]


def evaluate(
    policy: Policy | Any,
    opponent: Any = "mcts:200",
    games: int = 1000,
    *,
    rules: str | Mapping[str, Any] = "standard",
    tier: str | None = None,
    num_envs: int = 64,
    seed: int = 0,
    deterministic: bool = True,
    batched: bool = True,
    progress: bool | None = None,
    name: str | None = None,
    rating: bool = False,
    anchors: Sequence[str] | None = None,
    luck: str | None = None,
    **env_kwargs: Any,
) -> EvalResult:
    """Play ``policy`` against ``opponent`` for ``games`` games and measure it.

    Args:
        policy: a callable ``policy(obs, mask) -> actions`` taking a batch (``obs``
            float32 [N, D], or a dict of arrays with ``obs_type="dict"``; ``mask`` bool
            [N, 180]) and returning N action ids; with ``batched=False`` a callable on
            one observation and mask returning one action. Or a Stable-Baselines3 model:
            its ``predict`` is called with ``action_masks`` when it takes them
            (sb3-contrib's ``MaskablePPO``). Or a torch module mapping obs [N, D] to [N, 180]
            logits (the legal action of highest logit). A model or module built for another
            tier than ``tier`` is a ValueError naming both, before any game.
        opponent: who plays every other seat: an agent spec (run inside the server), a
            Python policy, or a mixture drawn per game from its seed (a list, ``(entry,
            weight)`` pairs or a mapping; :mod:`yutenv.envs.opponents`); against a mixture,
            ``per_opponent`` breaks the result down by entry.
        games: games to play, rounded up to a multiple of the number of seats so
            that the policy plays every seat equally often.
        rules, tier: the env's rules and observation tier (the tier the policy was
            trained on).
        num_envs: games played at once per seat (one server-side batch).
        seed: env ``i`` of every seat's batch plays the game seed ``seed + i`` first and
            derives its later episodes' seeds from it (docs/PROTOCOL.md, "Seeds and
            determinism"), so each seat sees the same games (common random numbers).
        deterministic: passed to an sb3 model's ``predict``.
        progress: the progress bar (games, rate, ETA) on stderr: ``None`` on a terminal only,
            ``True`` always, ``False`` never.
        name: the policy's name in the result (default: its function or class name).
        rating: also place the policy on the published scale (docs/BASELINES.md, "The
            ladder"; ``random`` = 0): it plays ``games`` games against each of ``anchors``
            (as well as against ``opponent``), and ``rating``, ``rating_low``/``high`` and
            ``rating_se`` are the Bradley-Terry rating of those games with the anchors'
            published ratings held fixed (:func:`yutenv.evaluation.stats.place`). Standard rules only
            (the scale was measured on them).
        anchors: the ladder agents to play for ``rating`` (default
            :data:`RATING_ANCHORS`); each must be on the published ladder.
        luck: the value function of the luck-adjusted result (docs/BASELINES.md,
            "Luck-adjusted results"): ``"az"``, ``"progress"``, ``"off"``, ``"net:PATH"`` (a
            network file's value head, under the rules it records), or ``"auto"`` (the
            default): ``az`` for the rules it was trained for, else ``progress``. A policy
            given as an agent spec runs ``yutenv eval --luck``; a Python policy's games are
            valued by the server as they are played (the env option ``luck``).
        env_kwargs: more :class:`~yutenv.YutVectorEnv` arguments (``obs_type``,
            ``server``, ``address``, ``token``, ``max_decisions``, ``timeout``).

    Returns:
        An :class:`EvalResult`: wins, the win rate with its 95% Wilson interval, the
        Elo difference with its interval (two seats), decisions per game and
        milliseconds per decision of both sides.

    A ``policy`` given as an agent spec string (``"net:best.ynet"``, ``"net:best.ynet,sims=64"``,
    ``"mcts:400"``; docs/BASELINES.md) plays inside the Go binary instead: this runs
    ``yutenv eval --a POLICY --b OPPONENT --json`` (the network's forward pass in Go), with
    the same games, rules and seed; ``per_seat`` is then empty.

    Raises:
        IllegalActionError: the policy chose an action its mask forbids.
        InvalidArgumentError: a spec string the binary refused (its message says why).
    """
    if rating:
        main = evaluate(
            policy,
            opponent,
            games,
            rules=rules,
            tier=tier,
            num_envs=num_envs,
            seed=seed,
            deterministic=deterministic,
            batched=batched,
            progress=progress,
            name=name,
            luck=luck,
            **env_kwargs,
        )
        return _rate(main, policy, anchors, games, rules, tier, num_envs, seed, deterministic, batched, progress, env_kwargs)
    if isinstance(policy, str):
        if not isinstance(opponent, str):
            raise TypeError(
                "a policy given as an agent spec plays in the binary against one agent spec; "
                "evaluate a mixture or a Python opponent with a Python policy (e.g. the spec's net loaded in torch)"
            )
        return _evaluate_spec(policy, opponent, games, rules, seed, name, luck)
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    if num_envs < 1:
        raise ValueError(f"num_envs must be at least 1, got {num_envs}")
    for key in ("seat", "opponent", "info", "autoreset_mode", "copy"):
        if key in env_kwargs:
            raise TypeError(f"evaluate() sets {key!r} itself")
    act, policy_name = _adapter(policy, deterministic, batched)
    bar = None
    t_start = time.perf_counter()
    wins = decisions = a_decisions = truncated = 0
    outcome_sum = 0.0
    outcomes: list[float] = []
    lucks: list[float] = []
    folds: list[int] = []  # the luck adjustment's fold of each game (stats.control_variate)
    luck_name = "off"
    total = 0
    policy_s = env_s = 0.0
    per_seat: dict[int, tuple[int, int]] = {}
    per_opp: dict[str, list[int]] = {}
    players: int | None = None
    rules_text, opponent_name = "", opponent
    per_seat_games = games  # until the number of seats is known
    try:
        seat = 0
        while players is None or seat < players:
            n_envs = min(num_envs, per_seat_games)
            venv = YutVectorEnv(
                n_envs, rules=rules, opponent=opponent, seat=seat, tier=tier, info=True, luck=luck or "auto", **env_kwargs
            )
            luck_name = venv.luck
            try:
                if players is None:  # the first env tells the number of seats
                    shape = venv.single_observation_space.shape
                    if (
                        venv.obs_type != "dict" and shape
                    ):  # a model trained on another tier: said here, not as torch's shape error
                        check_obs_size(policy, f"the policy ({policy_name})", int(shape[0]), venv.tier)
                    players, rules_text, opponent_name = venv.players, venv.rules, venv.opponent
                    per_seat_games = -(-games // players)
                    total = per_seat_games * players
                    bar = progress_bar(total, f"{policy_name} vs {opponent_name}", show=progress)
                # Env i plays a fixed number of episodes (its first ones, fixed by the
                # seeds), so stopping does not favour short games.
                quota = np.full(n_envs, per_seat_games // n_envs, dtype=np.int64)
                quota[: per_seat_games % n_envs] += 1
                done = np.zeros(n_envs, dtype=np.int64)
                obs, infos = venv.reset(seed=seed)
                seat_wins = 0
                while (done < quota).any():
                    mask = np.asarray(infos["action_mask"]).astype(bool)
                    live = mask.any(axis=1)
                    counted = live & (done < quota)
                    actions = np.zeros(n_envs, dtype=np.int32)
                    idx = np.flatnonzero(counted)
                    if len(idx):
                        t0 = time.perf_counter()
                        chosen = act(_rows(obs, idx), mask[idx])
                        policy_s += time.perf_counter() - t0
                        chosen = np.asarray(chosen).reshape(-1)
                        if chosen.shape != (len(idx),):
                            raise ValueError(f"the policy returned {chosen.shape[0]} actions for {len(idx)} observations")
                        bad = [(int(i), int(a)) for i, a in zip(idx, chosen) if not (0 <= a < NUM_ACTIONS and mask[i, a])]
                        if bad:
                            i, a = bad[0]
                            raise IllegalActionError(
                                f"the policy chose action {a} in env {i}, which its mask forbids; use a masked "
                                "policy (e.g. MaskablePPO) or one that respects the mask",
                                method="evaluate",
                            )
                        actions[idx] = chosen
                        a_decisions += len(idx)
                    idle = np.flatnonzero(live & ~counted)  # envs past their quota: keep them moving
                    if len(idle):
                        actions[idle] = mask[idle].argmax(axis=1)
                    t0 = time.perf_counter()
                    obs, reward, term, trunc, infos = venv.step(actions)
                    env_s += time.perf_counter() - t0
                    ended = np.flatnonzero((term | trunc) & counted)
                    for i in ended.tolist():
                        done[i] += 1
                        won = bool(term[i]) and int(infos["winner"][i]) == seat
                        seat_wins += int(won)
                        wins += int(won)
                        truncated += bool(trunc[i])
                        outcome_sum += float(reward[i])
                        outcomes.append(float(reward[i]))
                        if luck_name != "off":
                            lucks.append(float(infos["luck"][i][seat]))
                            # Env i's episode k has the same game seed in every seat's run
                            # (common random numbers): the fold, (i + k) % 2, keeps such games
                            # together and splits each env's episodes evenly.
                            folds.append((i + int(done[i]) - 1) % 2)
                        decisions += int(infos["decisions"][i])
                        if "opponent" in infos:
                            po = per_opp.setdefault(str(infos["opponent"][i]), [0, 0])
                            po[0] += 1
                            po[1] += int(won)
                    if bar is not None and len(ended):
                        bar.update(len(ended))
                per_seat[seat] = (per_seat_games, seat_wins)
            finally:
                venv.close()
            seat += 1
    finally:
        if bar is not None:
            bar.close()
    assert players is not None
    lo, hi = wilson(wins, total)
    rate = wins / total
    two = players == 2
    b_decisions = decisions - a_decisions
    return EvalResult(
        a=name or policy_name,
        b=opponent_name,
        games=total,
        wins_a=wins,
        wins_b=total - wins,
        win_rate_a=rate,
        win_rate_a_low=lo,
        win_rate_a_high=hi,
        chance_rate=1 / players,
        elo_diff=elo_diff(rate) if two else None,
        elo_diff_low=elo_diff(lo) if two else None,
        elo_diff_high=elo_diff(hi) if two else None,
        mean_outcome_a=outcome_sum / total,
        decisions_per_game=decisions / total,
        a_decisions_per_game=a_decisions / total,
        b_decisions_per_game=b_decisions / total,
        ms_per_decision_a=1000 * policy_s / max(a_decisions, 1),
        ms_per_decision_b=1000 * env_s / max(b_decisions, 1),
        rules=rules_text,
        seed=seed,
        truncated=truncated,
        seconds=time.perf_counter() - t_start,
        per_seat=per_seat,
        per_opponent={k: (g, w) for k, (g, w) in sorted(per_opp.items())},
        **({"luck": luck_name, **luck_adjusted(outcomes, lucks, folds, two)} if luck_name != "off" else {}),  # type: ignore[arg-type]
    )


#: The ladder agents :func:`evaluate` plays with ``rating=True`` by default: from the weakest
#: to a strong search, so that most policies meet opponents near their own strength.
RATING_ANCHORS = ("random", "greedy", "mc:100", "mcts:400")


def _rate(
    main: EvalResult,
    policy: Any,
    anchors: Sequence[str] | None,
    games: int,
    rules: str | Mapping[str, Any],
    tier: str | None,
    num_envs: int,
    seed: int,
    deterministic: bool,
    batched: bool,
    progress: bool | None,
    env_kwargs: dict[str, Any],
) -> EvalResult:
    """``main`` with the policy's rating on the published scale, from games against ``anchors``."""
    from .scale import published
    from .stats import place

    pub = published()
    if main.rules != pub.rules:
        raise ValueError(
            f"rating=True places a policy on the published ladder of rules {pub.rules!r}; "
            f"these games use rules {main.rules!r} (run yutenv.ladder on them instead)"
        )
    chosen = list(RATING_ANCHORS if anchors is None else anchors)
    if not chosen:
        raise ValueError("rating=True needs at least one anchor")
    played: dict[str, tuple[int, int]] = {}
    results: list[tuple[float, int, int]] = []
    for a in chosen:
        try:
            elo = pub.rating(a).elo
        except KeyError:
            raise ValueError(f"anchor {a!r} is not on the published ladder ({[r.agent for r in pub.ratings]})") from None
        if a == main.b:
            g, w = main.games, main.wins_a
        else:
            r = evaluate(
                policy,
                a,
                games,
                rules=rules,
                tier=tier,
                num_envs=num_envs,
                seed=seed,
                deterministic=deterministic,
                batched=batched,
                progress=progress,
                name=main.a,
                luck="off",  # only the wins count: no luck accounting
                **env_kwargs,
            )
            g, w = r.games, r.wins_a
        played[a] = (g, w)
        results.append((elo, w, g))
    r8 = place(results)
    main.rating, main.rating_se, main.rating_low, main.rating_high = r8.elo, r8.se, r8.low, r8.high
    main.rating_games = played
    return main


def run_eval_json(args: Sequence[str], quiet: bool = True, method: str = "eval", command: str = "eval") -> dict[str, Any]:
    """Run ``yutenv COMMAND --json ARGS`` (``eval`` by default) with the bundled binary and
    return its JSON. A refused argument (an unknown agent, bad rules) raises
    :class:`InvalidArgumentError` with the command's message. Without ``quiet`` its progress
    bar goes to stderr."""
    import json
    import subprocess

    from ..connection.server import binary_path
    from ..errors import InvalidArgumentError

    cmd = [str(binary_path()), command, "--json", *(["--quiet"] if quiet else []), *args]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE if quiet else None, text=True, check=False)
    if p.returncode != 0:
        raise InvalidArgumentError((p.stderr or "").strip() or f"yutenv {command} exited with {p.returncode}", method=method)
    out: dict[str, Any] = json.loads(p.stdout)
    return out


def _evaluate_spec(
    policy: str,
    opponent: str,
    games: int,
    rules: str | Mapping[str, Any],
    seed: int,
    name: str | None,
    luck: str | None = None,
) -> EvalResult:
    """:func:`evaluate` of an agent spec: ``yutenv eval --json`` run by the bundled binary."""
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    rules_text = (
        rules
        if isinstance(rules, str)
        else ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in rules.items())
    )
    t0 = time.perf_counter()
    args = ["--a", policy, "--b", opponent, "--games", str(games), "--rules", rules_text, "--seed", str(seed)]
    m = run_eval_json([*args, *(["--luck", luck] if luck is not None else [])], method="evaluate")
    fields = {k: m[k] for k in EvalResult.__dataclass_fields__ if k in m}
    fields["a"] = name or m["a"]
    if fields.get("luck_coefficients") is not None:
        fields["luck_coefficients"] = tuple(fields["luck_coefficients"])
    fields.setdefault("seconds", time.perf_counter() - t0)
    return EvalResult(**fields)
