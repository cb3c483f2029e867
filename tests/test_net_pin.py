"""The PIN (issue 9, finding 5): CPace instead of a PIN MAC, and at most 5 wrong PINs a minute.

What is pinned here:
- net/cpace.py follows draft-irtf-cfrg-cpace-21 (its appendix B.1 test vectors
  for CPACE-X25519-SHA512, and its low-order points, which must abort);
- a recorded handshake (right PIN or wrong) and a live one that the attacker
  aborts after the host's first PAKE message let an offline guesser single
  out no PIN among all 10,000 four-digit ones (with the ephemeral scalar that
  never leaves a peer, the same guesser finds it at once: the control);
- the host checks at most 5 wrong PINs a minute, refuses the 6th before any
  PAKE work with a reason that says so, tells its players once, and lets
  joins in again after the minute (the guard's clock, moved by hand);
- the same through `allegra host --pin` / `allegra join --pin`;
- every handshake step, fed arbitrary values, returns or raises HandshakeError.

Run `python tests/test_net_pin.py` for the timing figures of docs/threat-model.md.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import statistics
import subprocess
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings, strategies as st
from nacl.bindings import crypto_scalarmult

from allegra_lan.log.codec import decode, encode
from allegra_lan.log.identity import Identity
from allegra_lan.net import cpace
from allegra_lan.net.framing import HEADER, FramedStream
from allegra_lan.net.handshake import (
    INITIATOR, PIN_CODE, RESPONDER, Handshake, HandshakeError, Hello, VerifiedPeer,
    cpace_ci, handshake, pin_secret, proof_payload, transcript,
)
from allegra_lan.net.node import Node
from allegra_lan.net.peer import Peer
from allegra_lan.net.pin_guard import PinGuard

sys.path.insert(0, str(Path(__file__).parent))
from net_helpers import LOOPBACK, CliPool, unique_table  # noqa: E402

TABLE = bytes(range(16))
ALICE = Identity.from_seed(b"pin-alice")
BOB = Identity.from_seed(b"pin-bob")
MALLORY = Identity.from_seed(b"pin-mallory")
PIN = "4711"
CANDIDATES = [f"{i:04d}" for i in range(10_000)]
LIMIT = 20.0  # seconds any one async test may take


def run(test: Any, limit: float = LIMIT) -> None:
    async def main() -> None:
        with trio.fail_after(limit):
            await test()
    trio.run(main)


# ------------------------------------------------------------ CPace against its specification

# draft-irtf-cfrg-cpace-21, appendix B.1 ("Test vector for CPace using group X25519 and hash SHA-512").
V_PRS = b"Password"
V_CI = bytes.fromhex("0b415f696e69746961746f720b425f726573706f6e646572")
V_SID = bytes.fromhex("7e4b4791d6a8ef019b936c79fb7f2c57")
V_G = "d04bf6d41f6a289632a2e929fa29bebd51092512a7829fdde7d314b62f05a73f"
V_YA = bytes.fromhex("21b4f4bd9e64ed355c3eb676a28ebedaf6d8f17bdc365995b319097153044080")
V_YA_PUB = "1d13c89278cdadd826f6d8d7f887701430f8380ddc17611cdd6dc989ce0c9f32"
V_YB = bytes.fromhex("848b0779ff415f0af4ea14df9dd1d3c29ac41d836c7808896c4eba19c51ac40a")
V_YB_PUB = "248cccf6d5cdc3646f0ad593f9e6cef4e69d4945f8372e623512ecea32185623"
V_K = "5b067effbdc0b2a0e1d907b21ebb25cfedb96a852179a847c37e43ee71322c6b"
V_ISK_IR = ("6e19b875f7a561d6b3ca3dbb9ef42ac55de3e717881018204b8922b4d5e53bb2"
            "aa82c300bea7b65d2b671da71922ddf6472301b79bc270adfa8bf413285f2263")


def test_cpace_string_functions_match_the_draft() -> None:
    assert cpace.prepend_len(b"").hex() == "00"
    assert cpace.prepend_len(b"1234").hex() == "0431323334"
    assert cpace.prepend_len(bytes(range(127)))[:1].hex() == "7f"
    assert cpace.prepend_len(bytes(range(128)))[:2].hex() == "8001"
    assert cpace.lv_cat(b"1234", b"5", b"", b"678").hex() == "043132333401350003363738"
    assert cpace.transcript_ir(b"123", b"PartyA", b"234", b"PartyB").hex() == \
        "03313233065061727479410332333406506172747942"
    gen_str = cpace.generator_string(cpace.DSI, V_PRS, V_CI, V_SID, cpace.S_IN_BYTES)
    assert len(gen_str) == 170 and gen_str[:19].hex() == "0843506163653235350850617373776f72646d"


def test_cpace_x25519_sha512_matches_the_drafts_test_vectors() -> None:
    assert cpace.calculate_generator(V_PRS, V_CI, V_SID).hex() == V_G
    a = cpace.CPace(V_PRS, V_CI, V_SID, initiator=True, ad=b"ADa", peer_ad=b"ADb", scalar=V_YA)
    b = cpace.CPace(V_PRS, V_CI, V_SID, initiator=False, ad=b"ADb", peer_ad=b"ADa", scalar=V_YB)
    assert (a.share.hex(), b.share.hex()) == (V_YA_PUB, V_YB_PUB)
    assert cpace.scalar_mult_vfy(V_YA, b.share).hex() == cpace.scalar_mult_vfy(V_YB, a.share).hex() == V_K
    k = bytes.fromhex(V_K)
    assert cpace.isk(V_SID, k, a.share, b"ADa", b.share, b"ADb").hex() == V_ISK_IR
    a.finish(b.share)
    b.finish(a.share)
    assert b.check(a.my_tag()) and a.check(b.my_tag())
    assert not a.check(a.my_tag())  # a confirmation is bound to its sender's share and role


LOW_ORDER = [  # draft appendix B.1.10: u0..u5 and u7 MUST abort
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
    "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
]
NON_CANONICAL = {  # u6, u8, ua: bit 255 set or not reduced, but no low-order point: a result
    "daffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff":
        "d8e2c776bbacd510d09fd9278b7edcd25fc5ae9adfba3b6e040e8d3b71b21806",
    "dbffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff":
        "c85c655ebe8be44ba9c0ffde69f2fe10194458d137f09bbff725ce58803cdb38",
    "cdeb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b880":
        "e062dcd5376d58297be2618c7498f55baa07d7e03184e8aada20bca28888bf7a",
}
V_S = bytes.fromhex("af46e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449aff")


@pytest.mark.parametrize("u", LOW_ORDER)
def test_a_low_order_share_aborts_the_run_and_the_handshake(u: str) -> None:
    with pytest.raises(cpace.CPaceError, match="low-order"):
        cpace.scalar_mult_vfy(V_S, bytes.fromhex(u))
    hs, msg = at_step(initiator=False, pin=PIN, step="pake")
    msg["share"] = bytes.fromhex(u)
    with pytest.raises(HandshakeError, match="PAKE share is not usable: the share is a low-order point"):
        hs.receive(msg)


def test_non_canonical_u_coordinates_give_the_drafts_results() -> None:
    for u, q in NON_CANONICAL.items():
        assert cpace.scalar_mult_vfy(V_S, bytes.fromhex(u)).hex() == q


def test_a_reflected_share_is_refused() -> None:
    hs, msg = at_step(initiator=True, pin=PIN, step="pake")
    assert hs.pake is not None
    msg["share"] = hs.pake.share  # the peer hands our own share back: its confirmation would be ours
    with pytest.raises(HandshakeError, match="sent back our own share"):
        hs.receive(msg)


# ------------------------------------------------------------ the committed handshake vectors

ROOT = Path(__file__).parent.parent


def test_make_handshake_vectors_check_reproduces_every_byte() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "protocol" / "make_handshake_vectors.py"), "--check"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_the_right_pin_vector_follows_protocol_md_step_by_step() -> None:
    """Recompute every PIN-dependent field of the right-PIN vector from PROTOCOL.md's formulas
    (hashlib, hmac and X25519 directly; the CPace generator from the draft's functions)."""
    import hmac as hmac_
    import json
    from nacl.signing import VerifyKey

    vec = json.loads((ROOT / "protocol" / "vectors" / "handshake.json").read_text())
    case = next(c for c in vec["cases"] if c["name"] == "right PIN")
    msgs = [decode(bytes.fromhex(m["frame_body"]), max_size=1 << 16) for m in case["messages"]]
    hi, hr, pi, pr, proof_i, proof_r, ok = msgs
    assert (hi["proto"], hi["pin"], hr["pin"], ok) == (2, True, True, {"t": "ok"})
    table = bytes.fromhex(vec["table"])
    h = hashlib.blake2b(encode(["allegra-lan/handshake", hi, hr]), digest_size=32).digest()
    ci = cpace.lv_cat(b"allegra-lan/handshake/2", hi["key"], hr["key"], table)
    g = cpace.calculate_generator(unicodedata.normalize("NFC", "4711").encode(), ci, h)
    ya, yb = (bytes.fromhex(case[r]["cpace_scalar"]) for r in (INITIATOR, RESPONDER))
    assert crypto_scalarmult(ya, g) == pi["share"] and crypto_scalarmult(yb, g) == pr["share"]
    k = crypto_scalarmult(ya, pr["share"])
    isk = hashlib.sha512(cpace.lv_cat(b"CPace255_ISK", h, k) + cpace.lv_cat(pi["share"], b"initiator")
                         + cpace.lv_cat(pr["share"], b"responder")).digest()
    mac_key = hashlib.sha512(b"CPaceMac" + h + isk).digest()
    for proof, share, role in ((proof_i, pi["share"], "initiator"), (proof_r, pr["share"], "responder")):
        assert proof["confirm"] == hmac_.new(mac_key, cpace.lv_cat(share, role.encode()), hashlib.sha512).digest()
    t2 = hashlib.blake2b(encode(["allegra-lan/handshake/pake", h, pi["share"], pr["share"]]), digest_size=32).digest()
    for proof, hello, role in ((proof_i, hi, "initiator"), (proof_r, hr, "responder")):
        payload = encode({"handshake": 2, "role": role, "transcript": t2}, key_order=("handshake", "role", "transcript"))
        VerifyKey(hello["key"]).verify(payload, proof["sig"])
    assert case["session"] == t2.hex()


# ------------------------------------------------------------ driving the state machine by hand

def honest_pair(pin_i: str | None, pin_r: str | None, *, scalar_i: bytes | None = None,
                guard: PinGuard | None = None, clock: Any = time.monotonic) -> tuple[Handshake, Handshake]:
    i = Handshake(ALICE, initiator=True, table_id=TABLE, nonce=os.urandom(32), pin=pin_i, scalar=scalar_i)
    r = Handshake(BOB, initiator=False, table_id=TABLE, nonce=os.urandom(32), pin=pin_r, guard=guard,
                  clock=clock, source="test")
    return i, r


def at_step(*, initiator: bool, pin: str | None, step: str) -> tuple[Handshake, dict[str, Any]]:
    """An honest handshake driven up to the moment `initiator`'s side waits for the peer's `step`:
    that side, and the honest message it would get there (for a test to spoil)."""
    i, r = honest_pair(pin, pin)
    me, other = (i, r) if initiator else (r, i)
    to: dict[int, list[dict[str, Any]]] = {id(i): [r.hello_message()], id(r): [i.hello_message()]}
    for _ in range(20):
        for side, peer in ((me, other), (other, me)):
            queue = to[id(side)]
            if not queue:
                continue
            if side is me and me.waiting_for == step:
                return me, copy.deepcopy(queue[0])
            to[id(peer)].extend(side.receive(queue.pop(0)))
    raise AssertionError(f"the {'initiator' if initiator else 'responder'} never waited for a {step}")


def exchange(i: Handshake, r: Handshake) -> list[tuple[str, dict[str, Any]]]:
    """Run two state machines against each other; every message with its sender, in order."""
    wire: list[tuple[str, dict[str, Any]]] = [(INITIATOR, i.hello_message()), (RESPONDER, r.hello_message())]
    to = {INITIATOR: [wire[1][1]], RESPONDER: [wire[0][1]]}
    sides = {INITIATOR: i, RESPONDER: r}
    while to[INITIATOR] or to[RESPONDER]:
        for role in (INITIATOR, RESPONDER):
            if to[role]:
                other = RESPONDER if role == INITIATOR else INITIATOR
                for out in sides[role].receive(to[role].pop(0)):
                    wire.append((role, out))
                    to[other].append(out)
    return wire


def test_the_message_order_keeps_the_hosts_confirmation_until_the_joiner_proved_the_pin() -> None:
    i, r = honest_pair(PIN, PIN)
    wire = exchange(i, r)
    assert i.done and r.done and i.peer is not None and r.peer is not None
    assert i.peer.session == r.peer.session
    order = [(who, msg["t"]) for who, msg in wire]
    assert order == [(INITIATOR, "hello"), (RESPONDER, "hello"), (INITIATOR, "pake"), (RESPONDER, "pake"),
                     (INITIATOR, "proof"), (RESPONDER, "proof"), (INITIATOR, "ok")]
    # With a wrong PIN, nothing the host sends depends on its PIN: a hello, a share, a refusal.
    i, r = honest_pair("1234", PIN)
    with pytest.raises(HandshakeError, match="wrong PIN for this table"):
        exchange(i, r)


def test_a_table_without_a_pin_does_no_pake_work() -> None:
    i, r = honest_pair(None, None)
    wire = exchange(i, r)
    assert [msg["t"] for _, msg in wire] == ["hello", "hello", "proof", "proof", "ok"]
    assert i.pake is None and r.pake is None
    assert all("confirm" not in msg for _, msg in wire)


def test_a_pin_on_one_side_only_is_refused_before_any_pake_work() -> None:
    for pin_i, pin_r, reason in (("1234", None, "the table has a PIN and we were given none"),
                                 (None, "1234", "wrong PIN (the peer gave none)")):
        i, r = honest_pair(pin_i, pin_r)
        with pytest.raises(HandshakeError, match=re.escape(reason)):
            r.receive(i.hello_message())
        assert r.pake is None


def test_a_pake_session_cannot_be_spliced_into_another_connection() -> None:
    """Mallory sits between Alice (who dials her) and Bob (whom she dials), both honest and
    knowing the PIN, and forwards Alice's share and confirmation to Bob as her own. The CPace
    generator and keys depend on the session id (both hellos) and on both keys, so Alice's
    confirmation, made for the session Alice-Mallory, is wrong in the session Mallory-Bob."""
    alice = Handshake(ALICE, initiator=True, table_id=TABLE, nonce=os.urandom(32), pin=PIN)
    m_as_host = Handshake(MALLORY, initiator=False, table_id=TABLE, nonce=os.urandom(32), pin="0000")
    m_as_guest = Handshake(MALLORY, initiator=True, table_id=TABLE, nonce=os.urandom(32), pin="0000")
    bob = Handshake(BOB, initiator=False, table_id=TABLE, nonce=os.urandom(32), pin=PIN)
    [alice_share] = alice.receive(m_as_host.hello_message())
    m_as_host.receive(alice.hello_message())
    [m_share] = m_as_guest.receive(bob.hello_message())
    [bob_share] = bob.receive(m_as_guest.hello_message())
    [alice_proof] = alice.receive(bob_share)  # Bob's share relayed to Alice
    bob.receive(alice_share)  # Alice's share relayed to Bob in Mallory's place
    spliced = {"t": "proof", "sig": m_as_guest.identity.key.sign(proof_payload(INITIATOR, bob.transcript)).signature,
               "confirm": alice_proof["confirm"]}
    with pytest.raises(HandshakeError, match="wrong PIN"):
        bob.receive(spliced)
    assert m_share != alice_share


# ------------------------------------------------------------ what an attacker can do offline

@dataclass
class Recording:
    """The messages each side of one real TCP handshake sent, as a recorder on the wire saw them."""

    by_initiator: list[dict[str, Any]] = field(default_factory=list)
    by_responder: list[dict[str, Any]] = field(default_factory=list)

    def first(self, who: list[dict[str, Any]], t: str) -> dict[str, Any] | None:
        return next((m for m in who if m.get("t") == t), None)


class Tap(trio.abc.Stream):
    """A stream that keeps a copy of every byte it sends and receives (the two directions apart)."""

    def __init__(self, inner: trio.abc.Stream) -> None:
        self.inner = inner
        self.sent = bytearray()
        self.received = bytearray()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.sent += data
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        data = await self.inner.receive_some(max_bytes)
        self.received += data
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()


def frames(data: bytes) -> list[dict[str, Any]]:
    out, at = [], 0
    while at + HEADER.size <= len(data):
        size = HEADER.unpack_from(data, at)[0]
        out.append(decode(bytes(data[at + HEADER.size:at + HEADER.size + size]), max_size=1 << 16))
        at += HEADER.size + size
    return out


async def tcp_pair() -> tuple[trio.SocketStream, trio.SocketStream]:
    listener = (await trio.open_tcp_listeners(0, host=LOOPBACK))[0]
    client = await trio.open_tcp_stream(LOOPBACK, listener.socket.getsockname()[1])
    server = await listener.accept()
    await listener.aclose()
    return client, server


def record(joiner_pin: str, host_pin: str, scalar: bytes) -> tuple[Recording, Any, Any]:
    """A real handshake over TCP: a joiner with a fixed CPace scalar (so the control below can
    use it) driven by hand, a host running `handshake`; the host's wire is tapped."""
    rec = Recording()
    outcomes: dict[str, Any] = {}

    async def test() -> None:
        client, server = await tcp_pair()
        tap = Tap(server)
        host_fs, joiner_fs = FramedStream(tap), FramedStream(client)

        async def host() -> None:
            try:
                outcomes["host"] = await handshake(host_fs, BOB, initiator=False, table_id=TABLE, pin=host_pin)
            except HandshakeError as e:
                outcomes["host"] = e
            await host_fs.aclose()

        async def joiner() -> None:
            hs = Handshake(ALICE, initiator=True, table_id=TABLE, nonce=os.urandom(32), pin=joiner_pin,
                           scalar=scalar)
            await joiner_fs.send(hs.hello_message())
            try:
                while not hs.done:
                    for out in hs.receive(await joiner_fs.receive()):
                        await joiner_fs.send(out)
                outcomes["joiner"] = hs.peer
            except HandshakeError as e:
                outcomes["joiner"] = e
            await joiner_fs.aclose()

        async with trio.open_nursery() as n:
            n.start_soon(host)
            n.start_soon(joiner)
        rec.by_initiator.extend(frames(bytes(tap.received)))
        rec.by_responder.extend(frames(bytes(tap.sent)))

    run(test)
    return rec, outcomes["host"], outcomes["joiner"]


def _hello(msg: dict[str, Any]) -> Hello:
    return Hello(msg["proto"], msg["key"], msg["nonce"], msg["table"], msg["pin"])


def offline_guesser(rec: Recording, sent_by: str, control_scalar: bytes) -> tuple[list[str], list[str]]:
    """Every candidate PIN for which something an attacker recomputes from it and the public
    transcript equals something the side `sent_by` (or "both") sent; and the same with the
    control's knowledge added (below).

    Per candidate c the attacker builds the CPace generator g_c exactly as a peer would (the
    keys, nonces and table are public) and then tries what it can without a peer's secret:
    the share a peer would send if it had used a scalar derived from c (the PIN itself), the
    key confirmations that scalar would give, and protocol 1's PIN MAC (keyed by the PIN,
    minus its Argon2id, which only made each try slower). WHY NOTHING MATCHES: a share is
    y * g_c for a fresh random y, so for every c there is some y_c with Y = y_c * g_c; the
    share is the same random-looking point whatever the PIN. A confirmation is keyed by
    K = y_a * y_b * g, which only someone holding y_a or y_b can compute (the Diffie-Hellman
    problem). So no candidate can be told from another: the list stays empty.

    The control: given `control_scalar`, the initiator's own ephemeral scalar (which never
    leaves that peer), the same loop recomputes the initiator's share for the right candidate
    only, which shows the loop would find the PIN if the handshake leaked what CPace keeps secret.
    """
    hi, hr = _hello(rec.by_initiator[0]), _hello(rec.by_responder[0])
    sid = transcript(hi, hr)
    ci = cpace_ci(hi.key, hr.key, TABLE)
    pi, pr = rec.first(rec.by_initiator, "pake"), rec.first(rec.by_responder, "pake")
    assert pi is not None and pr is not None
    ya_pub, yb_pub = pi["share"], pr["share"]
    sent: set[bytes] = set()
    for who, msgs in ((INITIATOR, rec.by_initiator), (RESPONDER, rec.by_responder)):
        if sent_by in (who, "both"):
            for m in msgs:
                sent.update(v for v in m.values() if isinstance(v, bytes) and len(v) >= 32)
    sent -= {hi.key, hr.key, hi.nonce, hr.nonce}  # the hellos are public: not the peer's secret
    ya_sent = {ya_pub} & sent
    hits, control_hits = [], []
    for c in CANDIDATES:
        prs = pin_secret(c)
        g = cpace.calculate_generator(prs, ci, sid)
        made: set[bytes] = set()
        y = hashlib.sha512(prs).digest()[:32]  # "the PIN as the scalar"
        mine = crypto_scalarmult(y, g)  # the share it gives (once: the roles below reuse it)
        made.add(mine)
        for peer_share, ad, peer_ad, initiator in ((yb_pub, b"initiator", b"responder", True),
                                                    (ya_pub, b"responder", b"initiator", False)):
            k = crypto_scalarmult(y, peer_share)
            shares = (mine, peer_share) if initiator else (peer_share, mine)
            key = cpace.mac_key(sid, cpace.isk(sid, k, shares[0], b"initiator", shares[1], b"responder"))
            made.add(cpace.tag(key, ya_pub, b"initiator"))
            made.add(cpace.tag(key, yb_pub, b"responder"))
        for role in (INITIATOR, RESPONDER):
            made.add(hashlib.blake2b(proof_payload(role, sid), key=prs, digest_size=32).digest())
        if made & sent:
            hits.append(c)
        if made & sent or crypto_scalarmult(control_scalar, g) in ya_sent:
            control_hits.append(c)
    return hits, control_hits


def test_a_recorded_handshake_with_the_right_pin_gives_no_offline_guess() -> None:
    scalar = os.urandom(32)
    rec, host, joiner = record(PIN, PIN, scalar)
    assert isinstance(host, VerifiedPeer) and isinstance(joiner, VerifiedPeer)
    assert [m["t"] for m in rec.by_responder] == ["hello", "pake", "proof"]
    assert offline_guesser(rec, "both", scalar) == ([], [PIN])


def test_a_recorded_handshake_with_a_wrong_pin_gives_no_offline_guess() -> None:
    scalar = os.urandom(32)
    rec, host, joiner = record("1234", PIN, scalar)
    assert isinstance(host, HandshakeError) and host.reason == "wrong PIN for this table"
    assert isinstance(joiner, HandshakeError) and joiner.by_peer and joiner.code == PIN_CODE
    assert [m["t"] for m in rec.by_responder] == ["hello", "pake", "refuse"]
    assert offline_guesser(rec, "both", scalar) == ([], ["1234"])  # the control finds the joiner's guess


def test_a_live_attacker_who_aborts_after_the_hosts_share_learns_nothing_and_costs_no_guess() -> None:
    """Mallory connects, says hello with a PIN and her share for one guess, reads the host's
    hello and share, and hangs up before confirming. Nothing the host sent depends on its PIN
    (its share is y_b * g for a random y_b), so even knowing her own scalar she cannot check
    any candidate offline; and since she never let the host check a guess, none is counted."""
    guard = PinGuard()
    got: list[dict[str, Any]] = []
    said: list[dict[str, Any]] = []
    host_outcome: list[Any] = []
    mine = os.urandom(32)

    async def test() -> None:
        client, server = await tcp_pair()
        host_fs, m_fs = FramedStream(server), FramedStream(client)

        async def host() -> None:
            try:
                host_outcome.append(await handshake(host_fs, BOB, initiator=False, table_id=TABLE, pin=PIN,
                                                    guard=guard, source="mallory"))
            except HandshakeError as e:
                host_outcome.append(e)
            await host_fs.aclose()

        async def mallory() -> None:
            hs = Handshake(MALLORY, initiator=True, table_id=TABLE, nonce=os.urandom(32), pin="0000",
                           scalar=mine)
            said.append(hs.hello_message())
            await m_fs.send(said[0])
            hello = await m_fs.receive()
            got.append(hello)
            said.extend(hs.receive(hello))
            await m_fs.send(said[1])
            got.append(await m_fs.receive())  # the host's share: Mallory stops here
            await m_fs.aclose()

        async with trio.open_nursery() as n:
            n.start_soon(host)
            n.start_soon(mallory)

    run(test)
    assert [m["t"] for m in got] == ["hello", "pake"]
    assert isinstance(host_outcome[0], HandshakeError)
    assert host_outcome[0].reason.startswith("the peer left during the handshake (we were waiting for its proof)")
    assert guard.wait(0.0) == 0 and not guard.failures
    rec = Recording(by_initiator=said, by_responder=got)
    # Even with her own scalar (the control's knowledge), nothing the host sent singles out a
    # candidate. (The recorded-handshake tests show the same loop finds a PIN it could check.)
    assert offline_guesser(rec, RESPONDER, mine) == ([], [])


# ------------------------------------------------------------ the guard on its own

def test_the_guard_allows_five_wrong_pins_a_minute_then_pauses_and_says_so_once() -> None:
    guard = PinGuard()
    for t in range(5):
        assert guard.wait(float(t)) == 0
        guard.failed(float(t), "10.0.0.7" if t < 3 else "10.0.0.8")
    assert guard.wait(4.0) == 56  # the first wrong PIN (t=0) leaves the window at t=60
    assert guard.take_notice() == ("5 wrong PINs from 10.0.0.7, 10.0.0.8 in the last minute: "
                                   "joins are paused for 56 s")
    assert guard.take_notice() is None
    assert guard.wait(59.5) == 1 and guard.wait(60.0) == 0
    guard.failed(60.0, "10.0.0.7")  # the window slid: one more may be checked, then a pause again
    assert guard.wait(60.0) == 1 and guard.take_notice() is None  # one notice a window, not a flood
    assert guard.wait(200.0) == 0 and len(guard.failures) <= guard.limit


def test_the_guard_refuses_a_limit_below_one() -> None:
    with pytest.raises(ValueError):
        PinGuard(limit=0)
    with pytest.raises(ValueError):
        PinGuard(window=0.0)


quarter_seconds = st.integers(min_value=0, max_value=4 * 130).map(lambda k: k / 4)  # exact in binary


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(quarter_seconds, st.booleans()), max_size=60),
       st.integers(min_value=1, max_value=7), st.sampled_from([1.0, 10.0, 60.0]))
def test_the_guard_never_lets_more_than_its_limit_be_checked_in_any_window(
        steps: list[tuple[float, bool]], limit: int, window: float) -> None:
    """An attacker who tries as fast as the guard lets it (and a clock that moves by any
    amount): in no window of `window` seconds are more than `limit` wrong PINs checked; the
    guard answers 0 exactly when fewer than `limit` fall in the last window; a pause of N s
    really ends after N s; the guard holds at most `limit` entries; notices come a window apart."""
    guard = PinGuard(limit=limit, window=window)
    now, checked, notices = 0.0, [], []
    for dt, tries in steps:
        now += dt
        wait = guard.wait(now)
        recent = [t for t in checked if t > now - window]
        assert (wait == 0) == (len(recent) < limit)
        if wait:
            later = copy.deepcopy(guard)
            assert later.wait(now + wait) == 0
        elif tries:
            guard.failed(now, "x")
            checked.append(now)
        note = guard.take_notice()
        if note is not None:
            notices.append(now)
        assert len(guard.failures) <= limit
    for t in checked:
        assert len([u for u in checked if t - window < u <= t]) <= limit
    assert all(b - a >= window for a, b in zip(notices, notices[1:]))


# ------------------------------------------------------------ the guard in real handshakes

@dataclass
class Host:
    """A host's side of handshakes over real TCP: every connection to `port` runs `handshake`
    with the shared guard and a clock the test moves by hand."""

    pin: str | None
    guard: PinGuard = field(default_factory=PinGuard)
    now: list[float] = field(default_factory=lambda: [0.0])
    outcomes: list[Any] = field(default_factory=list)
    port: int = 0

    async def start(self, nursery: trio.Nursery) -> None:
        listeners = await trio.open_tcp_listeners(0, host=LOOPBACK)
        self.port = listeners[0].socket.getsockname()[1]

        async def one(stream: trio.SocketStream) -> None:
            fs = FramedStream(stream)
            try:
                self.outcomes.append(await handshake(
                    fs, BOB, initiator=False, table_id=TABLE, pin=self.pin, guard=self.guard,
                    clock=lambda: self.now[0], source=LOOPBACK, timeout=5.0))
            except HandshakeError as e:
                self.outcomes.append(e)
            await fs.aclose()

        nursery.start_soon(trio.serve_listeners, one, listeners)


async def join(port: int, pin: str | None, who: Identity = ALICE) -> VerifiedPeer | HandshakeError:
    fs = FramedStream(await trio.open_tcp_stream(LOOPBACK, port))
    try:
        return await handshake(fs, who, initiator=True, table_id=TABLE, pin=pin, timeout=5.0)
    except HandshakeError as e:
        return e
    finally:
        await fs.aclose()


async def raw_join(port: int) -> list[dict[str, Any]]:
    """A joiner that says hello (with a PIN) and writes down all the host sends until it hangs up."""
    fs = FramedStream(await trio.open_tcp_stream(LOOPBACK, port))
    hs = Handshake(MALLORY, initiator=True, table_id=TABLE, nonce=os.urandom(32), pin="0000")
    await fs.send(hs.hello_message())
    got: list[dict[str, Any]] = []
    try:
        while True:
            got.append(await fs.receive())
    except Exception:
        pass
    await fs.aclose()
    return got


def test_the_sixth_wrong_pin_in_a_minute_is_refused_before_any_pake_work_and_lifts_after_it() -> None:
    host = Host(PIN)
    seen: dict[str, Any] = {}

    async def test() -> None:
        async with trio.open_nursery() as n:
            await host.start(n)
            wrong = [await join(host.port, f"{1000 + i}") for i in range(5)]
            seen["wrong"] = wrong
            seen["checked"] = len(host.guard.failures)
            seen["notice"] = host.guard.take_notice()
            seen["sixth"] = await raw_join(host.port)
            seen["sixth_cli"] = await join(host.port, "9999")
            seen["right_too"] = await join(host.port, PIN)  # paused means paused, for everyone
            seen["still_checked"] = len(host.guard.failures)
            host.now[0] = 60.0  # the minute is over (the guard's clock, not a sleep)
            seen["after"] = await join(host.port, PIN)
            n.cancel_scope.cancel()

    run(test)
    for e in seen["wrong"]:
        assert isinstance(e, HandshakeError) and e.by_peer and e.code == PIN_CODE
        assert e.reason == "wrong PIN for this table"
    assert seen["notice"] == "5 wrong PINs from 127.0.0.1 in the last minute: joins are paused for 60 s"
    paused = "too many wrong PINs at this table: try again in 60 s"
    assert seen["sixth"] == [{"t": "hello", **{k: v for k, v in seen["sixth"][0].items() if k != "t"}},
                             {"t": "refuse", "reason": paused, "code": PIN_CODE}]
    assert "pake" not in [m["t"] for m in seen["sixth"]]  # no share: the host did no PAKE work
    for key in ("sixth_cli", "right_too"):  # a joiner running `handshake` reads the reason
        e = seen[key]
        assert isinstance(e, HandshakeError) and e.reason == paused and e.code == PIN_CODE, e
    assert isinstance(seen["after"], VerifiedPeer) and seen["after"].key == BOB.public
    assert seen["checked"] == seen["still_checked"] == 5  # the refused ones were never checked


def test_many_wrong_pins_at_once_get_no_more_than_five_checked() -> None:
    """Twelve handshakes started together all pass the first check (no wrong PIN yet); the
    second check, right before a confirmation is looked at, lets only five be judged: the
    other seven learn "paused", whatever their guess was."""
    host = Host(PIN)
    results: list[Any] = []

    async def test() -> None:
        async with trio.open_nursery() as n:
            await host.start(n)

            async def one(i: int) -> None:
                results.append(await join(host.port, f"{2000 + i}"))

            async with trio.open_nursery() as joins:
                for i in range(12):
                    joins.start_soon(one, i)
            n.cancel_scope.cancel()

    run(test)
    reasons = sorted(e.reason for e in results)
    assert reasons.count("wrong PIN for this table") == 5, reasons
    assert all(r.startswith("too many wrong PINs at this table: try again in") for r in reasons
               if r != "wrong PIN for this table"), reasons
    assert len(host.guard.failures) == 5


def node(tmp: Path, pin: str | None, said: list[str]) -> Node:
    peer = Peer(Identity.generate(), table_id=TABLE, entropy=os.urandom, pin=pin)
    return Node(peer, LOOPBACK, pin=pin, games_dir=tmp, say=said.append)


def test_a_hosting_node_tells_its_players_once_and_refuses_the_sixth(tmp_path: Path) -> None:
    said: list[str] = []
    results: list[Any] = []

    async def test() -> None:
        host = node(tmp_path, PIN, said)
        async with trio.open_nursery() as n:
            port = await n.start(host.serve)
            for i in range(7):
                results.append(await join(port, f"{3000 + i}", Identity.generate()))
            n.cancel_scope.cancel()

    run(test)
    assert [e.reason for e in results[:5]] == ["wrong PIN for this table"] * 5
    for e in results[5:]:
        assert re.fullmatch(r"too many wrong PINs at this table: try again in \d+ s", e.reason), e.reason
    refused = [line for line in said if line.startswith("refused a connection: ")]
    # Refused handshakes are said once per few seconds with a count (net/gate.py Throttle):
    # seven in a row are one line, and the notice says the rest.
    assert len(refused) == 1 and refused[0].endswith("(from 127.0.0.1)"), said
    notices = [line for line in said if "wrong PINs from" in line]
    assert len(notices) == 1, said
    assert re.fullmatch(r"5 wrong PINs from 127\.0\.0\.1 in the last minute: joins are paused for \d+ s",
                        notices[0]), notices


def test_a_dialling_node_stops_confirming_its_pin_to_an_address_that_never_confirms_back(tmp_path: Path) -> None:
    """A stranger listening where a peer dials (say, on a port a seated peer left) gets the
    dialler's confirmation, one guess of the PIN, per dial; the dialler redials every 0.5 s.
    After 5 dials with no valid confirmation back in a minute it stops dialling with the PIN."""
    said: list[str] = []
    results: list[Any] = []
    stranger = Host("0000")

    async def test() -> None:
        guest = node(tmp_path, PIN, said)
        async with trio.open_nursery() as n:
            await stranger.start(n)
            for _ in range(7):
                try:
                    results.append(await guest.dial(LOOPBACK, stranger.port))
                except HandshakeError as e:
                    results.append(e)
            n.cancel_scope.cancel()

    run(test)
    assert all(isinstance(e, HandshakeError) and e.by_peer and e.reason == "wrong PIN for this table"
               for e in results[:5]), results
    assert results[5:] == [False, False]
    assert len(stranger.outcomes) == 5  # the last two dials never connected
    notices = [line for line in said if "no valid confirmation" in line]
    assert len(notices) == 1 and re.fullmatch(
        rf"5 PIN handshakes got no valid confirmation from 127\.0\.0\.1:{stranger.port} in the last "
        r"minute: this peer dials with the PIN again in \d+ s", notices[0]), said


# ------------------------------------------------------------ every step, fed anything

leaf = (st.none() | st.booleans() | st.integers(min_value=-(2**64), max_value=2**64)
        | st.binary(max_size=70) | st.text(max_size=12)
        | st.sampled_from([bytes(32), bytes(64), bytes(16), b"\xff" * 32]))
values = st.recursive(leaf, lambda kids: st.lists(kids, max_size=4)
                      | st.dictionaries(st.text(max_size=8), kids, max_size=4), max_leaves=12)
FIELDS = ["t", "proto", "key", "nonce", "table", "pin", "share", "sig", "confirm", "reason", "code"]


@st.composite
def spoiled(draw: st.DrawFn, honest: dict[str, Any]) -> Any:
    """Anything: a random value, a random message, or the honest one with fields changed."""
    kind = draw(st.sampled_from(["value", "message", "edit"]))
    if kind == "value":
        return draw(values)
    if kind == "message":
        msg = draw(st.dictionaries(st.sampled_from(FIELDS), values, max_size=6))
        msg["t"] = draw(st.sampled_from(["hello", "pake", "proof", "ok", "refuse", "ping"]) | st.text(max_size=5))
        return msg
    msg = dict(honest)
    for name in draw(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=3)):
        if draw(st.booleans()):
            msg.pop(name, None)
        else:
            msg[name] = draw(values)
    return msg


STEPS = [(initiator, pin, step) for initiator in (True, False) for pin in (None, PIN)
         for step in ("hello", "pake", "proof", "ok")
         if not (pin is None and step == "pake") and not (initiator and step == "ok")]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(STEPS), st.data())
def test_every_handshake_step_fed_anything_returns_or_refuses_by_name(
        where: tuple[bool, str | None, str], data: st.DataObject) -> None:
    initiator, pin, step = where
    hs, honest = at_step(initiator=initiator, pin=pin, step=step)
    msg = data.draw(spoiled(honest))
    guard = PinGuard()
    hs.guard = guard
    try:
        out = hs.receive(msg)
    except HandshakeError as e:
        assert e.reason and "\n" not in e.reason
        return
    assert isinstance(out, list) and all(isinstance(m, dict) and isinstance(m.get("t"), str) for m in out)


# ------------------------------------------------------------ the real commands

ARGS_LIMIT = 30.0
GAME_LIMIT = 90.0


def _host(table: str, pin: str) -> list[str]:
    return ["host", "--interface", LOOPBACK, "--bot", "greedy", "--players", "2", "--table", table,
            "--pin", pin, "--rounds", "1"]


def _join(table: str, pin: str, name: str) -> list[str]:
    return ["join", table, "--interface", LOOPBACK, "--bot", "random", "--pin", pin, "--name", name]



def test_cli_an_empty_pin_is_refused_in_one_line(tmp_path: Path) -> None:
    """An empty PIN is no secret (and CPace needs one): refused as an argument, before any network."""
    for args in (["host", "--interface", LOOPBACK, "--bot", "greedy", "--players", "2", "--pin", ""],
                 ["join", "--interface", LOOPBACK, "--bot", "greedy", "--pin", ""],
                 ["watch", "--interface", LOOPBACK, "--pin", ""]):
        done = subprocess.run([sys.executable, "-m", "allegra_lan", *args], capture_output=True, text=True,
                              timeout=ARGS_LIMIT, cwd=Path(__file__).parent.parent,
                              env=dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "c"),
                                       XDG_DATA_HOME=str(tmp_path / "d")))
        assert done.returncode == 2, done
        assert done.stderr.splitlines() == [f"allegra {args[0]}: error: argument --pin: must not be empty"]


def test_cli_a_wrong_pin_is_one_line_and_the_right_one_plays(clis: CliPool) -> None:
    table = unique_table("pin1")
    host = clis.start("host", _host(table, PIN))
    host.wait_for_stderr(rf"table '{table}' open on 127\.0\.0\.1:\d+", ARGS_LIMIT)
    wrong = clis.start("wrong", _join(table, "4712", "intruder"))
    assert wrong.wait(ARGS_LIMIT) == 2, wrong.stderr()
    assert wrong.stderr().splitlines() == [f"allegra join: error: wrong PIN for table '{table}'"]
    assert wrong.stdout() == ""
    host.wait_for_stderr(rf"refused a connection: wrong PIN for table '{table}' \(from 127\.0\.0\.1\)",
                         ARGS_LIMIT)
    right = clis.start("right", _join(table, PIN, "welcome"))
    for run_ in (host, right):
        assert run_.wait(GAME_LIMIT) == 0, run_.stderr()
        assert "Traceback" not in run_.stderr()
    assert host.game_over_line() == right.game_over_line()


def test_cli_the_sixth_wrong_pin_is_told_to_wait_and_the_host_tells_its_players(clis: CliPool) -> None:
    table = unique_table("pin6")
    host = clis.start("host", _host(table, PIN))
    host.wait_for_stderr(rf"table '{table}' open on 127\.0\.0\.1:\d+", ARGS_LIMIT)
    wrong = [clis.start(f"wrong{i}", _join(table, f"{5000 + i}", f"intruder{i}")) for i in range(5)]
    for run_ in wrong:
        assert run_.wait(ARGS_LIMIT) == 2, run_.stderr()
        assert run_.stderr().splitlines() == [f"allegra join: error: wrong PIN for table '{table}'"]
    sixth = clis.start("sixth", _join(table, PIN, "late"))  # even the right PIN waits
    assert sixth.wait(ARGS_LIMIT) == 2, sixth.stderr()
    lines = sixth.stderr().splitlines()
    assert len(lines) == 1 and re.fullmatch(
        r"allegra join: error: too many wrong PINs at this table: try again in \d+ s", lines[0]), lines
    host.wait_for_stderr(r"5 wrong PINs from 127\.0\.0\.1 in the last minute: joins are paused for \d+ s",
                         ARGS_LIMIT)
    assert host.proc.poll() is None and "Traceback" not in host.stderr()
    assert host.stderr().count("wrong PINs from") == 1


# ------------------------------------------------------------ figures (python tests/test_net_pin.py)

def measure(rounds: int = 20, attack_seconds: float = 5.0) -> dict[str, float]:
    """Median handshake time with and without a PIN (real TCP on 127.0.0.1), and what an
    attacker who hammers a host with wrong PINs gets: refusals a second, guesses checked."""
    out: dict[str, float] = {}

    async def main() -> None:
        for label, pin in (("no_pin_ms", None), ("pin_ms", PIN)):
            host = Host(pin)
            host.guard = PinGuard(limit=10**9)
            times = []
            async with trio.open_nursery() as n:
                await host.start(n)
                for _ in range(rounds):
                    start = time.perf_counter()
                    assert isinstance(await join(host.port, pin), VerifiedPeer)
                    times.append(time.perf_counter() - start)
                n.cancel_scope.cancel()
            out[label] = statistics.median(times) * 1000
        host = Host(PIN)
        async with trio.open_nursery() as n:
            await host.start(n)
            start, tries = time.perf_counter(), 0
            while time.perf_counter() - start < attack_seconds:
                await join(host.port, f"{tries % 10_000:04d}", MALLORY)
                tries += 1
            n.cancel_scope.cancel()
        elapsed = time.perf_counter() - start
        out["attack_handshakes_per_s"] = tries / elapsed
        out["attack_guesses_checked"] = float(len(host.guard.failures))
        out["attack_seconds"] = elapsed

    trio.run(main)
    return out


if __name__ == "__main__":
    for name, value in measure().items():
        print(f"{name}: {value:.2f}")


def test_a_refusal_about_a_huge_or_strange_field_stays_short_and_one_line() -> None:
    hs, msg = at_step(initiator=False, pin=PIN, step="proof")
    msg.update({f"field\n{i}" * 50: i for i in range(30)})
    with pytest.raises(HandshakeError) as caught:
        hs.receive(msg)
    assert caught.value.reason.startswith("the peer's proof has unknown fields: ")
    assert caught.value.reason.endswith(" and 25 more") and len(caught.value.reason) < 200
    assert "\n" not in caught.value.reason
    hs, msg = at_step(initiator=True, pin=None, step="hello")
    with pytest.raises(HandshakeError) as caught:
        hs.receive({"t": b"\x00" * 60_000})
    assert len(caught.value.reason) < 100
