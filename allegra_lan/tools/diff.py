"""`allegra diff A B`: where two logs of one game part, and what differs there.

Two peers that disagree hold two logs; the first seq whose signed bytes
differ is where they parted, and the only place worth looking. The tool
shows both events there side by side, folds both logs to that seq and names
the parts of the state that differ after each event, then says how much each
log has after it. The signed bytes decide sameness: headers are not signed,
so header differences are only noted.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from dataclasses import dataclass
from typing import Sequence, TextIO

from allegra_lan.log.envelope import Event, EventError, decode_event
from allegra_lan.log.identity import fingerprint
from allegra_lan.log.replay import Replay, ReplayError, read_replay
from allegra_lan.rules import HOLE, JOKER, State, to_act
from allegra_lan.rules.effects import Cleared, Effect, Peeked
from allegra_lan.table import Table
from allegra_lan.tool_args import add_diff_arguments
from allegra_lan.tools import Folded, describe_event, fold_log, plain, prog_of, usage_error, who

PROG = "allegra diff"
COLUMN = 38  # width of each side in the side-by-side listing


def first_difference(a: Sequence[bytes], b: Sequence[bytes]) -> int | None:
    """The first seq whose signed bytes differ, or where the shorter log ends; None if equal."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    if len(a) != len(b):
        return min(len(a), len(b))
    return None


@dataclass
class Side:
    """One log at the parting seq: its event there (or why it has none) and its fold up to it."""

    label: str
    event: Event | None
    problem: str | None  # why the event cannot be decoded or was refused
    folded: Folded


def _side(label: str, events: Sequence[bytes], seq: int) -> Side:
    folded = fold_log(events, upto=seq)
    ev: Event | None = None
    problem: str | None = None
    try:
        ev = decode_event(events[seq])
    except EventError as e:
        problem = f"cannot be decoded: {e}"
    if folded.fault is not None and problem is None:
        problem = f"refused at seq {folded.fault_seq}: {folded.fault.reason}"
    return Side(label, ev, problem, folded)


def _value(state: State, card: int) -> str:
    """A card's value, whether or not the rules revealed it yet (testers hold both whole logs);
    under the fair deal only what the log opened for everyone (`?`: not opened yet), since no
    file holds the rest until the secrets are published."""
    if state.fair:
        value = state.known[card] if card < len(state.known) else None
        if value is None:
            return "?"
    else:
        value = state.source.value(state.round_no, card)
    return "J" if value == JOKER else str(value)


def _card(state: State, card: int) -> str:
    """`7#40`: value and card id, since two logs may move equal values but different cards."""
    return f"{_value(state, card)}#{card}"


def _display(state: State, seat: int) -> list[str]:
    g = state.grids[seat]
    rows = []
    for r in range(g.rows):
        cells = []
        for c in range(g.cols):
            card = g.cells[r * g.cols + c]
            if card == HOLE:
                cells.append(".")
            else:
                text = _value(state, card)
                cells.append(text if card in state.up else f"?{text}")
        rows.append(" ".join(x.rjust(3) for x in cells))
    return rows


def _effect(e: Effect) -> str:
    if isinstance(e, Cleared):
        return f"Cleared(step {e.step}, {len(e.cards)} cards)"
    if isinstance(e, Peeked):
        return f"Peeked(seat {e.seat}, {len(e.cards)} cards)"
    return type(e).__name__


def state_fields(table: Table) -> dict[str, list[str]]:
    """The parts of a table a person compares, each as lines of text (a display has several).

    Hidden values are shown too: a diff is read by testers holding both whole logs."""
    out: dict[str, list[str]] = {
        "game": [table.game.hex() if table.game is not None else "none"],
        "stage": [table.stage()],
    }
    nxt = table.next_author()
    out["next author"] = ["nobody" if nxt is None else f"seat {nxt}"]
    st = table.state
    if st is None:
        g = table.genesis
        out["genesis"] = ["none"] if g is None else [
            json.dumps(plain(table.events[0].body, short=True), sort_keys=True, ensure_ascii=False)]
        out["commitments"] = [" ".join(c.hex()[:16] for c in table.commits) or "none"]
        out["reveals"] = [" ".join(n.hex()[:16] for n in table.nonces) or "none"]
        return out
    d = to_act(st)
    out["seed"] = [table.seed.hex() if table.seed else "-"]
    out["round"] = [str(st.round_no + 1)]
    out["turn"] = [str(st.turn)]
    out["phase"] = [st.phase.name.lower()]
    out["to act"] = ["nobody (game over)" if d is None else f"seat {d.seat}: {d.kind}"]
    out["deck"] = [f"{len(st.deck)} cards" + (f", top {_card(st, st.deck[-1])}" if st.deck else "")]
    out["discard pile"] = [f"{len(st.discard)} cards" + (
        f", top {_card(st, st.discard[-1])}" if st.discard else "")]
    out["hand"] = [", ".join(f"{_card(st, c)} from the {'deck' if f else 'discard pile'}"
                             for c, f in st.hand) or "empty"]
    out["knock"] = ["none" if st.knock is None else
                    f"seat {st.knock[0]} given {_card(st, st.knock[1])}, holds "
                    + ("nothing" if st.knock[2] == HOLE else _card(st, st.knock[2]))]
    out["round end"] = ["not triggered" if st.ender is None else
                        f"triggered by seat {st.ender}, still to play "
                        f"{list(st.final_lap) if st.final_lap is not None else []}"]
    out["totals"] = [" ".join(map(str, st.totals))]
    out["rounds played"] = [f"round {r.round_no + 1}: scores {' '.join(map(str, r.scores))}"
                            for r in st.results] or ["none"]
    out["cleared this round"] = [str(st.round_cleared)]
    out["reshuffles"] = [str(st.reshuffles)]
    for seat in range(st.players):
        out[f"display of seat {seat}"] = _display(st, seat)
        out[f"peeked by seat {seat}"] = [
            " ".join(_card(st, c) for c in sorted(st.peeked[seat])) or "nothing"]
    out["the move caused"] = [", ".join(_effect(e) for e in st.effects) or "nothing"]
    return out


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, COLUMN, break_long_words=True, break_on_hyphens=False) or [""]


def side_by_side(rows: Sequence[tuple[str, str, str]], width: int = 12) -> list[str]:
    """Rows of (field, A, B); a differing field is marked `*`; long values wrap in their column."""
    out = []
    for name, a, b in rows:
        mark = " " if a == b else "*"
        left, right = _wrap(a), _wrap(b)
        for i in range(max(len(left), len(right))):
            label = name if i == 0 else ""
            la = left[i] if i < len(left) else ""
            rb = right[i] if i < len(right) else ""
            out.append(f"{mark if i == 0 else ' '} {label:<{width}} {la:<{COLUMN}}  {rb}".rstrip())
    return out


def _event_rows(a: Side, b: Side) -> list[tuple[str, str, str]]:
    def fields(s: Side) -> dict[str, str]:
        if s.event is None:
            return {"event": s.problem or "none"}
        ev = s.event
        t = s.folded.table
        return {
            "game": ev.game.hex(),
            "seq": str(ev.seq),
            "id": ev.id.hex(),
            "prev": ev.prev.hex(),
            "author": who(t, ev.author) if t.genesis is not None else fingerprint(ev.author),
            "kind": ev.kind,
            "body": json.dumps(plain(ev.body, short=True), sort_keys=True, ensure_ascii=False),
            "verdict": s.problem or "taken",
        }

    fa, fb = fields(a), fields(b)
    names = list(dict.fromkeys([*fa, *fb]))
    return [(n, fa.get(n, "-"), fb.get(n, "-")) for n in names]


def _more(label: str, events: Sequence[bytes], seq: int) -> str:
    after = len(events) - seq - 1
    if after <= 0:
        return f"{label} has nothing after it"
    return f"{label} has {after} more event{'s' if after != 1 else ''} (to seq {len(events) - 1})"


def diff_lines(a: Replay, b: Replay) -> tuple[bool, list[str]]:
    """(same, the report's lines) for two replays' logs."""
    ea, eb = a.events, b.events
    notes = []
    for label, r in (("A", a), ("B", b)):
        if r.fault is not None:
            notes.append(f"note: {label} stops reading at seq {r.fault[0]}: {r.fault[1]}")
        notes.extend(f"note: {label}: {n}" for n in r.notes)
    seq = first_difference(ea, eb)
    if seq is None:
        differing = sorted(k for k in set(a.tags) | set(b.tags) if a.tags.get(k) != b.tags.get(k))
        lines = [f"same: both logs hold the same {len(ea)} events"]
        if differing:
            lines.append("note: the headers differ in " + ", ".join(differing))
        return True, lines + notes
    if seq == len(ea) or seq == len(eb):
        short, long_, events_long = ("A", "B", eb) if seq == len(ea) else ("B", "A", ea)
        ends = f"ends at seq {seq - 1}" if seq else "has no events"
        lines = [f"different: {short} {ends}, {long_} goes on to seq {len(events_long) - 1} "
                 f"({len(events_long) - seq} more event{'s' if len(events_long) - seq != 1 else ''})"]
        try:
            nxt = decode_event(events_long[seq])
            t = fold_log(events_long, upto=seq - 1).table if seq else Table()
            lines.append(f"{long_}'s next event: {describe_event(nxt, t)}")
        except EventError as e:
            lines.append(f"{long_}'s next event cannot be decoded: {e}")
        return False, lines + notes
    sa, sb = _side("A", ea, seq), _side("B", eb, seq)
    lines = [f"different: the logs part at seq {seq}", ""]
    lines.append(f"  {'':<12} {'A':<{COLUMN}}  B")
    lines.extend(side_by_side(_event_rows(sa, sb)))
    lines.append("")
    fa, fb = state_fields(sa.folded.table), state_fields(sb.folded.table)
    after = {s.label: (f"after seq {s.folded.table.seq - 1}" if s.folded.table.seq else "before any event")
             for s in (sa, sb)}
    heading = (f"the state after seq {seq}" if after["A"] == after["B"] == f"after seq {seq}"
               else f"the state (A {after['A']}, B {after['B']})")
    changed = [k for k in dict.fromkeys([*fa, *fb]) if fa.get(k) != fb.get(k)]
    sta, stb = sa.folded.table.state, sb.folded.table.state
    if not changed and sta is not None and stb is not None and sta.canonical() != stb.canonical():
        changed = ["(other fields of the state)"]
    if not changed:
        lines.append(f"{heading}: the same")
    else:
        lines.append(f"{heading} differs in: {', '.join(changed)}")
        rows: list[tuple[str, str, str]] = []
        for k in changed:
            la, lb = fa.get(k, ["-"]), fb.get(k, ["-"])
            for i in range(max(len(la), len(lb))):
                rows.append((k if i == 0 else "", la[i] if i < len(la) else "",
                             lb[i] if i < len(lb) else ""))
        width = max(12, *(len(k) for k, _, _ in rows))
        lines.extend(side_by_side(rows, width))
    lines.append("")
    lines.append(f"after seq {seq}: {_more('A', ea, seq)}; {_more('B', eb, seq)}")
    return False, lines + notes


def run_diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    prog = prog_of(args, PROG)
    try:
        a = read_replay(args.a)
        b = read_replay(args.b)
    except ReplayError as e:
        return usage_error(err, prog, str(e))
    same, lines = diff_lines(a, b)
    out.write("\n".join(lines) + "\n")
    out.flush()
    return 0 if same else 1


__all__ = [
    "first_difference", "state_fields", "side_by_side", "diff_lines", "add_diff_arguments",
    "run_diff",
]
