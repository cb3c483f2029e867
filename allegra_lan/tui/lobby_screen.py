"""The network client's screens before the table: tables found, and the waiting room.

Pure functions of plain data (no sockets, no Application), drawn with the
table screen's pieces and style classes, so colour and NO_COLOR behave the
same, and tests read them as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .screen import MIN_HEIGHT, MIN_WIDTH, Line, fit, footer_lines, plain, wrap_words

MESSAGE_LINES = 3  # the most a message takes at the foot of these screens


@dataclass(frozen=True)
class TableRow:
    """One table seen on the network."""

    name: str
    variant: str  # its title: "ALLEGRA", "ALLEGRA Grande"
    taken: int
    seats: int
    pin: bool
    host: str  # the host's fingerprint


@dataclass(frozen=True)
class SeatRow:
    """One seat in the waiting room: who sits there and whether they are ready."""

    seat: int
    name: str | None  # None: free
    who: str  # "you", "your bot (greedy)", "bot (random) of <fingerprint>", or a fingerprint
    ready: bool
    connected: bool


@dataclass(frozen=True)
class Room:
    """The waiting room of one table."""

    table: str
    variant: str
    pin: bool
    host: str
    seats: tuple[SeatRow, ...]
    stage: str  # what is happening: "waiting for players", "seed ceremony: ..."


def _frame(title: str, body: list[Line], notes: Sequence[str], message: str, refused: bool,
           keys: Sequence[tuple[str, str]], width: int, height: int) -> list[Line]:
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        lines: list[Line] = [[("class:message.refused", f"The window is too small ({width}x{height}); "
                               f"make it at least {MIN_WIDTH}x{MIN_HEIGHT}.")]]
    else:
        foot = footer_lines(keys, width, 2)
        # A message is read whole (a refusal's reason is the point of it): wrapped, not cut.
        said_now = wrap_words(message, width)[:MESSAGE_LINES] if message else [""]
        room = height - 2 - len(foot) - len(said_now)  # title, blank, ..., message, footer
        said = [("class:label", n) for n in notes]
        lines = [[("class:title", title)], []] + body[:room]
        spare = room - len(body[:room])
        if spare > 1 and said:
            lines.append([])
            lines += [[s] for s in said[-(spare - 1):]]
        while len(lines) < height - len(foot) - len(said_now):
            lines.append([])
        lines += [[("class:message.refused" if refused else "class:message", text)] for text in said_now]
        lines += foot
    lines = lines[:height]
    while len(lines) < height:
        lines.append([])
    return [fit(line, width) for line in lines]


def browse_lines(rows: Sequence[TableRow], selected: int, interface: str, *, notes: Sequence[str] = (),
                 message: str = "", refused: bool = False, keys: Sequence[tuple[str, str]] = (),
                 width: int = 80, height: int = 24) -> list[Line]:
    """The tables seen on `interface` as they appear, change and vanish; one is selected."""
    head: Line = [("class:label", f"  {'table':<24} {'game':<15} {'seats':>5}  {'PIN':<3}  host")]
    body: list[Line] = [head]
    if not rows:
        body.append([("class:status", f"  looking for tables on {interface} ...")])
    for i, r in enumerate(rows):
        text = (f"{'>' if i == selected else ' '} {r.name:<24.24} {r.variant:<15} "
                f"{r.taken:>2}/{r.seats:<2}  {'yes' if r.pin else 'no':<3}  {r.host}")
        body.append([("class:cursor" if i == selected else "", text)])
    return _frame("ALLEGRA on the network: tables open now", body, notes, message, refused, keys,
                  width, height)


def room_lines(room: Room, *, notes: Sequence[str] = (), message: str = "", refused: bool = False,
               keys: Sequence[tuple[str, str]] = (), width: int = 80, height: int = 24) -> list[Line]:
    """Who sits where, who is ready, and what the table waits for."""
    pin = ", PIN" if room.pin else ""
    about = f"  {room.variant}, {len(room.seats)} seats{pin}, host {room.host}" if room.variant else ""
    body: list[Line] = [[("class:name", f"{room.table}"), ("", about)], []]
    for s in room.seats:
        if s.name is None:
            body.append([("class:label", f"  seat {s.seat}  (free)")])
            continue
        state = "ready" if s.ready else "not ready"
        link = "" if s.connected else "  (not connected)"
        body.append([("", f"  seat {s.seat}  "), ("class:you" if s.who == "you" else "class:name", f"{s.name:<16.16}"),
                     ("", f" {s.who:<28.28} "), ("class:status" if not s.ready else "", state), ("class:label", link)])
    body.append([])
    for text in wrap_words(room.stage, width - 2):
        body.append([("class:status", text)])
    return _frame(f"Table {room.table}" if room.table else "Joining a table", body, notes, message, refused, keys, width, height)


def lines_text(lines: Sequence[Line]) -> str:
    """Screen lines as plain text, trailing spaces stripped (tests read this)."""
    return "\n".join(plain(line).rstrip() for line in lines)


__all__ = ["TableRow", "SeatRow", "Room", "browse_lines", "room_lines", "lines_text"]
