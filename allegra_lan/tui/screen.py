# The table screen as formatted text: pure, no Application, no I/O.
#
# Public API (used by `allegra play`, the replay viewer and the network client):
#   UiState                          what the client adds to a SeatView (cursor, highlights,
#                                    message, last moves, footer keys, names, overlay)
#   render(v, ui, width, height)     -> prompt_toolkit formatted text (list of (style, text))
#   screen_lines(v, ui, w, h)        -> list of lines, each a list of (style, text)
#   screen_text(v, ui, w, h) -> str  the same screen as plain text (tests assert on this)
#   plain(fragments) -> str          plain text of formatted text
#   area_layout(v, seat)             -> rows of Slots (None: no place) a cursor moves over
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
from dataclasses import dataclass
from typing import Sequence

from prompt_toolkit.output.color_depth import ColorDepth
from prompt_toolkit.styles import Style

from allegra_lan.rules import JOKER, CardView, RoundResult, SeatView, Slot
from allegra_lan.rules.state import DECISION_WORDS

Fragment = tuple[str, str]
Line = list[Fragment]


@dataclass(frozen=True)
class UiState:
    """What the client shows besides the view itself.

    `focus` is the seat drawn large (default: the view's seat, or seat 0 for a view
    from nobody's seat); `marked` are slots chosen so far (the first card of a swap);
    `highlight` the slots of a clear or chain step being shown; `keys` the footer as
    (key, what it does) pairs, only those legal now; `overlay` is None for the table,
    "help", "round" (the last round's result) or "game" (the game's end)."""

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


def name_of(names: Sequence[str], seat: int, viewer: int | None = None) -> str:
    base = names[seat] if 0 <= seat < len(names) and names[seat] else f"seat {seat}"
    return f"{base} (you)" if viewer is not None and seat == viewer else base


def line_len(line: Line) -> int:
    return sum(len(t) for _, t in line)


def fit(line: Line, width: int) -> Line:
    """Cut a line to `width` characters and pad it with spaces to exactly `width`."""
    out: Line = []
    left = width
    for style, text in line:
        if left <= 0:
            break
        piece = text[:left]
        out.append((style, piece))
        left -= len(piece)
    if left > 0:
        out.append(("", " " * left))
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


# ----------------------------------------------------------------- displays


def area_layout(v: SeatView, seat: int) -> list[list[Slot | None]]:
    """The places a cursor moves over for `seat`: its display, and in ALLEGRA a fifth
    column, its left-hand neighbour's (seat + 1) rightmost column that is part of its
    area (R13). Rows of Slots; None where there is no place."""
    rows = v.displays[seat]
    nrows = len(rows)
    ncols = len(rows[0]) if rows else 0
    out = [[Slot(seat, r, c) for c in range(ncols)] for r in range(nrows)]
    if v.variant == "allegra" and v.players > 1:
        left = (seat + 1) % v.players
        lrows = v.displays[left]
        lcols = len(lrows[0]) if lrows else 0
        for r in range(nrows):
            out[r].append(Slot(left, r, lcols - 1) if r < len(lrows) and lcols else None)
    return out


def _cell(v: SeatView, ui: UiState, slot: Slot | None, width: int, big: bool) -> Line:
    if slot is None:
        return [("", " " * width)]
    try:
        card = v.card_at(slot)
    except IndexError:
        card = None
    text = card_label(card, width - 2 if big else width)
    style = card_class(card)
    if slot in ui.highlight:
        style += " class:highlight"
    if slot in ui.marked:
        style += " class:marked"
    if ui.cursor == slot:
        text = f"[{text}]"
        style += " class:cursor"
        pad = width - len(text)
        return [("", " " * (pad - pad // 2)), (style, text), ("", " " * (pad // 2))]
    if slot in ui.marked:
        text = f"<{text}>"
    if big:
        pad = width - len(text)
        return [("", " " * (pad - pad // 2)), (style, text), ("", " " * (pad // 2))]
    return [("", " " * max(0, width - len(text))), (style, text)]


def _seat_label(v: SeatView, ui: UiState, seat: int, width: int) -> Line:
    viewer = v.seat if v.seat >= 0 else None
    to_act = v.decision is not None and v.decision.seat == seat
    name = name_of(ui.names, seat, viewer)
    marks = ""
    if v.ender == seat:
        marks += " ended"
    style = "class:name.turn" if to_act else ("class:you" if seat == viewer else "class:name")
    line: Line = [(style, (">" if to_act else " ") + name), ("", f"  {v.totals[seat]}"), ("class:label", marks)]
    return fit(line, width)


def display_block(v: SeatView, ui: UiState, seat: int, cell: int, big: bool,
                  spacing: int = 0) -> tuple[list[Line], int]:
    """One seat's display as lines: a name line, column numbers (big only), the rows.

    ALLEGRA: the seat's rightmost column is set off by `|` (it is also in the area of the
    seat before), and a big display shows the neighbour's shared column after `+`."""
    layout = area_layout(v, seat) if big else [
        [Slot(seat, r, c) for c in range(len(row))] for r, row in enumerate(v.displays[seat])]
    allegra = v.variant == "allegra"
    own_cols = len(v.displays[seat][0]) if v.displays[seat] else 0
    ncols = max((len(r) for r in layout), default=0)

    def sep(c: int) -> Line:
        if allegra and c == own_cols - 1 and own_cols > 0:
            return [("class:shared", "|")]
        if allegra and big and c == own_cols:
            return [("class:shared", "+")]
        return []

    width = ncols * cell + (1 if allegra and own_cols else 0) + (1 if allegra and big and ncols > own_cols else 0)
    lines: list[Line] = []
    if big:
        nums: Line = []
        for c in range(ncols):
            nums.extend(sep(c))
            if c < own_cols:
                nums.append(("class:label", str(c + 1).center(cell)))
            else:  # the neighbour's shared column, named by its owner
                owner = name_of(ui.names, (seat + 1) % v.players)
                nums.append(("class:shared", owner[:cell].center(cell)))
        lines.append(nums)
    for r, row in enumerate(layout):
        line: Line = []
        for c, slot in enumerate(row):
            line.extend(sep(c))
            style_extra = "class:shared" if big and c >= own_cols else ""
            frags = _cell(v, ui, slot, cell, big)
            if style_extra:
                frags = [(s + " " + style_extra if t.strip() else s, t) for s, t in frags]
            line.extend(frags)
        lines.append(line)
        if spacing and r < len(layout) - 1:
            lines.extend([[] for _ in range(spacing)])
    if not layout:
        lines.append([("class:label", "(no cards left)")])
    label_w = max(width, 14)
    return [_seat_label(v, ui, seat, label_w)] + lines, label_w


# ----------------------------------------------------------------- the table


def _header(v: SeatView, ui: UiState, width: int) -> Line:
    rs = v.ruleset
    d = v.decision
    left = f"{rs.title}  round {min(v.round_no + 1, rs.rounds)}/{rs.rounds}  turn {v.turn}"
    if d is None:
        act = "  game over"
    else:
        who = "you" if d.seat == v.seat else name_of(ui.names, d.seat)
        act = f"  to act: {who} ({DECISION_WORDS.get(d.kind, d.kind)})"
        if len(left) + len(act) > width:
            act = f"  to act: {who}"
    line: Line = [("class:header", left), ("class:status", act)]
    if ui.title:
        room = width - line_len(line) - 1
        if room > len(ui.title):
            line.append(("", " " * (room - len(ui.title))))
            line.append(("class:title", " " + ui.title))
    return fit(line, width)


def _panel(v: SeatView, ui: UiState, width: int, height: int) -> list[Line]:
    """The right-hand pane: deck, discard, hand, knock, round end, status, last moves."""
    out: list[Line] = []
    top = v.discard_top
    pile: Line = [("", f"Deck {v.deck_size}   Discard ")]
    if top is not None:
        pile.append((value_class(top.value), f"[{value_text(top.value)}]"))
        pile.append(("class:label", f" {v.discard_size} card{'s' if v.discard_size != 1 else ''}"))
    else:
        pile.append(("class:label", "(empty)"))
    out.append(pile)
    if v.hand:
        who = "you" if v.active == v.seat else name_of(ui.names, v.active)
        hand: Line = [("", f"In hand ({who}): ")]
        for h in v.hand:
            hand.append((value_class(h.value), f"[{value_text(h.value)}]"))
            hand.append(("class:label", " from deck " if h.from_deck else " from discard "))
        out.append(hand)
    if v.knock is not None:
        k, given, holds = v.knock
        text = f"Knock: {name_of(ui.names, k, v.seat)} got {value_text(given.value)}"
        if holds is not None:
            text += f", holds {value_text(holds.value)}"
        out.append([("class:status", text)])
    if v.ender is not None:
        text = f"Round ends: {name_of(ui.names, v.ender, v.seat)} has no closed card"
        if v.final_lap:
            text += "; still to play: " + ", ".join(name_of(ui.names, s) for s in v.final_lap)
        for piece in wrap_words(text, width):
            out.append([("class:status", piece)])
    if ui.status:
        for piece in wrap_words(ui.status, width):
            out.append([("class:status", piece)])
    legend: Line = [("class:label", "? closed  . cleared")]
    if v.variant == "allegra":
        legend.append(("class:shared", "  | shared column"))
    if any(c is not None and c.peeked for rows in v.displays for row in rows for c in row):
        legend.append(("class:card.peeked", "  (n) seen by you alone"))
    out.append(legend)
    room = height - len(out) - 1
    if room > 0 and ui.moves:
        out.append([("class:label", "Last moves:")])
        shown: list[Line] = []
        for m in reversed(ui.moves):  # the newest last, wrapped, as many as fit
            pieces = wrap_words(m, width - 2)
            wrapped = [[("class:moves", pieces[0])]] + [[("class:moves", "  " + p)] for p in pieces[1:]]
            if len(shown) + len(wrapped) > room:
                break
            shown[:0] = wrapped
        out.extend(shown)
    return out[:height]


def _footer(ui: UiState, width: int, rows: int) -> list[Line]:
    return footer_lines(ui.keys, width, rows)


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


def _small_cell(v: SeatView, seats: Sequence[int], width: int) -> int:
    """The widest small-display cell (4, then 3, then 2) that fits the opponents in one row."""
    for cell in (4, 3, 2):
        total = 0
        for s in seats:
            rows = v.displays[s]
            cols = len(rows[0]) if rows else 0
            total += max(cols * cell + (1 if v.variant == "allegra" else 0), 14) + 2
        if total <= width + 2:
            return cell
    return 2


def _table(v: SeatView, ui: UiState, width: int, height: int) -> list[Line]:
    focus = ui.focus if ui.focus is not None else (v.seat if v.seat >= 0 else 0)
    others = [(focus + i) % v.players for i in range(1, v.players)]
    lines: list[Line] = [_header(v, ui, width)]
    # Opponents, small, in play order after the focus seat.
    cell = _small_cell(v, others, width)
    blocks, widths = [], []
    for s in others:
        b, w = display_block(v, ui, s, cell, big=False)
        blocks.append(b)
        widths.append(w)
    opp = hwrap(blocks, widths, width)
    footer_rows = 2
    bottom = 1 + footer_rows  # message line, footer
    big_rows = len(v.displays[focus])
    # The focus display: as large as the height allows.
    cols = max((len(r) for r in area_layout(v, focus)), default=0)
    big_cell = 6 if cols * 6 + 2 <= width // 2 + 6 else 5
    fixed = len(lines) + 1 + len(opp) + 1 + 2 + big_rows + bottom
    spacing = 1 if big_rows and height - fixed >= big_rows - 1 else 0
    gap_lines = 1 if height - fixed - spacing * max(big_rows - 1, 0) >= 0 else 0
    lines.append([])
    lines.extend(opp)
    if gap_lines:
        lines.append([])
    me, me_w = display_block(v, ui, focus, big_cell, big=True, spacing=spacing)
    if v.variant == "allegra" and v.players > 1:
        last = len(v.displays[focus][0]) if v.displays[focus] else 0
        notes = [f"| col {last} is also in {name_of(ui.names, (focus - 1) % v.players)}'s area",
                 f"+ {name_of(ui.names, (focus + 1) % v.players)}'s col 4, in this area"]
        me_w = max(me_w, min(max(len(n) for n in notes), 34))
        me.extend([("class:shared", n[:me_w])] for n in notes)
    panel_w = max(10, width - me_w - 3)
    mid_h = max(len(me), height - len(lines) - bottom)
    panel = _panel(v, ui, panel_w, mid_h)
    lines.extend(hjoin([me, panel], [me_w, panel_w], gap=3))
    while len(lines) < height - bottom:
        lines.append([])
    msg_style = "class:message.refused" if ui.refused else "class:message"
    lines.append([(msg_style, ui.message)])
    lines.extend(_footer(ui, width, footer_rows))
    return lines


# ----------------------------------------------------------------- round and game end


def _result_block(v: SeatView, ui: UiState, r: RoundResult, seat: int, cell: int) -> tuple[list[Line], int]:
    rows = r.displays[seat]
    cols = len(rows[0]) if rows else 0
    w = max(cols * cell + (1 if v.variant == "allegra" else 0), 14)
    name = name_of(ui.names, seat, v.seat if v.seat >= 0 else None)
    out: list[Line] = [[("class:you" if seat == v.seat else "class:name", name)]]
    for row in rows:
        line: Line = []
        for c, val in enumerate(row):
            if v.variant == "allegra" and c == cols - 1:
                line.append(("class:shared", "|"))
            text = "." if val is None else value_text(val)
            line.append(("class:card.hole" if val is None else value_class(val), text.rjust(cell)))
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
        line: Line = [("class:name", name_of(ui.names, s, viewer)[:name_w - 1].ljust(name_w))]
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
    lines: list[Line] = []
    if game:
        low = min(r.totals)
        ws = [s for s, t in enumerate(r.totals) if t == low]
        who = ", ".join(name_of(ui.names, s, viewer) for s in ws)
        verb = "wins" if len(ws) == 1 else "share the win"
        lines.append([("class:winner", f"Game over: {who} {verb} with {low}"),
                      ("class:label", "  (every card turned up)")])
    else:
        lines.append([("class:header", f"Round {r.round_no + 1} of {rs.rounds} is over"),
                      ("class:label", "  (every card turned up)")])
    if ui.status:
        lines.extend([("class:status", t)] for t in wrap_words(ui.status, width))
    cell = 3
    blocks, widths = [], []
    for s in range(v.players):
        b, w = _result_block(v, ui, r, s, cell)
        blocks.append(b)
        widths.append(w)
    lines.extend(hwrap(blocks, widths, width))
    lines.append([])
    name_w = min(16, max(len(name_of(ui.names, s, viewer)) for s in range(v.players)) + 2)
    lines.append([("class:label", "".ljust(name_w) + "   sum  score  total")])
    for s in range(v.players):
        score: Line = [("class:name", name_of(ui.names, s, viewer)[:name_w - 1].ljust(name_w)),
                       ("", f"{r.raw[s]:>6} ")]
        if r.doubled and r.ender == s:
            score.append(("class:doubled", f"{'x2 ' + str(r.scores[s]):>6}"))
        else:
            score.append(("", f"{r.scores[s]:>6}"))
        score.append(("", f" {r.totals[s]:>6}"))
        if r.ender == s:
            score.append(("class:label", "  ended the round"))
        lines.append(score)
    lines.append([("class:doubled" if r.doubled else "", doubling_text(r, ui.names, viewer))])
    lines.append([])
    lines.extend(bar_chart(v, ui, width))
    bottom = 3
    while len(lines) > height - bottom and [] in lines:
        lines.remove([])  # blank lines go first when the window is short
    while len(lines) < height - bottom:
        lines.append([])
    lines = lines[:height - bottom]
    lines.append([("class:message.refused" if ui.refused else "class:message", ui.message)])
    lines.extend(_footer(ui, width, 2))
    return lines


# ----------------------------------------------------------------- help


def help_lines(variant: str) -> list[str]:
    """The help screen: every key of the variant, read from the one key table (tui/keys.py)
    that the footer and the key handling read too, so the three cannot disagree."""
    from .keys import help_entries

    lines = ["Keys (the footer shows the ones that do something now)"]
    for label, what in help_entries(variant):
        lines.append(f"  {label:<15} {what}")
    lines += [
        "",
        "Cards: ? closed, . cleared, (7) a closed card that only you have seen.",
        "The rules: press r.",
    ]
    if variant == "allegra":
        lines.append("Your area: your display and your left neighbour's rightmost column (shared).")
    return lines


def _help(v: SeatView, ui: UiState, width: int, height: int) -> list[Line]:
    lines: list[Line] = [[("class:header", f"{v.ruleset.title}: help")], []]
    lines.extend([("", t)] for t in help_lines(v.variant))
    bottom = 3
    lines = lines[:height - bottom]
    while len(lines) < height - bottom:
        lines.append([])
    lines.append([("class:message", ui.message)])
    lines.extend(_footer(ui, width, 2))
    return lines


# ----------------------------------------------------------------- entry points

MIN_WIDTH = 40
MIN_HEIGHT = 12


def screen_lines(v: SeatView, ui: UiState, width: int, height: int) -> list[Line]:
    """The screen as exactly `height` lines of exactly `width` characters."""
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        lines: list[Line] = [[("class:message.refused",
                               f"The window is too small ({width}x{height}); "
                               f"make it at least {MIN_WIDTH}x{MIN_HEIGHT}.")]]
        lines.append([("class:footer", "q quits")])
    elif ui.overlay == "help":
        lines = _help(v, ui, width, height)
    elif ui.overlay in ("round", "game") and v.results:
        lines = _round_end(v, ui, width, height, ui.overlay == "game")
    else:
        lines = _table(v, ui, width, height)
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
    "color_depth", "use_color", "card_label", "value_text", "help_lines", "bar_chart",
    "doubling_text", "MIN_WIDTH", "MIN_HEIGHT",
]
