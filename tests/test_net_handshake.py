"""The peer handshake over real TCP sockets on 127.0.0.1, against honest peers and test doubles that cheat."""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Collection

import pytest
import trio

from allegra_lan.log.envelope import EventError, decode_event
from allegra_lan.log.identity import Identity, fingerprint
from allegra_lan.log.knock import KnockError, check_knock
from allegra_lan.net.framing import FramedStream
from allegra_lan.net.handshake import (
    INITIATOR,
    PROTOCOL_VERSION,
    RESPONDER,
    SAME_KEY_CODE,
    Handshake,
    HandshakeError,
    Hello,
    VerifiedPeer,
    PIN_CODE,
    handshake,
    pin_secret,
    proof_payload,
    transcript,
)

LOOPBACK = "127.0.0.1"
TABLE = bytes(range(16))
OTHER_TABLE = bytes(range(1, 17))
ALICE = Identity.from_seed(b"alice")
BOB = Identity.from_seed(b"bob")
CAROL = Identity.from_seed(b"carol")
MALLORY = Identity.from_seed(b"mallory")


def run(test: Callable[[], Awaitable[None]], limit: float = 10.0) -> None:
    """Run one async test under trio, never for longer than `limit` seconds."""
    async def main() -> None:
        with trio.fail_after(limit):
            await test()
    trio.run(main)


async def tcp_pair() -> tuple[FramedStream, FramedStream]:
    """Framed ends of a real TCP connection on loopback: (the side that connected, the side that accepted)."""
    listener = (await trio.open_tcp_listeners(0, host=LOOPBACK))[0]
    port = listener.socket.getsockname()[1]
    client = await trio.open_tcp_stream(LOOPBACK, port)
    server = await listener.accept()
    await listener.aclose()
    return FramedStream(client), FramedStream(server)


@dataclass
class Side:
    identity: Identity
    table: bytes = TABLE
    pin: str | None = None
    expect: Collection[bytes] | None = None


Outcome = VerifiedPeer | HandshakeError


async def attempt(stream: FramedStream, side: Side, initiator: bool, timeout: float) -> Outcome:
    try:
        return await handshake(stream, side.identity, initiator=initiator, table_id=side.table, pin=side.pin,
                               expect_keys=side.expect, timeout=timeout)
    except HandshakeError as e:
        return e


def both(joiner: Side, host: Side, timeout: float = 5.0) -> tuple[Outcome, Outcome]:
    """Handshake an initiating joiner with a responding host over TCP; what each side ended with."""
    results: dict[str, Outcome] = {}

    async def test() -> None:
        a, b = await tcp_pair()

        async def one(name: str, stream: FramedStream, side: Side, initiator: bool) -> None:
            results[name] = await attempt(stream, side, initiator, timeout)
            await stream.aclose()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(one, "joiner", a, joiner, True)
            nursery.start_soon(one, "host", b, host, False)

    run(test)
    return results["joiner"], results["host"]


def versus_double(honest: Side, double: Callable[[FramedStream], Awaitable[None]], *,
                  honest_initiates: bool = False, timeout: float = 5.0) -> Outcome:
    """The honest side's outcome against a test double that speaks the wire protocol by hand."""
    result: list[Outcome] = []

    async def test() -> None:
        a, b = await tcp_pair()
        mine, theirs = (a, b) if honest_initiates else (b, a)

        async def honest_side() -> None:
            result.append(await attempt(mine, honest, honest_initiates, timeout))
            await mine.aclose()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(honest_side)
            await double(theirs)
            await theirs.aclose()

    run(test)
    return result[0]


def fresh_hello(key: bytes, *, table: bytes = TABLE, proto: int = PROTOCOL_VERSION) -> dict[str, Any]:
    return Hello(proto, key, os.urandom(32), table).message()


# Honest peers.

@pytest.mark.parametrize("joiner_checks", [False, True])
def test_two_honest_peers_prove_their_keys_to_each_other(joiner_checks: bool) -> None:
    joiner = Side(ALICE, expect={BOB.public} if joiner_checks else None)
    host = Side(BOB, expect={ALICE.public, CAROL.public})
    a, b = both(joiner, host)
    assert isinstance(a, VerifiedPeer) and isinstance(b, VerifiedPeer)
    assert (a.key, a.fingerprint, a.initiator) == (BOB.public, BOB.fingerprint, False)
    assert (b.key, b.fingerprint, b.initiator) == (ALICE.public, fingerprint(ALICE.public), True)
    assert a.session == b.session and len(a.session) == 32


def test_two_honest_peers_with_the_same_pin_get_in() -> None:
    a, b = both(Side(ALICE, pin="4711"), Side(BOB, pin="4711", expect={ALICE.public}))
    assert isinstance(a, VerifiedPeer) and a.key == BOB.public
    assert isinstance(b, VerifiedPeer) and b.key == ALICE.public


def test_every_handshake_is_a_new_session() -> None:
    first, _ = both(Side(ALICE), Side(BOB))
    second, _ = both(Side(ALICE), Side(BOB))
    assert isinstance(first, VerifiedPeer) and isinstance(second, VerifiedPeer)
    assert first.session != second.session


# Refusals between honest peers: both sides learn the reason.

def test_a_wrong_pin_is_refused_by_the_host_and_the_joiner_is_told_so() -> None:
    a, b = both(Side(ALICE, pin="1234"), Side(BOB, pin="4711"))
    assert isinstance(b, HandshakeError) and b.reason == "wrong PIN for this table" and not b.by_peer
    assert isinstance(a, HandshakeError) and a.reason == "wrong PIN for this table" and a.by_peer
    assert a.code == b.code == PIN_CODE


def test_a_joiner_without_the_pin_is_refused_and_told_the_table_has_one() -> None:
    a, b = both(Side(ALICE), Side(BOB, pin="4711"))
    assert isinstance(b, HandshakeError) and b.reason == "wrong PIN (the peer gave none)"
    assert isinstance(a, HandshakeError) and a.reason == "the table has a PIN and we were given none"


def test_a_peer_at_another_table_is_refused() -> None:
    a, b = both(Side(ALICE, table=OTHER_TABLE), Side(BOB))
    assert isinstance(b, HandshakeError)
    assert b.reason == f"the peer is at table {OTHER_TABLE.hex()}, we are at table {TABLE.hex()}"
    assert isinstance(a, HandshakeError)
    assert a.reason == f"the peer is at table {TABLE.hex()}, we are at table {OTHER_TABLE.hex()}"


def test_a_key_without_a_seat_is_refused_and_told_why() -> None:
    a, b = both(Side(ALICE), Side(BOB, expect={CAROL.public}))
    reason = f"key {ALICE.fingerprint} holds no seat at this table"
    assert isinstance(b, HandshakeError) and b.reason == reason and not b.by_peer
    assert isinstance(a, HandshakeError) and a.reason == reason and a.by_peer
    assert str(a) == f"the peer refused: {reason}"


def test_the_same_identity_on_both_ends_is_refused() -> None:
    a, b = both(Side(ALICE), Side(ALICE))
    for outcome in (a, b):
        assert isinstance(outcome, HandshakeError)
        assert outcome.reason.startswith(f"the peer presents our own key {ALICE.fingerprint}")
        assert outcome.code == SAME_KEY_CODE  # what the client reads, not the words


# Test doubles that cheat.

def test_a_peer_of_another_protocol_version_is_named() -> None:
    seen: list[dict[str, Any]] = []

    async def future_peer(s: FramedStream) -> None:
        hello = fresh_hello(ALICE.public, proto=3)
        hello["cipher"] = b"something new"  # a later version may add fields: the version is judged first
        await s.send(hello)
        seen.append(await s.receive())
        seen.append(await s.receive())

    outcome = versus_double(Side(BOB), future_peer)
    assert isinstance(outcome, HandshakeError) and outcome.reason == "peer speaks protocol 3, we speak 2"
    assert seen[0]["t"] == "hello"
    assert seen[1] == {"t": "refuse", "reason": "peer speaks protocol 3, we speak 2"}


def test_a_peer_of_the_first_protocol_with_its_pin_mac_is_told_to_upgrade() -> None:
    seen: list[dict[str, Any]] = []

    async def old_peer(s: FramedStream) -> None:
        # Protocol 1's hello had no `pin` field; its proof carried an Argon2id-keyed PIN MAC.
        hello = fresh_hello(ALICE.public, proto=1)
        del hello["pin"]
        await s.send(hello)
        seen.append(await s.receive())
        seen.append(await s.receive())

    outcome = versus_double(Side(BOB, pin="4711"), old_peer)
    reason = "peer speaks protocol 1, we speak 2 (the older side must upgrade allegra-lan)"
    assert isinstance(outcome, HandshakeError) and outcome.reason == reason
    assert seen[0]["t"] == "hello" and seen[0]["proto"] == PROTOCOL_VERSION == 2
    assert seen[1] == {"t": "refuse", "reason": reason}


def test_a_proof_signed_by_another_key_is_refused() -> None:
    refusal: list[dict[str, Any]] = []

    async def impostor(s: FramedStream) -> None:
        # Mallory claims Alice's seat, but can only sign with her own key.
        hello = Hello(PROTOCOL_VERSION, ALICE.public, os.urandom(32), TABLE)
        await s.send(hello.message())
        theirs = await s.receive()
        peer = Hello(theirs["proto"], theirs["key"], theirs["nonce"], theirs["table"], theirs["pin"])
        t = transcript(hello, peer)
        await s.send({"t": "proof", "sig": MALLORY.key.sign(proof_payload(INITIATOR, t)).signature})
        refusal.append(await s.receive())  # Bob proves nothing to a peer that did not prove itself

    outcome = versus_double(Side(BOB, expect={ALICE.public}), impostor)
    reason = f"the peer did not prove it holds key {ALICE.fingerprint}"
    assert isinstance(outcome, HandshakeError) and outcome.reason == reason
    assert refusal == [{"t": "refuse", "reason": reason}]


def test_a_recorded_hello_and_proof_replayed_later_are_refused() -> None:
    recorded: list[dict[str, Any]] = []

    async def alice_recorded(s: FramedStream) -> None:
        # A real Alice, driven by hand so the messages she sends can be kept.
        hs = Handshake(ALICE, initiator=True, table_id=TABLE, nonce=os.urandom(32))
        recorded.append(hs.hello_message())
        await s.send(recorded[0])
        [proof] = hs.receive_hello(await s.receive())
        recorded.append(proof)
        await s.send(proof)
        [ok] = hs.receive_proof(await s.receive())
        await s.send(ok)
        assert hs.done

    first = versus_double(Side(BOB, expect={ALICE.public}), alice_recorded)
    assert isinstance(first, VerifiedPeer) and first.key == ALICE.public

    async def replayer(s: FramedStream) -> None:
        await s.send(recorded[0])
        await s.receive()
        await s.send(recorded[1])

    second = versus_double(Side(BOB, expect={ALICE.public}), replayer)
    assert isinstance(second, HandshakeError)
    assert second.reason == f"the peer did not prove it holds key {ALICE.fingerprint}"


def test_a_reflected_hello_is_refused() -> None:
    async def mirror(s: FramedStream) -> None:
        await s.send(await s.receive())

    outcome = versus_double(Side(BOB), mirror)
    assert isinstance(outcome, HandshakeError)
    assert outcome.reason == "the peer sent back our own nonce (a reflected hello)"


def test_a_hello_with_our_own_key_and_a_fresh_nonce_is_refused() -> None:
    async def copycat(s: FramedStream) -> None:
        theirs = await s.receive()
        await s.send(fresh_hello(theirs["key"]))

    outcome = versus_double(Side(BOB), copycat, honest_initiates=True)
    assert isinstance(outcome, HandshakeError)
    assert outcome.reason.startswith(f"the peer presents our own key {BOB.fingerprint}")


def test_a_proof_made_for_the_other_role_is_refused() -> None:
    alice = Handshake(ALICE, initiator=True, table_id=TABLE, nonce=os.urandom(32))
    bob = Handshake(BOB, initiator=False, table_id=TABLE, nonce=os.urandom(32))
    alice.receive_hello(bob.hello_message())
    assert bob.receive_hello(alice.hello_message()) == []  # the responder proves itself second
    assert alice.transcript is not None and alice.transcript == bob.transcript
    wrong_role = ALICE.key.sign(proof_payload(RESPONDER, alice.transcript)).signature
    with pytest.raises(HandshakeError, match=f"did not prove it holds key {ALICE.fingerprint}"):
        bob.receive_proof({"t": "proof", "sig": wrong_role})


def test_a_silent_peer_times_out_with_the_step_named() -> None:
    async def silent(s: FramedStream) -> None:
        assert (await s.receive())["t"] == "hello"
        assert (await s.receive())["t"] == "refuse"  # sent when the honest side gives up

    outcome = versus_double(Side(BOB), silent, timeout=0.3)
    assert isinstance(outcome, HandshakeError)
    assert outcome.reason == "the peer did not finish the handshake in 0.3 s (we were waiting for its hello)"


def test_a_peer_that_stops_after_its_hello_times_out_waiting_for_its_proof() -> None:
    elapsed: list[float] = []

    async def stalls(s: FramedStream) -> None:
        start = trio.current_time()
        await s.send(fresh_hello(ALICE.public))
        await s.receive()  # the honest hello
        elapsed.append(trio.current_time() - start)
        refusal = await s.receive()
        elapsed.append(trio.current_time() - start)
        assert refusal["t"] == "refuse" and "did not finish the handshake" in refusal["reason"]

    outcome = versus_double(Side(BOB), stalls, timeout=0.4)
    assert isinstance(outcome, HandshakeError)
    assert outcome.reason == "the peer did not finish the handshake in 0.4 s (we were waiting for its proof)"
    assert elapsed[0] < 0.3 and 0.3 < elapsed[1] < 2.0


def test_a_peer_that_leaves_mid_handshake_is_named() -> None:
    async def leaves(s: FramedStream) -> None:
        await s.send(fresh_hello(ALICE.public))

    outcome = versus_double(Side(BOB), leaves)
    assert isinstance(outcome, HandshakeError)
    assert outcome.reason.startswith("the peer left during the handshake (we were waiting for its proof)")


def test_a_bad_frame_during_the_handshake_is_named() -> None:
    async def garbage(s: FramedStream) -> None:
        await s.stream.send_all(b"\x00\x00\x00\x01\xc1")

    outcome = versus_double(Side(BOB), garbage)
    assert isinstance(outcome, HandshakeError)
    assert outcome.reason.startswith("bad frame from the peer during the handshake: malformed frame")


@pytest.mark.parametrize("edit, reason", [
    ({"key": b"k" * 31}, "the peer's hello field key must be 32 bytes"),
    ({"nonce": "not bytes"}, "the peer's hello field nonce must be 32 bytes"),
    ({"table": b"t" * 17}, "the peer's hello field table must be 16 bytes"),
    ({"proto": True}, "the peer's hello has no protocol version"),
    ({"pin": 1}, "the peer's hello field pin must be true or false"),
    ({"name": "extra"}, "the peer's hello has unknown fields: name"),
    ({"t": "proof"}, "expected the peer's hello, got a 'proof' message"),
])
def test_a_malformed_hello_is_refused_with_the_field_named(edit: dict[str, Any], reason: str) -> None:
    async def sloppy(s: FramedStream) -> None:
        hello = fresh_hello(ALICE.public)
        hello.update(edit)
        await s.send(hello)
        await s.receive()

    outcome = versus_double(Side(BOB), sloppy)
    assert isinstance(outcome, HandshakeError) and outcome.reason == reason


@pytest.mark.parametrize("proof, reason", [
    ({"t": "proof", "sig": b"s" * 63}, "the peer's proof field sig must be 64 bytes"),
    ({"t": "proof"}, "the peer's proof field sig must be 64 bytes"),
    ({"t": "proof", "sig": b"s" * 64, "extra": 1}, "the peer's proof has unknown fields: extra"),
    ({"t": "ok"}, "expected the peer's proof, got a 'ok' message"),
    ({"t": "refuse", "reason": "not today\x07"}, "not today?"),
    ({"t": "refuse"}, "no reason given"),
])
def test_a_malformed_proof_is_refused(proof: dict[str, Any], reason: str) -> None:
    async def sloppy(s: FramedStream) -> None:
        await s.send(fresh_hello(ALICE.public))
        await s.receive()
        await s.send(proof)

    outcome = versus_double(Side(BOB), sloppy)
    assert isinstance(outcome, HandshakeError)
    assert outcome.reason == reason
    assert outcome.by_peer == (proof["t"] == "refuse")


def test_a_peer_that_skips_its_ok_is_not_accepted() -> None:
    async def never_ok(s: FramedStream) -> None:
        hs = Handshake(ALICE, initiator=True, table_id=TABLE, nonce=os.urandom(32))
        await s.send(hs.hello_message())
        [proof] = hs.receive_hello(await s.receive())
        await s.send(proof)
        hs.receive_proof(await s.receive())
        await s.send({"t": "data", "x": 1})  # straight to business

    outcome = versus_double(Side(BOB), never_ok)
    assert isinstance(outcome, HandshakeError)
    assert outcome.reason == "expected the peer's ok, got a 'data' message"


# The PIN.

class Recorder(trio.abc.Stream):
    """A stream that keeps a copy of every byte that crosses it, to show what the wire carried."""

    def __init__(self, inner: trio.abc.Stream) -> None:
        self.inner = inner
        self.wire = bytearray()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.wire += data
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        data = await self.inner.receive_some(max_bytes)
        self.wire += data
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_the_pin_never_crosses_the_wire() -> None:
    pin = "correct horse battery staple"
    wire = bytearray()

    async def test() -> None:
        a, b = await tcp_pair()
        recorder = Recorder(b.stream)
        host = FramedStream(recorder)
        outcomes: list[Outcome] = []

        async def side(stream: FramedStream, who: Identity, initiator: bool) -> None:
            outcomes.append(await attempt(stream, Side(who, pin=pin), initiator, 5.0))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(side, a, ALICE, True)
            nursery.start_soon(side, host, BOB, False)
        assert all(isinstance(o, VerifiedPeer) for o in outcomes)
        wire.extend(recorder.wire)
        await a.aclose()
        await host.aclose()

    run(test)
    assert len(wire) > 300  # both hellos, both shares, both proofs, the ok
    for secret in (pin.encode(), pin.encode("utf-16-le"), pin_secret(pin)):
        assert secret not in wire
    for word in pin.split():
        assert word.encode() not in wire


def test_a_pin_reads_one_way_however_it_is_typed() -> None:
    composed = unicodedata.normalize("NFC", "café")
    decomposed = unicodedata.normalize("NFD", "café")
    assert composed != decomposed
    assert pin_secret(composed) == pin_secret(decomposed) == composed.encode()
    a, b = both(Side(ALICE, pin=decomposed), Side(BOB, pin=composed))
    assert isinstance(a, VerifiedPeer) and isinstance(b, VerifiedPeer)
    with pytest.raises(ValueError, match="non-empty"):
        pin_secret("")


# The state machine on its own.

def test_the_state_machine_refuses_steps_out_of_order() -> None:
    hs = Handshake(ALICE, initiator=True, table_id=TABLE, nonce=os.urandom(32))
    with pytest.raises(RuntimeError, match="waiting for the peer's hello, not its proof"):
        hs.receive_proof({"t": "proof", "sig": bytes(64)})
    with pytest.raises(ValueError, match="table id must be 16 bytes"):
        Handshake(ALICE, initiator=True, table_id=b"short", nonce=os.urandom(32))
    with pytest.raises(ValueError, match="nonce must be 32 bytes"):
        Handshake(ALICE, initiator=True, table_id=TABLE, nonce=b"n")


def test_a_handshake_signature_cannot_pass_for_an_event_or_a_knock() -> None:
    hs = Handshake(ALICE, initiator=True, table_id=TABLE, nonce=os.urandom(32))
    [proof] = hs.receive_hello(fresh_hello(BOB.public))
    assert hs.transcript is not None
    signed = proof["sig"] + proof_payload(INITIATOR, hs.transcript)
    with pytest.raises(EventError):
        decode_event(signed)
    with pytest.raises(KnockError):
        check_knock(signed, key=ALICE.public, game=TABLE, draw_id=bytes(32))
