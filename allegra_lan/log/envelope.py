"""The event envelope: `{v, game, seq, prev, author, kind, body}`, signed by its author.

The envelope is canonical msgpack with its keys in exactly that order. Its
author signs those exact bytes with Ed25519; the signed bytes (the 64-byte
signature, then the envelope) are what is stored and sent, and are never
re-encoded: verification reads them as they are. An event's id is
BLAKE2b-256 of its signed bytes, and `prev` is the id of the event before it
(32 zero bytes for the genesis at seq 0).
"""

from __future__ import annotations

from allegra_lan.blake import blake2b
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from .codec import CodecError, CodecTypeError, decode_map, encode

VERSION = 1
KEYS = ("v", "game", "seq", "prev", "author", "kind", "body")
MAX_EVENT = 16 * 1024  # bytes of one signed event
SIG_LEN = 64
GAME_ID_LEN = 16
ID_LEN = 32
KEY_LEN = 32
MAX_SEQ = (1 << 32) - 1
NO_PREV = bytes(ID_LEN)
_KIND = re.compile(r"[a-z][a-z0-9_]{0,31}")


class EventError(ValueError):
    """Bytes that are not a valid signed event; the message names the field or check."""


def event_id(signed: bytes) -> bytes:
    return blake2b(signed, digest_size=ID_LEN).digest()


@dataclass(frozen=True, slots=True)
class Event:
    """A decoded, signature-checked event and the exact bytes it came from."""

    v: int
    game: bytes
    seq: int
    prev: bytes
    author: bytes
    kind: str
    body: dict[str, Any]
    signed: bytes
    id: bytes

    def as_dict(self) -> dict[str, Any]:
        return {"v": self.v, "game": self.game, "seq": self.seq, "prev": self.prev,
                "author": self.author, "kind": self.kind, "body": self.body}


def _check_fields(env: Any) -> None:
    if not isinstance(env, dict) or tuple(env) != KEYS:
        raise EventError(f"the envelope must be a map of {', '.join(KEYS)} in that order")
    v = env["v"]
    if not isinstance(v, int) or isinstance(v, bool):
        raise EventError("field v must be an integer")
    if v != VERSION:
        raise EventError(f"unknown version {v} (this program reads version {VERSION})")

    def need_bytes(name: str, size: int) -> None:
        x = env[name]
        if not isinstance(x, bytes) or len(x) != size:
            raise EventError(f"field {name} must be {size} bytes")

    need_bytes("game", GAME_ID_LEN)
    need_bytes("prev", ID_LEN)
    need_bytes("author", KEY_LEN)
    seq = env["seq"]
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq <= MAX_SEQ:
        raise EventError("field seq must be an integer from 0 to 2^32-1")
    kind = env["kind"]
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise EventError("field kind must be a short lowercase name")
    if not isinstance(env["body"], dict):
        raise EventError("field body must be a map")


def sign_event(key: SigningKey, *, game: bytes, seq: int, prev: bytes, kind: str,
               body: dict[str, Any]) -> Event:
    """Encode, sign and return a new event by the holder of `key`."""
    env = {"v": VERSION, "game": game, "seq": seq, "prev": prev,
           "author": bytes(key.verify_key), "kind": kind, "body": body}
    _check_fields(env)
    try:
        message = encode(env, key_order=KEYS)
    except CodecError as e:
        raise EventError(f"body cannot be encoded: {e}") from None
    signed = bytes(key.sign(message))
    if len(signed) > MAX_EVENT:
        raise EventError(f"the event is {len(signed)} bytes, more than {MAX_EVENT}")
    return Event(VERSION, game, seq, prev, env["author"], kind, body, signed, event_id(signed))


@lru_cache(maxsize=256)
def _verify_key(author: bytes) -> VerifyKey:
    return VerifyKey(author)


_SIGNED: dict[tuple[bytes, bytes], bool] = {}  # (author, event id) -> the signature is good
_SIGNED_MAX = 8192


def _signed_by(author: bytes, signed: bytes, eid: bytes) -> bool:
    """Whether `signed` (whose id is `eid`) carries `author`'s signature over the rest.

    Good answers are remembered for the last 8192 events, by the author and the event's
    id (a BLAKE2b-256 of every byte, so a hit is the very same event, and an entry holds
    no event: a flood of large events costs no more than small ones): every copy of a
    game's log holds the same events, and `tournament check` reads one copy per seat; a
    simulated network decodes each event once per peer. An invalid key raises."""
    key = (author, eid)
    if key in _SIGNED:
        return True
    try:
        _verify_key(author).verify(signed)
    except BadSignatureError:
        return False
    if len(_SIGNED) >= _SIGNED_MAX:
        _SIGNED.clear()
    _SIGNED[key] = True
    return True


def decode_event(signed: bytes) -> Event:
    """Check and decode signed bytes; EventError names the first fault."""
    if not isinstance(signed, (bytes, bytearray)):
        raise EventError("an event is bytes")
    signed = bytes(signed)
    if len(signed) > MAX_EVENT:
        raise EventError(f"the event is {len(signed)} bytes, more than {MAX_EVENT}")
    if len(signed) <= SIG_LEN:
        raise EventError("too short to hold a signature and an envelope")
    message = signed[SIG_LEN:]
    try:
        env = decode_map(message, max_size=MAX_EVENT, key_order=KEYS)
    except CodecTypeError as e:
        raise EventError(f"the envelope must be a map of {', '.join(KEYS)} in that order, "
                         f"not {e.found}") from None
    except CodecError as e:
        raise EventError(f"envelope: {e}") from None
    _check_fields(env)
    eid = event_id(signed)
    try:
        good = _signed_by(env["author"], signed, eid)
    except Exception:
        raise EventError("field author is not a valid Ed25519 public key") from None
    if not good:
        raise EventError("bad signature: the event was not signed by its author or was changed")
    return Event(env["v"], env["game"], env["seq"], env["prev"], env["author"], env["kind"],
                 env["body"], signed, eid)
