"""Everything a seat does in the deal derives from one 32-byte per-game secret.

Why: a seat that publishes this one secret when the game ends lets anyone redo every
shuffle, share and escrow box it made, byte for byte, and so find and name a cheat; and
the seat needs no other state to resume after a crash. Derivations are keyed BLAKE2b
(the secret is the key) over a domain-separated message (`frame`), so no two uses of
the secret can collide. Layout (PROTOCOL.md, "Fair deal: the cryptography"):

    frame(parts) = for each part: 4-byte big-endian length || bytes
                   (an int part is first written as 8 bytes big-endian)
    tag(name)    = "allegra-lan/deal/v1/" + name, as ASCII, always the first part
"""

from __future__ import annotations

from allegra_lan.blake import blake2b
from typing import Sequence

from .group import L, DealError, reduce64

PREFIX = "allegra-lan/deal/v1/"
SECRET_BYTES = 32
Part = bytes | int


def frame(name: str, *parts: Part) -> bytes:
    """The domain-separated message of a derivation: the tag, then every part, each
    length-prefixed (so no two different part lists give one message)."""
    out = bytearray()
    for part in ((PREFIX + name).encode("ascii"), *parts):
        if isinstance(part, int):
            if not 0 <= part < 2**64:
                raise DealError(f"a number in a derivation is out of range: {part}")
            part = part.to_bytes(8, "big")
        out += len(part).to_bytes(4, "big") + part
    return bytes(out)


def hash_(name: str, *parts: Part, size: int = 64) -> bytes:
    """Unkeyed BLAKE2b of frame(name, parts): the public hashes (card points, challenges,
    commitments)."""
    return blake2b(frame(name, *parts), digest_size=size).digest()


def keyed(secret: bytes, name: str, *parts: Part, size: int = 64) -> bytes:
    """BLAKE2b keyed with the seat's secret over frame(name, parts)."""
    check_secret(secret)
    return blake2b(frame(name, *parts), digest_size=size, key=secret).digest()


def game_secret(identity_seed: bytes, game: bytes, seat: int) -> bytes:
    """A seat's per-game secret, derived from the 32-byte seed of its Ed25519 identity.

    Why derived and not drawn: a peer that crashes and resumes from its log must make
    exactly the events it made before (the same keys, shuffles and shares), and a file
    holding the secret would be one more thing to lose or leak. One-way: publishing it at
    the end reveals nothing of the identity. Not part of the protocol (any secret a seat
    keeps works); every other implementation may draw its own."""
    return keyed(check_secret(identity_seed), "game-secret", game, seat, size=SECRET_BYTES)


def check_secret(secret: object) -> bytes:
    if not isinstance(secret, (bytes, bytearray)) or len(secret) != SECRET_BYTES:
        raise DealError("a seat secret is not 32 bytes")
    return bytes(secret)


def scalar(secret: bytes, name: str, *parts: Part) -> int:
    """A secret scalar in [1, L): keyed(secret, name, *parts, counter) reduced mod L, the
    counter counting up from 0 past a zero (which happens with probability 2^-252, but a
    zero key would reveal a card, so the rule is stated and kept)."""
    counter = 0
    while True:
        x = reduce64(keyed(secret, name, *parts, counter))
        if x != 0:
            return x
        counter += 1


def commitment(game: bytes, seat: int, secret: bytes) -> bytes:
    """What a seat publishes in the ceremony to bind itself to its secret: 32-byte
    BLAKE2b of frame("commit", game, seat, secret). Game and seat are in it so that a
    seat cannot copy another's commitment and later claim that seat's secret."""
    return hash_("commit", game, seat, check_secret(secret), size=32)


class ByteStream:
    """An unbounded stream of secret bytes: keyed(secret, name, *parts, t) for t = 0, 1,
    2, ... (64 bytes each), read in order."""

    def __init__(self, secret: bytes, name: str, *parts: Part) -> None:
        self._secret, self._name, self._parts = secret, name, parts
        self._block = b""
        self._used = 0
        self._t = 0

    def take(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            if self._used == len(self._block):
                self._block = keyed(self._secret, self._name, *self._parts, self._t)
                self._t += 1
                self._used = 0
            step = min(n - len(out), len(self._block) - self._used)
            out += self._block[self._used:self._used + step]
            self._used += step
        return bytes(out)

    def below(self, bound: int) -> int:
        """An unbiased integer in [0, bound): 8-byte little-endian draws, a draw at or above
        the largest multiple of bound below 2^64 is thrown away and another taken."""
        if not 0 < bound <= 2**32:
            raise DealError(f"a bound out of range: {bound}")
        limit = 2**64 - (2**64 % bound)
        while True:
            x = int.from_bytes(self.take(8), "little")
            if x < limit:
                return x % bound


def permutation(secret: bytes, game: bytes, round_no: int, pile: int, size: int) -> list[int]:
    """The seat's secret permutation of a pile of `size` cards: Fisher-Yates over
    [0, size) with the stream keyed(secret, "perm", game, round, pile, size, t): for i
    from size-1 down to 1, j = below(i+1), swap p[i] and p[j]. A pass puts input card
    p[i] at output place i."""
    stream = ByteStream(secret, "perm", game, round_no, pile, size)
    p = list(range(size))
    for i in range(size - 1, 0, -1):
        j = stream.below(i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def deal_key(secret: bytes, game: bytes) -> int:
    """x_s, the seat's part of the game's joint key (one per game: every pile of every
    round is encrypted to the same joint key, and shares of x_s*C1 for one card say
    nothing of another)."""
    return scalar(secret, "deal-key", game)


def rerandomizer(secret: bytes, game: bytes, round_no: int, pile: int, place: int) -> int:
    """r_{s,i}, the re-encryption scalar the seat adds at output place i of its shuffle."""
    return scalar(secret, "rerand", game, round_no, pile, place)


def is_permutation(p: Sequence[int], size: int) -> bool:
    return len(p) == size and sorted(p) == list(range(size))


__all__ = ["L", "frame", "hash_", "keyed", "scalar", "commitment", "permutation", "deal_key",
           "rerandomizer", "ByteStream", "check_secret", "SECRET_BYTES", "is_permutation"]
