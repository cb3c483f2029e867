"""The shuffle pass every seat makes over a pile: permute and re-encrypt.

A card is an ElGamal ciphertext under the joint key Y (keys.py): 64 bytes, C1 || C2, with
C1 = r*G and C2 = M + r*Y for the card point M. The pile starts public, card place j as
(G, M_j + Y) (r = 1). Seat by seat, seat 0 first, each seat puts input card p_s[i] at
output place i and re-encrypts it:

    out[i] = (in[p_s[i]].C1 + r_{s,i}*G,  in[p_s[i]].C2 + r_{s,i}*Y)

and publishes the list. The last seat's list is the deal: card id i of the engine is its
place i.

Why re-encryption and not the blueprint's commutative keys (k_s * every point): with one
key per seat multiplying every point, a linear relation between two points survives the
multiplication, so a seat that shuffles before an honest seat h could plant one (make
card b twice card a, destroying card b) and find both again after h's shuffle (the pair
X, 2X), learning where a card went: the coalition reads a card h's shuffle should have
hidden, and is caught only when the destroyed card opens or the game ends. Independent
randomness per card destroys every relation: telling (C, 2C + E(0)) from two unrelated
ciphertexts is DDH under h's part of the key. And the lock pass and its keys go away.
What re-encryption does not stop (nor did the commutative keys) is an active cheat
after h: a re-encrypted copy of a card, whose twin's value shows when one of them is
shown (PROTOCOL.md, "What is protected"); only a verifiable shuffle would.

Nobody can check a shuffle without the secret (that is what hides the order); on arrival
we check its shape: n ciphertexts of two valid points, no two equal. A tampered shuffle
(a card copied, a value swapped in) shows when a card opens to no card point or to one
already opened, and is named at game end by `redo_shuffle` from the published secret.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .cards import CardPoints, Pile
from .derive import permutation, rerandomizer
from .group import BASE, DealError, add, check_point, mul, mul_base
from .verdict import Fault

CARD_BYTES = 64


@dataclass(frozen=True)
class ShufflePass:
    """What a seat publishes for its shuffle: the permuted, re-encrypted cards."""

    seat: int
    cards: tuple[bytes, ...]


def initial(cards: CardPoints, joint: bytes) -> tuple[bytes, ...]:
    """The pile before any shuffle: card place j as (G, M_j + Y), public to all."""
    return tuple(BASE + add(m, joint) for m in cards.points)


def check_card(data: object, what: str) -> tuple[bytes, bytes]:
    """A ciphertext as its two checked points, or DealError."""
    if not isinstance(data, (bytes, bytearray)) or len(data) != CARD_BYTES:
        raise DealError(f"{what} is not {CARD_BYTES} bytes")
    return check_point(bytes(data[:32]), f"{what} (C1)"), check_point(bytes(data[32:]), f"{what} (C2)")


def shuffle_pass(secret: bytes, pile: Pile, seat: int, joint: bytes, inputs: Sequence[bytes]) -> ShufflePass:
    """Seat `seat`'s shuffle of `inputs` (the initial pile for seat 0, else the previous
    seat's shuffle) under joint key `joint`, from its secret."""
    if len(inputs) != pile.size:
        raise DealError(f"a pass over {len(inputs)} cards, the pile has {pile.size}")
    cards = [check_card(c, f"input card {i}") for i, c in enumerate(inputs)]
    perm = permutation(secret, pile.game, pile.round_no, pile.pile, pile.size)
    out = []
    for i in range(pile.size):
        r = rerandomizer(secret, pile.game, pile.round_no, pile.pile, i)
        c1, c2 = cards[perm[i]]
        out.append(add(c1, mul_base(r)) + add(c2, mul(r, joint)))
    return ShufflePass(seat, tuple(out))


def redo_shuffle(secret: bytes, pile: Pile, seat: int, joint: bytes, inputs: Sequence[bytes]) -> ShufflePass:
    """The shuffle the seat should have published; equal to what it did publish unless it
    cheated (game-end verification compares them)."""
    return shuffle_pass(secret, pile, seat, joint, inputs)


def check_shuffle(pile: Pile, msg: ShufflePass) -> Fault | None:
    """The checks on a shuffle's arrival, in order: n cards; each two valid points; no two
    equal (a card copied as it is). None when it passes; else the Fault of its seat."""
    if not isinstance(msg.cards, (tuple, list)) or len(msg.cards) != pile.size:
        return Fault(msg.seat, "shuffle", None, f"its shuffle is not a list of {pile.size} cards")
    seen: dict[bytes, int] = {}
    for i, c in enumerate(msg.cards):
        try:
            check_card(c, f"shuffled card {i}")
        except DealError as e:
            return Fault(msg.seat, "shuffle", i, str(e))
        c = bytes(c)
        if c in seen:
            return Fault(msg.seat, "shuffle", i, f"shuffled card {i} repeats card {seen[c]}")
        seen[c] = i
    return None


__all__ = ["ShufflePass", "CARD_BYTES", "initial", "check_card", "shuffle_pass", "redo_shuffle", "check_shuffle"]
