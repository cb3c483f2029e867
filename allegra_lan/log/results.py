"""Signed round results and signed times (issue 13): what every seat signs at a round's end.

A log of this version (its genesis carries `started`) has, right after the move
that ends a round, one `result` event per seat, seats 0..n-1 in seat order,
before the next round's first decision: the round, the state hash after that
move, the round's scores and the totals per seat, and the signer's clock
(`at`). So a finished game carries a result every seat signed, and an organiser
needs no one's word for it; a seat whose engine disagrees signs a different
hash, which every other peer refuses: that signed event is the proof.

These are *owed events*: the table says which seat owes one and what it must
say, and the seat's peer writes it itself at once, never asking its player or
its bot (`Owed`). The fair deal's events (table.py, deal/ledger.py) are owed events too.

Times are milliseconds since the Unix epoch, UTC, as integers. They are each
signer's claim: a reader checks only that they lie in a sane range and that a
result's `at` is not before the genesis's `started` by more than CLOCK_SKEW
(clocks on a home network differ by seconds; a writer never claims a time
before `started`, see `Owed.body_at`).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

RESULT = "result"
MIN_TIME = 1_577_836_800_000  # 2020-01-01T00:00:00Z: no game of this version is older
MAX_TIME = 4_102_444_800_000  # 2100-01-01T00:00:00Z
CLOCK_SKEW = 300_000  # 5 minutes: how far a result's clock may lag the genesis's
MIN_SCORE = -(1 << 31)
MAX_SCORE = (1 << 31) - 1


@dataclass(frozen=True)
class Owed:
    """An event the table says seat `seat` owes now, which its peer writes at once without
    asking its player: `kind` and every field of the body but the signer's clock `at`
    (`body_at` adds it, never earlier than `not_before`, the game's start). A fair-deal
    event (`timed` False: keys, shares, secrets) carries no clock: its body is complete."""

    seat: int
    kind: str
    body: dict[str, Any] = field(default_factory=dict)
    not_before: int = MIN_TIME
    timed: bool = True

    def body_at(self, now_ms: int) -> dict[str, Any]:
        """The body to sign at the signer's clock `now_ms` (clamped into the sane range and
        to the game's start, so an honest peer with a slow clock is never refused)."""
        if not self.timed:
            return dict(self.body)
        at = min(MAX_TIME, max(int(now_ms), self.not_before, MIN_TIME))
        return {**self.body, "at": at}


@dataclass(frozen=True)
class RoundClaim:
    """What every seat must sign for one round: known to the table when the round ends."""

    round: int
    hash: bytes  # the engine's state hash after the round-ending move (16 bytes)
    scores: tuple[int, ...]
    totals: tuple[int, ...]

    def body(self) -> dict[str, Any]:
        return {"round": self.round, "hash": self.hash, "scores": list(self.scores),
                "totals": list(self.totals)}


def iso_time(ms: int | None) -> str:
    """`2026-12-02T06:30:14.123Z` (UTC), or `-` when unknown: how tools print a signed time."""
    if ms is None:
        return "-"
    t = datetime.datetime.fromtimestamp(ms // 1000, tz=datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def duration(ms: int | None) -> str:
    """A duration as people read it: `1 h 02 min 05 s`, `12 min 30 s`, `45 s`; `-` if unknown."""
    if ms is None or ms < 0:
        return "-"
    s = ms // 1000
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h} h {m:02d} min {sec:02d} s"
    if m:
        return f"{m} min {sec:02d} s"
    return f"{sec} s"
