"""`allegra replay export`: a replay as JSON lines, for `jq` and ordinary diff tools.

One object per event, in log order, with the engine's state hash after it,
so two exports can be compared line by line with tools that know nothing of
signatures or msgpack. The export stops at the first event the Table refuses,
with a `{"fault": ...}` line: what follows a refused event has no state.

A body names cards by id (`"card": 137`), which means nothing to a person, so
each record also carries the values the log makes public: `card` (the body's
card, with its value once everyone may know it) and `revealed` (every card
the event turned face up or showed, with its value and place). A value only
the drawer or a peeker saw stays out: the export is for anyone, and says no
more than the table showed. The body itself stays exactly what was signed.

`--format csv` is for spreadsheets: the rounds, one row per seat per round,
read from the same fold (the engine's round results), never from the bodies.
"""

from __future__ import annotations

import argparse
import csv
import json
from dataclasses import dataclass, field
from typing import Any, Sequence, TextIO

from allegra_lan.log.envelope import Event
from allegra_lan.rules import JOKER
from allegra_lan.rules.effects import Revealed
from allegra_lan.log.identity import fingerprint
from allegra_lan.log.replay import Replay, ReplayError, read_replay
from allegra_lan.log.results import RESULT, duration, iso_time
from allegra_lan.table import Fork, Refused, Table
from allegra_lan.tool_args import EXPORT_FORMATS, add_export_arguments
from allegra_lan.tools import fold_log, plain, prog_of, usage_error

PROG = "allegra replay export"
FORMATS = EXPORT_FORMATS


def _shown(value: int) -> int | str:
    return "J" if value == JOKER else value


@dataclass
class Known:
    """What everyone knew before the event: the round and the values revealed in it."""

    round_no: int = -1
    known: list[int | None] = field(default_factory=list)


def card_fields(ev: Event, table: Table, before: Known) -> dict[str, Any]:
    """`card` and `revealed` of an event the table has just taken: public values only.

    A card's value is public if it was known to everyone before the event, the event
    revealed it, or it is known after it in the same round (a round's end turns up all)."""
    st = table.state
    if st is None:
        return {}
    revealed = [e for e in st.effects if isinstance(e, Revealed)]
    out: dict[str, Any] = {}
    if revealed:
        out["revealed"] = [{"card": e.card, "value": _shown(e.value),
                            "at": None if e.at is None else [e.at.seat, e.at.row, e.at.col]}
                           for e in revealed]
    card = ev.body.get("card") if isinstance(ev.body, dict) else None
    if type(card) is int and 0 <= card:
        now = {e.card: e.value for e in revealed}
        value: int | None = None
        if card < len(before.known):
            value = before.known[card]
        if value is None:
            value = now.get(card)
        if value is None and st.round_no == before.round_no and card < len(st.known):
            value = st.known[card]
        out["card"] = {"id": card} if value is None else {"id": card, "value": _shown(value)}
    return out


def event_record(ev: Event, table: Table, before: Known | None = None) -> dict[str, Any]:
    """The JSON object of an event the table has just taken (its state is the one after it);
    `before` (what was public before it) adds the public card values."""
    seat = table.seat_of(ev.author)
    rec: dict[str, Any] = {
        "seq": ev.seq,
        "id": ev.id.hex(),
        "prev": ev.prev.hex(),
        "author": fingerprint(ev.author),
        "name": table.name_of(ev.author),
        "seat": seat,
        "kind": ev.kind,
        "body": plain(ev.body),
        "state_hash": table.state_hash() if table.state is not None else None,
    }
    if before is not None:
        rec.update(card_fields(ev, table, before))
    rec.update(time_fields(ev, table))
    return rec


def time_fields(ev: Event, table: Table) -> dict[str, Any]:
    """The signed times (issue 13) as people read them: the genesis's `started`, a result's
    clock (`time`), and on the result that ends the game its end and the game's duration."""
    out: dict[str, Any] = {}
    body = ev.body if isinstance(ev.body, dict) else {}
    if ev.kind == "genesis" and type(body.get("started")) is int:
        out["started"] = iso_time(body["started"])
    elif ev.kind == RESULT and type(body.get("at")) is int:
        out["time"] = iso_time(body["at"])
        started, ended = table.times()
        if ended is not None and table.events and table.events[-1] is ev:
            out["ended"] = iso_time(ended)
            if started is not None:
                out["duration_ms"] = ended - started
                out["duration"] = duration(ended - started)
    return out


def fault_record(fault: Refused, seq: int | None) -> dict[str, Any]:
    """The closing line of a refused log: where, why, and a fork's two event ids."""
    rec: dict[str, Any] = {"fault": fault.reason, "seq": seq, "type": fault.fault}
    if isinstance(fault, Fork):
        rec["events"] = [fault.first.id.hex(), fault.second.id.hex()]
    return rec


def export_records(events: Sequence[bytes]) -> list[dict[str, Any]]:
    """Every event's record, then a fault record if an event is refused (and nothing after it)."""
    records: list[dict[str, Any]] = []
    before = Known()

    def each(ev: Event, t: Table) -> None:
        records.append(event_record(ev, t, before))
        if t.state is not None:
            before.round_no, before.known = t.state.round_no, list(t.state.known)

    folded = fold_log(events, each=each)
    if folded.fault is not None:
        records.append(fault_record(folded.fault, folded.fault_seq))
    return records


CSV_HEADER = ["game", "round", "seat", "name", "score", "doubled", "ender", "total"]


def round_rows(table: Table) -> list[list[object]]:
    """One row per seat per round ended so far (CSV_HEADER's columns), from the engine's round
    results: `round` counts from 1 as people do, `seat` from 0 as every tool does, `score` is
    after doubling (R10), `doubled` and `ender` are 1 on the row of the seat that ended the
    round (doubled only if its score was), `total` the seat's game total after the round."""
    st = table.state
    if st is None or table.genesis is None:
        return []
    game = table.game.hex() if table.game is not None else ""
    names = [s.name for s in table.genesis.seats]
    rows: list[list[object]] = []
    for r in st.results:
        for seat, score in enumerate(r.scores):
            ended = r.ender == seat
            rows.append([game, r.round_no + 1, seat, names[seat], score, int(ended and r.doubled),
                         int(ended), r.totals[seat]])
    return rows


def _run_csv(replay: Replay, prog: str, out: TextIO, err: TextIO) -> int:
    """The rounds as CSV; a refused event or a broken line ends the rows before it and is
    one stderr line (exit 1), as `replay show` names it: a CSV has no room for a fault row."""
    folded = fold_log(replay.events)
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_HEADER)
    w.writerows(round_rows(folded.table))
    out.flush()
    status = 0
    if folded.fault is not None:
        err.write(f"{prog}: the log is refused at seq {folded.fault_seq}: {folded.fault.reason}; "
                  "the rows are the rounds before it\n")
        status = 1
    elif replay.fault is not None:
        seq, reason = replay.fault
        err.write(f"{prog}: the file breaks at seq {seq}: {reason}; the rows are the rounds before it\n")
        status = 1
    for note in replay.notes:
        err.write(f"{prog}: note: {note}\n")
    err.flush()
    return status


def run_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    prog = prog_of(args, PROG)
    fmt = getattr(args, "format", "jsonl")
    if fmt not in FORMATS:
        return usage_error(err, prog, f"unknown format {fmt!r}: choose {', '.join(FORMATS)}")
    try:
        replay = read_replay(args.file)
    except ReplayError as e:
        return usage_error(err, prog, str(e))
    if fmt == "csv":
        return _run_csv(replay, prog, out, err)
    status = 0
    for rec in export_records(replay.events):
        out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        if "fault" in rec:
            status = 1
    if status == 0 and replay.fault is not None:
        seq, reason = replay.fault
        out.write(json.dumps({"fault": reason, "seq": seq, "type": "line"}, ensure_ascii=False) + "\n")
        status = 1
    for note in replay.notes:
        err.write(f"{prog}: note: {note}\n")
    out.flush()
    return status


__all__ = [
    "Known", "card_fields", "time_fields", "event_record", "fault_record", "export_records",
    "add_export_arguments", "run_export", "CSV_HEADER", "round_rows",
]
