# The table screen as formatted text: pure, no Application, no I/O.
#
# Public API (used by `allegra play`, the replay viewer and the network client):
#   UiState                          what the client adds to a SeatView (cursor, highlights,
#                                    message, last moves, footer keys, names, overlay)
#   render(v, ui, width, height)     -> prompt_toolkit formatted text (list of (style, text))
#   screen_lines(v, ui, w, h)        -> list of lines, each a list of (style, text)
#   screen_text(v, ui, w, h) -> str  the same screen as plain text (tests assert on this)
#   plain(fragments) -> str          plain text of formatted text
#   area_layout(v, seat)             -> rows of Slots (None: no place) a cursor moves over, as
#                                    drawn (ALLEGRA: rules.geometry's area, neighbour's column first)
#   home_pos(v, seat)                where the cursor starts: the seat's own first card
#   needed_size(v, ui, width)        the smallest window that shows the table whole
#   make_style(color=None)           the one place where colour vs monochrome is decided
#   color_depth(color=None)          the ColorDepth to give the Application
#   use_color()                      False when NO_COLOR is set
#   card_label(card, width)          one card as text ("5", "?", "(7)" peeked, "?7" --all, ".")
#   help_lines(variant)              the help screen's lines
# API-STABLE
"""The table screen: a seat view plus a little UI state, laid out for any terminal size.

Everything here is a pure function of a `SeatView` (or `full_view` for a
replay's --all) and a `UiState`, so the play client, the replay viewer and
the network client draw the very same table, and tests can read the screen
as plain text. Styles are class names only ("class:card.v-high" ...);
`make_style` maps them to colours or, when NO_COLOR is set, to bold, reverse
and underline, so monochrome stays readable: the cursor is bracketed and a
peeked card is in parentheses whatever the colours.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Sequence

from prompt_toolkit.output.color_depth import ColorDepth
from prompt_toolkit.styles import Style

from allegra_lan.names import name_of  # re-exported: the one seat name (allegra_lan/names.py)
from allegra_lan.rules import JOKER, CardView, RoundResult, SeatView, Slot
from allegra_lan.rules import geometry
from allegra_lan.rules.state import DECISION_WORDS
from allegra_lan.rules.ruleset import Variant

Fragment = tuple[str, str]
Line = list[Fragment]


@dataclass(frozen=True)
class UiState:
    """What the client shows besides the view itself.

    `focus` is the seat drawn large (default: the view's seat, or seat 0 for a view
    from nobody's seat); `marked` are slots chosen so far (the first card of a swap);
    `highlight` the slots of a clear or chain step being shown; `keys` the footer as
    (key, what it does) pairs, only those legal now; `overlay` is None for the table,
    "help", "round" (the last round's result) or "game" (the game's end). `last_turns`,
    `last_slots` and `end_note` come from the moves the client saw (`tui.seat_notes`).
    `dealing`: a fair-deal game waits for the seats' deal events (issue 12): the header
    says "dealing..." where it says whose turn it is, since nobody can act meanwhile."""

    names: tuple[str, ...] = ()
    focus: int | None = None
    cursor: Slot | None = None
    marked: frozenset[Slot] = frozenset()
    highlight: frozenset[Slot] = frozenset()
    message: str = ""
    refused: bool = False
    moves: tuple[str, ...] = ()
    keys: tuple[tuple[str, str], ...] = ()
    title: str = ""
    status: str = ""
    overlay: str | None = None
    last_turns: tuple[str, ...] = ()  # per seat: what it did on its last turn ("" none yet)
    last_slots: frozenset[Slot] = frozenset()  # the places the others' last turns changed
    end_note: str = ""  # whose move ended the round, when it was not the ender's own
    dealing: bool = False


# ----------------------------------------------------------------- style


def use_color() -> bool:
    """Colours unless NO_COLOR is set (https://no-color.org)."""
    return not os.environ.get("NO_COLOR")


_COLOR_RULES: dict[str, str] = {
    "header": "bold",
    "title": "bold ansicyan",
    "name": "bold",
    "name.turn": "bold reverse",
    "you": "bold ansicyan",
    "card.closed": "ansibrightblack",
    "card.hole": "ansibrightblack",
    "card.peeked": "italic underline ansibrightcyan",
    "card.v-neg": "bold ansiblue",
    "card.v-zero": "ansicyan",
    "card.v-low": "ansigreen",
    "card.v-mid": "ansiyellow",
    "card.v-high": "ansired",
    "card.v-joker": "bold ansimagenta",
    "shared": "ansimagenta",
    "card.frame": "ansibrightblack",
    "last": "underline",
    "cursor": "reverse bold",
    "marked": "underline bold",
    "highlight": "bg:ansiyellow ansiblack bold",
    "label": "ansibrightblack",
    "message": "bold",
    "message.refused": "bold ansired",
    "status": "ansiyellow",
    "moves": "",
    "footer": "",
    "footer.key": "reverse bold",
    "bar": "ansigreen",
    "bar.neg": "ansiblue",
    "doubled": "bold ansired",
    "winner": "bold ansiyellow",
}

_MONO_RULES: dict[str, str] = {
    "header": "bold",
    "title": "bold",
    "name": "bold",
    "name.turn": "bold reverse",
    "you": "bold",
    "card.peeked": "underline",
    "card.v-neg": "bold",
    "shared": "underline",
    "last": "underline",
    "cursor": "reverse bold",
    "marked": "underline bold",
    "highlight": "reverse",
    "message": "bold",
    "message.refused": "bold",
    "footer.key": "reverse bold",
    "doubled": "bold",
    "winner": "bold",
}


def make_style(color: bool | None = None) -> Style:
    """The screen's style sheet: colours, or (NO_COLOR) attributes only."""
    color = use_color() if color is None else color
    rules = _COLOR_RULES if color else _MONO_RULES
    return Style.from_dict(rules)


def color_depth(color: bool | None = None) -> ColorDepth:
    color = use_color() if color is None else color
    return ColorDepth.DEPTH_8_BIT if color else ColorDepth.DEPTH_1_BIT


# ----------------------------------------------------------------- small pieces


def value_text(value: int | None) -> str:
    if value is None:
        return "?"
    return "J" if value == JOKER else str(value)


def card_label(card: CardView | None, width: int = 4) -> str:
    """`5` up, `?` closed, `(7)` closed but seen by this seat alone, `?7` closed under --all,
    `.` a hole (a cleared place). Narrow cells drop the parentheses (the style still marks it)."""
    if card is None:
        return "."
    if card.up:
        return value_text(card.value)
    if card.peeked:
        text = f"({value_text(card.value)})"
        return text if len(text) <= width else value_text(card.value)
    if card.value is not None:
        return f"?{value_text(card.value)}"
    return "?"


def value_class(value: int | None) -> str:
    if value is None:
        return "class:card.closed"
    if value == JOKER:
        return "class:card.v-joker"
    if value < 0:
        return "class:card.v-neg"
    if value == 0:
        return "class:card.v-zero"
    if value <= 4:
        return "class:card.v-low"
    if value <= 8:
        return "class:card.v-mid"
    return "class:card.v-high"


def card_class(card: CardView | None) -> str:
    if card is None:
        return "class:card.hole"
    if card.peeked:
        return "class:card.peeked " + value_class(card.value)
    if not card.up:
        return "class:card.closed"
    return value_class(card.value)


def line_len(line: Line) -> int:
    return sum(len(t) for _, t in line)


ELLIPSIS = "..."
MARGIN = 1  # the last column stays free: text that reaches it was shortened and says so


def _take(line: Line, n: int) -> Line:
    """The first `n` characters of a line, styles kept."""
    out: Line = []
    left = n
    for style, text in line:
        if left <= 0:
            break
        piece = text[:left]
        out.append((style, piece))
        left -= len(piece)
    return out


def shorten_at_word(text: str, width: int) -> str:
    """`text` in at most `width` characters: whole if it fits, else its first words and
    `...` (a word longer than the room is split only when no word end fits at all)."""
    if len(text) <= width:
        return text
    if width < len(ELLIPSIS) + 1:
        return text[:width]
    return text[:_word_end(text, width - len(ELLIPSIS))] + ELLIPSIS


def _word_end(text: str, room: int) -> int:
    """How many characters of `text` to keep within `room` so that they end at a word's
    end (trailing spaces and a clause's `,;:` dropped); `room` when no word end fits."""
    ends = [i for i in range(1, room + 1) if text[i - 1] != " " and (i == len(text) or text[i] == " ")]
    if not ends:
        return room
    keep = ends[-1]
    while keep > 1 and text[keep - 1] in ",;:":
        keep -= 1
    return keep


def fit(line: Line, width: int) -> Line:
    """A line as exactly `width` characters: padded with spaces, or, when longer, shortened
    at a word's end and ended with `...` so that no word is ever cut in the middle where a
    person reads (issue 11: "tur...", "from dec"). The layout makes lines fit; this is the
    last guard, and what it shortens says so."""
    total = line_len(line)
    if total > width:
        text = plain(line)
        if width < len(ELLIPSIS) + 1:
            line = _take(line, width)
        else:
            keep = _word_end(text, width - len(ELLIPSIS))
            line = _take(line, keep) + [("class:label", ELLIPSIS)]
        total = line_len(line)
    out = [f for f in line if f[1]]
    if total < width:
        out.append(("", " " * (width - total)))
    return out


def hjoin(blocks: Sequence[list[Line]], widths: Sequence[int], gap: int = 2) -> list[Line]:
    """Blocks of lines side by side, each padded to its width."""
    height = max((len(b) for b in blocks), default=0)
    out: list[Line] = []
    for i in range(height):
        line: Line = []
        for j, (b, w) in enumerate(zip(blocks, widths)):
            if j:
                line.append(("", " " * gap))
            line.extend(fit(b[i] if i < len(b) else [], w))
        out.append(line)
    return out


def hwrap(blocks: Sequence[list[Line]], widths: Sequence[int], width: int, gap: int = 2) -> list[Line]:
    """Blocks side by side, as many as fit in `width` to a row, rows one under another."""
    out: list[Line] = []
    row_b: list[list[Line]] = []
    row_w: list[int] = []
    for b, w in zip(blocks, widths):
        if row_b and sum(row_w) + gap * len(row_w) + w > width:
            out.extend(hjoin(row_b, row_w, gap))
            row_b, row_w = [], []
        row_b.append(b)
        row_w.append(w)
    if row_b:
        out.extend(hjoin(row_b, row_w, gap))
    return out


def wrap_words(text: str, width: int) -> list[str]:
    words = text.split()
    lines: list[str] = []
    cur = ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(cur)
    return lines or [""]


def wrap_line(line: Line, width: int, indent: int = 2) -> list[Line]:
    """A styled line broken at spaces into lines of at most `width` characters, the later
    ones indented by `indent` (a word longer than a line is split, never cut off)."""
    width = max(width, indent + 4, 4)
    tokens: list[Fragment] = []
    for style, text in line:
        tokens.extend((style, t) for t in re.findall(r"\S+|\s+", text))
    out: list[Line] = [[]]
    used = 0
    for style, tok in tokens:
        if tok.isspace():
            if used:  # no line starts with the space it was broken at
                out[-1].append((style, tok))
                used += len(tok)
            continue
        while True:
            if used + len(tok) <= width or used == 0 and len(tok) <= width:
                out[-1].append((style, tok))
                used += len(tok)
                break
            if used > (indent if len(out) > 1 else 0):  # break the line before this word
                while out[-1] and out[-1][-1][1].isspace():
                    out[-1].pop()
                out.append([("", " " * indent)])
                used = indent
                continue
            room = width - used  # a word longer than a whole line: split it
            out[-1].append((style, tok[:room]))
            tok = tok[room:]
            out.append([("", " " * indent)])
            used = indent
    for ln in out:
        while ln and ln[-1][1].isspace():
            ln.pop()
    return out


# ----------------------------------------------------------------- displays


def area_layout(v: SeatView, seat: int) -> list[list[Slot | None]]:
    """The places a cursor moves over for `seat`, rows of Slots as they are drawn.

    Grande: its display. ALLEGRA: its area as the engine reads it (R13, from
    `rules.geometry`): each row is the left neighbour's shared column, then the seat's
    own four columns, so what is drawn side by side is what clears together."""
    rows = v.displays[seat]
    if v.variant is Variant.ALLEGRA and v.players > 1 and len(rows) == geometry.ROWS:
        return [list(row) for row in geometry.area_rows(v.players, seat)]
    ncols = len(rows[0]) if rows else 0
    return [[Slot(seat, r, c) for c in range(ncols)] for r in range(len(rows))]


def home_pos(v: SeatView, seat: int) -> tuple[int, int]:
    """Where a cursor starts on `seat`'s places: on its own first card (in ALLEGRA the
    neighbour's shared column comes first in the layout)."""
    layout = area_layout(v, seat)
    row = layout[0] if layout else []
    return (0, row.index(Slot(seat, 0, 0))) if Slot(seat, 0, 0) in row else (0, 0)


@dataclass(frozen=True)
class Look:
    """How large a display is drawn: `cell` characters a card, `box` for 3-line framed
    cards, `spacing` blank lines between rows (one-line cards only)."""

    cell: int
    box: bool = False
    spacing: int = 0
    tall: int = 3  # lines of a framed card (3 or 5)


def _card_text(v: SeatView, ui: UiState, slot: Slot | None, room: int,
               centred: bool = True) -> tuple[str, str, CardView | None]:
    """A place's label and style: cursor `[ ]`, chosen `< >`, last move `*`."""
    if slot is None:
        return "", "", None
    try:
        card = v.card_at(slot)
    except IndexError:
        card = None
    text = card_label(card, room)
    style = card_class(card)
    if slot in ui.highlight:
        style += " class:highlight"
    if slot in ui.marked:
        style += " class:marked"
    if ui.cursor == slot:
        text = f"[{text}]"
        style += " class:cursor"
    elif slot in ui.marked:
        text = f"<{text}>"
    elif slot in ui.last_slots:
        style += " class:last"
        if len(text) < room - (0 if centred else 1):  # a space stays before the mark
            text = "*" + text
    return text, style, card


def _cell_lines(v: SeatView, ui: UiState, slot: Slot | None, width: int, look: Look,
                centred: bool, extra: str = "") -> list[Line]:
    """One place as 1 line (or 3 for a boxed card) of exactly `width` characters."""
    room = width - 3 if look.box else (width - 2 if centred else width)
    text, style, card = _card_text(v, ui, slot, max(room, 1), centred or look.box)
    if extra and text:
        style += " " + extra
    if not look.box:
        if not text:
            return [[("", " " * width)]]
        pad = max(0, width - len(text))
        if centred:
            return [[("", " " * (pad - pad // 2)), (style, text), ("", " " * (pad // 2))]]
        return [[("", " " * pad), (style, text)]]
    inner = width - 3  # "|" text "|" and a space between cards
    mid = look.tall // 2
    blank: Line = [("", " " * width)]
    if slot is None:
        return [list(blank) for _ in range(look.tall)]
    if card is None:  # a hole: no frame, a dot where the card was
        out = [list(blank) for _ in range(look.tall)]
        out[mid] = [("class:card.hole", ".".center(width - 1) + " ")]
        return out
    frame = "class:card.frame" + (" class:cursor" if ui.cursor == slot else "") + \
        (" class:highlight" if slot in ui.highlight else "") + (" " + extra if extra else "")
    edge: Line = [(frame, "+" + "-" * inner + "+"), ("", " ")]
    side: Line = [(frame, "|" + " " * inner + "|"), ("", " ")]
    face: Line = [(frame, "|"), (style, text.center(inner)[:inner]), (frame, "|"), ("", " ")]
    return [edge] + [face if i == mid else side for i in range(1, look.tall - 1)] + [edge]


def _seat_label(v: SeatView, ui: UiState, seat: int, width: int, room: int = 0) -> list[Line]:
    """The name line: `>` who acts, the name, the total and `ended`, in `width` or, when
    the marks need it, up to `room` characters; the marks go to a second line rather than
    being cut. The lines are not padded (the block pads them to its width)."""
    room = max(room, width)
    viewer = v.seat if v.seat >= 0 else None
    to_act = v.decision is not None and v.decision.seat == seat
    name = name_of(ui.names, seat, viewer)
    style = "class:name.turn" if to_act else ("class:you" if seat == viewer else "class:name")
    first: Line = [(style, (">" if to_act else " ") + name), ("", f"  {v.totals[seat]}")]
    if line_len(first) > room:
        first = [(style, (">" if to_act else " ") + short_name(name, max(room - 6, 4))),
                 ("", f"  {v.totals[seat]}")]
    if v.ender != seat:
        return [first]
    for mark in ("  ended the round", "  ended"):
        if line_len(first) + len(mark) <= room:
            return [first + [("class:label", mark)]]
    return [first, [("class:label", " ended the round" if room >= 16 else " ended")]]


def _hard_wrap(text: str, width: int) -> list[str]:
    """Words wrapped to `width`; a word longer than that is split rather than cut."""
    out: list[str] = []
    for line in wrap_words(text, width):
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return out


def display_block(v: SeatView, ui: UiState, seat: int, cell: int, big: bool,
                  spacing: int = 0, box: bool = False, tall: int = 3,
                  label_room: int = 0) -> tuple[list[Line], int]:
    """One seat's display as lines: a name line, column numbers (big only), the rows.
    `label_room`: how wide the name line may grow for its marks (`ended the round`)."""
    label, body, width = display_parts(v, ui, seat, cell, big, spacing, box, tall, label_room)
    return label + body, width


# One screen's displays, by everything that shapes them, while `screen_lines` draws it: the
# layout search tries up to a dozen looks, each with every opponent's display, and drew the
# same displays over and over (three quarters of the client's time per frame).
_parts_memo: dict[tuple[object, ...], tuple[list[Line], list[Line], int]] | None = None
_parts_alive: list[tuple[SeatView, "UiState"]] = []


def display_parts(v: SeatView, ui: UiState, seat: int, cell: int, big: bool,
                  spacing: int = 0, box: bool = False, tall: int = 3,
                  label_room: int = 0) -> tuple[list[Line], list[Line], int]:
    """`display_block` as its name lines and the rest, apart (so that displays side by
    side can start their rows on one line).

    ALLEGRA, big: the seat's area as the engine reads it, the left neighbour's shared
    column first (headed with its owner's name), set off by `|`, then the seat's own four
    columns, its own shared column set off by `|` too. Small: the display alone."""
    memo = _parts_memo
    if memo is None:
        return _display_parts(v, ui, seat, cell, big, spacing, box, tall, label_room)
    # The ids name `v` and `ui` because the memo keeps both alive until the screen is drawn
    # (a `ui` made for one layout, then freed, cannot lend its id to another); the lists
    # are copied, so a caller that extends one changes no other.
    key = (id(v), id(ui), seat, cell, big, spacing, box, tall, label_room)
    got = memo.get(key)
    if got is None:
        _parts_alive.append((v, ui))
        got = memo[key] = _display_parts(v, ui, seat, cell, big, spacing, box, tall, label_room)
    label, body, width = got
    return list(label), list(body), width


def _display_parts(v: SeatView, ui: UiState, seat: int, cell: int, big: bool, spacing: int, box: bool,
                   tall: int, label_room: int) -> tuple[list[Line], list[Line], int]:
    look = Look(cell, box, spacing, tall)
    allegra = v.variant is Variant.ALLEGRA
    layout = area_layout(v, seat) if big else [
        [Slot(seat, r, c) for c in range(len(row))] for r, row in enumerate(v.displays[seat])]
    own_cols = len(v.displays[seat][0]) if v.displays[seat] else 0
    shared_in = allegra and big and v.players > 1 and any(len(r) > own_cols for r in layout)
    nb_head: list[str] = []
    nb_w = 0
    if shared_in:
        owner = name_of(ui.names, geometry.left_neighbour(v.players, seat))
        nb_w = max(cell, min(12, len(owner) + 3))
        nb_head = _hard_wrap(f"{owner}'s", nb_w - 1) + ["col 4"]
    widths = ([nb_w] if shared_in else []) + [cell] * own_cols

    def sep(c: int) -> Line:
        """The `|` before a place: after the neighbour's column, and before the own col 4."""
        k = c - 1 if shared_in else c  # own column index
        if shared_in and c == 1:
            return [("class:shared", "|")]
        if allegra and own_cols and k == own_cols - 1:
            return [("class:shared", "|")]
        return []

    width = sum(widths) + sum(len(plain(sep(c))) for c in range(len(widths)))
    lines: list[Line] = []
    if big:
        heads = max(len(nb_head), 1) if shared_in else 1
        for h in range(heads):
            nums: Line = []
            for c, w in enumerate(widths):
                nums.extend(sep(c))
                if shared_in and c == 0:
                    piece = nb_head[h] if h < len(nb_head) else ""
                    nums.append(("class:shared", piece.center(w - 1).ljust(w)))
                elif h == heads - 1:
                    label = str(c - (1 if shared_in else 0) + 1)
                    if box:  # over the card's text, as `_cell_lines` centres it
                        text = " " + label.center(w - 3)
                    else:
                        pad = w - len(label)
                        text = " " * (pad - pad // 2) + label
                    nums.append(("class:label", text.ljust(w)))
                else:
                    nums.append(("", " " * w))
            lines.append(nums)
    for r, row in enumerate(layout):
        parts: list[list[Line]] = []
        for c, slot in enumerate(row):
            w = widths[c] if c < len(widths) else cell
            extra = "class:shared" if shared_in and c == 0 else ""
            parts.append(_cell_lines(v, ui, slot, w, look, big, extra))
        height = look.tall if box else 1
        for i in range(height):
            line: Line = []
            for c, cell_lines in enumerate(parts):
                line.extend(sep(c))
                line.extend(cell_lines[i])
            lines.append(line)
        if spacing and r < len(layout) - 1:
            lines.extend([[] for _ in range(spacing)])
    if not layout:
        lines.append([("class:label", "(no cards left)")])
    label_w = max(width, 14)
    label = _seat_label(v, ui, seat, label_w, label_room)
    label_w = max([label_w] + [line_len(ln) for ln in label])
    return label, lines, label_w


def _area_notes(v: SeatView, ui: UiState, focus: int, width: int) -> list[Line]:
    """ALLEGRA: which columns of the big display are shared, with whom, in words."""
    if v.variant is not Variant.ALLEGRA or v.players < 2:
        return []
    left = name_of(ui.names, geometry.left_neighbour(v.players, focus))
    right = name_of(ui.names, geometry.right_neighbour(v.players, focus))
    whose = "your" if focus == v.seat else f"{name_of(ui.names, focus)}'s"
    texts = [f"first column: {left}'s col 4, in {whose} area",
             f"| col 4: also in {right}'s area"]
    out: list[Line] = []
    for t in texts:
        out.extend([("class:shared", piece)] for piece in _hard_wrap(t, width))
    return out


# ----------------------------------------------------------------- the table


def _header(v: SeatView, ui: UiState, width: int) -> Line:
    rs = v.ruleset
    d = v.decision
    rnd = f"{min(v.round_no + 1, rs.rounds)}/{rs.rounds}"
    if d is None:
        acts = ["  game over"]
    else:
        who = "you" if d.seat == v.seat else name_of(ui.names, d.seat)
        acts = [f"  to act: {who} ({DECISION_WORDS.get(d.kind, d.kind)})", f"  to act: {who}"]
        if ui.dealing:
            acts = ["  dealing...", "  dealing"]
    # Whose turn it is goes last: the decision's words, the turn, the word `round` and the
    # title's first word go first when the window is narrow.
    short_title = rs.title.split()[-1]
    lefts = [f"{rs.title}  round {rnd}  turn {v.turn}", f"{rs.title}  round {rnd}",
             f"{rs.title}  {rnd}", f"{short_title}  {rnd}", short_title]
    left, act = lefts[-1], acts[-1]
    for a in acts:
        fitting = [lt for lt in lefts if len(lt) + len(a) <= width - MARGIN]
        if fitting:
            left, act = fitting[0], a
            break
    line: Line = [("class:header", left), ("class:status", act)]
    if ui.title:
        room = width - MARGIN - line_len(line) - 1
        if room > len(ui.title):
            line.append(("", " " * (room - len(ui.title))))
            line.append(("class:title", " " + ui.title))
    return fit(line, width - MARGIN)


def _wrapped(text: str, width: int, style: str, indent: int = 2) -> list[Line]:
    pieces = _hard_wrap(text, max(width, 4))
    out = [[(style, pieces[0])]]
    for p in _hard_wrap(" ".join(pieces[1:]), max(width - indent, 4)) if len(pieces) > 1 else []:
        out.append([(style, " " * indent + p)])
    return out


def short_name(name: str, room: int = 13) -> str:
    """A name in at most `room` characters, shortened in words: `Maximilian Alexander`
    -> `Maximilian A.`, then a long word to its start and a full stop."""
    if len(name) <= room:
        return name
    words = name.split()
    if len(words) > 1:
        short = " ".join(words[:-1] + [words[-1][0] + "."])
        if len(short) <= room:
            return short
    return name[:max(room - 1, 1)] + "."


_PLACE_AT = re.compile(r" at (?:your |[^,;:]*?'s )?row \d+ col \d+")
_PLACE_LEAD = re.compile(r"^(?:your |[^,;:]*?'s )?row \d+ col \d+: ")


def _without_place(text: str) -> str:
    """A turn's words without where it happened (`put the 1 at row 1 col 2` -> `put the
    1`): the display marks those places with `*`, so the words may leave them out."""
    return _PLACE_LEAD.sub("", _PLACE_AT.sub("", text))


def turn_lines(name: str, words: str, width: int, lines: int = 1) -> tuple[int, list[str]]:
    """A seat's last turn (`name: words`, its parts joined by `; `) in at most `lines` lines
    of `width`, shortened in words, never cut mid-word (issue 11: `greedy 1: ...put the 0 at
    row...`), and how much was lost (0 = the whole turn). In order: the whole turn; its last
    part (what the turn ended with) after `...`; that part without where it happened (the
    display marks it `*`); without its trailing clauses (`, out goes a 2`); each with the
    name shortened when it is long; last, the first words that fit and `...`."""
    parts = words.split("; ")
    lead = "..." if len(parts) > 1 else ""
    last = parts[-1]
    bare = _without_place(last)
    texts = [words, lead + last, lead + bare]
    clauses = re.split(r"(, |: )", bare)  # the separators kept, at odd places
    texts += [lead + "".join(clauses[:k]) + "..." for k in range(len(clauses) - 2, 0, -2)]
    seen: list[str] = []
    for t in texts:
        if t not in seen:
            seen.append(t)
    short = short_name(name)
    tries = [f"{n}: {t}" for t in seen for n in dict.fromkeys((name, short))]
    for loss, text in enumerate(tries):
        wrapped = _wrap_indented(text, width, 2)
        if len(wrapped) <= lines and all(len(w) <= width for w in wrapped):
            return loss, wrapped
    wrapped = _wrap_indented(tries[-1], width, 2)
    kept = wrapped[:max(lines, 1)]
    rest = " ".join(p.strip() for p in wrapped[len(kept) - 1:])
    indent = "  " if len(kept) > 1 else ""
    kept[-1] = shorten_at_word(indent + rest, width)
    return len(tries), kept


_GLUE = "\x00"  # not whitespace to str.split: holds a place's words on one line while wrapping
_PLACE = re.compile(r"\b(row|col) (\d+)(?: (col) (\d+))?")


def _wrap_indented(text: str, width: int, indent: int) -> list[str]:
    """Plain text wrapped at spaces to `width`, later lines indented (words never split, nor
    a place: `row 4 col 1` stays on one line, not `row 4 col` / `1: turned up`)."""
    glued = _PLACE.sub(lambda m: m.group(0).replace(" ", _GLUE), text)
    first = wrap_words(glued, width)
    if len(first) > 1:
        first = [first[0]] + [" " * indent + t for t in
                              wrap_words(glued[len(first[0]):].strip(), width - indent)]
    return [line.replace(_GLUE, " ") for line in first]


def _panel(v: SeatView, ui: UiState, width: int, height: int) -> list[Line]:
    """The right-hand pane: deck, discard, hand, knock, round end, status, each other
    seat's last turn, last moves."""
    out: list[Line] = []
    top = v.discard_top
    pile: Line = [("", f"Deck {v.deck_size}   Discard ")]
    if top is not None:
        pile.append((value_class(top.value), f"[{value_text(top.value)}]"))
        pile.append(("class:label", f" {v.discard_size} card{'s' if v.discard_size != 1 else ''}"))
    else:
        pile.append(("class:label", "(empty)"))
    out.extend(wrap_line(pile, width))
    if v.hand:
        who = "you" if v.active == v.seat else name_of(ui.names, v.active)
        hand: Line = [("", f"In hand ({who}): ")]
        for h in v.hand:
            hand.append((value_class(h.value), f"[{value_text(h.value)}]"))
            hand.append(("class:label", " from deck " if h.from_deck else " from discard "))
        out.extend(wrap_line(hand, width))
    if v.knock is not None:
        k, given, holds = v.knock
        text = f"Knock: {name_of(ui.names, k, v.seat)} got {value_text(given.value)}"
        if holds is not None:
            text += f", holds {value_text(holds.value)}"
        out.extend(_wrapped(text, width, "class:status"))
    if v.ender is not None:
        text = f"Round ends: {name_of(ui.names, v.ender, v.seat)} has no closed card"
        if v.final_lap:
            text += "; still to play: " + ", ".join(name_of(ui.names, s) for s in v.final_lap)
        out.extend(_wrapped(text, width, "class:status"))
    if ui.status:
        out.extend(_wrapped(ui.status, width, "class:status"))
    items: list[Fragment] = [("class:label", "? closed"), ("class:label", ". cleared")]
    if v.variant is Variant.ALLEGRA:
        items.append(("class:shared", "| shared"))
    if ui.last_slots:
        items.append(("class:last", "* last move"))
    if any(c is not None and c.peeked for rows in v.displays for row in rows for c in row):
        items.append(("class:card.peeked", "(n) seen by you alone"))
    legend: Line = []
    for item in items:  # as many to a line as fit, never cut
        if legend and line_len(legend) + 2 + len(item[1]) > width:
            out.append(legend)
            legend = []
        legend.extend(([("", "  ")] if legend else []) + [item])
    out.append(legend)
    # One line per other seat (two when there is room): what it did on its last turn (its
    # places are marked `*`), shortened in words to fit.
    seats = [(v.seat + i) % v.players for i in range(1, v.players)] if v.seat >= 0 else range(v.players)
    said = [(name_of(ui.names, s), ui.last_turns[s]) for s in seats
            if s < len(ui.last_turns) and ui.last_turns[s]]
    moves_room = min(len(ui.moves), 3) + (1 if ui.moves else 0)  # the newest moves stay in view
    spare = height - len(out) - 1 - len(said) - moves_room
    if said and spare >= 0:
        # A turn takes a second line only where the three newest moves, wrapped, still show.
        newest = sum(len(_wrapped(m, width - 2, "")) for m in list(ui.moves)[-3:])
        spare = height - len(out) - 1 - len(said) - (newest + 1 if ui.moves else 0)
        out.append([("class:label", "Last turns:")])
        for name, words in said:
            loss, lines = turn_lines(name, words, width, 1)
            if loss and spare > 0:
                loss2, two = turn_lines(name, words, width, 2)
                if loss2 < loss:
                    lines = two
                    spare -= len(two) - 1
            out.extend([("class:moves", t)] for t in lines)
    room = height - len(out) - 1
    if room > 0 and ui.moves:
        shown: list[Line] = []
        for m in reversed(ui.moves):  # the newest last, wrapped, as many as fit
            wrapped = _wrapped(m, width - 2, "class:moves")
            if len(shown) + len(wrapped) > room:
                break
            shown[:0] = wrapped
        if shown:
            out.append([("class:label", "Last moves:")])
            out.extend(shown)
    return out[:height]


def footer_lines(keys: Sequence[tuple[str, str]], width: int, rows: int) -> list[Line]:
    """The footer: each key and what it does, on at most `rows` lines (the lobby's too)."""
    lines: list[Line] = [[]]
    for key, what in keys:
        item: Line = [("class:footer.key", f" {key} "), ("class:footer", f" {what}  ")]
        if line_len(lines[-1]) + line_len(item) > width and lines[-1]:
            if len(lines) == rows:
                break
            lines.append([])
        lines[-1].extend(item)
    return lines


def _footer(ui: UiState, width: int, rows: int) -> list[Line]:
    return footer_lines(ui.keys, width, rows)


def _footer_rows(ui: UiState, width: int) -> int:
    """Lines the whole footer needs at this width (at least 2, so the table does not jump)."""
    return max(2, len(footer_lines(ui.keys, width, 99)))


PANEL_MIN = 24  # "Deck 75   Discard [11] 8 cards" must be readable beside one's cards

# The big display's sizes, largest first: framed 3-line cards, then one-line cards with a
# blank line between rows, then plain rows; the first that fits the window is drawn.
_BIG_LOOKS = (Look(10, box=True, spacing=1, tall=5), Look(9, box=True, tall=5), Look(8, box=True, spacing=1),
              Look(8, box=True), Look(7, box=True), Look(6, spacing=1), Look(6), Look(5), Look(4))


def _opponents(v: SeatView, focus: int) -> list[int]:
    """The other seats in the order drawn. ALLEGRA: each seat's left neighbour (the next in
    play) to its left, as in the big display, so an area row reads left to right across two
    neighbouring displays; the focus seat's left neighbour is drawn last, nearest its
    column. Grande: play order after the focus."""
    n = v.players
    if v.variant is Variant.ALLEGRA:
        return [(focus + i) % n for i in range(n - 1, 0, -1)]
    return [(focus + i) % n for i in range(1, n)]


def _small_cell(v: SeatView, seats: Sequence[int], width: int, sizes: Sequence[int] = (4, 3, 2)) -> int:
    """The widest small-display cell that fits the opponents in one row."""
    for cell in sizes:
        total = 0
        for s in seats:
            rows = v.displays[s]
            cols = len(rows[0]) if rows else 0
            total += max(cols * cell + (1 if v.variant is Variant.ALLEGRA else 0), 14) + 2
        if total <= width + 2:
            return cell
    # None fits in one row: the displays wrap to a second row anyway, so keep cells of 3
    # (in cells of 2, `-1` and `13` touch their neighbours: `?-1*0`).
    return sizes[-1] if sizes[-1] != 2 else 3


@dataclass
class _Layout:
    top: list[Line]  # header, blank, opponents, blank
    me: list[Line]  # the big display and its notes
    me_w: int
    need_w: int
    need_h: int  # lines without the blank ones


def _compose(v: SeatView, ui: UiState, width: int, look: Look, opp_box: bool, blanks: bool) -> _Layout:
    focus = ui.focus if ui.focus is not None else (v.seat if v.seat >= 0 else 0)
    others = _opponents(v, focus)
    cell = _small_cell(v, others, width, (7, 6) if opp_box else (4, 3, 2))
    if opp_box and not _small_cell(v, others, width, (7, 6, 0)):
        opp_box, cell = False, _small_cell(v, others, width)  # framed cards would not fit in a row
    blocks, widths = [], []
    room = (width - MARGIN + 2) // max(len(others), 1) - 2  # each in one row
    parts = [display_parts(v, ui, s, cell, big=False, box=opp_box, label_room=room) for s in others]
    # Every display's rows start on the same line: a name line taken to two lines (its
    # `ended the round`) pushes the others' rows down too (issue 11 games: an ALLEGRA area
    # row read across two displays one line apart).
    heads = max((len(label) for label, _, _ in parts), default=1)
    for label, body, w in parts:
        blocks.append(label + [[] for _ in range(heads - len(label))] + body)
        widths.append(w)
    opp = hwrap(blocks, widths, width - MARGIN)
    me, me_w = display_block(v, ui, focus, look.cell, big=True, spacing=look.spacing, box=look.box,
                             tall=look.tall)
    notes = _area_notes(v, ui, focus, max(me_w, min(width - PANEL_MIN - 3, 44)))
    if notes:
        me_w = max(me_w, max(line_len(n) for n in notes))
        me.extend(notes)
    top: list[Line] = [_header(v, ui, width)]
    if blanks:
        top.append([])
    top.extend(opp)
    if blanks:
        top.append([])
    need_w = max([me_w + 3 + PANEL_MIN + MARGIN] + [w + MARGIN for w in widths])
    need_h = 1 + len(opp) + len(me) + 1 + _footer_rows(ui, width)
    return _Layout(top, me, me_w, need_w, need_h)


def _fitting(v: SeatView, ui: UiState, width: int, height: int) -> _Layout | None:
    """The largest layout that fits the window whole, or None when even the smallest does not."""
    for look in _BIG_LOOKS:
        for opp_box in ((True, False) if look.box else (False,)):
            for blanks in ((True,) if look.box else (True, False)):  # framed cards need air
                lay = _compose(v, ui, width, look, opp_box, blanks)
                used = lay.need_h + (2 if blanks else 0)
                if lay.need_w <= width and used <= height:
                    return lay
    return None


def _widest_footer(v: SeatView, ui: UiState, width: int) -> UiState:
    """`ui` with the footer of the game's situation whose footer takes the most lines at
    this width (every key of the key table that shows there; ALLEGRA's give keys for every
    other seat), so that the size needed does not change with the next move (issue 11
    games: a table at the smallest size accepted said "too small" two moves later)."""
    from .keys import TABLE, bindings

    best = ui.keys
    for situation in TABLE:
        keys: list[tuple[str, str]] = []
        for k in bindings(str(v.variant), situation):
            if not k.footer:
                continue
            if k.action == "give":
                keys += [(str(s), f"give to {name_of(ui.names, s)}") for s in range(v.players) if s != v.seat]
            else:
                keys.append((k.label, k.does))
        if len(footer_lines(keys, width, 99)) > len(footer_lines(best, width, 99)):
            best = tuple(keys)
    return replace(ui, keys=tuple(best))


def needed_size(v: SeatView, ui: UiState, width: int) -> tuple[int, int]:
    """The smallest window that shows this table whole: the smallest layout's width, and
    the lines it needs at that width (or at `width` when wider, as opponents wrap less),
    with room for the longest footer of the game (it does not change with the next move)."""
    small = _compose(v, ui, MIN_WIDTH, _BIG_LOOKS[-1], False, False)  # notes at their narrowest
    w = max(small.need_w, MIN_WIDTH)
    at_w = max(width, w)
    at = _compose(v, _widest_footer(v, ui, at_w), at_w, _BIG_LOOKS[-1], False, False)
    return w, max(at.need_h, MIN_HEIGHT)


def message_lines(message: str, style: str, width: int, rows: int) -> list[Line]:
    """The message line(s): the message wrapped at spaces into at most `rows` lines of
    `width` (a tip at 60 columns took two), the last one shortened in words if it must."""
    if not message:
        return [[]]
    pieces = _hard_wrap(message, max(width, 4))
    if len(pieces) > rows:
        pieces = pieces[:rows - 1] + [shorten_at_word(" ".join(pieces[rows - 1:]), width)]
    return [[(style, p)] for p in pieces]


def _table(v: SeatView, ui: UiState, lay: _Layout, width: int, height: int) -> list[Line]:
    lines = list(lay.top)
    footer_rows = _footer_rows(ui, width)
    msg_style = "class:message.refused" if ui.refused else "class:message"
    spare = height - len(lines) - len(lay.me) - footer_rows  # lines the message may take
    message = message_lines(ui.message, msg_style, width - MARGIN, max(1, spare))
    bottom = len(message) + footer_rows
    panel_w = max(10, width - lay.me_w - 3 - MARGIN)
    mid_h = max(len(lay.me), height - len(lines) - bottom)
    panel = _panel(v, ui, panel_w, mid_h)
    lines.extend(hjoin([lay.me, panel], [lay.me_w, panel_w], gap=3))
    while len(lines) < height - bottom:
        lines.append([])
    lines.extend(message)
    lines.extend(_footer(ui, width, footer_rows))
    return lines


# ----------------------------------------------------------------- round and game end


def _result_block(v: SeatView, ui: UiState, r: RoundResult, seat: int, cell: int) -> tuple[list[Line], int]:
    """A seat's final cards as they count in its sum (R17): in ALLEGRA its area, the left
    neighbour's shared column first, so the cards drawn add up to the sum shown."""
    rows = r.displays[seat]
    cols = len(rows[0]) if rows else 0
    allegra = v.variant is Variant.ALLEGRA and v.players > 1 and bool(rows)
    left = geometry.left_neighbour(v.players, seat) if allegra else seat
    w = max(cols * cell + (1 if v.variant is Variant.ALLEGRA else 0) + ((cell + 1) if allegra else 0), 14)
    name = name_of(ui.names, seat, v.seat if v.seat >= 0 else None)
    out: list[Line] = [[("class:you" if seat == v.seat else "class:name", name)]]
    if allegra:  # `col 4` is never broken in two
        whose = f"first: {name_of(ui.names, left)}'s"
        heads = [f"{whose} col 4"] if len(whose) + 6 <= w else _hard_wrap(whose, w) + ["col 4"]
        out.extend([("class:shared", t)] for t in heads)

    def card(val: int | None) -> Fragment:
        text = "." if val is None else value_text(val)
        return ("class:card.hole" if val is None else value_class(val), text.rjust(cell))

    for r_i, row in enumerate(rows):
        line: Line = []
        if allegra:
            lrow = r.displays[left][r_i] if r_i < len(r.displays[left]) else ()
            line.append(card(lrow[geometry.SHARED_COL]) if len(lrow) > geometry.SHARED_COL else ("", " " * cell))
            line.append(("class:shared", "|"))
        for c, val in enumerate(row):
            if v.variant is Variant.ALLEGRA and c == cols - 1:
                line.append(("class:shared", "|"))
            line.append(card(val))
        out.append(line)
    return out, w


def bar_chart(v: SeatView, ui: UiState, width: int) -> list[Line]:
    """Totals after each round, one line per seat, one bar per round."""
    results = v.results
    if not results:
        return []
    viewer = v.seat if v.seat >= 0 else None
    name_w = min(14, max(len(name_of(ui.names, s, viewer)) for s in range(v.players)) + 1)
    per = max(6, (width - name_w) // len(results))
    peak = max((abs(t) for r in results for t in r.totals), default=1) or 1
    bar_room = per - 6
    out: list[Line] = [[("class:label", " " * name_w)]
                       + [("class:label", f"round {r.round_no + 1}"[:per].ljust(per)) for r in results]]
    for s in range(v.players):
        line: Line = [("class:name", short_name(name_of(ui.names, s, viewer), name_w - 1).ljust(name_w))]
        for r in results:
            t = r.totals[s]
            n = round(abs(t) / peak * bar_room) if bar_room > 0 else 0
            style = "class:bar.neg" if t < 0 else "class:bar"
            line.append(("", f"{t:>4} "))
            line.append((style, ("-" if t < 0 else "#") * n))
            line.append(("", " " * (per - 5 - n)))
        out.append(line)
    return out


def doubling_text(r: RoundResult, names: Sequence[str], viewer: int | None) -> str:
    if r.ender is None:
        return "nobody ended the round"
    who = name_of(names, r.ender, viewer)
    if r.doubled:
        return (f"{who} ended the round without the lowest sum: "
                f"{r.raw[r.ender]} doubled to {r.scores[r.ender]}")
    return f"{who} ended the round: {r.raw[r.ender]}, not doubled"


def _round_end(v: SeatView, ui: UiState, width: int, height: int, game: bool) -> list[Line]:
    r = v.results[-1]
    viewer = v.seat if v.seat >= 0 else None
    rs = v.ruleset
    room = width - MARGIN
    lines: list[Line] = []
    if game:
        low = min(r.totals)
        ws = [s for s, t in enumerate(r.totals) if t == low]
        who = ", ".join(name_of(ui.names, s, viewer) for s in ws)
        verb = "wins" if len(ws) == 1 else "share the win"
        head: Line = [("class:winner", f"Game over: {who} {verb} with {low}")]
    else:
        head = [("class:header", f"Round {r.round_no + 1} of {rs.rounds} is over")]
    tail = "  (every card turned up)"
    lines.append(fit(head + [("class:label", tail)], room) if line_len(head) + len(tail) <= room
                 else fit(head, room))
    if ui.status:  # a file's path is split rather than cut
        lines.extend([("class:status", t)] for t in _hard_wrap(ui.status, room))
    cell = 3
    blocks, widths = [], []
    for s in range(v.players):
        b, w = _result_block(v, ui, r, s, cell)
        blocks.append(b)
        widths.append(w)
    lines.extend(hwrap(blocks, widths, room))
    lines.append([])
    name_w = min(16, max(len(name_of(ui.names, s, viewer)) for s in range(v.players)) + 2)
    lines.append([("class:label", "".ljust(name_w) + "   sum  score  total")])
    for s in range(v.players):
        score: Line = [("class:name", short_name(name_of(ui.names, s, viewer), name_w - 1).ljust(name_w)),
                       ("", f"{r.raw[s]:>6} ")]
        if r.doubled and r.ender == s:
            score.append(("class:doubled", f"{'x2 ' + str(r.scores[s]):>6}"))
        else:
            score.append(("", f"{r.scores[s]:>6}"))
        score.append(("", f" {r.totals[s]:>6}"))
        if r.ender == s:
            mark = "  ended the round" if line_len(score) + 17 <= room else "  ended"
            score.append(("class:label", mark))
        lines.append(score)
    if ui.end_note:
        lines.extend([("class:status", t)] for t in wrap_words(ui.end_note, room))
    lines.extend([("class:doubled" if r.doubled else "", t)]
                 for t in wrap_words(doubling_text(r, ui.names, viewer), room))
    chart = bar_chart(v, ui, room)
    msg_style = "class:message.refused" if ui.refused else "class:message"
    fixed = len([ln for ln in lines if ln]) + 2  # the lines that stay, and the footer
    message = message_lines(ui.message, msg_style, room, max(1, height - fixed - 1))
    bottom = len(message) + 2
    if chart and len([ln for ln in lines if ln]) + len(chart) <= height - bottom:
        lines.append([])
        lines.extend(chart)  # whole or not at all: a chart without its seats misleads
    while len(lines) > height - bottom and [] in lines:
        lines.remove([])  # blank lines go first when the window is short
    while len(lines) < height - bottom:
        lines.append([])
    lines = lines[:height - bottom]
    lines.extend(message)
    lines.extend(_footer(ui, width, 2))
    return lines


# ----------------------------------------------------------------- help


def help_lines(variant: Variant, width: int = 0, compact: bool = False) -> list[str]:
    """The help screen: every key of the variant, read from the one key table (tui/keys.py)
    that the footer and the key handling read too, so the three cannot disagree. With a
    `width`, each line is wrapped to it at spaces (a key's words under its words, not under
    the key); `compact`: one line a key, its words shortened in words when they must be."""
    from .keys import help_entries

    entries = help_entries(variant)
    notes = [
        "",
        "Cards: ? closed, . cleared, (7) a closed card that only you have seen.",
        "The rules: press r.",
    ]
    if variant is Variant.ALLEGRA:
        notes.append("Your area: your display and, drawn on its left, your left neighbour's rightmost column (shared).")
    head = "Keys (the footer shows the ones that do something now)"
    if width <= 0:
        return [head] + [f"  {label:<15} {what}" for label, what in entries] + notes
    key_w = 2 + 15 + 1  # as written without a width, where that leaves the words room
    if width - key_w < 40:
        key_w = 2 + max((len(label) for label, _ in entries), default=0) + 1
    room = max(width - key_w, 10)
    lines = _hard_wrap(head, width)
    for label, what in entries:
        key = f"  {label}".ljust(key_w)
        if compact:
            lines.append(key + shorten_at_word(what, room))
            continue
        for i, piece in enumerate(_hard_wrap(what, room)):
            lines.append((key if i == 0 else " " * key_w) + piece)
    for note in notes:
        lines.extend(_hard_wrap(note, width) if note else [""])
    return lines


def _help(v: SeatView, ui: UiState, width: int, height: int) -> list[Line]:
    """The help, laid out for the window: wrapped when it fits so, else one line a key; the
    notes at the end are the first to go in a short window, and a last line says so."""
    room = height - 3  # the message line and the footer
    title: list[Line] = [[("class:header", f"{v.ruleset.title}: help")], []]
    body = help_lines(v.variant, width - MARGIN)
    if len(title) + len(body) > room:
        body = help_lines(v.variant, width - MARGIN, compact=True)
    if len(title) + len(body) > room:
        title = title[:1]
    if len(title) + len(body) > room:
        body = body[:max(room - len(title) - 1, 0)] + [shorten_at_word("(more in a taller window)", width - MARGIN)]
    lines: list[Line] = title + [[("", t)] for t in body]
    lines = lines[:room]
    while len(lines) < room:
        lines.append([])
    lines.append([("class:message", ui.message)])
    lines.extend(_footer(ui, width, 2))
    return lines


# ----------------------------------------------------------------- entry points

MIN_WIDTH = 40
MIN_HEIGHT = 12


def too_small_line(width: int, height: int, need: tuple[int, int]) -> str:
    """What a window below the minimum shows: the size needed, as long a sentence as fits."""
    w, h = need
    for text in (f"The window is too small ({width}x{height}): make it at least {w}x{h}.",
                 f"Too small ({width}x{height}): make it {w}x{h}",
                 f"Too small: make it {w}x{h}", f"Needs {w}x{h}", f"{w}x{h}", "small"):
        if len(text) <= width - MARGIN:
            return text
    return ""


def screen_lines(v: SeatView, ui: UiState, width: int, height: int) -> list[Line]:
    """The screen as exactly `height` lines of exactly `width` characters.

    Below the size this table needs whole (`needed_size`: one's own cards, the pane with
    the hand and the discard pile, and the whole footer), one centred line says the size
    needed instead of a screen with parts silently cut off."""
    global _parts_memo
    _parts_memo = {}
    try:
        return _screen_lines(v, ui, width, height)
    finally:
        _parts_memo = None
        _parts_alive.clear()


def _screen_lines(v: SeatView, ui: UiState, width: int, height: int) -> list[Line]:
    need = needed_size(v, ui, width)
    lay = _fitting(v, ui, width, height) if width >= need[0] and height >= need[1] else None
    if lay is None:
        # A size that works: at this width when it is wide enough (the height needed
        # there), else the narrowest width and the height needed at it.
        text = too_small_line(width, height, (max(width, need[0]), need[1]))
        pad = max(0, width - len(text))
        lines: list[Line] = [[] for _ in range(max(0, (height - 1) // 2))]
        lines.append([("", " " * (pad // 2)), ("class:message.refused", text)])
    elif ui.overlay == "help":
        lines = _help(v, ui, width, height)
    elif ui.overlay in ("round", "game") and v.results:
        lines = _round_end(v, ui, width, height, ui.overlay == "game")
    else:
        lines = _table(v, ui, lay, width, height)
    lines = lines[:height]
    while len(lines) < height:
        lines.append([])
    return [fit(line, width) for line in lines]


def render(v: SeatView, ui: UiState, width: int, height: int) -> list[Fragment]:
    """Formatted text for a prompt_toolkit FormattedTextControl."""
    return join_lines(screen_lines(v, ui, width, height))


def join_lines(lines: Sequence[Line]) -> list[Fragment]:
    """Screen lines as one formatted text (what a FormattedTextControl draws)."""
    out: list[Fragment] = []
    for i, line in enumerate(lines):
        if i:
            out.append(("", "\n"))
        out.extend(f for f in line if f[1])
    return out


def plain(fragments: Sequence[Fragment]) -> str:
    return "".join(t for _, t in fragments)


def screen_text(v: SeatView, ui: UiState, width: int = 80, height: int = 24) -> str:
    """The screen as plain text, trailing spaces stripped (for tests and other tools)."""
    return "\n".join(plain(line).rstrip() for line in screen_lines(v, ui, width, height))


__all__ = [
    "UiState", "render", "join_lines", "footer_lines", "screen_lines", "name_of", "screen_text", "plain", "area_layout", "make_style",
    "home_pos",
    "color_depth", "use_color", "card_label", "value_text", "help_lines", "bar_chart",
    "doubling_text", "MIN_WIDTH", "MIN_HEIGHT", "needed_size", "too_small_line",
]
