"""`allegra tournament plan`: read the players, make the plan, print it, write the file.

The text forms are functions of the plan alone (`plan_table`, `plan_csv`,
`spread_line`), so the tests compare them with the plan itself; `run_plan` is
the thin command around them, returning the exit status as the replay tools do.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from typing import Any, TextIO

from allegra_lan.tournament.plan import Plan, Spread, spread, variant_title

WIDTH = 80
ROUND_W, TABLE_W = 5, 5
CSV_HEADER = ("round", "table", "seat", "player", "keys")


def cells(text: str) -> int:
    """Terminal columns `text` takes: wide (CJK) characters two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


def _chunks(word: str, width: int) -> list[str]:
    """A word wider than a line, cut into pieces that fit."""
    out, cur = [], ""
    for ch in word:
        if cur and cells(cur + ch) > width:
            out.append(cur)
            cur = ""
        cur += ch
    return out + [cur] if cur else out


def wrap_names(names: tuple[str, ...], width: int) -> list[str]:
    """Seat names joined by ", ", in lines of at most `width` columns (a name is cut only
    if it is wider than a line by itself)."""
    words = [n + "," for n in names[:-1]] + list(names[-1:])
    lines: list[str] = []
    cur = ""
    for word in words:
        if not cur:
            pieces = _chunks(word, width)
        elif cells(cur) + 1 + cells(word) <= width:
            cur += " " + word
            continue
        else:
            lines.append(cur)
            pieces = _chunks(word, width)
        lines += pieces[:-1]
        cur = pieces[-1] if pieces else ""
    return lines + [cur] if cur else lines


def _sizes_text(sizes: tuple[int, ...]) -> str:
    counts: dict[int, int] = {}
    for s in sizes:
        counts[s] = counts.get(s, 0) + 1
    parts = [f"{k} table{'s' if k != 1 else ''} of {s}" for s, k in counts.items()]
    return " and ".join(parts)


def plan_heading(plan: Plan) -> list[str]:
    n, r = len(plan.players), len(plan.rounds)
    return [f"{variant_title(plan.variant)}: {n} players, {r} round{'s' if r != 1 else ''}, seed {plan.seed}",
            f"each round: {_sizes_text(plan.table_sizes)} (seat 0 starts)"]


def plan_table(plan: Plan) -> str:
    """The plan as a table a person reads, at most WIDTH columns wide: a line per table,
    round and table numbers, then the players in seat order."""
    lead = ROUND_W + 1 + TABLE_W + 1
    lines = plan_heading(plan) + ["", f"{'round':>{ROUND_W}} {'table':>{TABLE_W}} seats, in order"]
    for r, tables in enumerate(plan.rounds, 1):
        for t, seats in enumerate(tables, 1):
            wrapped = wrap_names(seats, WIDTH - lead)
            lines.append(f"{r:>{ROUND_W}} {t:>{TABLE_W}} {wrapped[0]}")
            lines += [" " * lead + more for more in wrapped[1:]]
    return "\n".join(lines) + "\n"


def spread_line(s: Spread) -> str:
    """The line that says how even the plan is."""
    met = f"{s.least}" if s.least == s.most else f"{s.least} to {s.most}"
    return (f"pairs meet {met} time{'s' if (s.least, s.most) != (1, 1) else ''} "
            f"({s.never} of {s.pairs} never); "
            f"each player starts {s.starts_least}" +
            ("" if s.starts_least == s.starts_most else f" to {s.starts_most}") +
            f" time{'s' if (s.starts_least, s.starts_most) != (1, 1) else ''}")


def plan_csv(plan: Plan) -> str:
    """The plan as CSV, a row per seat: round, table, seat (0 starts), player, keys
    (the player's fingerprints, space-separated, empty when the list gave none)."""
    keys = {p.name: " ".join(p.keys) for p in plan.players}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for r, tables in enumerate(plan.rounds, 1):
        for t, seats in enumerate(tables, 1):
            for seat, name in enumerate(seats):
                w.writerow((r, t, seat, name, keys[name]))
    return buf.getvalue()


def _same_file(a: str, b: str) -> bool:
    """Whether writing `a` would replace the file `b` (the players list an organiser typed)."""
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:  # either is missing: nothing to lose
        return False


def run_plan(args: Any, out: TextIO, err: TextIO) -> int:
    """The command: 0 with the plan printed and written; 2 and one line on anything wrong."""
    from allegra_lan.files import WriteFailed, write_atomic
    from allegra_lan.tools import prog_of, usage_error
    from allegra_lan.tournament.plan import PlanError, make_plan
    from allegra_lan.tournament.planfile import plan_to_json
    from allegra_lan.tournament.roster import RosterError, read_roster

    prog = prog_of(args, "allegra tournament plan")
    if _same_file(args.out, args.players):
        return usage_error(err, prog, f"--out {args.out} is the players file; name another file")
    try:
        players = read_roster(args.players)
        plan = make_plan(players, args.rounds, str(args.variant), seed=args.seed,
                         preferred=args.table_size)
    except (RosterError, PlanError) as e:
        return usage_error(err, prog, str(e))
    try:
        write_atomic(args.out, plan_to_json(plan).encode("utf-8"), mode=0o644)
    except WriteFailed as e:
        return usage_error(err, prog, str(e))
    summary = f"{spread_line(spread(plan))}\nwrote the plan to {args.out}\n"
    if args.csv:
        out.write(plan_csv(plan))
        err.write(summary)
    else:
        out.write(plan_table(plan) + "\n" + summary)
    out.flush()
    err.flush()
    return 0


__all__ = ["plan_table", "plan_csv", "plan_heading", "spread_line", "wrap_names", "cells", "run_plan",
           "CSV_HEADER"]
