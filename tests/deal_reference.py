"""A second, independent implementation of the fair deal's checks (PROTOCOL.md, "Fair
deal: the cryptography"), for tests/test_deal_vectors.py.

Why it exists: the issue asks that the spec's test vectors be checkable by an
implementation that is not ours. This one shares no code with allegra_lan/deal/ and
does not call libsodium: Ed25519 arithmetic in plain Python integers (extended twisted
Edwards coordinates, the addition and doubling formulas and the point decoding of RFC
8032), X25519 by the RFC 7748 ladder, and the BLAKE2b derivations written out again
from the spec (hashlib's BLAKE2b is CPython's own, not libsodium's), ElGamal
re-encryption, decryption shares and both proofs. Hashing to the
curve (libsodium's from_uniform, Elligator 2) is not redone: the card points are taken
from the vectors as given, with their hash inputs checked and the points validated.
It is slow (a scalar multiplication takes milliseconds) and is never used by the game.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, -1, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)
Point = tuple[int, int, int, int]
IDENTITY: Point = (0, 1, 1, 0)


class Refused(ValueError):
    """The reference refuses these bytes."""


def point_add(a: Point, b: Point) -> Point:
    """RFC 8032 5.1.4, extended coordinates (a = -1)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % P
    bb = (y1 + x1) * (y2 + x2) % P
    cc = t1 * 2 * D * t2 % P
    dd = z1 * 2 * z2 % P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def point_double(a: Point) -> Point:
    x1, y1, z1, _ = a
    aa, bb, cc = x1 * x1 % P, y1 * y1 % P, 2 * z1 * z1 % P
    h = aa + bb
    e = h - (x1 + y1) ** 2
    g = aa - bb
    f = cc + g
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def point_neg(a: Point) -> Point:
    x, y, z, t = a
    return (-x % P, y, z, -t % P)


def scalar_mult(k: int, a: Point) -> Point:
    out = IDENTITY
    k %= L
    for bit in bin(k)[2:] if k else "":
        out = point_double(out)
        if bit == "1":
            out = point_add(out, a)
    return out


def raw_mult(k: int, a: Point) -> Point:
    """k*a without reducing k mod L (for the subgroup check)."""
    out = IDENTITY
    for bit in bin(k)[2:]:
        out = point_double(out)
        if bit == "1":
            out = point_add(out, a)
    return out


def equal(a: Point, b: Point) -> bool:
    return (a[0] * b[2] - b[0] * a[2]) % P == 0 and (a[1] * b[2] - b[1] * a[2]) % P == 0


def encode(a: Point) -> bytes:
    zi = pow(a[2], -1, P)
    x, y = a[0] * zi % P, a[1] * zi % P
    return (y | (x & 1) << 255).to_bytes(32, "little")


def decode(data: bytes) -> Point:
    """RFC 8032 5.1.3 decoding, then the deal's rule: in the main subgroup, not the identity."""
    if len(data) != 32:
        raise Refused("not 32 bytes")
    n = int.from_bytes(data, "little")
    sign, y = n >> 255, n & ((1 << 255) - 1)
    if y >= P:
        raise Refused("y not below p")
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if v * x * x % P == (-u) % P:
        x = x * SQRT_M1 % P
    elif v * x * x % P != u:
        raise Refused("not on the curve")
    if x == 0 and sign:
        raise Refused("x is 0 with the sign bit set")
    if x & 1 != sign:
        x = P - x
    pt = (x, y, 1, x * y % P)
    if equal(pt, IDENTITY) or not equal(raw_mult(L, pt), IDENTITY):
        raise Refused("the identity or outside the main subgroup")
    return pt


BASE = decode(bytes.fromhex("5866666666666666666666666666666666666666666666666666666666666666"))


# ------------------------------------------------------------------ the deal's derivations, from the spec

def frame(name: str, *parts: bytes | int) -> bytes:
    out = b""
    for part in (("allegra-lan/deal/v1/" + name).encode(), *parts):
        if isinstance(part, int):
            part = part.to_bytes(8, "big")
        out += len(part).to_bytes(4, "big") + part
    return out


def keyed(secret: bytes, name: str, *parts: bytes | int, size: int = 64) -> bytes:
    return hashlib.blake2b(frame(name, *parts), key=secret, digest_size=size).digest()


def unkeyed(name: str, *parts: bytes | int, size: int = 64) -> bytes:
    return hashlib.blake2b(frame(name, *parts), digest_size=size).digest()


def scalar(secret: bytes, name: str, *parts: bytes | int) -> int:
    counter = 0
    while True:
        x = int.from_bytes(keyed(secret, name, *parts, counter), "little") % L
        if x:
            return x
        counter += 1


def permutation(secret: bytes, game: bytes, round_no: int, pile: int, size: int) -> list[int]:
    data = b""
    t = 0

    def draw(bound: int) -> int:
        nonlocal data, t
        limit = 2**64 - 2**64 % bound
        while True:
            while len(data) < 8:
                data += keyed(secret, "perm", game, round_no, pile, size, t)
                t += 1
            x, data = int.from_bytes(data[:8], "little"), data[8:]
            if x < limit:
                return x % bound

    p = list(range(size))
    for i in range(size - 1, 0, -1):
        j = draw(i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def scalar_of(data: bytes) -> int:
    if len(data) != 32 or int.from_bytes(data, "little") >= L:
        raise Refused("not a canonical scalar")
    return int.from_bytes(data, "little")


def _c_z(proof: bytes) -> tuple[int, int]:
    if len(proof) != 64:
        raise Refused("a proof is not 64 bytes")
    return scalar_of(proof[:32]), scalar_of(proof[32:])


def dleq_verify(proof: bytes, game: bytes, round_no: int, pile: int, seat: int, card: int,
                big_x: bytes, c1: bytes, d: bytes) -> bool:
    """log_G(big_x) == log_c1(d), from the proof c || z."""
    try:
        c, z = _c_z(proof)
        xp, c1p, dp = decode(big_x), decode(c1), decode(d)
    except Refused:
        return False
    r1 = point_add(scalar_mult(z, BASE), point_neg(scalar_mult(c, xp)))
    r2 = point_add(scalar_mult(z, c1p), point_neg(scalar_mult(c, dp)))
    h = unkeyed("dleq", game, round_no, pile, seat, card, big_x, c1, d, encode(r1), encode(r2))
    return int.from_bytes(h, "little") % L == c


def key_proof_verify(proof: bytes, game: bytes, seat: int, big_x: bytes) -> bool:
    try:
        c, z = _c_z(proof)
        xp = decode(big_x)
    except Refused:
        return False
    r = point_add(scalar_mult(z, BASE), point_neg(scalar_mult(c, xp)))
    return int.from_bytes(unkeyed("key-proof", game, seat, big_x, encode(r)), "little") % L == c


def check_share(point: bytes, proof: bytes, game: bytes, round_no: int, pile: int, seat: int, card: int,
                big_x: bytes, ciphertext: bytes) -> Point:
    """The share D as a point, or Refused: a valid point whose proof holds for C1."""
    d = decode(point)
    if not dleq_verify(proof, game, round_no, pile, seat, card, big_x, ciphertext[:32], point):
        raise Refused("the proof fails")
    return d


def open_card(ciphertext: bytes, shares: Sequence[Point], card_points: Sequence[bytes]) -> int | None:
    m = decode(ciphertext[32:])
    for d in shares:
        m = point_add(m, point_neg(d))
    opened = encode(m)
    return card_points.index(opened) if opened in card_points else None


def x25519(k: bytes, u: bytes = (9).to_bytes(32, "little")) -> bytes:
    """RFC 7748 X25519 (the Montgomery ladder)."""
    n = int.from_bytes(k, "little")
    n = (n & ~7 & ((1 << 255) - 1)) | (1 << 254)
    x1 = int.from_bytes(u, "little") & ((1 << 255) - 1)
    x2, z2, x3, z3, swap = 1, 0, x1, 1, 0
    for t in range(254, -1, -1):
        bit = (n >> t) & 1
        swap ^= bit
        if swap:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        a, b = (x2 + z2) % P, (x2 - z2) % P
        aa, bb = a * a % P, b * b % P
        e = (aa - bb) % P
        c, d = (x3 + z3) % P, (x3 - z3) % P
        da, cb = d * a % P, c * b % P
        x3, z3 = (da + cb) ** 2 % P, x1 * (da - cb) ** 2 % P
        x2, z2 = aa * bb % P, e * (aa + 121665 * e) % P
    if swap:
        x2, z2 = x3, z3
    return (x2 * pow(z2, P - 2, P) % P).to_bytes(32, "little")


# ------------------------------------------------------------------ crypto_box (X25519, XSalsa20, Poly1305)

def _rotl(v: int, c: int) -> int:
    return ((v << c) & 0xFFFFFFFF) | (v >> (32 - c))


def _salsa_rounds(x: list[int]) -> list[int]:
    x = list(x)

    def qr(a: int, b: int, c: int, d: int) -> None:
        x[b] ^= _rotl((x[a] + x[d]) & 0xFFFFFFFF, 7)
        x[c] ^= _rotl((x[b] + x[a]) & 0xFFFFFFFF, 9)
        x[d] ^= _rotl((x[c] + x[b]) & 0xFFFFFFFF, 13)
        x[a] ^= _rotl((x[d] + x[c]) & 0xFFFFFFFF, 18)

    columns_then_rows = ((0, 4, 8, 12), (5, 9, 13, 1), (10, 14, 2, 6), (15, 3, 7, 11),
                         (0, 1, 2, 3), (5, 6, 7, 4), (10, 11, 8, 9), (15, 12, 13, 14))
    for _ in range(10):
        for quarter in columns_then_rows:
            qr(*quarter)
    return x


def _words(b: bytes) -> list[int]:
    return [int.from_bytes(b[i:i + 4], "little") for i in range(0, len(b), 4)]


def _state(key: bytes, middle: bytes) -> list[int]:
    c, k, m = _words(b"expand 32-byte k"), _words(key), _words(middle)
    return [c[0], *k[:4], c[1], *m, c[2], *k[4:], c[3]]


def hsalsa20(key: bytes, inp: bytes) -> bytes:
    x = _salsa_rounds(_state(key, inp))
    return b"".join(x[i].to_bytes(4, "little") for i in (0, 5, 10, 15, 6, 7, 8, 9))


def salsa20_stream(key: bytes, nonce8: bytes, n: int) -> bytes:
    out = b""
    block = 0
    while len(out) < n:
        s = _state(key, nonce8 + block.to_bytes(8, "little"))
        x = _salsa_rounds(s)
        out += b"".join(((a + b) & 0xFFFFFFFF).to_bytes(4, "little") for a, b in zip(x, s))
        block += 1
    return out[:n]


def poly1305(key: bytes, msg: bytes) -> bytes:
    r = int.from_bytes(key[:16], "little") & 0x0FFFFFFC0FFFFFFC0FFFFFFC0FFFFFFF
    s = int.from_bytes(key[16:], "little")
    acc, p = 0, (1 << 130) - 5
    for i in range(0, len(msg), 16):
        acc = (acc + int.from_bytes(msg[i:i + 16] + b"\x01", "little")) * r % p
    return ((acc + s) % (1 << 128)).to_bytes(16, "little")


def seal_open(sealed: bytes, box_secret: bytes, box_key: bytes) -> bytes:
    """libsodium's crypto_box_seal_open, written out: E || MAC || ciphertext."""
    if len(sealed) < 48:
        raise Refused("a sealed box too short")
    epk, mac, ct = sealed[:32], sealed[32:48], sealed[48:]
    k = hsalsa20(x25519(box_secret, epk), bytes(16))
    nonce = hashlib.blake2b(epk + box_key, digest_size=24).digest()
    stream = salsa20_stream(hsalsa20(k, nonce[:16]), nonce[16:], 32 + len(ct))
    if poly1305(stream[:32], ct) != mac:
        raise Refused("a sealed box that does not open")
    return bytes(a ^ b for a, b in zip(ct, stream[32:]))


# ----------------------------------------------------------------- the deal events (PROTOCOL.md, "Fair deal: the events")

BYTES = "bytes"
EVENT_FIELDS: dict[str, dict[str, object]] = {
    "deal_keys": {"commitment": (BYTES, 32), "box_key": (BYTES, 32), "deal_key": (BYTES, 32), "key_proof": (BYTES, 64)},
    "deal_escrow": {"pieces": ("list", 1, 15, ("tuple", (BYTES, 32), (BYTES, 80)))},
    "deal_shuffle": {"round": "u32", "pile": "u32", "part": "u32", "cards": ("list", 1, 200, (BYTES, 64))},
    "deal_shares": {"batch": "u32", "part": "u32", "shares": ("list", 1, 128, ("tuple", "u32", (BYTES, 32), (BYTES, 64)))},
    "deal_secret": {"secret": (BYTES, 32)},
}


def _shape(spec: object, value: object, where: str) -> None:
    if spec == "u32":
        if type(value) is not int or not 0 <= value <= 2**32 - 1:
            raise Refused(f"{where}: not a number 0..2^32-1")
    elif isinstance(spec, tuple) and spec[0] == BYTES:
        if type(value) is not bytes or len(value) != spec[1]:
            raise Refused(f"{where}: not {spec[1]} bytes")
    elif isinstance(spec, tuple) and spec[0] == "list":
        _, lo, hi, item = spec
        if type(value) is not list or not lo <= len(value) <= hi:  # type: ignore[operator]
            raise Refused(f"{where}: not a list of {lo}..{hi}")
        for i, x in enumerate(value):
            _shape(item, x, f"{where}[{i}]")
    elif isinstance(spec, tuple) and spec[0] == "tuple":
        items = spec[1:]
        if type(value) is not list or len(value) != len(items):
            raise Refused(f"{where}: not a list of {len(items)}")
        for i, (s, x) in enumerate(zip(items, value)):
            _shape(s, x, f"{where}[{i}]")
    else:
        raise AssertionError(spec)


def check_body(kind: str, body: object) -> None:
    """Refused unless `body` is exactly the map its kind's table in PROTOCOL.md says."""
    fields = EVENT_FIELDS.get(kind)
    if fields is None:
        raise Refused(f"{kind!r} is not a deal event kind")
    if type(body) is not dict or set(body) != set(fields):
        raise Refused(f"{kind}: not a map of exactly {', '.join(fields)}")
    for name, spec in fields.items():
        _shape(spec, body[name], name)


def msgpack(v: object) -> bytes:
    """Canonical msgpack (PROTOCOL.md, "Canonical msgpack") of the values a deal body holds:
    non-negative integers, byte strings, text, arrays, maps with keys in bytewise order."""
    def head(n: int, small: int | None, small_max: int, codes: tuple[int, int, int]) -> bytes:
        if small is not None and n <= small_max:
            return bytes([small | n])
        for code, size in zip(codes, (1, 2, 4)):
            if code and n < 1 << (8 * size):
                return bytes([code]) + n.to_bytes(size, "big")
        raise Refused("too long")
    if type(v) is int:
        assert v >= 0
        if v < 128:
            return bytes([v])
        for code, size in ((0xcc, 1), (0xcd, 2), (0xce, 4), (0xcf, 8)):
            if v < 1 << (8 * size):
                return bytes([code]) + v.to_bytes(size, "big")
    if type(v) is bytes:
        return head(len(v), None, 0, (0xc4, 0xc5, 0xc6)) + v
    if type(v) is str:
        raw = v.encode()
        return head(len(raw), 0xa0, 31, (0xd9, 0xda, 0xdb)) + raw
    if type(v) is list:
        return head(len(v), 0x90, 15, (0, 0xdc, 0xdd)) + b"".join(msgpack(x) for x in v)
    if type(v) is dict:
        keys = sorted(v, key=lambda k: k.encode())
        return head(len(v), 0x80, 15, (0, 0xde, 0xdf)) + b"".join(msgpack(k) + msgpack(v[k]) for k in keys)
    raise Refused(f"no canonical msgpack for {type(v).__name__}")


def deal_order(players: int, pile_size: int, owing: dict[int, int]) -> list[tuple[int, str]]:
    """Who writes which deal event, for a game that deals one pile of `pile_size` cards and
    one batch (`owing`: seat -> how many of the batch's shares it owes), then ends."""
    out = [(s, "deal_keys") for s in range(players)] + [(s, "deal_escrow") for s in range(players)]
    out += [(s, "deal_shuffle") for s in range(players) for _ in range(-(-pile_size // 200))]
    out += [(s, "deal_shares") for s in sorted(owing) for _ in range(-(-owing[s] // 128))]
    return out + [(s, "deal_secret") for s in range(players)]


def box_key_usable(box_key: bytes) -> bool:
    """A box key no sealed box can be made to is a fault of its seat: X25519 with it gives
    the all-zero output (a point of low order), which libsodium refuses."""
    return x25519(bytes(range(32)), box_key) != bytes(32)
