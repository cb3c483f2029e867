"""A log folded through a Table as far as it goes: the one fold every reader of a log uses.

The replay tools (verify, show, export, diff) and the replay viewer all fold with
this function, so each names a fault the same way. It lives apart from the tools
so that the terminal client (tui/) can use it without importing the commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from allegra_lan.log.envelope import Event
from allegra_lan.table import Fork, Refused, Table


@dataclass
class Folded:
    """A log folded as far as it goes: the table, and the first event it refused (if any).

    `at` is the position of the refused event in the log, which is the seq it
    must have had; an undecodable event's own seq field cannot be trusted."""

    table: Table
    fault: Refused | None = None
    at: int | None = None

    @property
    def fault_seq(self) -> int | None:
        """The seq a report names: a fork's contested seq, otherwise the refused event's place."""
        if isinstance(self.fault, Fork):
            return self.fault.seq
        return self.at


def fold_log(events: Iterable[bytes], upto: int | None = None,
             each: Callable[[Event, Table], None] | None = None) -> Folded:
    """Fold `events` (up to seq `upto` inclusive) through a Table, stopping at the first fault.

    Unlike `table.fold`, a repeated event is a fault here: in a file every line
    is the next seq, and a repeat would shift every later line. An exception
    the engine should never raise is reported as that event's fault rather
    than crashing a tool that is checking a thousand files. `each(event, table)`
    sees the table just after every event it takes (export's state hashes). `events` may be
    a stream (verify's ReplayStream): nothing after the first fault is read."""
    t = Table()
    for i, raw in enumerate(events):
        if upto is not None and i > upto:
            break
        try:
            taken = t.append(raw)
        except Refused as e:
            return Folded(t, e, i)
        except Exception as e:  # an engine bug must not stop a whole verification run
            return Folded(t, Refused(i, f"the event could not be checked ({type(e).__name__}: {e})",
                                     fault="internal"), i)
        if taken is None:  # the Table takes a repeat as already held: find which it repeats
            held = next(j for j, ev in enumerate(t.events) if ev.signed == bytes(raw))
            return Folded(t, Refused(i, f"a repeat of the event at seq {held}", fault="repeat"), i)
        if each is not None:
            each(taken, t)
    return Folded(t)


__all__ = ["Folded", "fold_log"]
