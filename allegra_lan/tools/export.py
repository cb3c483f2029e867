"""`allegra replay export`: a replay as JSON lines, for `jq` and ordinary diff tools.

One object per event, in log order, with the engine's state hash after it,
so two exports can be compared line by line with tools that know nothing of
signatures or msgpack. The export stops at the first event the Table refuses,
with a `{"fault": ...}` line: what follows a refused event has no state.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Sequence, TextIO

from allegra_lan.log.envelope import Event
from allegra_lan.log.identity import fingerprint
from allegra_lan.log.replay import ReplayError, read_replay
from allegra_lan.table import Fork, Refused, Table
from allegra_lan.tool_args import EXPORT_FORMATS, add_export_arguments
from allegra_lan.tools import fold_log, plain, prog_of, usage_error

PROG = "allegra replay export"
FORMATS = EXPORT_FORMATS


def event_record(ev: Event, table: Table) -> dict[str, Any]:
    """The JSON object of an event the table has just taken (its state is the one after it)."""
    seat = table.seat_of(ev.author)
    return {
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


def fault_record(fault: Refused, seq: int | None) -> dict[str, Any]:
    """The closing line of a refused log: where, why, and a fork's two event ids."""
    rec: dict[str, Any] = {"fault": fault.reason, "seq": seq, "type": fault.fault}
    if isinstance(fault, Fork):
        rec["events"] = [fault.first.id.hex(), fault.second.id.hex()]
    return rec


def export_records(events: Sequence[bytes]) -> list[dict[str, Any]]:
    """Every event's record, then a fault record if an event is refused (and nothing after it)."""
    records: list[dict[str, Any]] = []
    folded = fold_log(events, each=lambda ev, t: records.append(event_record(ev, t)))
    if folded.fault is not None:
        records.append(fault_record(folded.fault, folded.fault_seq))
    return records


def run_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    prog = prog_of(args, PROG)
    fmt = getattr(args, "format", "jsonl")
    if fmt not in FORMATS:
        return usage_error(err, prog, f"unknown format {fmt!r}: choose {', '.join(FORMATS)}")
    try:
        replay = read_replay(args.file)
    except ReplayError as e:
        return usage_error(err, prog, str(e))
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


__all__ = ["event_record", "fault_record", "export_records", "add_export_arguments", "run_export"]
