"""The fuzz targets' properties under hypothesis: any input -> a value or a named refusal.

Every way bytes enter a peer or a tool (issue 9) has one check in
fuzz/targets.py, shared with the atheris runner (fuzz/run.py); here
hypothesis feeds those checks arbitrary bytes, arbitrary msgpack values and
messages built from real ones with fields replaced, in the ordinary test run
(about 200 examples each, seconds in all).

Each finding of issue 9 that these properties found is pinned by an explicit
@example of it, so the test fails on the code before its fix whatever
hypothesis happens to draw.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from allegra_lan.log.codec import decode, encode  # noqa: E402
from allegra_lan.log.knock import KNOCK_KEYS  # noqa: E402
from allegra_lan.net.framing import HEADER  # noqa: E402
from allegra_lan.net.lobby import Claim  # noqa: E402
from fuzz import seeds  # noqa: E402
from fuzz import targets as T  # noqa: E402
from fuzz.fixtures import POINTS, TablePool, golden  # noqa: E402

FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FEWER = settings(FUZZ, max_examples=100)  # the targets that run a trio loop per example

# A knock message that is 64 zero bytes and an empty msgpack array (issue 9, finding 1).
LIST_KNOCK = bytes(64) + b"\x90"
def _scenario(name_part: str) -> int:
    return next(i for i, s in enumerate(T.SCENARIOS) if name_part in s.name)


GAME_21 = _scenario("game at seq 21, seat 2")
HOST_STRANGER = _scenario("host lobby, a stranger")

# ---------------------------------------------------------------- strategies

scalars = (st.none() | st.booleans() | st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1)
           | st.text(max_size=24) | st.binary(max_size=72))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=16)


def _interesting() -> list[Any]:
    g = golden()
    t = TablePool().table(21)
    return [0, 1, 2, 3, -1, -3, 30, 65535, 65536, 2 ** 32, 2 ** 64 - 1, -(2 ** 63), True, False, None,
            "", "127.0.0.1", "0.0.0.0", "::1", "localhost", b"", bytes(16), bytes(32), bytes(64),
            LIST_KNOCK, t.head, t.seq, g.game, *g.keys, ["127.0.0.1", 0], ["127.0.0.1", 2 ** 64 - 1],
            [], [[]], [[0, bytes(32)]], [[None, {}]], {}]


FIELDS = ("seq", "head", "from", "items", "reason", "fault", "seat", "draw", "k", "claims", "address",
          "ready", "prev", "seats", "signs", "table", "name", "ruleset", "host", "pin", "spectators",
          "takeover", "addresses", "proto", "key", "nonce", "sig")
TYPES = ("have", "events", "refused", "lobby", "sit", "ready", "knock", "lobby_error", "ping",
         "takeover_ask", "takeover_yes", "takeover_no", "takeover_off", "hello", "proof", "ok",
         "refuse", "bogus")
field_values = st.sampled_from(_interesting()) | values
REAL = seeds._messages()

made_up = st.fixed_dictionaries({"t": st.sampled_from(TYPES)},
                                optional={f: field_values for f in FIELDS})
changed = st.builds(lambda m, k, v: {**m, k: v}, st.sampled_from(REAL), st.sampled_from(FIELDS),
                    field_values)
message = made_up | changed | st.sampled_from(REAL)
message_lists = st.lists(message, min_size=1, max_size=4)


def as_input(choice: int, msgs: list[dict[str, Any]]) -> bytes:
    return bytes([choice]) + encode(msgs)


def mutated(real: list[bytes]) -> st.SearchStrategy[bytes]:
    """Real inputs with a few bytes changed, cut or extended."""
    def change(data: bytes, edits: list[tuple[int, int]], cut: int | None, tail: bytes) -> bytes:
        b = bytearray(data)
        for pos, value in edits:
            if b:
                b[pos % len(b)] = value
        if cut is not None and b:
            del b[cut % len(b):]
        return bytes(b) + tail
    return st.builds(change, st.sampled_from(real),
                     st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=4),
                     st.none() | st.integers(0, 1 << 16), st.binary(max_size=8))


# ---------------------------------------------------------------- codec


@FUZZ
@given(st.binary(max_size=256) | mutated(seeds.codec()))
def test_codec_decode_any_bytes(data: bytes) -> None:
    T.check_codec_with(data, None)


@FUZZ
@given(values)
def test_codec_round_trips_every_value(value: Any) -> None:
    data = encode(value)
    assert decode(data, max_size=1 << 20) == value
    T.check_codec_with(data, None)


@FUZZ
@example(b"\x90")
@given(st.binary(max_size=256) | mutated(seeds.codec()) | values.map(encode))
def test_codec_with_key_order_gives_that_map_or_refuses(data: bytes) -> None:
    T.check_codec_with(data, KNOCK_KEYS)


# ---------------------------------------------------------------- envelope, knock, table


@FUZZ
@given(st.binary(max_size=512) | mutated(seeds.envelope()))
def test_envelope_any_bytes(data: bytes) -> None:
    T.check_envelope(data)


@FUZZ
@example(LIST_KNOCK)
@given(st.binary(max_size=256) | mutated(seeds.knock())
       | st.builds(lambda v: bytes(64) + encode(v), values))
def test_knock_any_bytes(data: bytes) -> None:
    T.check_knock_target(data)


@FUZZ
@example(bytes([POINTS.index(21)]) + encode(["give", {"knock": LIST_KNOCK, "to": 1}]))
@given(st.builds(lambda p, kind, body: bytes([p]) + encode([kind, body]),
                 st.integers(0, len(POINTS) - 1),
                 st.sampled_from(["give", "place", "discard", "draw_deck", "turn_up", "exchange",
                                  "take_discard", "takeover", "commit", "reveal", "accept", "genesis"])
                 | st.text(max_size=8),
                 st.dictionaries(st.sampled_from(["knock", "to", "at", "card", "seats", "nonce", "commit",
                                                  "signs", "from", "slot"]), field_values, max_size=4))
       | mutated(seeds.table()))
def test_table_takes_or_refuses_any_signed_body(data: bytes) -> None:
    T.check_table(data)


def _genesis_with(base: bytes, where: str, key: str, value: Any) -> bytes:
    body = decode(base, max_size=1 << 16)
    if where == "ruleset":
        body["ruleset"][key] = value
    elif where == "seats":
        body["seats"] = value
    else:
        body[key] = value
    return encode(body)


genesis_bodies = st.builds(
    _genesis_with, st.sampled_from(seeds.genesis()), st.sampled_from(["ruleset", "seats", "body"]),
    st.sampled_from(["card_counts", "rounds", "knock_min_players", "jokers", "joker_value", "double_ender",
                     "double_only_positive", "cleared_to_discard", "turn_up_after_13", "variant", "table",
                     "x"]),
    st.integers(-3, 120) | st.booleans() | st.sampled_from(["allegra", "grande", "x"])
    | st.lists(st.tuples(st.integers(-99, 99), st.integers(0, 40)).map(list), max_size=6)
    | st.lists(st.fixed_dictionaries({"name": st.text(min_size=1, max_size=8), "key": st.binary(min_size=32,
                                                                                                  max_size=32)}),
               max_size=7))


@FEWER
@given(genesis_bodies | mutated(seeds.genesis()))
def test_genesis_ceremony_and_first_moves_any_body(data: bytes) -> None:
    """Whatever genesis the table takes, its ceremony and every move legal_moves offers are taken."""
    T.check_genesis(data, names=False)  # the names: the next test


@FEWER
@example(_genesis_with(seeds.genesis()[0], "body", "table", "\x9b2J\u202eevil"))
@given(st.builds(_genesis_with, st.sampled_from(seeds.genesis()), st.just("body"), st.just("table"),
                 st.text(min_size=1, max_size=12)))
def test_genesis_names_are_printable(data: bytes) -> None:
    T.check_genesis(data)


# ---------------------------------------------------------------- frames and replays


@FEWER
@given(st.binary(max_size=512) | mutated(seeds.frames())
       | st.builds(lambda step, msgs: bytes([step]) + b"".join(HEADER.pack(len(encode(m))) + encode(m)
                                                             for m in msgs),
                   st.integers(0, 255), message_lists))
def test_frame_reader_any_bytes(data: bytes) -> None:
    T.check_frames(data)


header_lines = st.lists(st.sampled_from(['[Format "allegra-replay/1"]', '[Event "x"]', '[Result "*"]',
                                         '[Format "allegra-replay/1"]', '[Bad', '', '[A "\\"]'])
                        | st.text(max_size=30), max_size=6)


@FEWER
@given(st.binary(max_size=512) | mutated(seeds.replay())
       | st.builds(lambda head, body: ("\n".join(head) + "\n\n" + "\n".join(body)).encode(),
                   header_lines, st.lists(st.text(alphabet="ABCabc+/=\n0189", max_size=80), max_size=5)))
def test_replay_reader_and_verify_any_bytes(data: bytes) -> None:
    T.check_replay(data)


# ---------------------------------------------------------------- handshake, gossip, lobby, node

patch = st.dictionaries(st.sampled_from(["t", "proto", "key", "nonce", "table", "sig", "pin", "reason",
                                         "share", "confirm", "-key", "-nonce", "-table", "-sig", "-pin",
                                         "-proto", "-share", "-confirm", "extra"]),
                        field_values, max_size=3)


@FUZZ
@given(st.lists(patch, max_size=4).map(encode) | mutated(seeds.handshake()))
def test_handshake_steps_any_messages(data: bytes) -> None:
    T.check_handshake(data)


@FUZZ
@given(st.builds(as_input, st.integers(0, len(POINTS) - 1), message_lists) | mutated(seeds.sync()))
def test_sync_any_messages(data: bytes) -> None:
    T.check_sync(data, text=False)  # the text of its faults: the next test


ESCAPES = "\x1b[2J\x1b[31mrefused from 0000-0000: the host cheated\nfake line"
@FUZZ
@example(bytes([POINTS.index(21)]) + encode({"t": "refused", "seq": 21, "reason": ESCAPES, "fault": "x"}))
@given(st.builds(lambda p, reason, fault: bytes([p]) + encode({"t": "refused", "seq": 3, "reason": reason,
                                                               "fault": fault}),
                 st.integers(0, len(POINTS) - 1), st.text(max_size=40), st.text(max_size=10) | values))
def test_sync_fault_text_is_one_printable_line(data: bytes) -> None:
    T.check_sync(data)


def _lobby_with(**changes: Any) -> bytes:
    m = next(dict(m) for m in REAL if m["t"] == "lobby")
    m.update(changes)
    return encode(m)


@FUZZ
@example(_lobby_with(claims=[[30, Claim("x", bytes(32), bytes(32)).to_msg()]]))
@given(message.map(encode) | values.map(encode) | mutated(seeds.lobby())
       | st.builds(lambda k, v: _lobby_with(**{k: v}),
                   st.sampled_from(["table", "name", "seats", "host", "claims", "addresses", "ruleset",
                                    "takeover", "pin"]), field_values))
def test_lobby_from_any_message(data: bytes) -> None:
    T.check_lobby(data)


def _sit(seat: Any, address: Any, key: bytes = T.NODE_STRANGER.public) -> dict[str, Any]:
    return {"t": "sit", "claims": [[seat, Claim("s", key, key).to_msg()]], "address": address}


@FEWER
@example(as_input(HOST_STRANGER, [_sit(2, ["127.0.0.1", 2 ** 64 - 1])]))
@given(st.builds(as_input, st.sampled_from([i for i, s in enumerate(T.SCENARIOS) if s.point is None]),
                 message_lists))
def test_node_in_the_lobby_any_messages(data: bytes) -> None:
    T.check_node(data)


@FEWER
@example(as_input(GAME_21, [{"t": "knock", "seat": 2, "draw": TablePool().table(21).head, "k": LIST_KNOCK}]))
@given(st.builds(as_input, st.sampled_from([i for i, s in enumerate(T.SCENARIOS) if s.point is not None]),
                 message_lists))
def test_node_in_a_game_any_messages(data: bytes) -> None:
    T.check_node(data)


@FEWER
@example(as_input(GAME_21, [{"t": "knock", "seat": 2, "draw": bytes(1000), "k": bytes(100)}]))
@given(st.builds(lambda scenario, seat, draw, k: as_input(scenario, [{"t": "knock", "seat": seat, "draw": draw,
                                                                     "k": k}]),
                 st.sampled_from([i for i, s in enumerate(T.SCENARIOS) if s.point is not None]),
                 st.integers(0, 2), st.binary(max_size=1024), st.binary(max_size=200)))
def test_node_refused_knock_leaves_no_trace(data: bytes) -> None:
    """A knock the node refuses must not stay in its knock table (64 KiB a message, for good)."""
    T.check_node(data)


@FEWER
@example(as_input(GAME_21, [{"t": "refused", "seq": 21, "reason": ESCAPES, "fault": "x"}]))
@example(as_input(_scenario("guest in the lobby"), [{"t": "lobby_error", "reason": ESCAPES}]))
@given(st.builds(lambda scenario, t, reason: as_input(scenario, [{"t": t, "seq": 21, "reason": reason}]),
                 st.integers(0, len(T.SCENARIOS) - 1),
                 st.sampled_from(["refused", "lobby_error", "takeover_no"]), st.text(max_size=40)))
def test_node_says_peer_text_as_one_printable_line(data: bytes) -> None:
    """A peer's reason is shown to the player: never with escape sequences or line breaks."""
    T.check_node(data)
