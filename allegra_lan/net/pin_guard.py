"""How many wrong PINs a table lets through: at most `limit` in any `window` seconds.

A PAKE (net/cpace.py) leaves an attacker one guess per handshake and no
offline work; what remains is to make those online guesses few. A 4-digit
PIN has 10,000 values: at 5 wrong guesses a minute, trying half of them
takes about 17 hours of joins paused for everyone, which the players at the
table are told about, so an attack is loud long before it can succeed.

The guard is pure: every method takes the time `now` (seconds, any
monotonic clock) as an argument, so tests move time by hand instead of
sleeping. It holds at most `limit` timestamps and addresses, whatever an
attacker sends.

A guess counts when its key confirmation has been checked (`failed`); the
handshake asks `wait` twice: before any PAKE work (a paused table spends no
CPU on a stranger) and again right before it checks a confirmation, so that
many handshakes started at once, before the limit was reached, cannot each
learn whether their guess was right: past the limit the answer is "paused",
whatever the guess.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

PIN_LIMIT = 5  # wrong PINs ...
PIN_WINDOW = 60.0  # ... in this many seconds


@dataclass
class PinGuard:
    """The wrong PINs of the last window at one table, and whether joins are paused."""

    limit: int = PIN_LIMIT
    window: float = PIN_WINDOW
    failures: deque[tuple[float, str]] = field(default_factory=deque)
    what: str = "wrong PINs from"  # the notice: "5 wrong PINs from ADDR in the last minute: ..."
    paused: str = "joins are paused for {wait} s"
    noticed_at: float | None = None  # when the players were last told of a pause
    notice: str | None = None  # what to tell them, until taken

    def __post_init__(self) -> None:
        if self.limit < 1 or not self.window > 0:
            raise ValueError("a PIN guard needs a limit of at least 1 and a positive window")

    def _prune(self, now: float) -> None:
        while self.failures and self.failures[0][0] <= now - self.window:
            self.failures.popleft()

    def wait(self, now: float) -> int:
        """Whole seconds until a guess may be checked again; 0 if one may be checked now."""
        self._prune(now)
        if len(self.failures) < self.limit:
            return 0
        oldest = self.failures[len(self.failures) - self.limit][0]
        return max(1, math.ceil(oldest + self.window - now))

    def failed(self, now: float, source: str) -> None:
        """A wrong PIN from `source` (an address). When it reaches the limit, a notice is
        kept for the players (at most one a window, so a steady attack is not a flood)."""
        self._prune(now)
        self.failures.append((now, source))
        while len(self.failures) > self.limit:
            self.failures.popleft()
        if len(self.failures) >= self.limit and (self.noticed_at is None or
                                                  now - self.noticed_at >= self.window):
            self.noticed_at = now
            sources = ", ".join(dict.fromkeys(s for _, s in self.failures))
            span = "minute" if self.window == 60 else f"{self.window:g} s"
            self.notice = (f"{len(self.failures)} {self.what} {sources} in the last {span}: "
                           + self.paused.format(wait=self.wait(now)))

    def take_notice(self) -> str | None:
        """The pending notice for the players, once."""
        notice, self.notice = self.notice, None
        return notice
