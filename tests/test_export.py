"""`allegra replay export` for people (issue 13): card values where the log makes them public.

Checked on the golden replays (real signed games of both variants) against
the engine's own card source, folded here event by event: every value the
export shows must be the card's value, and must be one everyone at the table
could know after that event; a peek shows nothing to others.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from allegra_lan.log.replay import read_replay
from allegra_lan.rules import JOKER
from allegra_lan.table import Table
from allegra_lan.tools import plain
from net_helpers import ROOT

GOLDEN = ROOT / "replays" / "golden"
FILES = ["allegra-3p-knocks", "grande-3p-actions", "grande-2p-chain", "allegra-6p"]


def export(path: Path) -> list[dict]:  # type: ignore[type-arg]
    p = subprocess.run([sys.executable, "-m", "allegra_lan", "replay", "export", str(path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines()]


def shown(value: int) -> int | str:
    return "J" if value == JOKER else value


@pytest.mark.parametrize("name", FILES)
def test_export_shows_the_value_of_every_public_card_next_to_its_id(name: str) -> None:
    path = GOLDEN / f"{name}.allegra"
    recs = export(path)
    events = read_replay(path).events
    assert len(recs) == len(events)
    t = Table()
    carded = revealed = 0
    for rec, raw in zip(recs, events):
        before = t.state
        round_no = before.round_no if before is not None else 0
        ev = t.append(raw)
        assert ev is not None
        assert rec["body"] == plain(ev.body)  # the signed body, untouched
        st = t.state
        if "card" in ev.body:
            carded += 1
            card = ev.body["card"]
            assert rec["card"]["id"] == card
            value = st.source.value(round_no, card)  # type: ignore[union-attr]
            assert rec["card"] == {"id": card, "value": shown(value)}, rec
        else:
            assert "card" not in rec
        for r in rec.get("revealed", []):
            revealed += 1
            assert st is not None
            assert r["value"] == shown(st.source.value(round_no, r["card"]))
            ended = len(st.results) > len(before.results)  # type: ignore[union-attr]
            # Public after the event: everyone knows it, or the round's end turned it up.
            assert ended or st.known[r["card"]] is not None
        if ev.kind in ("peek_card", "peek_line"):
            assert "revealed" not in rec  # what a peeker saw is the peeker's
        if ev.kind == "turn_up":
            assert [r["at"] for r in rec["revealed"]][:1] == [ev.body["at"]]
    assert carded > 20 and revealed > 20


def test_a_card_whose_value_the_log_has_not_shown_keeps_only_its_id() -> None:
    """The rule on a card nobody has seen (the deck's top): the export must not read its value
    from the card source, which every peer can compute but the table has not shown."""
    from allegra_lan.log.envelope import decode_event
    from allegra_lan.tools.export import Known, card_fields

    events = read_replay(GOLDEN / "grande-2p.allegra").events
    t = Table()
    for raw in events[:40]:
        t.append(raw)
    st = t.state
    assert st is not None and st.deck
    top = st.deck[-1]
    assert st.known[top] is None
    ev = decode_event(events[39])
    object.__setattr__(ev, "body", {"card": top})
    assert card_fields(ev, t, Known(st.round_no, list(st.known)))["card"] == {"id": top}
    seen = next(c for c, v in enumerate(st.known) if v is not None)
    object.__setattr__(ev, "body", {"card": seen})
    assert card_fields(ev, t, Known(st.round_no, list(st.known)))["card"] == {"id": seen, "value": shown(st.known[seen])}


# ------------------------------------------------------------------ --format csv: the rounds


def export_csv(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "allegra_lan", "replay", "export", "--format", "csv", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def folded_rounds(events: list[bytes]) -> tuple[Table, list[dict[str, str]]]:
    """The rows the CSV must hold, made here from the engine's own round results."""
    t = Table()
    for raw in events:
        if t.append(raw) is None:
            break
    assert t.state is not None and t.genesis is not None and t.game is not None
    rows = []
    for r in t.state.results:
        for seat, score in enumerate(r.scores):
            rows.append({"game": t.game.hex(), "round": str(r.round_no + 1), "seat": str(seat),
                         "name": t.genesis.seats[seat].name, "score": str(score),
                         "doubled": str(int(r.ender == seat and r.doubled)),
                         "ender": str(int(r.ender == seat)), "total": str(r.totals[seat])})
    return t, rows


@pytest.mark.parametrize("name", ["allegra-3p-knocks", "grande-4p", "allegra-6p"])
def test_export_csv_is_one_row_per_seat_per_round_with_the_engines_scores(name: str) -> None:
    import csv
    import io

    path = GOLDEN / f"{name}.allegra"
    p = export_csv(path)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout.splitlines()[0] == "game,round,seat,name,score,doubled,ender,total"
    got = list(csv.DictReader(io.StringIO(p.stdout)))
    t, want = folded_rounds(read_replay(path).events)
    assert got == want
    assert t.state is not None and len(got) == len(t.state.results) * t.players
    last = got[-t.players:]
    assert [int(r["total"]) for r in last] == list(t.state.totals)
    # Every round's scores add up to the totals, and a doubled score is on the ender's row.
    for seat in range(t.players):
        assert sum(int(r["score"]) for r in got if r["seat"] == str(seat)) == t.state.totals[seat]
    assert all(r["ender"] == "1" for r in got if r["doubled"] == "1")


def test_export_csv_of_a_refused_log_has_the_rounds_before_it_and_one_stderr_line(tmp_path: Path) -> None:
    import csv
    import io

    src = GOLDEN / "allegra-3p-knocks.allegra"
    lines = src.read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.strip() == "") + 1
    events = read_replay(src).events
    _, whole = folded_rounds(events)
    cut_at = len(events) - 5  # the last round's end is after this event: its rows must go
    bad = tmp_path / "bad.allegra"
    bad.write_text("".join(lines[:first + cut_at] + lines[first + cut_at + 1:]))  # one event dropped
    p = export_csv(bad)
    assert p.returncode == 1
    assert p.stderr.count("\n") == 1 and f"refused at seq {cut_at}" in p.stderr, p.stderr
    got = list(csv.DictReader(io.StringIO(p.stdout)))
    _, want = folded_rounds(events[:cut_at])
    assert got == want and 0 < len(got) < len(whole)


def test_export_csv_keeps_a_hostile_seat_name_whole(tmp_path: Path) -> None:
    """A name with a comma, quotes and a formula start is one CSV cell, read back as written."""
    import csv
    import io

    from allegra_lan.local import LocalGame, Player, derived, seat_tags
    from allegra_lan.tags import result_tags
    from allegra_lan.log.identity import Identity
    from allegra_lan.log.replay import ReplayWriter
    from allegra_lan.rules import ruleset_from_dict
    from helpers import quick_move
    from allegra_lan.rules import to_act

    names = ['=1+1, "x"', "bob,\u00e9"]
    people = [Player(n, Identity.from_seed(derived("export-csv", i))) for i, n in enumerate(names)]
    gid = derived("export-csv-game")[:16]
    tags = {"Variant": "grande", "Table": "t", "Players": "2", "Game": gid.hex(), **seat_tags(people)}
    path = tmp_path / "odd.allegra"
    writer = ReplayWriter(path, tags, fsync=False)
    g = LocalGame(ruleset_from_dict({"variant": "grande", "rounds": 1}), people, game_id=gid,
                  nonces=[derived("export-csv-nonce", i) for i in range(2)], table_name="t", writer=writer)
    while to_act(g.state) is not None:
        g.submit(quick_move(g.state))
    writer.finish(result_tags(g.state))
    p = export_csv(path)
    assert p.returncode == 0, p.stderr
    got = list(csv.DictReader(io.StringIO(p.stdout)))
    assert [r["name"] for r in got] == names
