"""Rule options declared once: the generated constants, the rules map on the wire, and a round
trip of every rule variant (``yutenv._protocol.VARIANTS``, from the engine's env.Variants)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from yutenv.state import Game, State, close_shared_session

import yutenv
from yutenv import _protocol
from yutenv.errors import _CODE_CLASSES, _PROTOCOL_CODES


@pytest.mark.parametrize(
    "string, mapping",
    [
        ("board=line", {"board": "line"}),
        ("board=line,spaces=7", {"spaces": 7, "board": "line"}),
        ("p=0.5", {"p": 0.5}),
        ("backdo=off", {"backdo": False}),
        ("pool=off,capture_bonus=off", {"pool": "off", "capture_bonus": False}),
    ],
)
def test_rules_map_means_the_string(srv: yutenv.Server, string: str, mapping: dict[str, object]) -> None:
    # Through the real server: the map is read by the same declarations as the string.
    assert Game(mapping).rules == Game(string).rules
    env = yutenv.YutEnv(server=srv, rules=mapping)
    try:
        assert env.rules == Game(string).rules
    finally:
        env.close()


@pytest.mark.parametrize(
    "string, mapping, message",
    [
        ("playerz=2", {"playerz": 2}, 'unknown rules key "playerz"'),
        ("p=0.5,flat_prob=0.55", {"p": 0.5, "flat_prob": 0.55}, 'rules key "flat_prob" given more than once'),
        ("end=last", {"end": "last"}, "end must be one of first, rank"),
        ("players=three", {"players": "three"}, "players must be an integer"),
    ],
)
def test_rules_mistakes_refused_alike(string: str, mapping: dict[str, object], message: str) -> None:
    errors = []
    for rules in (string, mapping):
        with pytest.raises(yutenv.InvalidRulesError, match=message) as ei:
            yutenv.EnvConfig(rules=rules)
        errors.append(str(ei.value))
        with pytest.raises(yutenv.InvalidRulesError, match=message):
            Game(rules)
    assert errors[0] == errors[1]


def test_local_check_matches_the_server(srv: yutenv.Server) -> None:
    # The message raised before any server is involved is the server's own.
    from yutenv.core import Session

    with Session(server=srv) as session, pytest.raises(yutenv.InvalidRulesError) as ei:
        session.client.call("game", {"rules": {"playerz": 2}})
    with pytest.raises(yutenv.InvalidRulesError) as local:
        Game({"playerz": 2})
    assert local.value.message.removeprefix("invalid rules: ") in ei.value.message


def test_generated_constants() -> None:
    assert yutenv.NUM_ACTIONS == _protocol.NUM_ACTIONS == 180
    keys = {o.key for o in _protocol.RULE_OPTIONS}
    assert {"players", "board", "obstacles"} <= keys
    assert _protocol.RULE_KEYS["p"] == "flat_prob" and _protocol.RULE_KEYS["backdo"] == "back_do"
    assert set(_protocol.PRESETS) == {"standard", "kata"}
    g = Game("standard")
    assert g.state_size == _protocol.PACKED_STATE_SIZE
    assert g.obs_size == _protocol.TIER_SIZES
    assert list(g.obs_size) == list(_protocol.TIERS)
    # Every server error code has a Python meaning.
    known = set(_CODE_CLASSES) | set(_PROTOCOL_CODES) | {"shutting_down", "unknown_handle", "internal"}
    assert set(_protocol.ERROR_CODES) <= known


@pytest.mark.parametrize("name", list(_protocol.VARIANTS))
def test_variant_round_trips(name: str) -> None:
    canonical = _protocol.VARIANTS[name]
    close_shared_session()  # a connection declares at most 64 rule sets; each variant starts afresh
    game = Game(name)
    assert game.rules == canonical
    assert Game(canonical).rules == canonical
    assert game.obs_size == _protocol.TIER_SIZES
    rng = np.random.default_rng(5)
    s = game.new_initial_state(seed=3)
    for _ in range(60):
        while s.is_chance_node():
            s.sample_throw()
        if s.is_terminal():
            break
        blob = s.serialize()
        assert game.deserialize(blob) == s and State.deserialize(blob) == s
        assert pickle.loads(pickle.dumps(s)) == s and copy.deepcopy(s) == s
        assert game.state_from_position(**s.position(), seed=3).position() == s.position()
        s.apply_action(int(rng.choice(s.legal_actions())))
