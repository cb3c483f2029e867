"""The header tags a log determines: what a replay's writers put and what `replay verify`
checks against the log (PROTOCOL.md, "Replay files").

Apart from local.py (which runs local games) so that the commands that only read logs,
`replay verify` first, do not import the machinery that plays them (issue 11's start-up).
"""

from __future__ import annotations

from allegra_lan.log.identity import fingerprint
from allegra_lan.log.replay import FORMAT
from allegra_lan.rules import State, winners
from allegra_lan.table import Table


def result_tags(state: State) -> dict[str, str]:
    """The Result tag (totals per seat) and Winners of a finished game, or Result `*`."""
    w = winners(state)
    if not w:
        return {"Result": "*"}
    return {"Result": " ".join(str(t) for t in state.totals),
            "Winners": " ".join(str(s) for s in w)}


def log_tags(table: Table) -> dict[str, str]:
    """The header tags a log determines: what writers should put and what verify checks.

    Variant, Players, Game, Table and Seat0..SeatN-1 come from the genesis;
    Result (and Winners) from the final state, or Result `*` while unfinished."""
    tags: dict[str, str] = {"Format": FORMAT}
    if table.genesis is None or table.game is None:
        tags["Result"] = "*"
        return tags
    g = table.genesis
    tags["Variant"] = str(g.ruleset.get("variant"))
    tags["Players"] = str(len(g.seats))
    tags["Game"] = table.game.hex()
    tags["Table"] = g.table
    for i, s in enumerate(g.seats):
        tags[f"Seat{i}"] = f"{s.name} {fingerprint(s.key)}"
    if table.state is not None and table.over:
        tags.update(result_tags(table.state))
    else:
        tags["Result"] = "*"
    return tags


__all__ = ["log_tags", "result_tags"]
