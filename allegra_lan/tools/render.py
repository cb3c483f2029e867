"""The table as text: `allegra replay show`, and later the terminal client's board.

Rendering goes through the engine's per-seat views, so `--seat N` shows
exactly what seat N could see (its own peeks as `(7)`, nobody else's), the
default shows what a spectator sees (no peeks at all), and `--all` shows
every card (closed ones as `?7`, as in RULINGS.md's worked examples). A log
that has not dealt yet shows where its setup stands instead.
"""

from __future__ import annotations

import argparse
from typing import Sequence, TextIO

from allegra_lan.log.identity import fingerprint
from allegra_lan.log.replay import ReplayError, read_replay
from allegra_lan.log.results import duration, iso_time
from allegra_lan.names import name_of
from allegra_lan.rules import JOKER, CardView, SeatView, State, Variant, full_view, ruleset_from_dict, view
from allegra_lan.rules.state import DECISION_WORDS
from allegra_lan.table import Table
from allegra_lan.tool_args import add_show_arguments
from allegra_lan.tools import describe_event, fold_log, prog_of, usage_error

PROG = "allegra replay show"
CELL = 5  # characters per card in a grid: room for "(-2)" and "?13" with a space between


def card_text(value: int | None) -> str:
    if value is None:
        return "?"
    return "J" if value == JOKER else str(value)


def cell_text(card: CardView | None) -> str:
    """`5` face up, `?` closed, `(7)` closed but peeked by the viewer, `?7` closed under --all, `.` hole."""
    if card is None:
        return "."
    if card.up:
        return card_text(card.value)
    if card.peeked:
        return f"({card_text(card.value)})"
    if card.value is not None:
        return f"?{card_text(card.value)}"
    return "?"


def _name(names: Sequence[str], seat: int) -> str:
    """`seat 1 bob` (the tools name a seat by number too), or `seat 1` when no names are known."""
    return f"seat {seat} {names[seat]}" if 0 <= seat < len(names) else f"seat {seat}"


def _grid_lines(v: SeatView, seat: int, names: Sequence[str]) -> list[str]:
    rows = v.displays[seat]
    cols = len(rows[0]) if rows else 0
    # ALLEGRA (R13): a seat's rightmost column is also part of its right-hand neighbour's area.
    shared = v.variant is Variant.ALLEGRA and cols > 0

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(CELL) for c in cells]
        if shared:
            parts[-1] = " |" + cells[-1].rjust(CELL - 1)
        return "".join(parts)

    out = ["     " + line([str(c + 1) for c in range(cols)])]
    for r, row in enumerate(rows):
        out.append(f"  {r + 1:>2} " + line([cell_text(c) for c in row]))
    if not rows:
        out.append("     (no cards left)")
    if shared:
        other = (seat - 1) % v.players
        out.append(f"     column {cols} is also in {_name(names, other)}'s area")
    return out


def _header(v: SeatView, names: Sequence[str]) -> list[str]:
    rs = v.ruleset
    d = v.decision
    lines = [
        f"{rs.title}, {v.players} players, round {v.round_no + 1} of {rs.rounds}, turn {v.turn}"
        + (f", dealer {_name(names, v.dealer)}" if d is not None else ""),
    ]
    if d is None:
        low = min(v.totals)
        ws = [i for i, t in enumerate(v.totals) if t == low]
        label = "winner" if len(ws) == 1 else "winners (shared)"
        lines.append(f"game over: {label} {', '.join(_name(names, w) for w in ws)} with {low}")
    else:
        lines.append(f"to act: {_name(names, d.seat)}: {DECISION_WORDS.get(d.kind, d.kind)}")
    top = v.discard_top
    pile = f"discard pile {v.discard_size} card{'s' if v.discard_size != 1 else ''}"
    if top is not None:
        pile += f", top {card_text(top.value)}"
    lines.append(f"deck {v.deck_size} card{'s' if v.deck_size != 1 else ''}, {pile}, "
                 f"cleared this round {v.cleared}")
    if v.hand:
        held = ", ".join(f"{card_text(h.value)} (from the {'deck' if h.from_deck else 'discard pile'})"
                         for h in v.hand)
        lines.append(f"in hand ({_name(names, v.active)}): {held}")
    if v.knock is not None:
        k, given, holds = v.knock
        text = f"knock: {_name(names, k)} was given {card_text(given.value)}"
        if holds is not None:
            text += f" and holds {card_text(holds.value)} for the exchange"
        lines.append(text)
    if v.ender is not None:
        text = f"round end triggered by {_name(names, v.ender)}"
        if v.final_lap:
            text += f"; still to play: {', '.join(_name(names, s) for s in v.final_lap)}"
        lines.append(text)
    lines.append("totals: " + ", ".join(f"{name_of(names, i)} {t}" for i, t in enumerate(v.totals)))
    return lines


def _results(v: SeatView, names: Sequence[str]) -> list[str]:
    out = []
    for r in v.results:
        parts = []
        for i, score in enumerate(r.scores):
            part = f"{name_of(names, i)} {score}"
            if r.ender == i:
                part += f" (ended it{f', doubled from {r.raw[i]}' if r.doubled else ''})"
            parts.append(part)
        out.append(f"  round {r.round_no + 1}: {', '.join(parts)}; totals {' '.join(map(str, r.totals))}")
    return ["rounds played:"] + out if out else []


def render_view(v: SeatView, names: Sequence[str] | None = None, viewer: str | None = None) -> str:
    """A seat view as text (the client renders its own view; `show` renders any).

    `viewer` says whose eyes these are, since a view from nobody's seat looks
    the same whether it hides every closed card or shows them all."""
    names = list(names) if names is not None else []
    lines = _header(v, names)
    if viewer is None and v.seat >= 0:
        viewer = f"as {_name(names, v.seat)} sees it"
    if viewer:
        lines.insert(1, viewer)
    d = v.decision
    for seat in range(v.players):
        mark = "   <- to act" if d is not None and d.seat == seat else ""
        lines.append("")
        lines.append(f"{_name(names, seat)}  total {v.totals[seat]}{mark}")
        lines.extend(_grid_lines(v, seat, names))
    res = _results(v, names)
    if res:
        lines.append("")
        lines.extend(res)
    return "\n".join(lines) + "\n"


def render_setup(table: Table) -> str:
    """A log that has not dealt yet: who sits where and what the ceremony still waits for."""
    g = table.genesis
    if g is None:
        return "no events yet: the log starts with seat 0's genesis\n"
    n = len(g.seats)
    # The genesis was accepted, so its ruleset reads.
    title = ruleset_from_dict(g.ruleset).title
    lines = [f'table "{g.table}": {title}, {n} seats']
    for i, s in enumerate(g.seats):
        lines.append(f"  seat {i}  {s.name}  {fingerprint(s.key)}")
    accepted = min(max(table.seq - 1, 0), n)
    lines.append(f"setup: {accepted} of {n} accepted, {len(table.commits)} of {n} committed, "
                 f"{len(table.nonces)} of {n} revealed")
    nxt = table.next_author()
    if nxt is not None:
        lines.append(f"waiting for: seat {nxt} {g.seats[nxt].name}'s {table.stage()}")
    return "\n".join(lines) + "\n"


def render_signed(table: Table) -> str:
    """The signed start, each round's results (how many seats signed, the scores) and the end,
    of a log with signed results (issue 13); empty for an older log, which has none."""
    g = table.genesis
    if g is None or g.started is None:
        return ""
    started, ended = table.times()
    lines = [f"started: {iso_time(started)} (seat 0's clock)"]
    n = table.players
    rounds = [(r[0].body, len(r)) for r in table.results]
    if table.signing:
        rounds.append((table.signing[0].body, len(table.signing)))
    for body, count in rounds:
        lines.append(f"round {body['round'] + 1} result signed by {count} of {n} seats: scores "
                     f"{' '.join(map(str, body['scores']))}, totals {' '.join(map(str, body['totals']))} "
                     f"(state hash {body['hash'].hex()[:16]})")
    if ended is not None:
        lines.append(f"ended: {iso_time(ended)} (the last result's clock), after "
                     f"{duration(ended - started) if started is not None else '-'}")
    return "\n".join(lines) + "\n"


def render_table(table_or_state: Table | State, names: Sequence[str] | None = None,
                 seat: int | None = None, show_all: bool = False) -> str:
    """The table as text: as `seat` sees it, as a spectator (seat None), or every card (show_all).

    A Table supplies the seat names from its genesis when `names` is None, and
    shows its setup stage before the deal."""
    if isinstance(table_or_state, Table):
        table = table_or_state
        if table.state is None:
            return render_setup(table)
        if names is None and table.genesis is not None:
            names = [s.name for s in table.genesis.seats]
        state = table.state
    else:
        state = table_or_state
    if seat is not None and not 0 <= seat < state.players:
        raise ValueError(f"there is no seat {seat} (seats 0 to {state.players - 1})")
    if show_all:
        return render_view(full_view(state), names, "every card shown (closed ones as ?N)")
    if seat is None:
        # A view from no seat holds nobody's peeks: what a spectator may see.
        return render_view(view(state, -1), names, "as a spectator sees it")
    return render_view(view(state, seat), names)


def run_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Exit 0 after showing the table; 1 if the log is refused before SEQ, or (without --at)
    the file breaks after its last whole event (the table before the fault is shown, and the
    fault named on stderr, as verify names it); 2 for bad arguments or an unreadable file."""
    prog = prog_of(args, PROG)
    seat = getattr(args, "seat", None)
    show_all = bool(getattr(args, "show_all", False))
    if seat is not None and show_all:
        return usage_error(err, prog, "choose --seat N or --all, not both")
    try:
        replay = read_replay(args.file)
    except ReplayError as e:
        return usage_error(err, prog, str(e))
    events = replay.events
    at = getattr(args, "at", None)
    if at is None:
        if not events:
            out.write(render_setup(Table()))
            if replay.fault is not None:
                seq, reason = replay.fault
                err.write(f"{prog}: the file breaks at seq {seq}: {reason}\n")
                return 1
            return 0
        at = len(events) - 1
    if not 0 <= at < len(events):
        last = f"seqs 0 to {len(events) - 1}" if events else "no events"
        if replay.fault is not None:
            last += f"; seq {replay.fault[0]}: {replay.fault[1]}"
        return usage_error(err, prog, f"--at {at} is not in the log ({last})")
    folded = fold_log(events, upto=at)
    t = folded.table
    if seat is not None and t.genesis is not None and not 0 <= seat < t.players:
        return usage_error(err, prog, f"--seat {seat}: the game has seats 0 to {t.players - 1}")
    status = 0
    if folded.fault is not None:
        err.write(f"{prog}: the log is refused at seq {folded.fault_seq}: {folded.fault.reason}; "
                  "showing the table before that event\n")
        status = 1
    elif replay.fault is not None and getattr(args, "at", None) is None:
        # The file breaks after the last event shown: say where, as verify does.
        seq, reason = replay.fault
        err.write(f"{prog}: the file breaks at seq {seq}: {reason}; showing the table "
                  f"after seq {seq - 1}\n")
        status = 1
    if t.events:
        out.write(f"after {describe_event(t.events[-1], t)}\n\n")
    if t.state is None:
        out.write(render_setup(t))
    else:
        out.write(render_table(t, seat=seat, show_all=show_all))
    signed = render_signed(t)
    if signed:
        out.write("\n" + signed)
    out.flush()
    return status


__all__ = [
    "card_text", "cell_text", "render_view", "render_setup", "render_table", "render_signed",
    "add_show_arguments", "run_show",
]
