"""The play client's one key table: every key, per variant and situation, and what it does.

The footer, the help screen and the key handling are all read from `TABLE`, so
they cannot disagree (issue 11, found 4: help once promised `g` then a number,
the footer showed `1`, and `g` did nothing). A situation is what the person
faces now: a decision of theirs (`play`, `turn_up`...), the knock window,
another seat's turn, an overlay. `bindings(variant, situation)` is the whole
truth for that moment; within one situation a key name appears at most once
(`check_table` asserts it, a test runs it), so no key has two meanings in one
state: `k` moves the cursor up and nothing else, the knock key is `y`.

Pure data and small functions: no prompt_toolkit, no engine state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from allegra_lan.rules.ruleset import Variant
from allegra_lan.rules.state import DecisionKind as K

GRANDE = Variant.GRANDE
ALLEGRA = Variant.ALLEGRA
BOTH = frozenset({GRANDE, ALLEGRA})

CURSOR_KEYS = ("left", "right", "up", "down", "h", "j", "k", "l")
DIGITS = tuple("0123456789")
ANY = "*"  # a key name that stands for every key not bound otherwise in the situation


@dataclass(frozen=True)
class Key:
    """One binding: the key names `handle_key` receives, how the footer and help write them,
    what the footer says it does, what the help says, and the client action it runs.

    `move` names the Move class that must be among the legal moves for the footer to show
    the key (None: always shown in its situation); `footer=False` keeps a key out of the
    footer (it still works, and the help lists it)."""

    names: tuple[str, ...]
    label: str
    does: str
    action: str
    help: str = ""
    move: str | None = None
    variants: frozenset[Variant] = BOTH
    footer: bool = True

    @property
    def help_text(self) -> str:
        return self.help or self.does


def _k(names: str | tuple[str, ...], label: str, does: str, action: str, help: str = "", *,
       move: str | None = None, variants: Iterable[Variant] = BOTH, footer: bool = True) -> Key:
    tup = (names,) if isinstance(names, str) else names
    return Key(tup, label, does, action, help, move, frozenset(variants), footer)


CHOOSE = ("enter", " ")
_MOVE = _k(CURSOR_KEYS, "arrows/hjkl", "move", "cursor", "move the cursor over the cards")
_HELP = _k("?", "?", "help", "help", "this help: the keys (any key closes it)")
_RULES = _k("r", "r", "rules", "rules", "the rules of the game, in plain words")
_QUIT = _k(("q", "c-c"), "q", "quit", "ask_quit", "quit, as Ctrl-C does: asks first (the replay is kept)")
_COMMON = (_HELP, _RULES, _QUIT)
# The hint (bots/hint.py): the move the bot would make now, drawn on the table, and why. Out
# of the footer: at 80 columns a footer line more is a "Last moves" line less; the help lists it.
_HINT = _k("a", "a", "hint", "hint", "a hint: what the bot would do now, shown on the table "
           "with its reason (a move or esc clears it)", footer=False)
_CHOOSE_HELP = "choose the card under the cursor (space too)"

#: situation -> its keys, in footer order. Situations of one's own turn are decision kinds
#: (rules/state.py DecisionKind, K here) and a few steps within one (swap_second, exchange_put).
TABLE: dict[str, tuple[Key, ...]] = {
    K.REVEAL: (_MOVE, _k(CHOOSE, "enter", "turn up", "turn_up", _CHOOSE_HELP, move="TurnUp"),
               _HINT, *_COMMON),
    K.TURN_UP: (_MOVE, _k(CHOOSE, "enter", "turn up", "turn_up", _CHOOSE_HELP, move="TurnUp"),
                _HINT, *_COMMON),
    K.DRAW: (
        _MOVE,
        _k("d", "d", "draw from deck", "draw", "draw the top card of the deck", move="DrawFromDeck"),
        _k("t", "t", "take discard", "take", "take the top card of the discard pile",
           move="TakeDiscard"),
        _k("s", "s", "swap two cards", "swap_start",
           "instead of drawing: swap two cards (s, then enter on the 2nd)",
           move="Swap", variants={GRANDE}),
        _HINT, *_COMMON),
    "swap_second": (
        _MOVE,
        _k(CHOOSE, "enter", "swap with this", "swap", _CHOOSE_HELP, move="Swap", variants={GRANDE}),
        _k("escape", "esc", "cancel", "cancel", "cancel a choice made so far"),
        *_COMMON),
    K.DRAW_SECOND: (
        _MOVE,
        _k("d", "d", "draw from deck", "draw", "draw the top card of the deck", move="DrawFromDeck"),
        _k("t", "t", "take discard", "take", "take the top card of the discard pile",
           move="TakeDiscard"),
        _HINT, *_COMMON),
    K.PLAY: (
        _MOVE,
        _k(("1", "2"), "1/2", "choose card", "choose_hand",
           "which card in hand to play, when you hold two", move="Place", variants={GRANDE}),
        _k(CHOOSE, "enter", "place here", "place", _CHOOSE_HELP, move="Place"),
        _k("x", "x", "discard it", "discard",
           "discard the card drawn from the deck (then turn up a card)", move="Discard"),
        _k(DIGITS, "seat number", "give to", "give",
           "give the card you drew to that seat, who knocked for it", move="Give",
           variants={ALLEGRA}),
        _HINT, *_COMMON),
    K.PEEK_LINE: (
        _MOVE,
        _k(CHOOSE, "enter", "peek at this row", "peek_row",
           "after a -2: peek at the cursor's row (space too)",
           move="PeekLine", variants={GRANDE}),
        _k("c", "c", "peek at this column", "peek_col",
           "after a -2: peek at the cursor's column", move="PeekLine",
           variants={GRANDE}),
        _HINT, *_COMMON),
    K.PEEK_CARD: (_MOVE, _k(CHOOSE, "enter", "peek at this card", "peek_card", _CHOOSE_HELP,
                            move="PeekCard", variants={GRANDE}), _HINT, *_COMMON),
    K.REPLACE_OPEN: (_MOVE, _k(CHOOSE, "enter", "replace this open card", "replace_open",
                               _CHOOSE_HELP, move="ReplaceOpen", variants={GRANDE}), _HINT, *_COMMON),
    K.PLACE_GIVEN: (_MOVE, _k(CHOOSE, "enter", "place the given card", "place_given",
                              _CHOOSE_HELP, move="Place", variants={ALLEGRA}), _HINT, *_COMMON),
    K.EXCHANGE: (_MOVE, _k(CHOOSE, "enter", "take this card", "exchange_take", _CHOOSE_HELP,
                           move="Exchange", variants={ALLEGRA}), _HINT, *_COMMON),
    "exchange_put": (
        _MOVE,
        _k(CHOOSE, "enter", "put it here", "exchange_put", _CHOOSE_HELP, move="Exchange",
           variants={ALLEGRA}),
        _k("escape", "esc", "choose again", "cancel", "cancel a choice made so far"),
        *_COMMON),
    "knock_window": (
        _k("y", "y", "knock", "knock",
           "knock: ask for the card another player just drew", variants={ALLEGRA}),
        _k("n", "n", "pass", "pass", "let the knock window pass", variants={ALLEGRA}),
        *_COMMON),
    "waiting": _COMMON,  # another seat's turn, or a clear being shown
    "round_over": (_k(CHOOSE, "enter", "next round", "next_round", "after a round: the next one (space too)"),
                   *_COMMON),
    "game_over": (_k("r", "r", "rules", "rules"), _k(("q", "c-c"), "q", "quit", "quit")),
    "confirm_quit": (_k(("y", "c-c"), "y", "quit (the replay is kept)", "quit"),
                     _k(ANY, "any key", "go on playing", "stay")),
    "help": (_k("r", "r", "rules", "rules"), _k(ANY, "any key", "back to the table", "close")),
    "rules": (_k(("up", "k"), "up", "scroll up", "scroll_up"),
              _k(("down", "j", " "), "down", "scroll down", "scroll_down"),
              _k(ANY, "any key", "back to the table", "close")),
}


def bindings(variant: Variant, situation: str) -> tuple[Key, ...]:
    """The keys of one situation in one variant, in footer order."""
    return tuple(k for k in TABLE.get(situation, _COMMON) if variant in k.variants)


def lookup(variant: Variant, situation: str, key: str) -> Key | None:
    """The binding a key press means now, or None: the key does nothing in this situation."""
    fallback = None
    for k in bindings(variant, situation):
        if key in k.names:
            return k
        if ANY in k.names:
            fallback = k
    return fallback


TURN_SITUATIONS = (K.REVEAL, K.TURN_UP, K.DRAW, "swap_second", K.DRAW_SECOND, K.PLAY, K.PEEK_LINE,
                   K.PEEK_CARD, K.REPLACE_OPEN, K.PLACE_GIVEN, K.EXCHANGE, "exchange_put")


def game_keys(variant: Variant) -> frozenset[str]:
    """Every key that makes or chooses a move in some situation of one's own turn."""
    return frozenset(n for sit in TURN_SITUATIONS for k in bindings(variant, sit)
                     if k.move is not None for n in k.names)


def check_table() -> list[str]:
    """Every key name bound twice within one situation of one variant (must be empty)."""
    clashes = []
    for situation in TABLE:
        for variant in sorted(BOTH):
            seen: dict[str, str] = {}
            for k in bindings(variant, situation):
                for name in k.names:
                    if name in seen and seen[name] != k.action:
                        clashes.append(f"{variant} {situation}: {name!r} is {seen[name]} and {k.action}")
                    seen[name] = k.action
    return clashes


def help_entries(variant: Variant) -> list[tuple[str, str]]:
    """(how the key is written, what it does) for every key of a variant, once each, in table
    order: the help screen. A key written the same with the same help text is listed once."""
    out: list[tuple[str, str]] = []
    for situation in TABLE:
        if situation in ("confirm_quit", "help", "rules", "game_over"):
            continue
        for k in bindings(variant, situation):
            entry = (k.label, k.help_text)
            if entry not in out:
                out.append(entry)
    return out


__all__ = ["Key", "TABLE", "bindings", "lookup", "check_table", "game_keys", "TURN_SITUATIONS", "help_entries", "CURSOR_KEYS",
           "ANY", "GRANDE", "ALLEGRA"]
