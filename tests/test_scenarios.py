"""The worked clearing examples of RULINGS.md (tests/data/clearing.json), played through the engine.

Each case is one card put face up on a display (Grande) or an area (ALLEGRA); the
engine must reach the written `after` with the written numbers of cleared cards and
of clearing steps. The cases pin R5, R6, R14, R19, R25 and R27; each test's failure
message names the rulings of its case.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from allegra_lan.rules import Place, Slot, apply, ruleset_for
from allegra_lan.rules.position import area_layout, build, layout
from allegra_lan.rules.state import State

from helpers import clear_steps, cleared_cards, closed_display

CASES_FILE = Path(__file__).parent / "data" / "clearing.json"


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    rulings: tuple[str, ...]
    variant: str
    before: tuple[str, ...]
    row: int
    col: int
    card: str
    after: tuple[str, ...]
    cleared: int
    steps: int

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Case":
        return cls(
            id=d["id"], title=d["title"], rulings=tuple(d["rulings"]), variant=d["variant"],
            before=tuple(d["before"]), row=d["place"]["row"], col=d["place"]["col"],
            card=str(d["place"]["card"]), after=tuple(d["after"]), cleared=d["cleared"],
            steps=d["steps"],
        )

    def label(self) -> str:
        return f"{self.id} ({', '.join(self.rulings)}): {self.title}"


CASES = [Case.from_json(d) for d in json.loads(CASES_FILE.read_text(encoding="utf-8"))]


def _grande_position(case: Case) -> tuple[State, Slot]:
    """Seat 0 holds `before`; a 5-wide display is the 2-player layout (R19), else 3 seats."""
    width = len(case.before[0].split())
    players = 2 if width == 5 else 3
    displays = [list(case.before)] + [closed_display(4, width) for _ in range(players - 1)]
    state = build(ruleset_for("grande"), displays, discard=["0"], hand=[(case.card, False)])
    return state, Slot(0, case.row, case.col)


def _allegra_position(case: Case) -> tuple[State, Slot]:
    """The case is seat 0's area: its first column is seat 1's col 3 (R13), the rest seat 0's display."""
    rows = [r.split() for r in case.before]
    seat0 = [" ".join(r[1:]) for r in rows]
    seat1 = [f"? ? ? {r[0]}" for r in rows]
    displays = [seat0, seat1, closed_display(3, 4)]
    state = build(ruleset_for("allegra"), displays, discard=["0"], hand=[(case.card, False)])
    at = Slot(1, case.row, 3) if case.col == 0 else Slot(0, case.row, case.col - 1)
    return state, at


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_worked_example(case: Case) -> None:
    """Every worked example must pass as written: it is the shared reading of the rulings it names."""
    if case.variant == "grande":
        state, at = _grande_position(case)
        assert layout(state, 0) == list(case.before), case.label()
    else:
        state, at = _allegra_position(case)
        assert area_layout(state, 0) == list(case.before), case.label()
    card = state.hand[0][0]
    after = apply(state, Place(card, at))
    got = layout(after, 0) if case.variant == "grande" else area_layout(after, 0)
    assert got == list(case.after), case.label()
    assert cleared_cards(after.effects) == case.cleared, case.label()
    assert after.round_cleared == case.cleared, case.label()
    assert clear_steps(after.effects) == case.steps, case.label()
    # R7: cleared cards leave play; the card replaced at `place` is the one that was discarded.
    assert len(after.cleared) == case.cleared, case.label()
    assert after.card_count() == state.card_count(), case.label()


def test_worked_examples_cover_their_rulings() -> None:
    """RULINGS.md promises examples for R5, R6, R14, R25 and R27; a lost case must not go unnoticed."""
    named = {r for c in CASES for r in c.rulings}
    assert {"R5", "R6", "R14", "R25", "R27"} <= named
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.variant for c in CASES} == {"grande", "allegra"}
