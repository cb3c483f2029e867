"""The peer handshake: each side proves it holds its key, and (if the table has one) knows the PIN.

Messages, in order (protocol 2):

1. hello  `{t: "hello", proto, key, nonce, table, pin}`, both sides at once:
   our protocol version, our 32-byte Ed25519 public key, 32 fresh random
   bytes, the 16-byte table (game) id, and whether we hold a PIN for it.
   The fields `t` and `proto` keep their meaning in every version, so a peer
   of another version is named as such. A PIN on one side only is refused
   here, before any PAKE work.
2. pake   `{t: "pake", share}`, both sides at once, only with a PIN: our
   CPace share (net/cpace.py, CPACE-X25519-SHA512), made from the PIN, the
   keys and the session id (the hash of both hellos). A share is a random
   point whatever the PIN: it tells a recorder or a live attacker nothing.
3. proof  `{t: "proof", sig[, confirm]}`: first the initiator's, then, only
   once the responder accepted it, the responder's. `sig` is an Ed25519
   signature by our key over the transcript (both hellos and both shares)
   and our role; `confirm` (with a PIN) is our CPace key confirmation. The
   peer's fresh nonce is in what we sign, so a recorded proof is worth
   nothing in another handshake, and the role is in it, so a peer cannot
   hand our own proof back to us as its own.
4. ok     `{t: "ok"}` from the initiator: it accepted the responder's proof.
   The initiator is done when it sent its ok, the responder when it got it.

WHY THIS ORDER. A key confirmation is the one thing that depends on the PIN:
whoever sees one can check the single guess their own share was made with.
The joining side (initiator) confirms first, so a stranger who connects to a
host learns, per handshake, whether one guess was right, and only by sending
its own confirmation, which the host counts (net/pin_guard.py: at most 5
wrong PINs a minute per table, checked before any PAKE work and again just
before a confirmation is checked). The host confirms only to a peer that
proved the PIN. Symmetrically, a dialling peer counts the handshakes in
which it confirmed and got no valid confirmation back, so a stranger at an
address it dials cannot harvest guesses from its redials either.

A side that refuses sends `{t: "refuse", reason[, code]}` instead of its
next message (best effort) and closes: the other side then raises a
HandshakeError with `by_peer` set, so the player who was turned away reads
why (for instance, that their key holds no seat at this table). `code` is
`"pin"` when the reason is about the PIN (wrong, missing, or joins paused),
so the joining side can show that reason as its one line, and `"same-key"`
when both ends present one key (a second terminal of one identity), so it can
say what to do instead; any other `code` is ignored.

What is signed is the canonical map `{handshake: 2, role, transcript}`,
whose first key differs from the first key of an event envelope (`v`) and of
a knock (`knock`), so no handshake signature can pass for either.

The handshake does not encrypt the connection or authenticate the frames
after it: everything that matters afterwards carries its own signature
(events and knocks do).
"""

from __future__ import annotations

from allegra_lan.blake import blake2b
import os
import time
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Collection

import trio
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from ..log.codec import encode
from ..log.identity import Identity, fingerprint
from . import cpace
from .framing import ConnectionClosed, FramedStream, FrameError
from .pin_guard import PinGuard

PROTOCOL_VERSION = 2
KEY_LEN = 32
NONCE_LEN = 32
TABLE_ID_LEN = 16
SIG_LEN = 64
SHARE_LEN = cpace.FIELD_BYTES
CONFIRM_LEN = cpace.MAC_LEN
MAX_REASON = 200  # characters of a peer's refusal we show
HANDSHAKE_TIMEOUT = 10.0
INITIATOR = "initiator"
RESPONDER = "responder"
PIN_CODE = "pin"  # the `code` of a refusal about the PIN
# The `code` of a refusal because both ends present one key: most often a second terminal of
# one person on one data directory. A code, not the reason's words, tells a client so, because
# the words are the refusing peer's (another version may phrase them otherwise).
SAME_KEY_CODE = "same-key"
REFUSAL_CODES = frozenset({PIN_CODE, SAME_KEY_CODE})
PROOF_KEYS = ("handshake", "role", "transcript")
HELLO_FIELDS = frozenset({"t", "proto", "key", "nonce", "table", "pin"})
CPACE_CI_LABEL = b"allegra-lan/handshake/2"


class HandshakeError(Exception):
    """The handshake failed; `reason` says why, `by_peer` whether the peer refused us (its reason),
    `code` is PIN_CODE when the reason is about the PIN, SAME_KEY_CODE when both ends present
    one key, else None."""

    def __init__(self, reason: str, *, by_peer: bool = False, code: str | None = None) -> None:
        super().__init__(f"the peer refused: {reason}" if by_peer else reason)
        self.reason = reason
        self.by_peer = by_peer
        self.code = code


@dataclass(frozen=True)
class Hello:
    proto: int
    key: bytes
    nonce: bytes
    table: bytes
    pin: bool = False

    def message(self) -> dict[str, Any]:
        return {"t": "hello", "proto": self.proto, "key": self.key, "nonce": self.nonce,
                "table": self.table, "pin": self.pin}


@dataclass(frozen=True)
class VerifiedPeer:
    """Who is on the other end, proved. `session` (the signed transcript hash) is the same on both ends."""

    key: bytes
    fingerprint: str
    session: bytes
    initiator: bool  # the peer opened the connection


def _refusal(msg: dict[str, Any]) -> HandshakeError:
    reason = msg.get("reason")
    given = msg.get("code")
    code = given if isinstance(given, str) and given in REFUSAL_CODES else None  # hostile: any value
    if not isinstance(reason, str) or not reason.strip():
        return HandshakeError("no reason given", by_peer=True, code=code)
    text = "".join(c if c.isprintable() else "?" for c in reason[:MAX_REASON])
    return HandshakeError(text, by_peer=True, code=code)


def _show(value: Any, limit: int = 40) -> str:
    """A peer's value in a reason: repr (so no control character gets through), and short."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _expect(msg: Any, t: str) -> None:
    if not isinstance(msg, dict):
        raise HandshakeError(f"expected the peer's {t}, got a {type(msg).__name__}, not a message")
    got = msg.get("t")
    if got == "refuse":
        raise _refusal(msg)
    if got != t:
        raise HandshakeError(f"expected the peer's {t}, got a {_show(got)} message")


def _only(msg: dict[str, Any], fields: Collection[str], what: str) -> None:
    extra = sorted(str(k) for k in set(msg) - set(fields))
    if extra:
        names = ", ".join(k if len(k) <= 20 and k.isprintable() else _show(k, 20) for k in extra[:5])
        raise HandshakeError(f"the peer's {what} has unknown fields: {names}"
                             + (f" and {len(extra) - 5} more" if len(extra) > 5 else ""))


def _bytes_field(msg: dict[str, Any], name: str, size: int, what: str) -> bytes:
    value = msg.get(name)
    if not isinstance(value, bytes) or len(value) != size:
        raise HandshakeError(f"the peer's {what} field {name} must be {size} bytes")
    return value


def parse_hello(msg: Any) -> Hello:
    """The peer's hello, version first: a peer of another version is told so, whatever else it sent."""
    _expect(msg, "hello")
    proto = msg.get("proto")
    if not isinstance(proto, int) or isinstance(proto, bool):
        raise HandshakeError("the peer's hello has no protocol version")
    if proto != PROTOCOL_VERSION:
        raise HandshakeError(f"peer speaks protocol {proto}, we speak {PROTOCOL_VERSION}"
                             + (" (the older side must upgrade allegra-lan)" if proto < PROTOCOL_VERSION
                                else ""))
    _only(msg, HELLO_FIELDS, "hello")
    pin = msg.get("pin")
    if not isinstance(pin, bool):
        raise HandshakeError("the peer's hello field pin must be true or false")
    return Hello(proto, _bytes_field(msg, "key", KEY_LEN, "hello"),
                 _bytes_field(msg, "nonce", NONCE_LEN, "hello"),
                 _bytes_field(msg, "table", TABLE_ID_LEN, "hello"), pin)


def transcript(initiator: Hello, responder: Hello) -> bytes:
    """32 bytes that bind both hellos in a fixed order: the CPace session id, and (with no
    PIN) what both proofs are about."""
    data = encode(["allegra-lan/handshake", initiator.message(), responder.message()])
    return blake2b(data, digest_size=32).digest()


def pake_transcript(hellos: bytes, initiator_share: bytes, responder_share: bytes) -> bytes:
    """With a PIN, what both proofs are about: the hellos and both CPace shares, in role order."""
    data = encode(["allegra-lan/handshake/pake", hellos, initiator_share, responder_share])
    return blake2b(data, digest_size=32).digest()


def proof_payload(role: str, transcript_hash: bytes) -> bytes:
    """The bytes a side signs: its role and the transcript, as a map no event or knock can equal."""
    return encode({"handshake": PROTOCOL_VERSION, "role": role, "transcript": transcript_hash},
                  key_order=PROOF_KEYS)


def pin_secret(pin: str) -> bytes:
    """The CPace password string: the PIN in Unicode NFC, UTF-8, so it reads one way however it is typed."""
    if not isinstance(pin, str) or not pin:
        raise ValueError("a PIN must be a non-empty string")
    return unicodedata.normalize("NFC", pin).encode("utf-8")


def cpace_ci(initiator_key: bytes, responder_key: bytes, table_id: bytes) -> bytes:
    """CPace's channel identifier: both keys in role order (the draft's advice for identities
    known at the start) and the table, so a run binds to who talks to whom and where."""
    return cpace.lv_cat(CPACE_CI_LABEL, initiator_key, responder_key, table_id)


def refuse_message(reason: str, code: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"t": "refuse", "reason": reason[:MAX_REASON]}
    if code is not None:
        msg["code"] = code
    return msg


OK_MESSAGE: dict[str, Any] = {"t": "ok"}


class Handshake:
    """One side of the handshake as a state machine that never touches a socket.

    Feed it the peer's messages in order (`receive`, or the step methods
    `receive_hello`, `receive_pake`, `receive_proof`, `receive_ok`); each
    returns the messages to send next (maybe none) or raises HandshakeError
    with the reason. `handshake` below drives it over a FramedStream; a test
    can drive it by hand to play a peer that cheats at one step only.

    `guard` (with a PIN) limits the PIN guesses this side lets be checked;
    `clock` is what it reads the time from, `source` names the peer in the
    guard's notice, `label` names the table in a refusal ("table 'Bob's'").
    """

    def __init__(self, identity: Identity, *, initiator: bool, table_id: bytes, nonce: bytes,
                 pin: str | None = None, expect_keys: Collection[bytes] | None = None,
                 guard: PinGuard | None = None, clock: Callable[[], float] = time.monotonic,
                 source: str = "?", label: str = "this table", scalar: bytes | None = None) -> None:
        if not isinstance(table_id, bytes) or len(table_id) != TABLE_ID_LEN:
            raise ValueError(f"a table id must be {TABLE_ID_LEN} bytes")
        if not isinstance(nonce, bytes) or len(nonce) != NONCE_LEN:
            raise ValueError(f"a nonce must be {NONCE_LEN} bytes")
        self.identity = identity
        self.initiator = initiator
        self.role = INITIATOR if initiator else RESPONDER
        self.peer_role = RESPONDER if initiator else INITIATOR
        self.secret = None if pin is None else pin_secret(pin)
        self.expect_keys = None if expect_keys is None else frozenset(expect_keys)
        self.guard, self.clock, self.source, self.label = guard, clock, source, label
        self._scalar = scalar  # a test may fix the CPace scalar; None: a fresh random one
        self.hello = Hello(PROTOCOL_VERSION, identity.public, nonce, table_id, pin is not None)
        self.peer_hello: Hello | None = None
        self.hellos: bytes | None = None  # the hash of both hellos (CPace's sid)
        self.transcript: bytes | None = None  # what the proofs sign
        self.pake: cpace.CPace | None = None
        self.peer: VerifiedPeer | None = None
        self.guessed = False  # we sent a key confirmation the peer could check a guess against
        self.waiting_for = "hello"
        self.done = False

    def hello_message(self) -> dict[str, Any]:
        return self.hello.message()

    def _step(self, expected: str) -> None:
        if self.waiting_for != expected:
            raise RuntimeError(f"the handshake is waiting for the peer's {self.waiting_for}, not its {expected}")

    def _paused(self) -> None:
        """Refuse (before any PAKE work, or before a confirmation is checked) while the guard pauses PINs."""
        if self.guard is None:
            return
        wait = self.guard.wait(self.clock())
        if not wait:
            return
        if self.initiator:
            raise HandshakeError(f"too many failed PIN handshakes with the peers of this table in the "
                                 f"last minute: this peer tries again in {wait} s", code=PIN_CODE)
        raise HandshakeError(f"too many wrong PINs at this table: try again in {wait} s", code=PIN_CODE)

    def _sign(self) -> dict[str, Any]:
        assert self.transcript is not None
        proof: dict[str, Any] = {
            "t": "proof", "sig": self.identity.key.sign(proof_payload(self.role, self.transcript)).signature,
        }
        if self.pake is not None:
            proof["confirm"] = self.pake.my_tag()
        return proof

    def receive(self, msg: Any) -> list[dict[str, Any]]:
        """The next step, whichever it is."""
        step = {"hello": self.receive_hello, "pake": self.receive_pake, "proof": self.receive_proof,
                "ok": self.receive_ok}.get(self.waiting_for)
        if step is None:
            raise RuntimeError("the handshake is over")
        return step(msg)

    def receive_hello(self, msg: Any) -> list[dict[str, Any]]:
        """Check the peer's hello; with a PIN, our CPace share to send; else (initiator) our proof."""
        self._step("hello")
        peer = parse_hello(msg)
        if peer.table != self.hello.table:
            raise HandshakeError(f"the peer is at table {peer.table.hex()}, we are at table {self.hello.table.hex()}")
        if peer.nonce == self.hello.nonce:
            raise HandshakeError("the peer sent back our own nonce (a reflected hello)")
        if peer.key == self.hello.key:
            raise HandshakeError(f"the peer presents our own key {fingerprint(peer.key)} "
                                 "(a reflected hello, or this identity is already in use)",
                                 code=SAME_KEY_CODE)
        if self.expect_keys is not None and peer.key not in self.expect_keys:
            raise HandshakeError(f"key {fingerprint(peer.key)} holds no seat at this table")
        if peer.pin and self.secret is None:
            raise HandshakeError("the table has a PIN and we were given none")
        if self.secret is not None and not peer.pin:
            raise HandshakeError("wrong PIN (the peer gave none)", code=PIN_CODE)
        self.peer_hello = peer
        first, second = (self.hello, peer) if self.initiator else (peer, self.hello)
        self.hellos = transcript(first, second)
        if self.secret is None:
            self.transcript = self.hellos
            self.waiting_for = "proof"
            return [self._sign()] if self.initiator else []
        self._paused()
        ci = cpace_ci(first.key, second.key, self.hello.table)
        try:
            self.pake = cpace.CPace(self.secret, ci, self.hellos, initiator=self.initiator,
                                    ad=self.role.encode(), peer_ad=self.peer_role.encode(), scalar=self._scalar)
        except cpace.CPaceError as e:  # a generator of low order: about 2**-250 likely; refused all the same
            raise HandshakeError(f"no PAKE share for this session: {e}") from None
        self._scalar = None
        self.waiting_for = "pake"
        return [{"t": "pake", "share": self.pake.share}]

    def receive_pake(self, msg: Any) -> list[dict[str, Any]]:
        """Take the peer's CPace share; the initiator then sends its proof (with its confirmation)."""
        self._step("pake")
        assert self.pake is not None and self.hellos is not None
        _expect(msg, "pake")
        _only(msg, {"t", "share"}, "pake")
        share = _bytes_field(msg, "share", SHARE_LEN, "pake")
        try:
            self.pake.finish(share)
        except cpace.CPaceError as e:
            raise HandshakeError(f"the peer's PAKE share is not usable: {e}") from None
        mine, theirs = self.pake.share, share
        self.transcript = pake_transcript(self.hellos, *((mine, theirs) if self.initiator else (theirs, mine)))
        self.waiting_for = "proof"
        if not self.initiator:
            return []
        self._paused()
        self.guessed = True
        return [self._sign()]

    def receive_proof(self, msg: Any) -> list[dict[str, Any]]:
        """Check the peer's signature and PIN confirmation; the responder answers with its own proof,
        the initiator with its ok (and is done)."""
        self._step("proof")
        assert self.peer_hello is not None and self.transcript is not None
        _expect(msg, "proof")
        _only(msg, {"t", "sig", "confirm"} if self.pake is not None else {"t", "sig"}, "proof")
        sig = _bytes_field(msg, "sig", SIG_LEN, "proof")
        confirm = None if self.pake is None else _bytes_field(msg, "confirm", CONFIRM_LEN, "proof")
        key = self.peer_hello.key
        try:
            VerifyKey(key).verify(proof_payload(self.peer_role, self.transcript), sig)
        except (BadSignatureError, ValueError):
            raise HandshakeError(f"the peer did not prove it holds key {fingerprint(key)}") from None
        if self.pake is not None and confirm is not None:
            if not self.initiator:
                self._paused()  # past the limit no guess is checked, right or wrong
            if not self.pake.check(confirm):
                if self.initiator:
                    raise HandshakeError("the peer does not know this table's PIN")
                if self.guard is not None:
                    self.guard.failed(self.clock(), self.source)
                raise HandshakeError(f"wrong PIN for {self.label}", code=PIN_CODE)
        self.peer = VerifiedPeer(key, fingerprint(key), self.transcript, not self.initiator)
        if self.initiator:
            self.guessed = False
            self.waiting_for = "nothing"
            self.done = True
            return [OK_MESSAGE]
        self.waiting_for = "ok"
        return [self._sign()]

    def receive_ok(self, msg: Any) -> list[dict[str, Any]]:
        """The initiator accepted us too: the handshake is done."""
        self._step("ok")
        assert self.peer is not None
        _expect(msg, "ok")
        if set(msg) != {"t"}:
            raise HandshakeError("the peer's ok has unknown fields")
        self.waiting_for = "nothing"
        self.done = True
        return []

    def abandon(self) -> None:
        """The handshake failed: if we had let the peer check a guess and got no valid
        confirmation back, that counts against the PIN like a wrong one."""
        if self.guessed and self.guard is not None:
            self.guard.failed(self.clock(), self.source)
        self.guessed = False


async def _tell(stream: FramedStream, reason: str, code: str | None) -> None:
    """Best effort: let the peer know why we hang up, without waiting on it."""
    with trio.move_on_after(1.0):
        try:
            await stream.send(refuse_message(reason, code))
        except (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError):
            pass


async def handshake(stream: FramedStream, identity: Identity, *, initiator: bool, table_id: bytes,
                    pin: str | None = None, expect_keys: Collection[bytes] | None = None,
                    timeout: float = HANDSHAKE_TIMEOUT, guard: PinGuard | None = None,
                    clock: Callable[[], float] = time.monotonic, source: str = "?",
                    label: str = "this table") -> VerifiedPeer:
    """Run the handshake; the peer's proved key, or HandshakeError with the reason.

    `initiator` is True on the side that opened the connection (the two
    sides must differ). `expect_keys` is the set of keys that may connect
    (the seated players), None for anyone. `guard`, `clock`, `source` and
    `label`: see Handshake. The stream is left open either way; on failure
    the caller closes it.
    """
    hs = Handshake(identity, initiator=initiator, table_id=table_id, nonce=os.urandom(NONCE_LEN),
                   pin=pin, expect_keys=expect_keys, guard=guard, clock=clock, source=source, label=label)
    try:
        try:
            with trio.fail_after(timeout):
                await stream.send(hs.hello_message())
                while not hs.done:
                    for out in hs.receive(await stream.receive()):
                        await stream.send(out)
                assert hs.peer is not None
                return hs.peer
        except trio.TooSlowError:
            raise HandshakeError(f"the peer did not finish the handshake in {timeout:g} s "
                                 f"(we were waiting for its {hs.waiting_for})") from None
        except FrameError as e:
            raise HandshakeError(f"bad frame from the peer during the handshake: {e}") from e
        except (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError) as e:
            raise HandshakeError(f"the peer left during the handshake (we were waiting for its "
                                 f"{hs.waiting_for}): {e or type(e).__name__}") from e
    except HandshakeError as e:
        if not e.by_peer:
            await _tell(stream, e.reason, e.code)
        raise
    finally:
        if not hs.done:  # failed, timed out, or cancelled (a dialler's own deadline)
            hs.abandon()
