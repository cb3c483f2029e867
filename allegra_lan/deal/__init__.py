"""The fair deal's cryptography, sans I/O (PROTOCOL.md, "Fair deal: the cryptography").

Mental poker on the Ed25519 group through libsodium: every seat shuffles the pile's card
points under a round key, then locks each card under a key of its own; a card opens
with one share from every seat, each proven to be the key its seat put there, in the
clear or sealed to a peeker; every key derives from one per-game secret per seat, committed at the start, escrowed with the
other seats, and published at the end so that anyone can redo the whole deal and name a
cheat. Nothing here touches a socket, a file or the engine.
"""

from .cards import CardPoints, Pile, card_point
from .derive import commitment, lock_key, permutation, shuffle_key
from .escrow import EscrowShare, check_release, combine, make_escrow, open_escrow, split
from .group import DealError, check_point, check_scalar
from .passes import LockPass, ShufflePass, check_lock, check_shuffle, lock_pass, redo_shuffle, shuffle_pass
from .reveal import (PrivateReveal, Reveal, box_keypair, check_private_reveal, check_reveal, open_card,
                     open_private_reveal, private_reveal, public_reveal, share)
from .verdict import Fault
from .verify import PileRecord, SeatRecord, check_secrets, verify_escrow, verify_pile

__all__ = [
    "CardPoints", "Pile", "card_point", "commitment", "lock_key", "permutation", "shuffle_key",
    "EscrowShare", "check_release", "combine", "make_escrow", "open_escrow", "split",
    "DealError", "check_point", "check_scalar", "LockPass", "ShufflePass", "check_lock",
    "check_shuffle", "lock_pass", "redo_shuffle", "shuffle_pass", "PrivateReveal", "Reveal", "box_keypair",
    "check_private_reveal", "check_reveal", "open_card", "open_private_reveal", "private_reveal",
    "public_reveal", "share", "Fault", "PileRecord", "SeatRecord", "check_secrets", "verify_escrow", "verify_pile",
]
