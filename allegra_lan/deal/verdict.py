"""What a check says when it refuses: a Fault names the seat, the step and the card.

Why a value, not an exception: the deal's checks run on hostile data from the log, and
the caller (the peer on arrival, `replay verify` at game end) must both refuse and say
who did it; a Fault is data it can write into notes and compare across peers.
"""

from __future__ import annotations

from dataclasses import dataclass

STEPS = ("key", "secret", "shuffle", "share", "escrow")


@dataclass(frozen=True)
class Fault:
    """Seat `seat` published something wrong at `step` (one of STEPS), on card place
    `card` of the pile where that applies (None for the whole message)."""

    seat: int
    step: str
    card: int | None
    reason: str

    def __str__(self) -> str:
        where = f", card {self.card}" if self.card is not None else ""
        return f"seat {self.seat}, {self.step}{where}: {self.reason}"
