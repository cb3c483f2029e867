"""Escrow: a seat's secret split among the other seats, so that a seat that leaves for
good does not lock the deck.

XOR shares, one per other seat, all needed: the secret comes back only when every other
seat hands in its share, which is the same unanimous consent that hands the seat to a bot
(no smaller coalition learns anything: any n-1 shares are uniform). Each share is
published sealed to its holder (`seal.seal`, deterministic, so re-sealing at game end
attributes a bad one) with a public commitment to it, so that
- the holder checks its share the moment it arrives (it opens and matches),
- a share handed in at a takeover is checked against its commitment at once (a wrong one
  is the holder's fault), and
- shares that all match but combine to a secret that misses the seat's commitment are the
  dealer's fault.

    r_h    = keyed(secret, "escrow-share", game, dealer, h, size 32) for every holder but the last
    r_last = secret XOR every other r_h
    c_h    = BLAKE2b-256(frame("escrow-commit", game, dealer, h, r_h))
    sealed = seal(secret, ("escrow", game, dealer, h), box key of h, r_h)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .derive import check_secret, commitment, hash_, keyed
from .group import DealError
from .seal import seal, unseal
from .verdict import Fault


@dataclass(frozen=True)
class EscrowShare:
    """What the dealer publishes for holder `holder`: the commitment and the sealed share."""

    dealer: int
    holder: int
    commitment: bytes
    sealed: bytes


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def split(secret: bytes, game: bytes, dealer: int, holders: Sequence[int]) -> dict[int, bytes]:
    """The XOR shares of the dealer's secret, one per holder (in the order given)."""
    secret = check_secret(secret)
    if not holders or len(set(holders)) != len(holders) or dealer in holders:
        raise DealError("escrow holders are not distinct other seats")
    out: dict[int, bytes] = {}
    rest = secret
    for h in holders[:-1]:
        out[h] = keyed(secret, "escrow-share", game, dealer, h, size=32)
        rest = _xor(rest, out[h])
    out[holders[-1]] = rest
    return out


def share_commitment(game: bytes, dealer: int, holder: int, piece: bytes) -> bytes:
    return hash_("escrow-commit", game, dealer, holder, piece, size=32)


def make_escrow(secret: bytes, game: bytes, dealer: int, holders: Mapping[int, bytes]) -> tuple[EscrowShare, ...]:
    """The dealer's escrow: for each holder seat (ascending), its commitment and sealed share;
    `holders` maps each other seat to its box key."""
    seats = sorted(holders)
    pieces = split(secret, game, dealer, seats)
    return tuple(EscrowShare(dealer, h, share_commitment(game, dealer, h, pieces[h]),
                             seal(secret, (b"escrow", game, dealer, h), holders[h], pieces[h]))
                 for h in seats)


def open_escrow(game: bytes, item: EscrowShare, box_sk: bytes, box_pk: bytes) -> bytes:
    """The holder's side: its share, opened and checked against the commitment, or
    DealError (the dealer's fault)."""
    piece = unseal(item.sealed, box_sk, box_pk)
    if share_commitment(game, item.dealer, item.holder, piece) != item.commitment:
        raise DealError(f"the escrow share of seat {item.dealer} for seat {item.holder} misses its commitment")
    return piece


def check_release(game: bytes, item: EscrowShare, piece: object) -> Fault | None:
    """A share handed in at a takeover: a Fault of the holder when it misses its commitment."""
    if not isinstance(piece, bytes) or len(piece) != 32:
        return Fault(item.holder, "escrow", None, "a released escrow share is not 32 bytes")
    if share_commitment(game, item.dealer, item.holder, piece) != item.commitment:
        return Fault(item.holder, "escrow", None, f"the released share for seat {item.dealer} misses its commitment")
    return None


def combine(game: bytes, dealer: int, pieces: Sequence[bytes], secret_commitment: bytes) -> bytes | Fault:
    """The dealer's secret from every holder's checked share, or a Fault of the dealer when
    it misses the commitment made in the ceremony."""
    if not pieces:
        return Fault(dealer, "escrow", None, "no escrow shares to combine")
    secret = bytes(32)
    for p in pieces:
        secret = _xor(secret, p)
    if commitment(game, dealer, secret) != secret_commitment:
        return Fault(dealer, "escrow", None, "the escrow shares combine to a secret that misses the commitment")
    return secret


__all__ = ["EscrowShare", "split", "share_commitment", "make_escrow", "open_escrow", "check_release", "combine"]
