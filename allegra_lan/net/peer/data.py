"""What a peer keeps besides its log: its seats, its links, a join in progress, its notes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...bots.registry import make_bot
from ...log.identity import Identity
from . import config

Entropy = Callable[[int], bytes]


class JoinError(Exception):
    """Joining failed; the message is one line for the player. `code` is the handshake
    refusal's code (net/handshake.py REFUSAL_CODES) when the table refused our handshake, so a
    client can say what to do without reading the words."""

    def __init__(self, why: str, *, code: str | None = None) -> None:
        super().__init__(why)
        self.code = code


class ResumeError(Exception):
    """A game that cannot be resumed from this file; the message says why."""


@dataclass(frozen=True)
class SeatSpec:
    """A seat a process will play: the player's name, and a bot's name (its key is made
    here) or None for the person at this process's terminal (who plays with its own key,
    and says when they are ready)."""

    name: str
    bot: str | None


@dataclass
class SeatPlayer:
    """A seat this peer writes for: its key, its bot's name (None: the person at this
    peer's terminal client decides), and its seed nonce for the ceremony."""

    seat: int
    identity: Identity
    bot: str | None
    nonce: bytes


@dataclass
class LinkState:
    """What the protocol knows of one authenticated connection."""

    dialled_by: bytes  # the key of the side that opened the connection
    # Where the connection comes from (the socket's peer address): the host seats a guest
    # at this IP, never at one the guest names (a stranger could name any).
    remote: tuple[str, int] | None
    heard: float  # when its last frame arrived (or the link opened)
    pinged: float
    spoke: bool = False  # whether any frame came yet
    faults: int = 0  # messages of this connection we refused
    allowance: float = config.BURST  # a token bucket: no peer floods us
    last: float = 0.0
    closing: bool = False  # a Close was asked for: nothing more from it is read


@dataclass
class Joining:
    """A guest (or a watcher) on its way to a table: the host's address, the seats it asks
    for, and how far it got."""

    host: tuple[str, int]
    claims: list[tuple[SeatSpec, Identity]]
    want_seat: int | None
    watch: bool
    dialled: float | None = None
    requested: bool = False


class Recent(list[str]):
    """A list that keeps only its last `cap` items: what peers can make us note (refusals)
    must not grow without end, while the players still read the latest."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap

    def append(self, item: str) -> None:
        super().append(item)
        if len(self) > self.cap:
            del self[: len(self) - self.cap]


def bot_name(name: str | None) -> str | None:
    """A bot's name, checked (UnknownBot lists the names there are), or None: a person."""
    if name is not None:
        make_bot(name, bytes(32))
    return name
