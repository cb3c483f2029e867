"""The review of a replay: at each decision of one seat, the move taken and the bot's choice.

`allegra replay view FILE --review [--seat N] [--bot NAME]` steps through a game
as the viewer does and, at every move seat N made, asks the hint (bots/hint.py)
what the bot would have done from the view seat N had just before that move:
the same view, the same offered moves, so the bot knows no card the player
did not. A log records only the knock that was answered with a Give (R16), so
at a knock the bot is offered the Give the player made and nothing about the
other seats' knocks: it is judged on the moves the log can show were on offer.

Verdicts are worked out one decision at a time (`judge`), so the Application
can fill them in off its event loop while the person already steps through
the game; `complete` does them all at once for a caller without a loop.
Pure: no I/O; the stepper has read the file already.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from allegra_lan.bots.hint import HINT_BOT, Hint, as_good, hint, move_words
from allegra_lan.rules import Give, Move, legal_moves, view

from .stepper import Position, Stepper


@dataclass(frozen=True)
class Verdict:
    """One decision of the reviewed seat: what it did and what the bot would have done."""

    index: int  # the position after the move taken
    taken: Move
    taken_words: str  # the move taken, in the hint's words
    bot: Hint  # its reason weighs the bot's move against the move taken
    behind: float  # points greedy's rating sees the move taken behind the bot's (0: same)

    @property
    def agreed(self) -> bool:
        return self.bot.move == self.taken

    @property
    def as_good(self) -> bool:
        """Another move, but one the rating cannot tell from the bot's (a tie)."""
        return not self.agreed and as_good(self.behind)

    def line(self) -> str:
        """`you: drew ...; bot: ... - reason`, one line (the screen wraps it)."""
        if self.agreed:
            return f"you and the bot: {self.taken_words} - {self.bot.reason}"
        if self.as_good:
            return f"you: {self.taken_words}; as good as the bot's {self.bot.words}"
        return f"you: {self.taken_words}; bot: {self.bot.text}"


class Review:
    """The reviewed seat's decisions in a stepper, and the bot's verdict on each."""

    def __init__(self, stepper: Stepper, seat: int, bot: str = HINT_BOT) -> None:
        self.stepper = stepper
        self.seat = seat
        self.bot = bot
        positions = stepper.positions
        self.decisions: tuple[int, ...] = tuple(
            p.index for p in positions if p.index > 0 and p.seat == seat and p.move is not None)
        self.verdicts: dict[int, Verdict] = {}

    def verdict_of(self, index: int) -> Verdict:
        """The verdict on the move that position `index` follows (a decision of the seat),
        worked out and not kept: a thread may call this while the loop reads `verdicts`."""
        p = self.stepper.positions[index]
        before = self.stepper.positions[index - 1].state
        assert p.move is not None and p.seat == self.seat
        seen = view(before, self.seat)
        offered = offered_then(before, p)
        bot = hint(seen, offered, bot=self.bot, against=p.move)
        return Verdict(index, p.move, move_words(seen, p.move), bot, bot.behind)

    def judge(self, index: int) -> Verdict:
        """The verdict on position `index`'s move, kept for the screen."""
        got = self.verdicts.get(index)
        if got is None:
            got = self.verdicts[index] = self.verdict_of(index)
        return got

    def pending(self) -> list[int]:
        """The decisions not judged yet, in game order."""
        return [i for i in self.decisions if i not in self.verdicts]

    def complete(self) -> None:
        for i in self.pending():
            self.judge(i)

    def at(self, index: int) -> Verdict | None:
        """The verdict on the move position `index` follows, if it is the seat's and judged."""
        return self.verdicts.get(index)

    def summary(self) -> str:
        """`bot agreed 23 of 40, 5 as good` (moves the rating ties with the bot's), and how
        many are still being judged."""
        judged = list(self.verdicts.values())
        agreed = sum(1 for v in judged if v.agreed)
        tied = sum(1 for v in judged if v.as_good)
        text = f"bot agreed {agreed} of {len(judged)}" + (f", {tied} as good" if tied else "")
        left = len(self.decisions) - len(judged)
        return text + (f" ({left} to judge)" if left else "")

    def next_disagreement(self, index: int, step: int = 1) -> int | None:
        """The next (step -1: previous) judged decision after `index` where the bot differed."""
        order: Sequence[int] = self.decisions if step > 0 else tuple(reversed(self.decisions))
        for i in order:
            if (i - index) * step > 0:
                v = self.verdicts.get(i)
                if v is not None and not v.agreed and not v.as_good:
                    return i
        return None


def offered_then(before, p: Position) -> list[Move]:  # type: ignore[no-untyped-def]
    """The moves the seat was offered before `p`'s move, as far as the log shows (R16: a
    Give only to the seat that was given the card, whose knock the log carries)."""
    return [m for m in legal_moves(before) if not isinstance(m, Give) or m == p.move]


__all__ = ["Review", "Verdict", "offered_then"]
