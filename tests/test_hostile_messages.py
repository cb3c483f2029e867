"""Issue 9, findings 1-4: every message and every event body is checked by one schema, and
any input is a value or a named refusal, never an exception, never kept unchecked.

Three layers, from the codec up:

- the codec hands back only the type its caller asked for (property: any bytes);
- `Table.append` and the knock readers refuse any body by name (the array knock of
  finding 2; a property over every event body kind);
- `Lobby.from_msg`, `Replica.received` and `Node.dispatch` (a Node built in-process with
  real links over trio memory streams) take any map: the property tests draw, for every
  message type, maps near its schema and maps of anything;

then the findings over the real protocol, with misbehaving peers on 127.0.0.1
(tests/evil_peer.py): honest peers refuse, name the sender, and finish the same game.
"""

from __future__ import annotations

import gc
from collections import deque
import os
import re
import socket
import tracemalloc
from functools import partial
from pathlib import Path
from typing import Any, Callable

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allegra_lan.local import LocalGame, Player, derived
from allegra_lan.log.bodies import BODIES, MOVE_BODIES
from allegra_lan.log.codec import CodecError, decode, decode_map, encode
from allegra_lan.log.envelope import Event, sign_event
from allegra_lan.log.identity import Identity, fingerprint
from allegra_lan.log.schema import Array, Bytes, Int, Map, OneOf, Spec, Tuple
from allegra_lan.log.knock import KnockError, check_answer, check_knock, sign_knock
from allegra_lan.log.replay import ReplayWriter
from allegra_lan.net.lobby import Claim, Lobby, LobbyError
from allegra_lan.net.messages import MESSAGES, MessageError, check_message, describe_all
from allegra_lan.net.peer import HANDLERS, Peer
from allegra_lan.net.sync import Replica
from allegra_lan.rules import Give, legal_moves, ruleset_for, to_act
from allegra_lan.rules.rng import Stream
from allegra_lan.table import Refused, fold, move_body
from allegra_lan.tools.verify import verify_file

from evil_peer import (
    ARRAY_KNOCK, ArrayKnock, ArrayKnockGive, GiveFirst, KnockFlood, Outcome, SitLies, play_with_evil,
    play_with_stranger,
)

LIMIT = 40.0  # seconds one networked table may take before the test fails with its progress

FAST = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SLOW = settings(FAST, max_examples=300)

# ---------------------------------------------------------------- values a peer can send

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(1 << 63), (1 << 64) - 1),
    st.integers(-3, 40), st.binary(max_size=70), st.text(max_size=20),
    st.sampled_from(["127.0.0.1", "10.0.0.9", "row", "col", "", "lobby", "example.com"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


# ================================================================ the codec


@FAST
@given(data=st.one_of(st.binary(max_size=64), values.map(lambda v: _encodable(v))),
       expect=st.sampled_from([dict, list, bytes, str, int, bool]))
def test_decode_hands_back_only_the_type_asked_for(data: bytes, expect: type) -> None:
    try:
        got = decode(data, max_size=1 << 16, expect=expect)
    except CodecError:
        return
    assert type(got) is expect


@FAST
@given(data=st.one_of(st.binary(max_size=64), values.map(lambda v: _encodable(v))))
def test_a_key_order_means_a_map_with_exactly_those_keys(data: bytes) -> None:
    try:
        got = decode(data, max_size=1 << 16, key_order=("knock", "game", "draw"))
    except CodecError:
        return
    assert type(got) is dict and list(got) == ["knock", "game", "draw"]


def _encodable(v: Any) -> bytes:
    try:
        return encode(v)
    except CodecError:
        return b"\xc1"


def test_an_array_where_a_map_is_asked_for_is_refused_by_name() -> None:
    with pytest.raises(CodecError, match="expected a map of .*, not an array"):
        decode(b"\x90", max_size=10, key_order=("a",))
    with pytest.raises(CodecError, match="expected a map, not an array"):
        decode_map(b"\x90", max_size=10)
    with pytest.raises(CodecError, match="expected an integer, not a boolean"):
        decode(b"\xc3", max_size=10, expect=int)


# ================================================================ findings 1 and 2: knocks and gives


def allegra_at_a_draw(seed: bytes = b"k" * 32) -> LocalGame:
    """A 3-seat ALLEGRA game whose log ends with a deck draw that others may knock for."""
    players = [Player(f"p{i}", Identity.from_seed(derived("hostile-key", i))) for i in range(3)]
    g = LocalGame(ruleset_for("allegra"), players, game_id=derived("hostile-game")[:16],
                  nonces=[derived("hostile-nonce", i) for i in range(3)])
    rng = Stream(seed, "hostile")
    for _ in range(3000):
        lm = legal_moves(g.state)
        if any(isinstance(m, Give) for m in lm):
            return g
        g.submit(lm[rng.below(len(lm))])
    raise AssertionError("no deck draw in 3000 moves")


DRAWN = allegra_at_a_draw()
DRAWN_EVENTS = [e.signed for e in DRAWN.table.events]
DREW = to_act(DRAWN.state).seat  # type: ignore[union-attr]
KNOCKER, OTHER = [s for s in range(3) if s != DREW]  # the seats that may knock for the card


def test_an_answer_whose_message_is_an_array_is_a_named_refusal() -> None:
    """Finding 1: `check_answer` used to raise AttributeError on 64 zero bytes + 0x90."""
    t = DRAWN.table
    for check in (check_answer, check_knock):
        with pytest.raises(KnockError, match=r"malformed: expected a map of \['knock', 'game', "
                                             r"'draw'\], not an array"):
            check(ARRAY_KNOCK, key=t.keys[1], game=DRAWN.game_id, draw_id=t.head)


@pytest.mark.parametrize("message", [
    {"knock": True, "game": b"g" * 16, "draw": b"d" * 32},
    {"knock": 2, "game": b"g" * 16, "draw": b"d" * 32},
    {"knock": 1, "game": "g", "draw": b"d" * 32},
    {"knock": 1, "game": b"g" * 16, "draw": [1]},
], ids=["true", "two", "text-game", "list-draw"])
def test_an_answer_of_the_wrong_types_is_a_named_refusal(message: dict[str, Any]) -> None:
    signed = bytes(64) + encode(message, key_order=("knock", "game", "draw"))
    with pytest.raises(KnockError):
        check_answer(signed, key=bytes(32), game=b"g" * 16, draw_id=b"d" * 32)


def _give_with(knock: Any) -> bytes:
    g = DRAWN
    d = to_act(g.state)
    assert d is not None
    give = next(m for m in legal_moves(g.state) if isinstance(m, Give))
    kind, body = move_body(give, b"-" * 100)
    body["knock"] = knock
    return sign_event(g.players[d.seat].identity.key, game=g.game_id, seq=g.table.seq,
                      prev=g.table.head, kind=kind, body=body).signed


def test_a_give_carrying_an_array_knock_is_refused_not_raised() -> None:
    """Finding 2: the same bytes as the knock of a validly signed give made Table.append
    raise AttributeError instead of returning Refused."""
    t, fault = fold(DRAWN_EVENTS)
    assert fault is None
    before = (t.seq, t.head)
    with pytest.raises(Refused) as info:
        t.append(_give_with(ARRAY_KNOCK))
    assert info.value.fault == "illegal"
    assert "the knock is malformed: expected a map" in info.value.reason
    assert (t.seq, t.head) == before


def test_the_replay_tools_name_the_array_knock_not_an_internal_error(tmp_path: Path) -> None:
    """Finding 2: verify survived only through its catch-all ("could not be checked")."""
    path = tmp_path / "array-knock.allegra"
    w = ReplayWriter(path, {"Event": "test"}, fsync=False)
    for e in [*DRAWN_EVENTS, _give_with(ARRAY_KNOCK)]:
        w.append(e)
    v = verify_file(path)
    assert not v.ok and v.seq == len(DRAWN_EVENTS)
    assert "could not be checked" not in v.reason
    assert re.search(r"illegal move: the knock is malformed: expected a map", v.reason), v.reason


# ---------------------------------------------------------------- every event body kind


def near_body(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """Maps with the fields of a `kind` body (some missing, some extra), values of any type
    or of the plausible shapes (slots, small integers, keys, knocks)."""
    fields = list(BODIES[kind].fields)  # type: ignore[attr-defined]
    plausible = st.one_of(
        values, st.integers(-2, 20), st.lists(st.integers(-1, 5), min_size=3, max_size=3),
        st.binary(min_size=32, max_size=32), st.sampled_from([ARRAY_KNOCK, b"\x00" * 65]),
        st.lists(st.lists(st.one_of(st.integers(0, 3), st.binary(min_size=32, max_size=64)),
                          min_size=2, max_size=2), max_size=3),
    )
    return st.fixed_dictionaries(
        {}, optional={f: plausible for f in fields} | {"extra": values})


def grande_in_play(moves: int) -> LocalGame:
    """A 3-seat ALLEGRA Grande game `moves` random moves into its play."""
    players = [Player(f"p{i}", Identity.from_seed(derived("hostile-grande", i))) for i in range(3)]
    g = LocalGame(ruleset_for("grande"), players, game_id=derived("hostile-grande")[:16],
                  nonces=[derived("hostile-grande-nonce", i) for i in range(3)])
    rng = Stream(b"g" * 32, "hostile")
    for _ in range(moves):
        lm = legal_moves(g.state)
        g.submit(lm[rng.below(len(lm))])
    return g


GAMES = {"allegra": DRAWN, **{f"grande-{n}": grande_in_play(n) for n in (3, 40, 90)}}
GAME_EVENTS = {name: [e.signed for e in g.table.events] for name, g in GAMES.items()}


def shaped(spec: Spec) -> st.SearchStrategy[Any]:
    """Values that fit `spec` (so the engine, not the schema, judges them), small enough to
    name real places: slots of seats 0-3, rows 0-4, columns 0-5; cards 0-200."""
    if isinstance(spec, Map):
        return st.fixed_dictionaries({k: shaped(v) for k, v in spec.fields.items()})
    if isinstance(spec, Tuple):
        return st.tuples(*(shaped(x) for x in spec.items)).map(list)
    if isinstance(spec, Array):
        return st.lists(shaped(spec.item), min_size=spec.lo, max_size=min(spec.hi, 3))
    if isinstance(spec, Int):
        return st.integers(spec.lo, min(spec.hi, spec.lo + 200))
    if isinstance(spec, OneOf):
        return st.sampled_from(spec.values)
    if isinstance(spec, Bytes):
        return st.binary(min_size=spec.lo, max_size=spec.lo)
    return values


@SLOW
@given(kind=st.sampled_from(sorted(MOVE_BODIES) + ["takeover", "teleport"]),
       game=st.sampled_from(sorted(GAMES)), data=st.data())
def test_any_body_of_any_move_kind_is_taken_or_refused(kind: str, game: str,
                                                       data: st.DataObject) -> None:
    body = data.draw(st.one_of(near_body(kind), shaped(BODIES[kind])) if kind in BODIES
                     else values.filter(lambda v: type(v) is dict))
    g = GAMES[game]
    t, _ = fold(GAME_EVENTS[game])
    d = to_act(t.state)  # type: ignore[arg-type]
    assert d is not None
    author = data.draw(st.sampled_from([d.seat, (d.seat + 1) % 3]))
    signed = sign_event(g.players[author].identity.key, game=g.game_id, seq=t.seq,
                        prev=t.head, kind=kind, body=body).signed
    try:
        t.append(signed)
    except Refused as e:
        assert e.reason and "\n" not in e.reason


@SLOW
@given(kind=st.sampled_from(["genesis", "accept", "commit", "reveal"]), data=st.data())
def test_any_body_of_any_setup_kind_is_taken_or_refused(kind: str, data: st.DataObject) -> None:
    """Each setup kind at the seq where it is due (the genesis first, then seat 0's accept,
    commit and reveal), with a body near its schema."""
    at = {"genesis": 0, "accept": 1, "commit": 4, "reveal": 7}[kind]
    t, _ = fold(DRAWN_EVENTS[:at])
    body = data.draw(near_body(kind))
    signed = sign_event(DRAWN.players[0].identity.key, game=DRAWN.game_id, seq=t.seq,
                        prev=t.head, kind=kind, body=body).signed
    try:
        t.append(signed)
    except Refused as e:
        assert e.reason and "\n" not in e.reason


# ================================================================ finding 3: the lobby


HOST = Identity.from_seed(derived("hostile-host"))
GUEST = Identity.from_seed(derived("hostile-guest"))
TABLE_ID = derived("hostile-table")[:16]


def a_lobby() -> Lobby:
    lobby = Lobby(TABLE_ID, "hostile", ruleset_for("allegra").to_dict(), 3, HOST.public)
    lobby.sit(0, Claim("host", HOST.public, HOST.public, "greedy", True))
    lobby.sit(1, Claim("guest", GUEST.public, GUEST.public, None, False))
    lobby.addresses[HOST.public] = ("127.0.0.1", 4000)
    lobby.addresses[GUEST.public] = ("127.0.0.1", 4001)
    return lobby


def _with(msg: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    m = encode(msg)
    out = decode_map(m, max_size=1 << 16)
    *parents, last = path.split(".")
    node: Any = out
    for p in parents:
        node = node[int(p)] if p.isdigit() else node[p]
    node[int(last) if last.isdigit() else last] = value
    return out


@pytest.mark.parametrize("path,value,reason", [
    ("claims.1.0", 30, r"there is no seat 30 at this table|field claims\[1\]\[0\]: must be 0 to 15"),
    ("claims.1.0", 2, None),
    ("claims.1.0", -3, r"field claims\[1\]\[0\]: must be 0 to 15, not -3"),
    ("claims.1.0", True, r"field claims\[1\]\[0\]: must be an integer, not a boolean"),
    ("claims.1.0", 0, r"seat 0 is claimed twice"),
    ("name", 7, r"field name: must be a text string, not an integer"),
    ("name", "x" * 65, r"field name: must be text of 1 to 64 bytes"),
    ("name", "two\nlines", r"field name: must be one line of printable text"),
    ("seats", True, r"field seats: must be an integer, not a boolean"),
    ("addresses.1.2", (1 << 64) - 1, r"field addresses\[1\]\[2\]: must be 1 to 65535"),
    ("addresses.1.2", 0, r"field addresses\[1\]\[2\]: must be 1 to 65535, not 0"),
    ("addresses.1.1", "example.com", r"field addresses\[1\]\[1\]: must be an IPv4 address"),
    ("addresses.1.1", "127.000.0.1", r"field addresses\[1\]\[1\]: must be an IPv4 address"),
    ("addresses.1.0", b"s" * 32, r"an address for a key that holds no seat"),
    ("pin", 1, r"field pin: must be true or false, not an integer"),
    ("ruleset", {"variant": "chess"}, r"a lobby with a bad ruleset: unknown variant 'chess'"),
], ids=lambda v: str(v)[:20])
def test_a_lobby_message_is_checked_whole(path: str, value: Any, reason: str | None) -> None:
    """Finding 3: `Lobby.from_msg` accepted seats 30 and -3, a table name that is not a
    string, and any address; now each is refused in one line naming the field."""
    msg = a_lobby().to_msg()
    bad = _with(msg, path, value)
    if reason is None:
        assert Lobby.from_msg(bad).claims[value].key == GUEST.public
        return
    with pytest.raises(LobbyError) as info:
        Lobby.from_msg(bad)
    assert re.search(reason, str(info.value)), info.value
    assert "\n" not in str(info.value)


def test_a_lobby_round_trips() -> None:
    lobby = a_lobby()
    assert Lobby.from_msg(lobby.to_msg()) == lobby


@FAST
@given(data=st.data())
def test_any_lobby_message_is_a_lobby_or_a_lobby_error(data: st.DataObject) -> None:
    msg = a_lobby().to_msg()
    for _ in range(data.draw(st.integers(1, 3))):
        field = data.draw(st.sampled_from(sorted(msg)))
        msg[field] = data.draw(values)
    try:
        Lobby.from_msg(msg)
    except LobbyError as e:
        assert "\n" not in str(e)


# ================================================================ Node.dispatch, in process


class InProcess:
    """A Peer with links (the protocol object alone: no socket, no clock), in one of three
    states: the host of an open lobby, a guest in that lobby, or a peer of an ALLEGRA game in
    play whose log ends with a deck draw. It keeps the last 100 things it said."""

    def __init__(self, tmp: Path, state: str) -> None:
        self.notes: deque[str] = deque(maxlen=100)
        me = HOST if state != "guest" else GUEST
        self.node = Peer(me, table_id=TABLE_ID if state != "play" else DRAWN.game_id,
                         entropy=os.urandom)
        self.peer = GUEST.public if state != "guest" else HOST.public
        self.stranger = Identity.from_seed(derived("hostile-stranger")).public
        if state == "play":
            t, _ = fold(DRAWN_EVENTS)
            self.node.replica = Replica(t)
            lobby = Lobby(DRAWN.game_id, "local table", ruleset_for("allegra").to_dict(), 3,
                          DRAWN.players[0].identity.public, spectators=True, takeover=5)
            owners = [HOST.public, GUEST.public, Identity.from_seed(derived("third")).public]
            lobby.host = owners[0]
            for s in range(3):
                lobby.claims[s] = Claim(f"p{s}", DRAWN.players[s].identity.public, owners[s],
                                        "greedy", True)
                lobby.addresses[owners[s]] = ("127.0.0.1", 4000 + s)
            self.node.lobby = lobby
            self.node.local = {DRAWN.players[0].identity.public: (DRAWN.players[0].identity, None)}
        else:
            self.node.lobby = a_lobby() if state == "host" else None
        for key, dialled_by in ((self.peer, self.node.me if state == "guest" else self.peer),
                                (self.stranger, self.stranger)):
            self.node.connected(0.0, key, dialled_by=dialled_by, remote=("127.0.0.1", 5555))


def in_trio(fn: Callable[[], None]) -> None:
    """Run `fn` inside trio (a Node reads trio's clock), once."""

    async def main() -> None:
        fn()

    trio.run(main)


def near_message(t: str) -> st.SearchStrategy[dict[str, Any]]:
    """Maps of message type `t`: its fields with values of any type or of plausible shapes."""
    fields = [f for f in MESSAGES[t].schema.fields if f != "t"]
    plausible = st.one_of(
        values, st.integers(-1, 20), st.binary(min_size=32, max_size=32),
        st.just(ARRAY_KNOCK), st.just(DRAWN.table.head), st.just(a_lobby().to_msg()["claims"]),
        st.lists(st.one_of(st.none(), st.integers(0, 3)), max_size=2),
        st.just([[None, Claim("g", GUEST.public, GUEST.public, None, False).to_msg()]]),
        st.just(["127.0.0.1", (1 << 64) - 1]), st.just(["10.0.0.9", 4242]),
        st.just([[1, os.urandom(32)]]), st.just([[1, os.urandom(64)]]),
        st.just([DRAWN_EVENTS[-1]]),
    )
    return st.fixed_dictionaries({"t": st.just(t)},
                                 optional={f: plausible for f in fields} | {"x": values})


def valid_messages() -> list[dict[str, Any]]:
    """One message of each type that a handler takes (for the states of InProcess)."""
    t, head, game = DRAWN.table, DRAWN.table.head, DRAWN.game_id
    claim = Claim("g", GUEST.public, GUEST.public, None, False).to_msg()
    return [
        {"t": "have", "seq": t.seq - 1, "head": t.events[-2].id},
        {"t": "events", "from": t.seq - 1, "items": [DRAWN_EVENTS[-1]]},
        {"t": "refused", "seq": 3, "reason": "no", "fault": "illegal"},
        a_lobby().to_msg(),
        {"t": "sit", "claims": [[None, claim]], "address": ["127.0.0.1", 4100]},
        {"t": "ready", "ready": True},
        {"t": "lobby_error", "reason": "no"},
        {"t": "knock", "seat": KNOCKER, "draw": head,
         "k": sign_knock(DRAWN.players[KNOCKER].identity.key, game, head)},
        {"t": "ping"},
        {"t": "links", "peers": [GUEST.public]},
        {"t": "takeover_ask", "seq": t.seq, "prev": head, "seats": [[DREW, os.urandom(32)]]},
        {"t": "takeover_yes", "seq": t.seq, "signs": [[KNOCKER, bytes(64)]]},
        {"t": "takeover_no", "seq": t.seq, "reason": "no"},
        {"t": "takeover_off", "seq": t.seq},
        {"t": "fork", "first": t.events[-1].signed, "second": _twin(t.events[-1])},
        {"t": "disagree", "event": sign_event(
            DRAWN.players[DREW].identity.key, game=game, seq=t.seq, prev=head, kind="result",
            body={"round": 0, "hash": bytes(16), "scores": [1, 2, 3], "totals": [1, 2, 3],
                  "at": 1_800_000_000_000}).signed},
    ]


def _twin(ev: Event) -> bytes:
    """Another event its author signs for the same seq: with `ev`, a fork proof."""
    (author,) = [p.identity for p in DRAWN.players if p.identity.public == ev.author]
    return sign_event(author.key, game=ev.game, seq=ev.seq, prev=ev.prev, kind="twin", body={}).signed


VALID = valid_messages()


@st.composite
def mutated(draw: st.DrawFn, t: str | None = None) -> dict[str, Any]:
    """A valid message (of type `t`, or any) with up to two fields (or items inside them)
    replaced by anything."""
    pool = [m for m in VALID if t is None or m["t"] == t]
    msg = decode_map(encode(draw(st.sampled_from(pool))), max_size=1 << 20)
    for _ in range(draw(st.integers(0, 2))):
        field = draw(st.sampled_from(sorted(msg)))
        target = msg[field]
        if field != "t" and isinstance(target, list) and target and draw(st.booleans()):
            i = draw(st.integers(0, len(target) - 1))
            item = target[i]
            if isinstance(item, list) and item and draw(st.booleans()):
                item[draw(st.integers(0, len(item) - 1))] = draw(values)
            else:
                target[i] = draw(values)
        else:
            msg[field] = draw(values)
    return msg


def test_the_valid_messages_are_valid() -> None:
    assert sorted(m["t"] for m in VALID) == sorted(MESSAGES)
    for m in VALID:
        check_message(m)


messages_of_any_type = st.one_of(
    mutated(),
    st.sampled_from(sorted(MESSAGES)).flatmap(near_message),
    st.dictionaries(st.text(max_size=6), values, max_size=4).map(lambda m: {"t": "knock", **m}),
    st.dictionaries(st.text(max_size=6), values, max_size=4).map(
        lambda m: {**m, "t": m.get("t") if isinstance(m.get("t"), str) and m.get("t") else "x"}),
)


@SLOW
@given(state=st.sampled_from(["host", "guest", "play"]), from_stranger=st.booleans(),
       msgs=st.lists(messages_of_any_type, min_size=1, max_size=4))
def test_dispatch_takes_any_map_of_any_type_without_raising(
        tmp_path: Path, state: str, from_stranger: bool, msgs: list[dict[str, Any]]) -> None:
    """Node.dispatch catches nothing broad: this passes only because every handler is
    total on messages of its schema, and every refusal is one named line."""

    def run() -> None:
        p = InProcess(tmp_path, state)
        for msg in msgs:
            p.node.dispatch(p.stranger if from_stranger else p.peer, msg)
        for line in p.node.faults:
            assert line.startswith("refused from ") and "\n" not in line

    in_trio(run)


# The state in which a message type's handler runs, with the link's peer as its sender.
HANDLED_IN = {"have": "play", "events": "play", "refused": "play", "links": "play", "knock": "play",
              "takeover_ask": "play", "takeover_yes": "play", "takeover_no": "play",
              "takeover_off": "play", "lobby": "guest", "lobby_error": "guest", "sit": "host",
              "ready": "host", "ping": "play", "fork": "play", "disagree": "play"}


@settings(FAST, max_examples=500)
@given(t=st.sampled_from(sorted(MESSAGES)), data=st.data())
def test_every_handler_is_total_on_messages_of_its_schema(tmp_path: Path, t: str,
                                                          data: st.DataObject) -> None:
    """Per message type, in the state where its handler runs and from a peer that may send
    it: the valid message, then mutants of it and maps near its schema, in a row."""
    msgs = [VALID[[m["t"] for m in VALID].index(t)]] + data.draw(
        st.lists(st.one_of(mutated(t), near_message(t)), min_size=1, max_size=4))

    def run() -> None:
        p = InProcess(tmp_path, HANDLED_IN[t])
        for msg in msgs:
            p.node.dispatch(p.peer, msg)
        for line in p.node.faults:
            assert line.startswith("refused from ") and "\n" not in line

    in_trio(run)


def test_the_refusals_a_peer_can_cause_are_bounded(tmp_path: Path) -> None:
    """Every malformed message costs its sender one fault line; the node keeps the last
    1,000 (the players read the latest), not one per message for good."""

    def run() -> None:
        p = InProcess(tmp_path, "play")
        for i in range(3000):
            p.node.dispatch(p.peer, {"t": "refused", "seq": i, "reason": "x" * 900, "fault": "f"})
            p.node.dispatch(p.peer, {"t": "have", "seq": -i, "head": b""})
        assert len(p.node.faults) == 1000
        assert p.node.faults[-1].endswith("a malformed have message: field seq: must be 0 to "
                                          "4294967295, not -2999")

    in_trio(run)


def test_every_message_type_has_one_schema_and_one_handler() -> None:
    assert set(MESSAGES) == set(HANDLERS)
    for t in MESSAGES:
        assert callable(getattr(Peer, HANDLERS[t]))


def test_protocol_md_lists_the_messages_as_the_code_checks_them() -> None:
    text = (Path(__file__).resolve().parents[1] / "protocol" / "PROTOCOL.md").read_text()
    assert describe_all() in text, "PROTOCOL.md's message table differs from net/messages.py"


@FAST
@given(msg=messages_of_any_type)
def test_any_gossip_is_handled_or_a_protocol_fault(msg: dict[str, Any]) -> None:
    t, _ = fold(DRAWN_EVENTS[:5])
    r = Replica(t)
    r.connected("x")
    r.received("x", msg)
    try:
        check_message(msg)
    except MessageError:
        assert [f.fault for f in r.faults] == ["protocol"]


def test_a_stranger_may_not_send_knocks_and_nothing_inside_is_read(tmp_path: Path) -> None:
    """Finding 1 (spectators): a key that holds no seat sends the array knock for the very
    draw at the head: refused as a knock from a peer that holds no seat, before its `k` is
    read; the same bytes from a seated peer are refused as a malformed answer."""

    def run() -> None:
        p = InProcess(tmp_path, "play")
        msg = {"t": "knock", "seat": KNOCKER, "draw": p.node.table.head, "k": ARRAY_KNOCK}
        p.node.dispatch(p.stranger, msg)
        p.node.dispatch(p.peer, msg)
        fp_s, fp_p = (fingerprint(k) for k in (p.stranger, p.peer))
        assert p.node.faults == [
            f"refused from {fp_s}: a knock message from a peer that holds no seat",
            f"refused from {fp_p}: a knock for seat {KNOCKER}: the answer is malformed: expected a map "
            "of ['knock', 'game', 'draw'], not an array",
        ]
        assert p.node.knocks.get(p.node.table.head, {}) == {}

    in_trio(run)


def test_five_thousand_bogus_knocks_keep_the_knock_table_small(tmp_path: Path) -> None:
    """Finding 4: each knock's draw used to be stored as a key before any check, for good
    (4,380 messages: +232 MB). Now nothing is kept that did not prove itself, and what is
    kept goes when the log moves on."""

    def run() -> None:
        p = InProcess(tmp_path, "play")
        node, head = p.node, p.node.table.head
        game = DRAWN.game_id

        def flood(n: int) -> None:
            for i in range(n):
                kind = i % 4
                draw = os.urandom(32) if kind < 2 else head
                seat = (KNOCKER, OTHER)[i % 2]
                k = (os.urandom(134) if kind == 0 else
                     sign_knock(DRAWN.players[seat].identity.key, game, draw) if kind == 1 else
                     sign_knock(DRAWN.players[OTHER].identity.key, game, os.urandom(32)))
                node.dispatch(p.peer, {"t": "knock", "seat": seat, "draw": draw, "k": k})
            node.faults.clear()

        flood(500)  # warm up every path, then measure
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            flood(5000)
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
        assert len(node.knocks) <= 1 and len(node.knocks.get(head, {})) <= 2, node.knocks
        assert len(node.early_knocks) <= 2  # one per sender and seat: one sender, two seats
        assert grown < 256 * 1024, f"the node kept {grown} bytes after 5,000 bogus knocks"
        # A real answer is kept; once the log moves on, the table is pruned to the new head.
        real = sign_knock(DRAWN.players[OTHER].identity.key, game, head)
        node.dispatch(p.peer, {"t": "knock", "seat": OTHER, "draw": head, "k": real})
        assert node.knocks[head] == {OTHER: real}
        d = to_act(node.table.state)  # type: ignore[arg-type]
        assert d is not None
        move = next(m for m in legal_moves(node.table.state) if not isinstance(m, Give))  # type: ignore[arg-type]
        kind, body = move_body(move)
        node.dispatch(p.peer, {"t": "events", "from": node.table.seq, "items": [sign_event(
            DRAWN.players[d.seat].identity.key, game=game, seq=node.table.seq,
            prev=head, kind=kind, body=body).signed]})
        assert node.table.head != head and head not in node.knocks

    in_trio(run)


def test_the_host_seats_a_guest_at_the_address_its_connection_comes_from(tmp_path: Path) -> None:
    """Finding 3: a sit names only its port; the host takes the IP from the socket (here
    the link's remote, 127.0.0.1), so no stranger can make the table dial 10.0.0.9; a port
    out of range is refused by the schema; a failed sit changes nothing."""

    def run() -> None:
        p = InProcess(tmp_path, "host")
        node = p.node
        assert node.lobby is not None
        node.lobby.leave(GUEST.public)
        claim = Claim("guest", GUEST.public, GUEST.public, None, False).to_msg()
        node.dispatch(GUEST.public, {"t": "sit", "claims": [[1, claim]],
                                     "address": ["127.0.0.1", (1 << 64) - 1]})
        assert GUEST.public not in node.lobby.addresses and 1 not in node.lobby.claims
        assert node.faults == [f"refused from {fingerprint(GUEST.public)}: a malformed "
                               "sit message: field address[1]: must be 1 to 65535, not "
                               "18446744073709551615"]
        other = Claim("g2", os.urandom(32), GUEST.public, None, False).to_msg()
        node.dispatch(GUEST.public, {"t": "sit", "claims": [[1, claim], [9, other]],
                                     "address": ["10.0.0.9", 4242]})
        assert 1 not in node.lobby.claims and GUEST.public not in node.lobby.addresses
        node.dispatch(GUEST.public, {"t": "sit", "claims": [[1, claim]], "address": ["10.0.0.9", 4242]})
        assert node.lobby.addresses[GUEST.public] == ("127.0.0.1", 4242)
        assert node.lobby.claims[1].key == GUEST.public

    in_trio(run)


# ================================================================ over the real protocol


def play(tmp: Path, attack: Any, **kwargs: Any) -> Outcome:
    return trio.run(partial(play_with_evil, tmp, attack, limit=LIMIT, evil_seat=1, **kwargs))


def assert_same_finished_game(out: Outcome) -> None:
    """Every peer (the evil one too: it played honestly otherwise) finished the same game,
    with byte-identical replays that verify."""
    peers = [out.host, out.guest, out.evil]
    blobs = []
    for p in peers:
        assert p.node is not None
        t = p.node.table
        assert t.state is not None and to_act(t.state) is None, f"{p.label}:\n  {out.report()}"
        (replay,) = p.replays()
        blobs.append(replay.read_bytes())
    assert blobs[0] == blobs[1] == blobs[2], "the replays differ"
    for p in out.honest:
        v = p.verdict()
        assert v.ok and v.finished, v


def test_a_seated_peers_array_knock_is_refused_and_the_game_goes_on(tmp_path: Path) -> None:
    """Finding 1: the evil seat answers the host's deck draw with 64 zero bytes + 0x90; it
    used to make every honest peer exit with an AttributeError."""
    out = play(tmp_path, ArrayKnock(victim=0), variant="allegra", host_bot=GiveFirst(b"\x02" * 32))
    assert out.attack.struck_at is not None
    line = (f"refused from {out.evil.fp}: a knock for seat 1: the answer is malformed: "
            "expected a map of ['knock', 'game', 'draw'], not an array")
    assert out.host.node is not None and out.host.node.faults == [line], out.host.node.faults
    # The guest refuses it the same way; if the knock overtook the draw on its way to the
    # guest, the guest judged it when the draw came, or the log moved on first and it
    # was dropped: never more than the one line.
    assert out.guest.node is not None and out.guest.node.faults in ([line], []), out.guest.node.faults
    assert_same_finished_game(out)


def test_a_give_whose_knock_is_an_array_is_refused_over_the_wire(tmp_path: Path) -> None:
    """Finding 2 between peers: the evil seat draws from the deck and sends, with the draw,
    a validly signed give whose knock is the array; every honest peer's Table used to
    raise on it. Now each refuses it by name and the game goes on."""
    attack = ArrayKnockGive()
    out = play(tmp_path, attack, variant="allegra")
    n = attack.struck_at
    assert n is not None
    line = (f"refused from {out.evil.fp}: seq {n}: illegal move: the knock is malformed: "
            "expected a map of ['knock', 'game', 'draw'], not an array")
    for p in out.honest:
        assert p.node is not None and p.node.faults == [line], p.node.faults
    bad = set(attack.bad_events())
    for p in out.honest:
        assert not bad & {e.signed for e in p.node.table.events}  # type: ignore[union-attr]
    assert_same_finished_game(out)


def test_a_strangers_knock_on_a_spectators_table_is_refused_unread(tmp_path: Path) -> None:
    """Finding 1: on a --spectators table, a key holding no seat connects after the start
    and sends the array knock; `_on_knock` did not check who sent it and decoded it first.
    The host refuses it from its sender's right alone; the three seats finish one game."""
    out = trio.run(partial(play_with_stranger, tmp_path, limit=LIMIT))
    assert out.knocked, "the stranger never saw a deck draw"
    host, *guests = out.honest
    assert host.node is not None
    line = f"refused from {out.stranger.fp}: a knock message from a peer that holds no seat"
    assert host.node.faults == [line] * len(out.knocked), host.node.faults
    blobs = []
    for p in out.honest:
        assert p.node is not None
        t = p.node.table
        assert t.state is not None and to_act(t.state) is None, p.progress()
        (replay,) = p.replays()
        blobs.append(replay.read_bytes())
        assert p.verdict().ok
    assert blobs[0] == blobs[1] == blobs[2]


def _largest_key() -> Identity:
    """A key above (almost surely) both honest peers' random keys: each of them dials it."""
    while True:
        ident = Identity.generate()
        if ident.public[0] == 0xFF:
            return ident


def _a_closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (it was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_sit_with_a_port_no_socket_has_leaves_every_peer_up(tmp_path: Path) -> None:
    """Finding 3: a lobby sit with address ["127.0.0.1", 2**64-1]: every peer that dialled
    it died of an OverflowError. Now the host refuses the sit by its schema."""
    attack = SitLies([["127.0.0.1", (1 << 64) - 1]])
    out = play(tmp_path, attack, evil_identity=_largest_key())
    assert attack.seen == [None]
    assert out.host.node is not None
    assert out.host.node.faults == [
        f"refused from {out.evil.fp}: a malformed sit message: field address[1]: must be 1 to "
        "65535, not 18446744073709551615"]
    assert_same_finished_game(out)


def test_a_sit_naming_another_host_is_seated_at_its_real_address(tmp_path: Path) -> None:
    """Finding 3: peers dialled any host:port a stranger named. The host now records the
    IP the sit came from, so the lobby never sends the table to 10.0.0.9."""
    port = _a_closed_port()
    attack = SitLies([["10.0.0.9", port]])
    out = play(tmp_path, attack, evil_identity=_largest_key())
    assert attack.seen == [("127.0.0.1", port)]
    for p in out.honest:
        assert p.node is not None and p.node.lobby is not None
        assert {h for h, _ in p.node.lobby.addresses.values()} == {"127.0.0.1"}
        assert p.node.faults == []
    assert_same_finished_game(out)


def test_a_flood_of_knocks_for_draws_nobody_made_is_kept_nowhere(tmp_path: Path) -> None:
    """Finding 4 over the wire: 3,000 knocks for random draws (and 3 with a 60 KiB draw)
    from a seated peer. None is kept; the oversize ones are refused by the schema; the
    game goes on."""
    out = play(tmp_path, KnockFlood(3000, 3), variant="allegra")
    line = re.compile(rf"refused from {out.evil.fp}: a malformed knock message: field draw: "
                      r"must be 32 bytes, not 61440 bytes")
    for p in out.honest:
        assert p.node is not None
        assert len(p.node.knocks) <= 1 and all(len(a) <= 2 for a in p.node.knocks.values())
        assert len(p.node.peer.early_knocks) <= 3 * 3, p.node.peer.early_knocks.keys()
        assert len(p.node.faults) == 3 and all(line.fullmatch(f) for f in p.node.faults), \
            p.node.faults
    assert_same_finished_game(out)
