"""Deterministic sealed boxes, for the escrow of a seat's secret.

libsodium's sealed box (crypto_box_seal_open opens it) with the ephemeral key derived
from the sealer's secret instead of drawn at random: once the secret is published anyone
re-seals and compares byte for byte, so a wrong box is attributed at game end, and the
holder sees it at once (what is inside misses its commitment).

Sealed to whom: to the seat's per-game box key, B_s = X25519(keyed(secret, "box-key",
game)), published with the seat's commitment, not to its identity key. Why: an escrow
piece held by a seat that has itself left is still opened once that seat's own secret is
released from escrow, so two departures do not lock the deck.
"""

from __future__ import annotations

from allegra_lan.blake import blake2b
from typing import Sequence

import nacl.bindings as nb
import nacl.exceptions

from .derive import Part, check_secret, keyed
from .group import DealError

SEALED_BYTES = 32 + 16 + 32  # ephemeral key, MAC, a 32-byte message
BOX_KEY_BYTES = 32


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
    nonce = blake2b(epk + recipient, digest_size=24).digest()
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


__all__ = ["box_keypair", "seal", "unseal", "SEALED_BYTES"]
