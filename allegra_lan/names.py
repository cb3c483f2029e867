"""A seat's name as people read it: one function for every screen, note and line of words.

Before it there were several (the table screen's, the replay tools', the
network client's own `names[s]`), and they disagreed about a seat with no
name or out of range; a name a person reads must come out the same
everywhere. Names arrive already made one line of printable text (the
genesis check and `text.one_line`), so nothing is cleaned here.
"""

from __future__ import annotations

from typing import Sequence


def name_of(names: Sequence[str], seat: int, viewer: int | None = None) -> str:
    """`names[seat]`, `seat N` when that seat has no name (or is not in `names`), and
    `NAME (you)` for the seat of `viewer`, the person the screen is drawn for."""
    base = names[seat] if 0 <= seat < len(names) and names[seat] else f"seat {seat}"
    return f"{base} (you)" if viewer is not None and seat == viewer else base


def who(names: Sequence[str], seat: int, viewer: int | None) -> str:
    """`you` for the seat the words are for, else its name: the subject of a line of words."""
    return "you" if viewer is not None and seat == viewer else name_of(names, seat)


def whose(names: Sequence[str], seat: int, viewer: int | None) -> str:
    """`your`, or `NAME's`: the owner of a card, a display or a move in a line of words."""
    return "your" if viewer is not None and seat == viewer else f"{name_of(names, seat)}'s"


__all__ = ["name_of", "who", "whose"]
