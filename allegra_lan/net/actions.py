"""What a peer's protocol object asks its shell to do (net/peer/).

`Peer` decides; it never touches a socket, a clock or a file. Each of its
inputs (`connected`, `disconnected`, `handle`, `refused_frame`, `tick`, and
the person's commands) returns a list of these actions, in the order the
shell must carry them out. The order matters in one place: a `Persist` with
`sync=True` (a person's own move) is on disk before the `Send`s after it go
out, so a crash can never lose a move the others already hold (docs/
architecture.md, "What a crash loses"). Two shells carry them out: the trio
`Node` (net/node.py) and the simulator (allegra_lan/sim/).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from ..log.envelope import Event


@dataclass(frozen=True)
class Send:
    """Queue `msg` on the link to `peer` (dropped if there is none any more)."""

    peer: bytes
    msg: dict[str, Any]


@dataclass(frozen=True)
class Close:
    """Close the link to `peer`, saying `why` (the peer may connect again)."""

    peer: bytes
    why: str


@dataclass(frozen=True)
class Dial:
    """Open a connection to `peer` at host:port and expect that key in the handshake (None:
    the host we join, whose key we learn there). The shell then calls `Peer.connected`, or
    `Peer.dial_failed`; exactly one of them, for every Dial."""

    peer: bytes | None
    host: str
    port: int


@dataclass(frozen=True)
class Persist:
    """Append an accepted event to this game's replay; `sync`: fsync it before going on."""

    event: Event
    sync: bool


@dataclass(frozen=True)
class Rewrite:
    """A takeover replaced events our seats wrote alone: keep `superseded` beside the
    replay as evidence, and rewrite the replay as `events`."""

    events: tuple[bytes, ...]
    superseded: tuple[bytes, ...]


@dataclass(frozen=True)
class SaveSeats:
    """Write the .seats file (whole, private) before any event that needs it goes out."""

    data: bytes


@dataclass(frozen=True)
class KeepFork:
    """Keep the two events that prove a fork (DESIGN.md: keep both, show them, stop):
    `author` signed both, for `seq`. The game stops (a Done follows)."""

    seq: int
    author: bytes
    first: bytes
    second: bytes


@dataclass(frozen=True)
class KeepDisagreement:
    """Keep the signed result that proves a seat's engine disagrees with ours (`author`
    signed `event` for `seq`; `reason` names the seat and both state hashes). The game
    stops (a Done follows)."""

    seq: int
    author: bytes
    event: bytes
    reason: str


@dataclass(frozen=True)
class Note:
    """A line for the person (already one line: a note may quote what a peer sent)."""

    text: str


@dataclass(frozen=True)
class Timer:
    """Call `tick` again at `at` (seconds on the caller's clock) at the latest."""

    at: float


@dataclass(frozen=True)
class Changed:
    """Something the person may see changed (the table, the lobby, a knock, a fault)."""


@dataclass(frozen=True)
class Done:
    """The game is over for this peer: `stopped` says why it ended early (None: it ended)."""

    stopped: str | None


Action = Union[Send, Close, Dial, Persist, Rewrite, SaveSeats, KeepFork, KeepDisagreement, Note, Timer,
               Changed, Done]

__all__ = ["Action", "Send", "Close", "Dial", "Persist", "Rewrite", "SaveSeats", "KeepFork",
           "KeepDisagreement", "Note",
           "Timer", "Changed", "Done"]
