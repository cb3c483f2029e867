"""One fuzz target per way bytes enter a peer or a tool: any input -> a value or a named refusal.

Each target is a function `check(data: bytes) -> None` that feeds `data` to one
entry point of the package and returns quietly when the entry point either
accepted it (with a value of the promised type) or refused it with the
module's own refusal (CodecError, EventError, KnockError, FrameError or
ConnectionClosed, ReplayError, HandshakeError, LobbyError, Refused). Anything
else is a crash: an exception of another type escapes unchanged, and a
broken promise (a list where a map was asked for, a lobby seat 30 of 3, a
refused message that still grew a table) raises `Crash` naming it.

Why one function per target, shared: `fuzz/run.py` drives these under
atheris (coverage-guided mutation of bytes), and
`tests/test_fuzz_properties.py` under hypothesis (generated structured
values), so the property is written once and both kinds of search check
exactly the same thing.

Targets that take messages read `data` as canonical msgpack (what the frame
reader hands over); bytes that are msgpack but not canonical are made
canonical first (so mutations that break canonical form still reach the
handler), and bytes that are not msgpack at all are the frame reader's
business, checked by its own target. Targets that stand inside a game take
their first byte as the choice of where (`fixtures.POINTS`, scenarios).
"""

from __future__ import annotations

import inspect
import ipaddress
import os
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import msgpack
import trio
import trio.testing

from allegra_lan.log import envelope as envelope_mod
from allegra_lan.log.ceremony import MAX_NAME
from allegra_lan.log.codec import MAX_DEPTH, CodecError, decode, encode
from allegra_lan.log.envelope import Event, EventError, decode_event, sign_event
from allegra_lan.log.identity import Identity
from allegra_lan.log.ceremony import commitment
from allegra_lan.log.knock import KNOCK_KEYS, KnockError, check_answer, check_knock, sign_knock
from allegra_lan.log.replay import FORMAT, Replay, ReplayError, parse_replay, read_replay
from allegra_lan.net.framing import (
    MAX_FRAME, ConnectionClosed, FramedStream, FrameError, check_message, encode_frame,
)
from allegra_lan.net.handshake import Handshake, HandshakeError, VerifiedPeer
from allegra_lan.net.lobby import Claim, Lobby, LobbyError
from allegra_lan.net.actions import Note, Send
from allegra_lan.net.peer import Peer, SeatPlayer
from allegra_lan.net.sync import MAX_EARLY, Fault, Replica
from allegra_lan.rules import Give, legal_moves, ruleset_for, to_act
from allegra_lan.table import Refused, Table, move_body
from allegra_lan.tools.verify import Verdict, verify_file

from .fixtures import POINTS, TablePool, golden

MAX_MESSAGES = 16  # messages one input may hold (a list of maps)


class Crash(AssertionError):
    """The entry point accepted the input but broke its promise (wrong type, broken invariant)."""


def crash_unless(ok: bool, what: str) -> None:
    if not ok:
        raise Crash(what)


# ---------------------------------------------------------------- reading inputs


def canonical_value(data: bytes) -> tuple[bool, Any]:
    """(True, value) for bytes that hold one msgpack value the codec can carry, made
    canonical; (False, None) otherwise."""
    try:
        return True, decode(data, max_size=MAX_FRAME)
    except CodecError:
        pass
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=False, max_str_len=MAX_FRAME,
                                max_bin_len=MAX_FRAME, max_array_len=MAX_FRAME, max_map_len=MAX_FRAME)
    except Exception:  # msgpack's many refusals: not msgpack, not our target's input
        return False, None
    try:
        return True, decode(encode(value), max_size=MAX_FRAME)
    except (CodecError, RecursionError):  # floats, ext types, non-string keys, too deep
        return False, None


def messages(data: bytes) -> list[dict[str, Any]]:
    """The messages `data` holds: one map, or a list of maps, each as the frame reader
    would hand it over (a map with a non-empty string `t`)."""
    ok, value = canonical_value(data)
    if not ok:
        return []
    items = value[:MAX_MESSAGES] if isinstance(value, list) else [value]
    out = []
    for m in items:
        try:
            out.append(check_message(m))
        except FrameError:
            continue  # the frame reader refuses it: no handler ever sees it
    return out


MAX_NOTE = 1000  # characters of one note or fault a peer's input may produce


def text_ok(text: Any, what: str) -> None:
    """Text a peer's input makes us show (a note, a fault) must be one line of printable
    characters: else a peer writes escape sequences or fake lines on the player's terminal."""
    crash_unless(isinstance(text, str) and len(text) <= MAX_NOTE and all(c.isprintable() for c in text),
                 f"{what} is not one line of printable text (peer text shown as it came): {_short(text)}")


def frame_ok(msg: Any, what: str) -> None:
    """A message the code under test sends must be one it can send (else the peer drops us)."""
    try:
        encode_frame(msg)
    except (ValueError, CodecError) as e:
        raise Crash(f"{what} is not a frame: {e}") from None


async def _within(main: Callable[[], Any], seconds: float) -> None:
    """Run `main` under trio; a hang is a crash too (trio.TooSlowError escapes)."""
    with trio.fail_after(seconds):
        await main()


# ---------------------------------------------------------------- codec


_SCALARS = (type(None), bool, int, str, bytes)


def _canonical_type(value: Any, depth: int = 0) -> bool:
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, _SCALARS):
        return True
    if type(value) is list:
        return all(_canonical_type(x, depth + 1) for x in value)
    if type(value) is dict:
        return all(type(k) is str and _canonical_type(v, depth + 1) for k, v in value.items())
    return False


def check_codec(data: bytes) -> None:
    """decode: a canonical value that re-encodes to exactly `data`, or CodecError; with a
    key order, only a map with exactly those keys (a caller asked for a map)."""
    for order in (None, KNOCK_KEYS, envelope_mod.KEYS):
        check_codec_with(data, order)


def check_codec_with(data: bytes, order: tuple[str, ...] | None) -> None:
    """check_codec for one key order (None: a plain value)."""
    try:
        value = decode(data, max_size=MAX_FRAME, key_order=order)
    except CodecError:
        return
    crash_unless(_canonical_type(value), f"decode returned a value of type {type(value).__name__} "
                                         "the codec does not allow")
    if order is not None:
        crash_unless(type(value) is dict and tuple(value) == tuple(order),
                     f"decode(key_order={list(order)}) returned {type(value).__name__} "
                     f"{_short(value)}, not a map with exactly those keys")
    crash_unless(encode(value, key_order=order) == data,
                 "decode accepted bytes that are not the canonical encoding of what it returned")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------- envelope


def _check_event(ev: Any, data: bytes) -> None:
    crash_unless(isinstance(ev, Event), f"decode_event returned {type(ev).__name__}")
    crash_unless(type(ev.v) is int and isinstance(ev.game, bytes) and len(ev.game) == 16
                 and type(ev.seq) is int and 0 <= ev.seq <= envelope_mod.MAX_SEQ
                 and isinstance(ev.prev, bytes) and len(ev.prev) == 32
                 and isinstance(ev.author, bytes) and len(ev.author) == 32
                 and isinstance(ev.kind, str) and type(ev.body) is dict,
                 "decode_event returned an event with a field of the wrong type or size")
    crash_unless(ev.signed == data and ev.id == envelope_mod.event_id(data),
                 "decode_event's event is not the bytes it was given")


def check_envelope(data: bytes) -> None:
    """decode_event: a checked Event of exactly these bytes, or EventError."""
    try:
        ev = decode_event(data)
    except EventError:
        return
    _check_event(ev, data)


# ---------------------------------------------------------------- knock

KNOCK_SIGNER = Identity.from_seed(b"allegra-fuzz/knock")
KNOCK_GAME = bytes(range(16))
KNOCK_DRAW = bytes(range(32, 64))


def check_knock_target(data: bytes) -> None:
    """check_answer / check_knock: a bool (or None) or KnockError; once as the bytes came,
    once signed by the right key (so what lies behind the signature check is reached)."""
    key = KNOCK_SIGNER.public
    signed_too = bytes(KNOCK_SIGNER.key.sign(data)) if len(data) <= 200 else data
    for signed in (data, signed_too):
        try:
            answer = check_answer(signed, key=key, game=KNOCK_GAME, draw_id=KNOCK_DRAW)
        except KnockError:
            pass
        else:
            crash_unless(type(answer) is bool, f"check_answer returned {type(answer).__name__}")
        try:
            result = check_knock(signed, key=key, game=KNOCK_GAME, draw_id=KNOCK_DRAW)
        except KnockError:
            pass
        else:
            crash_unless(result is None, f"check_knock returned {type(result).__name__}")


# ---------------------------------------------------------------- frame reader


def check_frames(data: bytes) -> None:
    """FramedStream.receive over an in-memory stream fed `data` in pieces, then closed:
    messages (maps with a string t), then ConnectionClosed or FrameError, never more
    buffered than one frame and one read."""
    if not data:
        return
    step = 1 + data[0] % 64 if data[0] < 192 else len(data)  # how the bytes trickle in
    payload = data[1:]

    async def receive_all() -> None:
        ours, theirs = trio.testing.memory_stream_pair()
        fs = FramedStream(ours)

        async def feed() -> None:
            for i in range(0, len(payload), step):
                await theirs.send_all(payload[i:i + step])
            await theirs.aclose()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(feed)
            got = 0
            while True:
                try:
                    msg = await fs.receive()
                except (ConnectionClosed, FrameError) as e:
                    try:  # the stream stays failed: a second receive names the same end
                        await fs.receive()
                    except (ConnectionClosed, FrameError) as again:
                        crash_unless(type(again) is type(e), "a failed stream changed its mind")
                    else:
                        raise Crash("a failed stream gave a message afterwards") from None
                    break
                got += 1
                crash_unless(type(msg) is dict and isinstance(msg.get("t"), str) and msg["t"] != "",
                             f"receive returned {_short(msg)}, not a message")
                crash_unless(got <= len(payload), "more messages than bytes")
                buffered = getattr(fs, "_buffer", b"")
                crash_unless(len(buffered) <= 4 + MAX_FRAME + 64 * 1024,
                             f"the frame reader holds {len(buffered)} bytes")

    trio.run(_within, receive_all, 30.0)


# ---------------------------------------------------------------- replay reader


def _check_replay(r: Any, name: str) -> None:
    crash_unless(isinstance(r, Replay), f"the replay reader returned {type(r).__name__}")
    crash_unless(all(type(k) is str and type(v) is str for k, v in r.tags.items()),
                 "a replay tag is not text")
    crash_unless(r.tags.get("Format") == FORMAT, "a replay without the Format tag was read")
    crash_unless(all(type(e) is bytes for e in r.events), "a replay event is not bytes")
    crash_unless(r.fault is None or (type(r.fault[0]) is int and type(r.fault[1]) is str),
                 "a replay fault is not (seq, reason)")


def check_replay(data: bytes) -> None:
    """parse_replay, read_replay on a real file, and verify_file: a Replay or ReplayError,
    and a Verdict from verify_file whatever the file holds."""
    try:
        _check_replay(parse_replay(data, "<fuzz>"), "<fuzz>")
    except ReplayError:
        pass
    fd, name = tempfile.mkstemp(prefix="allegra-fuzz-", suffix=".allegra")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        try:
            _check_replay(read_replay(path), str(path))
        except ReplayError:
            pass
        verdict = verify_file(path)
    finally:
        path.unlink(missing_ok=True)
    crash_unless(isinstance(verdict, Verdict), f"verify_file returned {type(verdict).__name__}")
    crash_unless(verdict.ok or isinstance(verdict.reason, str), "a failed verdict without a reason")


# ---------------------------------------------------------------- handshake

HS_ME = Identity.from_seed(b"allegra-fuzz/handshake/me")
HS_PEER = Identity.from_seed(b"allegra-fuzz/handshake/peer")
HS_TABLE = bytes(range(100, 116))
HS_PINS = {"2468": bytes(range(32)), "1357": bytes(range(1, 33))}  # a PIN, and the key pin_key gives
DELETE = "-"  # a patch key "-name" removes field name from the honest message
MAX_STEPS = 8  # messages one side may receive in a handshake


def _patched(msg: dict[str, Any], patch: Any) -> dict[str, Any] | None:
    """The honest message with the fuzzer's changes; None if the framing would refuse it."""
    out = dict(msg)
    if isinstance(patch, dict):
        for k, v in patch.items():
            if k.startswith(DELETE):
                out.pop(k[1:], None)
            else:
                out[k] = v
    try:
        return check_message(out)
    except FrameError:
        return None


def _side(identity: Identity, initiator: bool, nonce: bytes, pin: str | None) -> Handshake:
    """A Handshake with a PIN, whichever way this version takes it (an Argon2id key before
    protocol 2, the PIN itself with CPace): the target runs on both."""
    params = inspect.signature(Handshake).parameters
    if "pin_key" in params:
        return Handshake(identity, initiator=initiator, table_id=HS_TABLE, nonce=nonce,
                         pin_key=None if pin is None else HS_PINS[pin])
    return Handshake(identity, initiator=initiator, table_id=HS_TABLE, nonce=nonce, pin=pin)


def _receive(hs: Handshake, msg: dict[str, Any]) -> list[dict[str, Any]]:
    """Feed one message to the step it waits for; what to send (a list, in every version)."""
    step = getattr(hs, "receive", None) or getattr(hs, f"receive_{hs.waiting_for}")
    out = step(msg)
    if isinstance(out, VerifiedPeer) or out is None:
        return []
    return out if isinstance(out, list) else [out]


def check_handshake(data: bytes) -> None:
    """Handshake steps (receive_hello, [receive_pake,] receive_proof, receive_ok) against an
    honest peer whose messages the input changes, in both roles, with the same PIN, a wrong
    one, and one side without: each step gives messages to send (frames) or HandshakeError;
    a finished handshake names the honest peer's key, and never passes without our PIN."""
    ok, value = canonical_value(data)
    if not ok:
        return
    patches = list(value[:MAX_STEPS]) if isinstance(value, list) else [value]
    choice = zlib.crc32(data) % (2 * len(PIN_CASES))  # one case an input: 4 ms for all ten
    mine, theirs = PIN_CASES[choice // 2]
    _one_handshake(patches, choice % 2 == 0, mine, theirs)


PIN_CASES = ((None, None), ("2468", "2468"), ("2468", "1357"), ("2468", None), (None, "2468"))


def _one_handshake(patches: list[Any], initiator: bool, mine: str | None, theirs: str | None) -> None:
    me = _side(HS_ME, initiator, bytes(32), mine)
    peer = _side(HS_PEER, not initiator, bytes([1]) * 32, theirs)
    to_me, to_peer = [peer.hello_message()], [me.hello_message()]
    received = 0
    try:
        while (to_me or to_peer) and not me.done and received < MAX_STEPS:
            if to_peer:  # the honest peer answers what we sent; its refusal ends the exchange
                try:
                    to_me += _receive(peer, to_peer.pop(0))
                except HandshakeError:
                    return
                continue
            msg = _patched(to_me.pop(0), patches[received] if received < len(patches) else None)
            received += 1
            if msg is None:
                return
            for out in _receive(me, msg):
                crash_unless(type(out) is dict, f"a handshake step gave {type(out).__name__} to send")
                frame_ok(out, f"our {out.get('t')!r}")
                to_peer.append(out)
    except HandshakeError:
        return
    if not me.done:
        return
    verified = me.peer
    crash_unless(isinstance(verified, VerifiedPeer), f"a finished handshake holds {type(verified).__name__}")
    crash_unless(verified.key == HS_PEER.public, "the handshake passed for a key that did not sign it")
    crash_unless(mine is None or mine == theirs, "the handshake passed though the peer does not know our PIN")


# ---------------------------------------------------------------- gossip (sync)


def _early(replica: Replica) -> dict[Any, dict[int, bytes]]:
    """The events a replica holds ahead of its log, per peer (a private table: read with care,
    so that a refactoring that renames it leaves the target running)."""
    early = getattr(replica, "_early", {})
    return early if isinstance(early, dict) else {}

_pool = TablePool()


def check_sync(data: bytes, *, text: bool = True) -> None:
    """Replica.received: never raises, refuses into `faults` (with `text`: each one line of
    printable text), asks only to send frames, keeps at most MAX_EARLY early events per peer."""
    if not data:
        return
    point = POINTS[data[0] % len(POINTS)]
    msgs = messages(data[1:])
    if not msgs:
        return
    table = _pool.table(point)
    replica = Replica(table)
    for peer in ("p1", "p2"):
        replica.connected(peer)
    try:
        for msg in msgs:
            sends = replica.received("p1", msg)
            crash_unless(isinstance(sends, list), "received returned no list of sends")
            for to, out in sends:
                crash_unless(to in ("p1", "p2"), f"a send to an unknown peer {to!r}")
                frame_ok(out, f"a {out.get('t')!r} message the replica sends")
            crash_unless(all(isinstance(f, Fault) and isinstance(f.reason, str) for f in replica.faults),
                         "a fault without a reason")
            for f in replica.faults if text else ():
                text_ok(f.reason, f"the replica's fault after a {msg.get('t')!r} message")
                text_ok(f.fault, f"the replica's fault kind after a {msg.get('t')!r} message")
            crash_unless(all(len(e) <= MAX_EARLY for e in _early(replica).values()),
                         "more early events kept than MAX_EARLY")
    finally:
        if replica.superseded:
            _pool.taint(point)


# ---------------------------------------------------------------- table (signed bodies)


def check_table(data: bytes) -> None:
    """Table.append of an event validly signed by the seat to act, with the input's kind
    and body (and of the raw input): Event, None or Refused, never another exception."""
    if len(data) < 2:
        return
    point = POINTS[data[0] % len(POINTS)]
    table = _pool.table(point)
    _append(table, data[1:], point)
    ok, value = canonical_value(data[1:])
    if not ok or not isinstance(value, list) or len(value) < 2:
        return
    kind, body = value[0], value[1]
    seat = value[2] if len(value) > 2 and type(value[2]) is int else table.next_author()
    if not isinstance(kind, str) or not isinstance(body, dict) or seat is None:
        return
    signer = golden().identities[seat % len(golden().identities)]
    try:
        signed = sign_event(signer.key, game=table.game or golden().game, seq=table.seq,
                            prev=table.head, kind=kind, body=body).signed
    except EventError:
        return  # the fuzzer's kind or body cannot be an event at all
    _append(table, signed, point)


def _append(table: Table, signed: bytes, point: int) -> None:
    before = table.seq
    try:
        ev = table.append(signed)
    except Refused as r:
        crash_unless(table.seq == before, "a refused event changed the table")
        crash_unless(isinstance(r.reason, str), "a refusal without a reason")
        return
    crash_unless(ev is None or isinstance(ev, Event), f"append returned {type(ev).__name__}")
    if ev is not None:
        _pool.taint(point)


# ---------------------------------------------------------------- genesis and play

SEAT_KEYS = tuple(Identity.from_seed(f"allegra-fuzz/genesis/seat/{i}".encode()) for i in range(16))
GENESIS_GAME = bytes(range(50, 66))
MAX_PLAY = 24  # moves played after the ceremony (the first legal one each time)


def check_genesis(data: bytes, *, names: bool = True) -> None:
    """A fuzzed genesis body (seat keys replaced by keys the target holds, so every event
    can be signed): Table.append takes it or refuses it; once taken, its names are printable
    names, and the ceremony and the first moves of the play (the first legal move each
    time, a give with its knock) are all taken: a move legal_moves offers is never refused."""
    ok, body = canonical_value(data)
    if not ok or not isinstance(body, dict):
        return
    seats = body.get("seats")
    if isinstance(seats, list):
        body["seats"] = [dict(s, key=SEAT_KEYS[i].public) if isinstance(s, dict) and "key" in s else s
                         for i, s in enumerate(seats[:len(SEAT_KEYS)])] + seats[len(SEAT_KEYS):]
    table = Table()

    def emit(seat: int, kind: str, ev_body: dict[str, Any]) -> Event | None:
        try:
            signed = sign_event(SEAT_KEYS[seat].key, game=GENESIS_GAME, seq=table.seq, prev=table.head,
                                kind=kind, body=ev_body).signed
        except EventError:
            return None
        return table.append(signed)

    try:
        if emit(0, "genesis", body) is None:
            return  # the body cannot be an event at all (sign_event refused it)
    except Refused:
        return
    g = table.genesis
    crash_unless(g is not None, "a genesis was taken but the table has none")
    assert g is not None
    for name in [g.table] + [info.name for info in g.seats] if names else []:
        text_ok(name, "a genesis name")
    n = len(g.seats)
    nonces = [bytes([i]) * 32 for i in range(n)]
    try:
        for i in range(n):
            emit(i, "accept", {})
        for i in range(n):
            emit(i, "commit", {"commit": commitment(nonces[i])})
        for i in range(n):
            emit(i, "reveal", {"nonce": nonces[i]})
    except Refused as r:
        raise Crash(f"the ceremony of a taken genesis was refused: {r}") from None
    for _ in range(MAX_PLAY):
        state = table.state
        crash_unless(state is not None, "no game state after the ceremony")
        assert state is not None
        d = to_act(state)
        if d is None:
            return
        legal = legal_moves(state)
        crash_unless(bool(legal), f"seat {d.seat} must act but has no legal move")
        move = legal[0]
        knock = None
        if isinstance(move, Give):
            knock = sign_knock(SEAT_KEYS[move.to].key, GENESIS_GAME, table.head, True)
        kind, mbody = move_body(move, knock)
        try:
            emit(d.seat, kind, mbody)
        except Refused as r:
            raise Crash(f"the table refused a move legal_moves offered ({kind}): {r.reason}") from None


# ---------------------------------------------------------------- lobby


def _address_ok(addr: Any) -> bool:
    if not (isinstance(addr, tuple) and len(addr) == 2):
        return False
    host, port = addr
    try:
        ipaddress.IPv4Address(host)
    except (ipaddress.AddressValueError, ValueError, TypeError):
        return False
    return type(port) is int and 1 <= port <= 65535


def check_lobby_state(lobby: Lobby, what: str) -> None:
    """What any peer may rely on in a lobby it holds (issue 9: one schema per message)."""
    crash_unless(isinstance(lobby.table_id, bytes) and len(lobby.table_id) == 16,
                 f"{what}: the table id is not 16 bytes")
    crash_unless(isinstance(lobby.name, str) and 0 < len(lobby.name.encode()) <= MAX_NAME,
                 f"{what}: the table name {_short(lobby.name)} is not a name")
    crash_unless(isinstance(lobby.host, bytes) and len(lobby.host) == 32, f"{what}: the host is not a key")
    crash_unless(type(lobby.seats) is int, f"{what}: the seat count is not an integer")
    bad = [s for s in lobby.claims if type(s) is not int or not 0 <= s < lobby.seats]
    crash_unless(not bad, f"{what}: seat {_short(bad[0]) if bad else ''} of a {lobby.seats}-seat table")
    crash_unless(all(isinstance(c, Claim) for c in lobby.claims.values()), f"{what}: a claim is not a Claim")
    for key, addr in lobby.addresses.items():
        crash_unless(isinstance(key, bytes) and len(key) == 32, f"{what}: an address for a non-key")
        crash_unless(_address_ok(addr), f"{what}: the address {_short(addr)} is not an IPv4 address "
                                        "and a port 1-65535")
    frame_ok(lobby.to_msg(), f"{what}: the lobby message")


def check_lobby(data: bytes) -> None:
    """Lobby.from_msg and Claim.from_msg: a lobby every peer may rely on, or LobbyError."""
    ok, value = canonical_value(data)
    if not ok:
        return
    try:
        claim = Claim.from_msg(value)
    except LobbyError:
        pass
    else:
        crash_unless(isinstance(claim.name, str) and isinstance(claim.key, bytes)
                     and isinstance(claim.owner, bytes) and (claim.bot is None or isinstance(claim.bot, str))
                     and type(claim.ready) is bool, "Claim.from_msg made a claim of the wrong types")
    for msg in messages(data):
        try:
            lobby = Lobby.from_msg(msg)
        except LobbyError:
            continue
        crash_unless(isinstance(lobby, Lobby), f"Lobby.from_msg returned {type(lobby).__name__}")
        check_lobby_state(lobby, "Lobby.from_msg")
        again = Lobby.from_msg(lobby.to_msg())
        crash_unless(again == lobby, "a lobby does not survive its own message")


# ---------------------------------------------------------------- node dispatch

NODE_HOST = Identity.from_seed(b"allegra-fuzz/node/host")
NODE_GUEST = Identity.from_seed(b"allegra-fuzz/node/guest")
NODE_STRANGER = Identity.from_seed(b"allegra-fuzz/node/stranger")
NODE_TABLE = bytes(range(200, 216))


@dataclass(frozen=True)
class Scenario:
    """Where the node under attack stands, and who sends it the input's messages."""

    name: str
    point: int | None  # a golden point (a game under way) or None (the lobby, no genesis)
    host: bool = False  # (lobby) the node is the host
    spectators: bool = False
    sender: str = "seat2"  # seat2 | guest | host | stranger
    linked: tuple[int, ...] = (0, 2)  # (game) the seats whose peers are connected
    joined: bool = False  # (lobby, guest) the node holds the host's lobby and a seat in it


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("host lobby, a stranger speaks", None, host=True, sender="stranger"),
    Scenario("host lobby, a seated guest speaks", None, host=True, sender="guest"),
    Scenario("guest before the lobby, the host speaks", None, sender="host"),
    *(Scenario(f"game at seq {p}, seat 2 speaks", p) for p in POINTS),
    Scenario("spectator table at seq 21, a stranger speaks", 21, spectators=True, sender="stranger"),
    Scenario("game at seq 21, seat 0 away, seat 2 speaks", 21, linked=(2,)),
    Scenario("guest in the lobby, the host speaks", None, sender="host", joined=True),
)


def _peer(me: Identity, table_id: bytes) -> Peer:
    return Peer(me, table_id=table_id, entropy=os.urandom)


def _lobby_node(s: Scenario) -> tuple[Peer, bytes]:
    me = NODE_HOST if s.host else NODE_GUEST
    node = _peer(me, NODE_TABLE)
    if s.host or s.joined:
        lobby = Lobby(NODE_TABLE, "fuzz table", ruleset_for("allegra").to_dict(), 3, NODE_HOST.public)
        lobby.sit(0, Claim("host", NODE_HOST.public, NODE_HOST.public))
        lobby.sit(1, Claim("guest", NODE_GUEST.public, NODE_GUEST.public))
        lobby.addresses[NODE_HOST.public] = ("127.0.0.1", 40000)
        lobby.addresses[NODE_GUEST.public] = ("127.0.0.1", 40001)
        node.lobby = lobby
    sender = {"stranger": NODE_STRANGER, "guest": NODE_GUEST, "host": NODE_HOST}[s.sender].public
    dialled_by = me.public if s.sender == "host" else sender  # a guest dialled its host
    node.connected(0.0, sender, dialled_by=dialled_by, remote=("127.0.0.1", 40009))
    return node, sender


def _game_node(s: Scenario) -> tuple[Peer, bytes]:
    assert s.point is not None
    g = golden()
    table = _pool.table(s.point)
    assert table.genesis is not None
    me = g.identities[1]
    node = _peer(me, g.game)
    node.replica = Replica(table)
    lobby = Lobby(g.game, table.genesis.table, table.genesis.ruleset, len(g.keys), g.keys[0],
                  spectators=s.spectators, takeover=60)
    for seat, info in enumerate(table.genesis.seats):
        lobby.claims[seat] = Claim(info.name, info.key, info.key, None if seat == 1 else "greedy", True)
        lobby.addresses[info.key] = ("127.0.0.1", 40000 + seat)
    node.lobby = lobby
    node.players[1] = SeatPlayer(1, me, None, bytes(32))
    node.local[me.public] = (me, None)
    for seat in s.linked:
        key = g.keys[seat]
        node.connected(0.0, key, dialled_by=min(key, me.public), remote=("127.0.0.1", 40000 + seat))
    sender = NODE_STRANGER.public if s.sender == "stranger" else g.keys[2]
    if sender not in node.links:
        node.connected(0.0, sender, dialled_by=sender, remote=("127.0.0.1", 40009))
    return node, sender


def _sizes(node: Peer) -> tuple[int, int, int, int]:
    """How much per-peer state the node holds (what a refused message must not grow)."""
    return (len(node.knocks), sum(len(a) for a in node.knocks.values()), len(node.promises),
            sum(len(e) for e in _early(node.replica).values()))


def check_node(data: bytes) -> None:
    """Peer.dispatch of the input's messages in one of SCENARIOS: nothing escapes, a
    refused message leaves no trace in the per-peer tables, the lobby stays sound, what
    the peer says is one line of printable text, and everything it sends is a frame."""
    if not data:
        return
    scenario = SCENARIOS[data[0] % len(SCENARIOS)]
    msgs = messages(data[1:])
    if not msgs:
        return
    node, sender = _game_node(scenario) if scenario.point is not None else _lobby_node(scenario)
    for msg in msgs:
        faults, sizes = len(node.faults), _sizes(node)
        actions = node.dispatch(sender, msg)
        for a in actions:
            if isinstance(a, Note):
                text_ok(a.text, f"what the node says after a {msg.get('t')!r} message")
            elif isinstance(a, Send):
                frame_ok(a.msg, f"a {a.msg.get('t')!r} message the node sends")
        for note in node.faults[faults:]:
            text_ok(note, f"what the node says after a {msg.get('t')!r} message")
        if len(node.faults) > faults:
            crash_unless(all(after <= before for after, before in zip(_sizes(node), sizes)),
                         f"a refused {msg.get('t')!r} message grew the node's tables "
                         f"(knocks, answers, promises, early) from {sizes} to {_sizes(node)}")
        if node.lobby is not None:
            check_lobby_state(node.lobby, f"the node's lobby after a {msg.get('t')!r} message")
            owners = node.lobby.owners() | {node.lobby.host}
            strays = [k for k in node.lobby.addresses if k not in owners]
            crash_unless(not strays, f"after a {msg.get('t')!r} message the lobby holds an address "
                                     "for a key that holds no seat (peers would dial it)")
    if node.replica.superseded or node.table.seq != (scenario.point or 0):
        if scenario.point is not None:
            _pool.taint(scenario.point)


# ---------------------------------------------------------------- the list


@dataclass(frozen=True)
class Target:
    name: str
    check: Callable[[bytes], None]
    max_len: int  # the longest input worth trying (libFuzzer -max_len)
    what: str
    value_at: int | None = None  # where a msgpack value starts in the input (fuzz/mutator.py)


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("codec", check_codec, 4096, "log/codec.py decode (plain and with a key order)"),
    Target("envelope", check_envelope, 17 * 1024, "log/envelope.py decode_event", 64),
    Target("knock", check_knock_target, 512, "log/knock.py check_answer and check_knock", 64),
    Target("frames", check_frames, 8192, "net/framing.py FramedStream.receive on a memory stream"),
    Target("replay", check_replay, 64 * 1024, "log/replay.py parse_replay, read_replay; tools verify_file"),
    Target("handshake", check_handshake, 2048,
           "net/handshake.py Handshake.receive_hello/receive_proof/receive_ok", 0),
    Target("sync", check_sync, 32 * 1024, "net/sync.py Replica.received in a golden game", 1),
    Target("table", check_table, 4096, "table.py Table.append of signed fuzzed bodies", 1),
    Target("genesis", check_genesis, 4096, "table.py a fuzzed genesis, its ceremony and first moves", 0),
    Target("lobby", check_lobby, 4096, "net/lobby.py Lobby.from_msg, Claim.from_msg", 0),
    Target("node", check_node, 8192, "net/peer/ Peer.dispatch in lobby and game scenarios", 1),
)}
