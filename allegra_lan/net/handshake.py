"""The peer handshake: each side proves it holds its key, and (if the table has one) knows the PIN.

Three flights, both sides sending each before reading the peer's (so the
exchange takes three round trips and neither side waits on the other to
speak first):

1. hello  `{t: "hello", proto, key, nonce, table}`: our protocol version,
   our 32-byte Ed25519 public key, 32 fresh random bytes and the 16-byte
   table (game) id. The fields `t` and `proto` keep their meaning in every
   future version, so a peer of another version is named as such.
2. proof  `{t: "proof", sig[, pin]}`: an Ed25519 signature by our key over
   the transcript (both hellos, the initiator's first) and our role, and,
   when the table has a PIN, a MAC over the same bytes keyed by the PIN.
   The peer's fresh nonce is in what we sign, so a recorded proof is worth
   nothing in another handshake, and the role is in it, so a peer cannot
   hand our own proof back to us as its own.
3. ok     `{t: "ok"}`: we accepted the peer's proof. `handshake` returns
   only after both sides said ok, so both agree that the connection stands.

A side that refuses sends `{t: "refuse", reason}` instead of its next
message (best effort) and closes: the other side then raises a
HandshakeError with `by_peer` set, so the player who was turned away reads
why (for instance, that their key holds no seat at this table).

What is signed is the canonical map `{handshake: 1, role, transcript}`,
whose first key differs from the first key of an event envelope (`v`) and of
a knock (`knock`), so no handshake signature can pass for either.

THE PIN AND ITS LIMITS. The PIN is never sent: each side shows knowledge of
it by a MAC over the transcript, keyed by `pin_key(pin, table_id)` (Argon2id,
about 0.1 s and 64 MiB, salted with the table id). The MAC is checked both
ways, so a joiner also learns that the host knows the PIN. This keeps out
whoever does not know the PIN; it does not keep a short PIN secret from
someone who records a handshake on the network: they can try every PIN
offline against the recorded MAC. Argon2id makes each guess cost ~0.1 s of
one core, so a 4-digit PIN falls in minutes to hours, a 6-digit one in days,
and a few random words take longer than anyone cares. The handshake does
not encrypt the connection or authenticate the frames after it: everything
that matters afterwards must carry its own signature (events and knocks do).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Collection

import trio
from nacl import pwhash
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from ..log.codec import encode
from ..log.identity import Identity, fingerprint
from .framing import ConnectionClosed, FramedStream, FrameError

PROTOCOL_VERSION = 1
KEY_LEN = 32
NONCE_LEN = 32
TABLE_ID_LEN = 16
SIG_LEN = 64
MAC_LEN = 32
MAX_REASON = 200  # characters of a peer's refusal we show
HANDSHAKE_TIMEOUT = 10.0
INITIATOR = "initiator"
RESPONDER = "responder"
PIN_OPSLIMIT = 2
PIN_MEMLIMIT = 64 * 1024 * 1024
PROOF_KEYS = ("handshake", "role", "transcript")
HELLO_FIELDS = frozenset({"t", "proto", "key", "nonce", "table"})


class HandshakeError(Exception):
    """The handshake failed; `reason` says why, `by_peer` whether the peer refused us (its reason)."""

    def __init__(self, reason: str, *, by_peer: bool = False) -> None:
        super().__init__(f"the peer refused: {reason}" if by_peer else reason)
        self.reason = reason
        self.by_peer = by_peer


@dataclass(frozen=True)
class Hello:
    proto: int
    key: bytes
    nonce: bytes
    table: bytes

    def message(self) -> dict[str, Any]:
        return {"t": "hello", "proto": self.proto, "key": self.key, "nonce": self.nonce, "table": self.table}


@dataclass(frozen=True)
class VerifiedPeer:
    """Who is on the other end, proved. `session` (the transcript hash) is the same on both ends."""

    key: bytes
    fingerprint: str
    session: bytes
    initiator: bool  # the peer opened the connection


def _refusal(msg: dict[str, Any]) -> HandshakeError:
    reason = msg.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        return HandshakeError("no reason given", by_peer=True)
    text = "".join(c if c.isprintable() else "?" for c in reason[:MAX_REASON])
    return HandshakeError(text, by_peer=True)


def _expect(msg: dict[str, Any], t: str) -> None:
    got = msg.get("t")
    if got == "refuse":
        raise _refusal(msg)
    if got != t:
        raise HandshakeError(f"expected the peer's {t}, got a {got!r} message")


def _bytes_field(msg: dict[str, Any], name: str, size: int, what: str) -> bytes:
    value = msg.get(name)
    if not isinstance(value, bytes) or len(value) != size:
        raise HandshakeError(f"the peer's {what} field {name} must be {size} bytes")
    return value


def parse_hello(msg: dict[str, Any]) -> Hello:
    """The peer's hello, version first: a peer of another version is told so, whatever else it sent."""
    _expect(msg, "hello")
    proto = msg.get("proto")
    if not isinstance(proto, int) or isinstance(proto, bool):
        raise HandshakeError("the peer's hello has no protocol version")
    if proto != PROTOCOL_VERSION:
        raise HandshakeError(f"peer speaks protocol {proto}, we speak {PROTOCOL_VERSION}")
    extra = sorted(set(msg) - HELLO_FIELDS)
    if extra:
        raise HandshakeError(f"the peer's hello has unknown fields: {', '.join(extra)}")
    return Hello(proto, _bytes_field(msg, "key", KEY_LEN, "hello"),
                 _bytes_field(msg, "nonce", NONCE_LEN, "hello"),
                 _bytes_field(msg, "table", TABLE_ID_LEN, "hello"))


def transcript(initiator: Hello, responder: Hello) -> bytes:
    """32 bytes that bind both hellos in a fixed order: what both proofs are about."""
    data = encode(["allegra-lan/handshake", initiator.message(), responder.message()])
    return hashlib.blake2b(data, digest_size=32).digest()


def proof_payload(role: str, transcript_hash: bytes) -> bytes:
    """The bytes a side signs: its role and the transcript, as a map no event or knock can equal."""
    return encode({"handshake": PROTOCOL_VERSION, "role": role, "transcript": transcript_hash},
                  key_order=PROOF_KEYS)


@lru_cache(maxsize=8)
def pin_key(pin: str, table_id: bytes) -> bytes:
    """The MAC key for a table's PIN: Argon2id, so each offline guess costs a recorder real time.

    Salted with the table id, so no guessing work carries over between
    tables; cached, since every handshake of one table needs the same key.
    """
    if not isinstance(pin, str) or not pin:
        raise ValueError("a PIN must be a non-empty string")
    if not isinstance(table_id, bytes) or len(table_id) != TABLE_ID_LEN:
        raise ValueError(f"a table id must be {TABLE_ID_LEN} bytes")
    secret = unicodedata.normalize("NFC", pin).encode("utf-8")
    return pwhash.argon2id.kdf(MAC_LEN, secret, table_id, opslimit=PIN_OPSLIMIT, memlimit=PIN_MEMLIMIT)


def pin_mac(key: bytes, role: str, transcript_hash: bytes) -> bytes:
    return hashlib.blake2b(proof_payload(role, transcript_hash), key=key, digest_size=MAC_LEN).digest()


def refuse_message(reason: str) -> dict[str, Any]:
    return {"t": "refuse", "reason": reason[:MAX_REASON]}


OK_MESSAGE: dict[str, Any] = {"t": "ok"}


class Handshake:
    """One side of the handshake as a state machine that never touches a socket.

    Feed it the peer's messages in order (`receive_hello`, `receive_proof`,
    `receive_ok`); each returns what to send next or raises HandshakeError
    with the reason. `handshake` below drives it over a FramedStream; a test
    can drive it by hand to play a peer that cheats at one step only.
    """

    def __init__(self, identity: Identity, *, initiator: bool, table_id: bytes, nonce: bytes,
                 pin_key: bytes | None = None, expect_keys: Collection[bytes] | None = None) -> None:
        if not isinstance(table_id, bytes) or len(table_id) != TABLE_ID_LEN:
            raise ValueError(f"a table id must be {TABLE_ID_LEN} bytes")
        if not isinstance(nonce, bytes) or len(nonce) != NONCE_LEN:
            raise ValueError(f"a nonce must be {NONCE_LEN} bytes")
        if pin_key is not None and len(pin_key) != MAC_LEN:
            raise ValueError(f"a PIN key must be {MAC_LEN} bytes")
        self.identity = identity
        self.initiator = initiator
        self.role = INITIATOR if initiator else RESPONDER
        self.peer_role = RESPONDER if initiator else INITIATOR
        self.pin_key = pin_key
        self.expect_keys = None if expect_keys is None else frozenset(expect_keys)
        self.hello = Hello(PROTOCOL_VERSION, identity.public, nonce, table_id)
        self.peer_hello: Hello | None = None
        self.transcript: bytes | None = None
        self.peer: VerifiedPeer | None = None
        self.waiting_for = "hello"
        self.done = False

    def hello_message(self) -> dict[str, Any]:
        return self.hello.message()

    def _step(self, expected: str) -> None:
        if self.waiting_for != expected:
            raise RuntimeError(f"the handshake is waiting for the peer's {self.waiting_for}, not its {expected}")

    def receive_hello(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Check the peer's hello; our proof to send."""
        self._step("hello")
        peer = parse_hello(msg)
        if peer.table != self.hello.table:
            raise HandshakeError(f"the peer is at table {peer.table.hex()}, we are at table {self.hello.table.hex()}")
        if peer.nonce == self.hello.nonce:
            raise HandshakeError("the peer sent back our own nonce (a reflected hello)")
        if peer.key == self.hello.key:
            raise HandshakeError(f"the peer presents our own key {fingerprint(peer.key)} "
                                 "(a reflected hello, or this identity is already in use)")
        if self.expect_keys is not None and peer.key not in self.expect_keys:
            raise HandshakeError(f"key {fingerprint(peer.key)} holds no seat at this table")
        self.peer_hello = peer
        first, second = (self.hello, peer) if self.initiator else (peer, self.hello)
        self.transcript = transcript(first, second)
        proof: dict[str, Any] = {
            "t": "proof",
            "sig": self.identity.key.sign(proof_payload(self.role, self.transcript)).signature,
        }
        if self.pin_key is not None:
            proof["pin"] = pin_mac(self.pin_key, self.role, self.transcript)
        self.waiting_for = "proof"
        return proof

    def receive_proof(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Check the peer's signature and PIN MAC; the ok to send."""
        self._step("proof")
        assert self.peer_hello is not None and self.transcript is not None
        _expect(msg, "proof")
        extra = sorted(set(msg) - {"t", "sig", "pin"})
        if extra:
            raise HandshakeError(f"the peer's proof has unknown fields: {', '.join(extra)}")
        sig = _bytes_field(msg, "sig", SIG_LEN, "proof")
        key = self.peer_hello.key
        try:
            VerifyKey(key).verify(proof_payload(self.peer_role, self.transcript), sig)
        except (BadSignatureError, ValueError):
            raise HandshakeError(f"the peer did not prove it holds key {fingerprint(key)}") from None
        mac = msg.get("pin")
        if mac is not None and (not isinstance(mac, bytes) or len(mac) != MAC_LEN):
            raise HandshakeError(f"the peer's proof field pin must be {MAC_LEN} bytes")
        if self.pin_key is None:
            if mac is not None:
                raise HandshakeError("the table has a PIN and we were given none")
        elif mac is None:
            raise HandshakeError("wrong PIN (the peer gave none)")
        elif not hmac.compare_digest(mac, pin_mac(self.pin_key, self.peer_role, self.transcript)):
            raise HandshakeError("wrong PIN")
        self.peer = VerifiedPeer(key, fingerprint(key), self.transcript, not self.initiator)
        self.waiting_for = "ok"
        return OK_MESSAGE

    def receive_ok(self, msg: dict[str, Any]) -> VerifiedPeer:
        """The peer accepted us too: the handshake is done."""
        self._step("ok")
        assert self.peer is not None
        _expect(msg, "ok")
        if set(msg) != {"t"}:
            raise HandshakeError("the peer's ok has unknown fields")
        self.waiting_for = "nothing"
        self.done = True
        return self.peer


async def _tell(stream: FramedStream, reason: str) -> None:
    """Best effort: let the peer know why we hang up, without waiting on it."""
    with trio.move_on_after(1.0):
        try:
            await stream.send(refuse_message(reason))
        except (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError):
            pass


async def handshake(stream: FramedStream, identity: Identity, *, initiator: bool, table_id: bytes,
                    pin: str | None = None, expect_keys: Collection[bytes] | None = None,
                    timeout: float = HANDSHAKE_TIMEOUT) -> VerifiedPeer:
    """Run the handshake; the peer's proved key, or HandshakeError with the reason.

    `initiator` is True on the side that opened the connection (the two
    sides must differ). `expect_keys` is the set of keys that may connect
    (the seated players), None for anyone. The stream is left open either
    way; on failure the caller closes it.
    """
    key = None if pin is None else await trio.to_thread.run_sync(pin_key, pin, table_id)
    hs = Handshake(identity, initiator=initiator, table_id=table_id, nonce=os.urandom(NONCE_LEN),
                   pin_key=key, expect_keys=expect_keys)
    try:
        try:
            with trio.fail_after(timeout):
                await stream.send(hs.hello_message())
                await stream.send(hs.receive_hello(await stream.receive()))
                await stream.send(hs.receive_proof(await stream.receive()))
                return hs.receive_ok(await stream.receive())
        except trio.TooSlowError:
            raise HandshakeError(f"the peer did not finish the handshake in {timeout:g} s "
                                 f"(we were waiting for its {hs.waiting_for})") from None
        except FrameError as e:
            raise HandshakeError(f"bad frame from the peer during the handshake: {e}") from e
        except ConnectionClosed as e:
            raise HandshakeError(f"the peer left during the handshake (we were waiting for its "
                                 f"{hs.waiting_for}): {e}") from e
    except HandshakeError as e:
        if not e.by_peer:
            await _tell(stream, e.reason)
        raise
