"""The `.seats` file beside a networked game's replay, read back as hostile as a frame.

`node.save_seats` writes what `allegra resume` needs (the lobby, this peer's
node key, its seats' keys, bots and nonces, its port and PIN). A file on disk
can be cut short, flipped or replaced, so it is read like a peer's message:
bounded in size, decoded canonically, then checked against one schema
(`check_seats`) field by field before anything uses it. Whatever is wrong is
one SeatsFileError line naming the file and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bots.registry import bot_names
from ..files import FileRefused, read_regular
from ..log.codec import CodecError, decode
from .lobby import Lobby

MAX_SEATS_FILE = 1 << 20  # bytes; a real one is a few KiB
KEY_LEN = 32  # an Ed25519 seed
NONCE_LEN = 32  # the seed ceremony's nonce
MAX_PIN = 64
FIELDS = ("lobby", "node", "pin", "port", "seats")


class SeatsFileError(ValueError):
    """A `.seats` file that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class StoredSeat:
    """One seat this peer played: its number, its key's seed, its bot ("" a person), its nonce."""

    seat: int
    seed: bytes
    bot: str
    nonce: bytes


@dataclass(frozen=True)
class SeatsFile:
    lobby: Lobby
    node: bytes  # this peer's node key seed
    pin: str | None
    port: int
    seats: tuple[StoredSeat, ...]


def _int(v: Any) -> bool:
    return type(v) is int


def check_seats(data: Any) -> SeatsFile:
    """The schema of a decoded `.seats` value; SeatsFileError (without the file's name) names
    the first field that is missing, of the wrong type, or out of range."""
    if type(data) is not dict:
        raise SeatsFileError(f"not a map but {type(data).__name__}")
    missing = [k for k in FIELDS if k not in data]
    if missing:
        raise SeatsFileError(f"no {missing[0]} field")
    extra = sorted(str(k) for k in data if k not in FIELDS)
    if extra:
        raise SeatsFileError(f"an unknown field {extra[0]!r}")
    node, pin, port, seats = data["node"], data["pin"], data["port"], data["seats"]
    if type(node) is not bytes or len(node) != KEY_LEN:
        raise SeatsFileError(f"node must be a {KEY_LEN}-byte key")
    if type(pin) is not str or len(pin) > MAX_PIN:
        raise SeatsFileError(f"pin must be text of at most {MAX_PIN} characters")
    if not _int(port) or not 0 <= port <= 65535:
        raise SeatsFileError("port must be a number from 0 to 65535")
    try:
        lobby = Lobby.from_msg(data["lobby"])
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        # LobbyError and RulesetError are ValueErrors; the rest is a belt for a lobby
        # reader that meets a shape it did not foresee.
        raise SeatsFileError(f"the lobby is malformed ({e})") from None
    if type(seats) is not list or len(seats) > lobby.seats:
        raise SeatsFileError(f"seats must be a list of at most {lobby.seats} seats")
    out: list[StoredSeat] = []
    for i, s in enumerate(seats):
        if type(s) is not list or len(s) != 4:
            raise SeatsFileError(f"seat entry {i} must be [seat, key, bot, nonce]")
        seat, seed, bot, nonce = s
        if not _int(seat) or not 0 <= seat < lobby.seats:
            raise SeatsFileError(f"seat entry {i}: the seat must be 0 to {lobby.seats - 1}")
        if any(o.seat == seat for o in out):
            raise SeatsFileError(f"seat entry {i}: seat {seat} appears twice")
        if type(seed) is not bytes or len(seed) != KEY_LEN:
            raise SeatsFileError(f"seat entry {i}: the key must be {KEY_LEN} bytes")
        if type(bot) is not str or (bot and bot not in bot_names()):
            raise SeatsFileError(f"seat entry {i}: the bot must be \"\" (a person) or one of "
                                 f"{', '.join(bot_names())}")
        if type(nonce) is not bytes or len(nonce) != NONCE_LEN:
            raise SeatsFileError(f"seat entry {i}: the nonce must be {NONCE_LEN} bytes")
        out.append(StoredSeat(seat, seed, bot, nonce))
    return SeatsFile(lobby, node, pin or None, port, tuple(out))


def read_seats(path: Path) -> SeatsFile:
    """Read and check a `.seats` file; SeatsFileError (one line naming the file) for anything
    wrong, a missing file included."""
    try:
        raw = read_regular(path, MAX_SEATS_FILE, what="seats file")
    except FileRefused as e:
        raise SeatsFileError(f"{e} (only the peer that played the game can resume it)") from None
    try:
        data = decode(raw, max_size=MAX_SEATS_FILE)
    except CodecError as e:
        raise SeatsFileError(f"{path}: not a seats file ({e})") from None
    try:
        return check_seats(data)
    except SeatsFileError as e:
        raise SeatsFileError(f"{path}: not a seats file: {e}") from None


__all__ = ["SeatsFile", "StoredSeat", "SeatsFileError", "check_seats", "read_seats"]
