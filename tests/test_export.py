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
