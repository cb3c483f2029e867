"""Reveals: a card opens with one share k_{s,i} from every seat.

Public reveal (a turn-up, a draw, the round's end): each seat publishes its share k_{s,i}
with a proof (dleq.py) that it is the key its lock put on the card: with X the card as
the seat's lock received it and Y as it published it, W = k_{s,i}^-1 * Y and the proof
shows X = k_s * W under the seat's published K_s. Anyone checks it the moment it
arrives. With every seat's share, `open_card` computes M = (prod_s k_{s,i})^-1 * C_i
and looks it up among the pile's card points.

Private reveal (Grande's peeks): each other seat publishes W and the proof (they tell
nothing: every public point still carries the peeker's own key) and its share k_{s,i}
sealed to the peeker, who alone can open the card: it checks k_{s,i} * W == Y. The
sealing is libsodium's sealed box (crypto_box_seal_open opens it) with the ephemeral
key derived from the sealer's secret instead of drawn at random, so once the secret is
published anyone re-seals and compares byte for byte: a wrong sealed share is
attributed at game end, and the peeker sees it at once.

Sealed to whom: to the seat's per-game box key, B_s = X25519(keyed(secret, "box-key",
game)), published with the seat's commitment, not to its identity key. Why: a seat that
is taken over has its secret released from escrow, and the bot that takes it must know
what the seat had peeked; and an escrow share held by a seat that has itself left is
still opened once that seat's secret is released (two departures do not lock the deck).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import nacl.bindings as nb
import nacl.exceptions

from .cards import CardPoints, Pile
from . import dleq
from .derive import Part, check_secret, keyed, lock_key, shuffle_key
from .group import L, DealError, check_point, check_scalar, inverse, mul, mul_base, sc

SEALED_BYTES = 32 + 16 + 32  # ephemeral key, MAC, 32-byte message
BOX_KEY_BYTES = 32


@dataclass(frozen=True)
class Reveal:
    """A public share: seat `seat`'s key on card place `card`, with its proof."""

    seat: int
    card: int
    share: bytes
    proof: bytes


@dataclass(frozen=True)
class PrivateReveal:
    """A share for peeker `peeker`: W and the proof in the clear, the share sealed."""

    seat: int
    card: int
    peeker: int
    point: bytes
    proof: bytes
    sealed: bytes


def share(secret: bytes, pile: Pile, card: int) -> bytes:
    """The seat's share of card place `card`: k_{s,i} as a 32-byte scalar."""
    return sc(lock_key(secret, pile.game, pile.round_no, pile.pile, card))


def _w_and_proof(secret: bytes, pile: Pile, seat: int, card: int, x: bytes, y: bytes) -> tuple[bytes, bytes]:
    k = shuffle_key(secret, pile.game, pile.round_no, pile.pile)
    w = mul(inverse(lock_key(secret, pile.game, pile.round_no, pile.pile, card)), check_point(y, "a locked card"))
    return w, dleq.prove(secret, pile, seat, card, k, mul_base(k), w, check_point(x, "a card before the lock"))


def public_reveal(secret: bytes, pile: Pile, seat: int, card: int, x: bytes, y: bytes) -> Reveal:
    """Seat `seat`'s public share of card place `card`; x and y are the card before and
    after the seat's lock (as published)."""
    return Reveal(seat, card, share(secret, pile, card), _w_and_proof(secret, pile, seat, card, x, y)[1])


def check_reveal(pile: Pile, msg: Reveal, shuffle_key_point: bytes, x: bytes, y: bytes) -> int:
    """The share as a scalar, or DealError: canonical and nonzero, then the proof that it
    is the key the seat's lock put on the card (K_s, x and y already checked points)."""
    k = check_scalar(msg.share, "a share", nonzero=True)
    w = mul(inverse(k), y)
    if not dleq.verify(msg.proof, pile, msg.seat, msg.card, shuffle_key_point, w, x):
        raise DealError(f"the share of seat {msg.seat} for card {msg.card} fails its proof")
    return k


def private_reveal(secret: bytes, pile: Pile, seat: int, card: int, x: bytes, y: bytes, peeker: int,
                   peeker_box: bytes) -> PrivateReveal:
    """Seat `seat`'s share of card place `card` for seat `peeker` (box key `peeker_box`)."""
    w, proof = _w_and_proof(secret, pile, seat, card, x, y)
    return PrivateReveal(seat, card, peeker, w, proof, seal_share(secret, pile, seat, card, peeker, peeker_box))


def check_private_reveal(pile: Pile, msg: PrivateReveal, shuffle_key_point: bytes, x: bytes) -> None:
    """What every peer checks on arrival (DealError if not): W a valid point, the proof
    good, the sealed share of the right length. Only the peeker can check the share."""
    w = check_point(msg.point, "the point W of a private share")
    if not dleq.verify(msg.proof, pile, msg.seat, msg.card, shuffle_key_point, w, x):
        raise DealError(f"the private share of seat {msg.seat} for card {msg.card} fails its proof")
    if not isinstance(msg.sealed, bytes) or len(msg.sealed) != SEALED_BYTES:
        raise DealError(f"the sealed share of seat {msg.seat} for card {msg.card} is not {SEALED_BYTES} bytes")


def open_private_reveal(msg: PrivateReveal, box_sk: bytes, box_pk: bytes, y: bytes) -> int:
    """The peeker's side, after check_private_reveal: the share inside, or DealError (the
    sealer's fault) when the box does not open or k * W != y."""
    k = check_scalar(unseal(msg.sealed, box_sk, box_pk), "a sealed share", nonzero=True)
    if mul(k, msg.point) != y:
        raise DealError(f"the sealed share of seat {msg.seat} for card {msg.card} is not its key on the card")
    return k


def open_point(point: bytes, shares: Sequence[int]) -> bytes:
    """(prod shares)^-1 * point: the card point under every seat's key removed."""
    product = 1
    for k in shares:
        product = product * k % L
    return mul(inverse(product), check_point(point, "a locked card"))


def open_card(point: bytes, shares: Sequence[int], cards: CardPoints) -> int | None:
    """The place j of the ruleset's list that card `point` shows once every seat's checked
    share is removed; None when it opens to no card point (a tampered shuffle)."""
    return cards.card_index(open_point(point, shares))


def box_keypair(secret: bytes, game: bytes) -> tuple[bytes, bytes]:
    """The seat's per-game X25519 box key pair (secret, public), from its secret."""
    sk = keyed(check_secret(secret), "box-key", game, size=32)
    return sk, nb.crypto_scalarmult_base(sk)


def seal(secret: bytes, context: Sequence[Part], recipient: bytes, message: bytes) -> bytes:
    """A sealed box of `message` to X25519 key `recipient`, deterministic from the sealer's
    secret: e = keyed(secret, "seal-key", *context, recipient, size 32), E = X25519(e),
    nonce = BLAKE2b-192(E || recipient), out = E || crypto_box(message, nonce, recipient, e)
    (the layout of libsodium's crypto_box_seal). `context` names the one message this key
    ever seals, so an ephemeral key never seals two different messages."""
    if not isinstance(recipient, bytes) or len(recipient) != BOX_KEY_BYTES:
        raise DealError("a box key is not 32 bytes")
    esk = keyed(check_secret(secret), "seal-key", *context, recipient, size=32)
    epk = nb.crypto_scalarmult_base(esk)
    nonce = hashlib.blake2b(epk + recipient, digest_size=24).digest()
    try:
        return epk + nb.crypto_box(message, nonce, recipient, esk)
    except nacl.exceptions.CryptoError as e:
        raise DealError("a box key is not a usable X25519 key") from e


def unseal(sealed: object, box_sk: bytes, box_pk: bytes) -> bytes:
    """The 32-byte message of a sealed box to (box_sk, box_pk), or DealError."""
    if not isinstance(sealed, (bytes, bytearray)) or len(sealed) != SEALED_BYTES:
        raise DealError(f"a sealed box is not {SEALED_BYTES} bytes")
    try:
        return nb.crypto_box_seal_open(bytes(sealed), box_pk, box_sk)
    except nacl.exceptions.CryptoError as e:
        raise DealError("a sealed box does not open with this seat's box key") from e


def share_context(pile: Pile, seat: int, card: int, peeker: int) -> tuple[Part, ...]:
    return ("share".encode("ascii"), pile.game, pile.round_no, pile.pile, seat, card, peeker)


def seal_share(secret: bytes, pile: Pile, seat: int, card: int, peeker: int, peeker_box: bytes) -> bytes:
    """Seat `seat`'s share of card `card`, sealed to seat `peeker`'s box key."""
    return seal(secret, share_context(pile, seat, card, peeker), peeker_box, share(secret, pile, card))


__all__ = ["Reveal", "PrivateReveal", "share", "public_reveal", "check_reveal", "private_reveal",
           "check_private_reveal", "open_private_reveal", "open_point", "open_card", "box_keypair", "seal",
           "unseal", "seal_share", "share_context", "SEALED_BYTES"]
