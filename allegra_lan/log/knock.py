"""ALLEGRA knocks: a seat's signed wish for the card just drawn, sent off the log.

A knock names the game and the id of the deck-draw event it answers. The
active player's `give` event carries the chosen knock, signature included, so
the log still has exactly one author per seq while anyone can check that the
receiver really knocked for that very draw.
"""

from __future__ import annotations

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from .codec import CodecError, decode, encode

KNOCK_KEYS = ("knock", "game", "draw")
MAX_KNOCK = 200


class KnockError(ValueError):
    """A knock that does not prove what it must."""


def sign_knock(key: SigningKey, game: bytes, draw_id: bytes, knock: bool = True) -> bytes:
    """The signed answer to a draw (64-byte signature, then the canonical message):
    `knock: 1` to knock, `knock: 0` to pass. Only a knock can be carried by a give."""
    message = encode({"knock": int(knock), "game": game, "draw": draw_id}, key_order=KNOCK_KEYS)
    return bytes(key.sign(message))


def check_answer(signed: bytes, *, key: bytes, game: bytes, draw_id: bytes) -> bool:
    """Whether `key`'s signed answer to that draw is a knock (True) or a pass (False);
    KnockError if it is neither, so any peer may relay answers without being trusted."""
    if not isinstance(signed, bytes) or not 64 < len(signed) <= MAX_KNOCK:
        raise KnockError("the answer is not a signed knock message")
    try:
        msg = decode(signed[64:], max_size=MAX_KNOCK, key_order=KNOCK_KEYS)
    except CodecError as e:
        raise KnockError(f"the answer is malformed: {e}") from None
    if type(msg.get("knock")) is not int or msg["knock"] not in (0, 1) or msg.get("game") != game:
        raise KnockError("the answer is for another game or malformed")
    if msg.get("draw") != draw_id:
        raise KnockError("the answer is for another draw")
    try:
        VerifyKey(key).verify(signed)
    except BadSignatureError:
        raise KnockError("the answer is not signed by the seat it speaks for") from None
    return msg["knock"] == 1


def check_knock(signed: bytes, *, key: bytes, game: bytes, draw_id: bytes) -> None:
    """Raise KnockError unless `signed` is `key`'s knock for that draw of that game."""
    if not isinstance(signed, bytes) or not 64 < len(signed) <= MAX_KNOCK:
        raise KnockError("the knock is not a signed knock message")
    try:
        msg = decode(signed[64:], max_size=MAX_KNOCK, key_order=KNOCK_KEYS)
    except CodecError as e:
        raise KnockError(f"the knock is malformed: {e}") from None
    if type(msg.get("knock")) is not int or msg["knock"] != 1 or msg.get("game") != game:
        raise KnockError("the knock is for another game")
    if msg.get("draw") != draw_id:
        raise KnockError("the knock answers another draw")
    try:
        VerifyKey(key).verify(signed)
    except BadSignatureError:
        raise KnockError("the knock is not signed by the seat that receives the card") from None
