"""The prime-order Ed25519 group, through libsodium (PyNaCl's bindings), as the deal uses it.

Why one small module: every point that reaches the deal from outside passes through
`check_point` (one place decides what a valid point is), and every scalar through
`check_scalar`; libsodium's raw calls raise a bare "Unexpected library error" on an
identity result, which `mul` turns into the group's arithmetic (0*P is the identity) so
that a hostile proof cannot crash a verifier. Points are 32-byte canonical encodings in
the main (prime-order) subgroup, never the identity; scalars are 32-byte little-endian
integers below L.
"""

from __future__ import annotations

import nacl.bindings as nb
import nacl.exceptions

L = 2**252 + 27742317777372353535851937790883648493
"""The order of the main subgroup."""
POINT_BYTES = 32
SCALAR_BYTES = 32
IDENTITY = bytes([1]) + bytes(31)
BASE = nb.crypto_scalarmult_ed25519_base_noclamp((1).to_bytes(32, "little"))


class DealError(ValueError):
    """Hostile or malformed deal data; the message is one line naming what was wrong."""


_VALID: dict[bytes, None] = {}
"""Points that passed `check_point`, so a point checked once is not checked again.

Why: the subgroup check costs about a scalar product, and the same points are checked
again and again: a pass's output on arrival, then as the next seat's input, every card's
ciphertext with each share of it, every pass again at game end. In `replay verify` of a
fair-deal game that was a third of the time. Validity is a function of the 32 bytes
alone, so remembering it is exact; the set is bounded (emptied when full)."""
_VALID_MAX = 1 << 16


def check_point(data: object, what: str = "point") -> bytes:
    """`data` as a point the deal may use, or DealError: 32 bytes, canonical, on the curve,
    in the main subgroup, not the identity (libsodium's is_valid_point checks all but
    nothing of the type, which we check first)."""
    if not isinstance(data, (bytes, bytearray)) or len(data) != POINT_BYTES:
        raise DealError(f"{what} is not 32 bytes")
    data = bytes(data)
    if data in _VALID:
        return data
    if data == IDENTITY or not nb.crypto_core_ed25519_is_valid_point(data):
        raise DealError(f"{what} is not a valid Ed25519 point of the main subgroup")
    if len(_VALID) >= _VALID_MAX:
        _VALID.clear()
    _VALID[data] = None
    return data


def is_point(data: object) -> bool:
    try:
        check_point(data)
    except DealError:
        return False
    return True


def check_scalar(data: object, what: str = "scalar", nonzero: bool = False) -> int:
    """`data` as an integer below L, or DealError (a non-canonical encoding is refused, so
    that one value has one encoding and published bytes compare byte for byte)."""
    if not isinstance(data, (bytes, bytearray)) or len(data) != SCALAR_BYTES:
        raise DealError(f"{what} is not 32 bytes")
    x = int.from_bytes(data, "little")
    if x >= L:
        raise DealError(f"{what} is not a canonical scalar (not below L)")
    if nonzero and x == 0:
        raise DealError(f"{what} is zero")
    return x


def sc(x: int) -> bytes:
    """The 32-byte encoding of x mod L."""
    return (x % L).to_bytes(SCALAR_BYTES, "little")


def reduce64(data: bytes) -> int:
    """A 64-byte string (a BLAKE2b-512 digest) as an integer mod L (libsodium's reduce:
    512 bits keep the bias below 2^-259)."""
    return int.from_bytes(nb.crypto_core_ed25519_scalar_reduce(data), "little")


def mul(k: int, point: bytes) -> bytes:
    """k*point; the identity when k is 0 mod L (libsodium refuses to return it)."""
    k %= L
    if k == 0:
        return IDENTITY
    try:
        return nb.crypto_scalarmult_ed25519_noclamp(sc(k), point)
    except nacl.exceptions.RuntimeError:
        return IDENTITY  # only for a point outside the main subgroup, which callers refuse


def mul_base(k: int) -> bytes:
    """k*G; the identity when k is 0 mod L."""
    k %= L
    if k == 0:
        return IDENTITY
    return nb.crypto_scalarmult_ed25519_base_noclamp(sc(k))


def add(p: bytes, q: bytes) -> bytes:
    return nb.crypto_core_ed25519_add(p, q)


def sub(p: bytes, q: bytes) -> bytes:
    return nb.crypto_core_ed25519_sub(p, q)


def inverse(k: int) -> int:
    """k^-1 mod L (L is prime); k must not be 0 mod L."""
    if k % L == 0:
        raise DealError("cannot invert the zero scalar")
    return pow(k, -1, L)
