"""Text that came from elsewhere, made fit to show: one line of printable characters.

A peer's refusal reason, a player's name or a field of a hostile message can hold escape
sequences (which a terminal obeys: colours, cursor moves, a cleared screen, a changed
title), line breaks (which forge lines that look like our own notes) or megabytes. Every
note a node shows passes through `one_line`, so nothing a peer sends reaches a screen as
anything but inert text of bounded length.
"""

from __future__ import annotations

MAX_NOTE = 500  # characters of one note shown to the players


def one_line(text: str, limit: int = MAX_NOTE) -> str:
    """`text` with every character that is not printable (controls, line breaks, escapes,
    format characters) shown as `?`, cut to `limit` characters with an ellipsis."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else "?" for c in text)


__all__ = ["one_line", "MAX_NOTE"]
