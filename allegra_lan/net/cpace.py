"""CPace (draft-irtf-cfrg-cpace-21), cipher suite CPACE-X25519-SHA512, initiator-responder setting.

Why a PAKE: a PIN of 4 or 6 digits has too little entropy for any keyed MAC
or slow hash to protect it against someone who records a handshake or talks
to a peer once; there are only 10,000 or 1,000,000 to try. With CPace each
side sends one group element Y = y * g, where the generator g is derived from
the PIN and the session, so Y is a uniformly random point whatever the PIN
is: a recorded or a live exchange says nothing about the PIN, and whoever
plays one side of a run can test exactly one guess (the one its own Y was
made with), and only by letting the other side check a key confirmation.

This module is the whole cryptographic core, pure (no sockets, no clock):
every function follows the draft's pseudo-code and names, and the test
vectors of its appendix B.1 are checked in tests/test_net_pin.py. X25519 is
libsodium's (through PyNaCl), which clamps the scalar, ignores bit 255 of the
u-coordinate and refuses every low-order point (its result would be the
neutral element G.I, on which CPace MUST abort). The Elligator 2 map is done
here in Python integers (RFC 9380 section 6.7.1, curve25519, Z = 2); it is
not constant-time, which leaks timing of the PIN-dependent generator only to
code running on the same machine (see docs/threat-model.md, "The PIN").

The key confirmation follows the draft's section "Key confirmation":
mac_key = H(b"CPaceMac" || sid || ISK), Ta = HMAC(mac_key, lv_cat(Ya, ADa)),
Tb = HMAC(mac_key, lv_cat(Yb, ADb)), with HMAC-SHA-512.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from nacl.bindings import crypto_scalarmult
from nacl.exceptions import RuntimeError as SodiumError

DSI = b"CPace255"
DSI_ISK = DSI + b"_ISK"
MAC_DSI = b"CPaceMac"
FIELD_BYTES = 32
FIELD_BITS = 255
S_IN_BYTES = 128  # SHA-512's input block size
ISK_LEN = 64
MAC_LEN = 64
IDENTITY = bytes(FIELD_BYTES)  # G.I for X25519

_P = 2**255 - 19
_A = 486662
_Z = 2


class CPaceError(Exception):
    """The peer's share is not usable (a low-order or otherwise invalid point): abort the run."""


def prepend_len(data: bytes) -> bytes:
    """LEB128 of len(data), then data (draft, "prepend_len")."""
    length = len(data)
    out = bytearray()
    while True:
        byte = length & 0x7F
        length >>= 7
        out.append(byte | 0x80 if length else byte)
        if not length:
            return bytes(out) + data


def lv_cat(*parts: bytes) -> bytes:
    return b"".join(prepend_len(p) for p in parts)


def generator_string(dsi: bytes, prs: bytes, ci: bytes, sid: bytes, s_in_bytes: int) -> bytes:
    """The zero padding makes the first hash block hold only DSI, PRS and zeros, whatever the PRS length."""
    len_zpad = max(0, s_in_bytes - 1 - len(prepend_len(prs)) - len(prepend_len(dsi)))
    return lv_cat(dsi, prs, bytes(len_zpad), ci, sid)


def decode_u(u: bytes) -> int:
    """RFC 7748 decodeUCoordinate for 255 bits: little-endian, bit 255 ignored (not reduced)."""
    return int.from_bytes(u, "little") & ((1 << FIELD_BITS) - 1)


def encode_u(u: int) -> bytes:
    return (u % _P).to_bytes(FIELD_BYTES, "little")


def elligator2(r: int) -> int:
    """map_to_curve_elligator2 for curve25519 (RFC 9380 6.7.1), u-coordinate only.

    x1 = -A / (1 + Z r^2); x = x1 if x1^3 + A x1^2 + x1 is a square, else -x1 - A.
    1 + 2 r^2 is never 0 mod p (-1/2 is not a square), so no inv0 case arises.
    """
    r %= _P
    x1 = (-_A * pow(1 + _Z * r * r, _P - 2, _P)) % _P
    gx1 = (x1 * x1 * x1 + _A * x1 * x1 + x1) % _P
    square = gx1 == 0 or pow(gx1, (_P - 1) // 2, _P) == 1
    return x1 if square else (-x1 - _A) % _P


def calculate_generator(prs: bytes, ci: bytes, sid: bytes) -> bytes:
    gen_str = generator_string(DSI, prs, ci, sid, S_IN_BYTES)
    gen_str_hash = hashlib.sha512(gen_str).digest()[:FIELD_BYTES]
    return encode_u(elligator2(decode_u(gen_str_hash)))


def sample_scalar() -> bytes:
    return os.urandom(FIELD_BYTES)


def scalar_mult_vfy(y: bytes, g: bytes) -> bytes:
    """X25519(y, g), or CPaceError where the draft's scalar_mult_vfy returns G.I."""
    if len(y) != FIELD_BYTES or len(g) != FIELD_BYTES:
        raise CPaceError(f"a share must be {FIELD_BYTES} bytes")
    try:
        k = crypto_scalarmult(y, g)
    except SodiumError:  # libsodium refuses low-order points (the result would be G.I)
        raise CPaceError("the share is a low-order point") from None
    if hmac.compare_digest(k, IDENTITY):
        raise CPaceError("the share is a low-order point")
    return k


def transcript_ir(ya: bytes, ada: bytes, yb: bytes, adb: bytes) -> bytes:
    return lv_cat(ya, ada) + lv_cat(yb, adb)


def isk(sid: bytes, k: bytes, ya: bytes, ada: bytes, yb: bytes, adb: bytes) -> bytes:
    return hashlib.sha512(lv_cat(DSI_ISK, sid, k) + transcript_ir(ya, ada, yb, adb)).digest()


def mac_key(sid: bytes, isk_: bytes) -> bytes:
    return hashlib.sha512(MAC_DSI + sid + isk_).digest()


def tag(key: bytes, y: bytes, ad: bytes) -> bytes:
    """The key confirmation of the party that sent (y, ad)."""
    return hmac.new(key, lv_cat(y, ad), hashlib.sha512).digest()


class CPace:
    """One party's run: make `share`, take the peer's with `finish`, then `tag`/`check` confirmations.

    `initiator` fixes the order of the transcript (initiator's share first),
    as the initiator-responder setting requires.
    """

    def __init__(self, prs: bytes, ci: bytes, sid: bytes, *, initiator: bool, ad: bytes, peer_ad: bytes,
                 scalar: bytes | None = None) -> None:
        self.initiator = initiator
        self.sid = sid
        self.ad, self.peer_ad = ad, peer_ad
        self._y = sample_scalar() if scalar is None else scalar
        self.share = scalar_mult_vfy(self._y, calculate_generator(prs, ci, sid))
        self._mac_key: bytes | None = None
        self.peer_share: bytes | None = None

    def finish(self, peer_share: bytes) -> None:
        """Derive ISK and the confirmation key from the peer's share; CPaceError if it is invalid."""
        if not isinstance(peer_share, bytes) or len(peer_share) != FIELD_BYTES:
            raise CPaceError(f"a share must be {FIELD_BYTES} bytes")
        if hmac.compare_digest(peer_share, self.share):
            raise CPaceError("the peer sent back our own share")
        k = scalar_mult_vfy(self._y, peer_share)
        self._y = b""  # an ephemeral scalar is used once (draft, "Nonce values")
        if self.initiator:
            key = isk(self.sid, k, self.share, self.ad, peer_share, self.peer_ad)
        else:
            key = isk(self.sid, k, peer_share, self.peer_ad, self.share, self.ad)
        self._mac_key = mac_key(self.sid, key)
        self.peer_share = peer_share

    def my_tag(self) -> bytes:
        assert self._mac_key is not None, "finish() first"
        return tag(self._mac_key, self.share, self.ad)

    def check(self, peer_tag: bytes) -> bool:
        assert self._mac_key is not None and self.peer_share is not None, "finish() first"
        return hmac.compare_digest(peer_tag, tag(self._mac_key, self.peer_share, self.peer_ad))
