"""ALLEGRA knocks: a seat's signed wish for the card just drawn, sent off the log.

A knock names the game and the id of the deck-draw event it answers. The
active player's `give` event carries the chosen knock, signature included, so
the log still has exactly one author per seq while anyone can check that the
receiver really knocked for that very draw.
"""

from __future__ import annotations

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from .codec import CodecError, decode_map, encode

KNOCK_KEYS = ("knock", "game", "draw")
MAX_KNOCK = 200
SIG_LEN = 64


class KnockError(ValueError):
    """A knock that does not prove what it must."""


def sign_knock(key: SigningKey, game: bytes, draw_id: bytes, knock: bool = True) -> bytes:
    """The signed answer to a draw (64-byte signature, then the canonical message):
    `knock: 1` to knock, `knock: 0` to pass. Only a knock can be carried by a give."""
    message = encode({"knock": int(knock), "game": game, "draw": draw_id}, key_order=KNOCK_KEYS)
    return bytes(key.sign(message))


def read_answer(signed: object, *, key: bytes, game: bytes, draw_id: bytes,
                what: str = "answer", signer: str = "the seat it speaks for") -> bool:
    """Whether `key`'s signed answer to that draw is a knock (True) or a pass (False).

    Total: anything else is a KnockError naming what is wrong, checked in the order
    of cost (length, shape, game and draw, then the signature), so any peer may relay
    answers without being trusted and no input reaches code that assumes a shape."""
    if not isinstance(signed, bytes) or not SIG_LEN < len(signed) <= MAX_KNOCK:
        raise KnockError(f"the {what} is not a signed knock message "
                         f"(bytes of {SIG_LEN + 1} to {MAX_KNOCK})")
    try:
        msg = decode_map(signed[SIG_LEN:], max_size=MAX_KNOCK, key_order=KNOCK_KEYS)
    except CodecError as e:
        raise KnockError(f"the {what} is malformed: {e}") from None
    value = msg["knock"]
    if type(value) is not int or value not in (0, 1):
        raise KnockError(f"the {what} is malformed: field knock must be the integer 0 or 1")
    if type(msg["game"]) is not bytes or msg["game"] != game:
        raise KnockError(f"the {what} is for another game")
    if type(msg["draw"]) is not bytes or msg["draw"] != draw_id:
        raise KnockError(f"the {what} answers another draw")
    try:
        VerifyKey(key).verify(signed)
    except (BadSignatureError, ValueError, TypeError):
        raise KnockError(f"the {what} is not signed by {signer}") from None
    return value == 1


def check_answer(signed: object, *, key: bytes, game: bytes, draw_id: bytes) -> bool:
    """Whether `key`'s signed answer to that draw is a knock (True) or a pass (False);
    KnockError if it is neither."""
    return read_answer(signed, key=key, game=game, draw_id=draw_id)


def check_knock(signed: object, *, key: bytes, game: bytes, draw_id: bytes) -> None:
    """Raise KnockError unless `signed` is `key`'s knock (not a pass) for that draw."""
    if not read_answer(signed, key=key, game=game, draw_id=draw_id, what="knock",
                       signer="the seat that receives the card"):
        raise KnockError("the knock is a pass: only a knock can be carried by a give")
