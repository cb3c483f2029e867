"""The fair deal's cryptography, sans I/O (PROTOCOL.md, "Fair deal: the cryptography").

Mental poker on the Ed25519 group through libsodium: every card is an ElGamal ciphertext
under a joint key made of one part per seat; every seat in turn permutes and re-encrypts
the pile; a card opens with one decryption share from every seat, each proven to come
from its seat's key, in the clear (a private reveal simply leaves out the peeker's
share). Every key, permutation and proof derives from one per-game secret per seat,
committed at the start, escrowed with the other seats, and published at the end so that
anyone can redo the whole deal and name a cheat. Nothing here touches a socket, a file
or the engine.
"""

from .cards import CardPoints, Pile, card_point
from .derive import commitment, deal_key, game_secret, permutation, rerandomizer
from .escrow import EscrowShare, check_release, combine, make_escrow, open_escrow, split
from .group import DealError, check_point, check_scalar
from .keys import SeatKeys, check_seat_keys, joint_key, seat_keys
from .passes import ShufflePass, check_card, check_shuffle, initial, redo_shuffle, shuffle_pass
from .reveal import Share, check_share, make_share, open_card, open_point
from .seal import box_keypair, seal, unseal
from .verdict import Fault
from .verify import PileRecord, SeatRecord, check_secrets, verify_escrow, verify_pile

__all__ = [
    "CardPoints", "Pile", "card_point", "commitment", "deal_key", "game_secret", "permutation", "rerandomizer",
    "EscrowShare", "check_release", "combine", "make_escrow", "open_escrow", "split",
    "DealError", "check_point", "check_scalar", "SeatKeys", "check_seat_keys", "joint_key", "seat_keys",
    "ShufflePass", "check_card", "check_shuffle", "initial", "redo_shuffle", "shuffle_pass",
    "Share", "check_share", "make_share", "open_card", "open_point", "box_keypair", "seal", "unseal",
    "Fault", "PileRecord", "SeatRecord", "check_secrets", "verify_escrow", "verify_pile",
]
