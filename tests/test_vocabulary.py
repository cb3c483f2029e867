"""The game's vocabulary as enums (issue 11, "Vocabulary"): variants, decision kinds and table
stages are StrEnum members in the code, and the very strings they always were on the wire.

The golden replays and protocol vectors prove the bytes did not move; these tests pin the
enums themselves, the borders where text becomes a member (a ruleset dict, an mDNS ad, the
command line), and that no comparison with the bare strings creeps back into allegra_lan/.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import msgpack
import pytest
from hypothesis import given, settings, strategies as st

from allegra_lan.cli import main
from allegra_lan.net.discovery import AdError, TableAd
from allegra_lan.rules import (
    DecisionKind, Phase, RulesetError, Variant, apply, legal_moves, new_game, ruleset_for,
    ruleset_from_dict, to_act,
)
from allegra_lan.rules.rng import seed_from_number
from allegra_lan.rules.state import DECISION_KIND, DECISION_WORDS
from allegra_lan.table import CEREMONY_STAGES, Stage, Table

from helpers import local, play_random

PACKAGE = Path(__file__).resolve().parent.parent / "allegra_lan"


def test_members_are_the_strings_the_logs_carry() -> None:
    assert [v.value for v in Variant] == ["allegra", "grande"]
    assert [k.value for k in DecisionKind] == [
        "reveal", "draw", "draw_second", "play", "turn_up", "peek_line", "peek_card",
        "replace_open", "place_given", "exchange"]
    assert [s.value for s in Stage] == ["genesis", "accept", "commit", "reveal", "play", "result", "dealing", "over"]
    for member in [*Variant, *DecisionKind, *Stage]:
        # Equal, hashed, formatted and packed as its string: dicts keyed by the old strings,
        # f-strings, json and msgpack see no difference.
        assert member == member.value and hash(member) == hash(member.value)
        assert f"{member}" == str(member) == member.value
        assert {member.value: 1}[member] == 1
        assert msgpack.packb(member, use_bin_type=True) == msgpack.packb(member.value, use_bin_type=True)
        assert json.dumps({member: member}) == json.dumps({member.value: member.value})


def test_every_phase_that_asks_has_a_kind_and_every_kind_has_words() -> None:
    assert set(DECISION_KIND) == set(Phase) - {Phase.OVER}
    assert set(DECISION_KIND.values()) | {DecisionKind.REVEAL, DecisionKind.PLACE_GIVEN} == set(DecisionKind)
    assert set(DECISION_WORDS) == set(DecisionKind)
    assert all(type(k) is DecisionKind for k in DECISION_WORDS)


@pytest.mark.parametrize("variant", list(Variant))
def test_a_game_decides_in_members_and_its_ruleset_dict_stays_plain_text(variant: Variant) -> None:
    rs = ruleset_for(variant.value)  # the border: text in, a Variant on the ruleset
    assert rs.variant is variant
    d = rs.to_dict()
    # state_hash reprs the ruleset dict: a member there would change every hash.
    assert type(d["variant"]) is str and d["variant"] == variant.value
    assert ruleset_from_dict(d).variant is variant
    state = new_game(rs, 3, seed_from_number(5))
    assert state.variant is variant
    kinds = set()
    for _ in range(400):
        decision = to_act(state)
        if decision is None:
            break
        assert type(decision.kind) is DecisionKind
        kinds.add(decision.kind)
        state = apply(state, legal_moves(state)[0])
    assert DecisionKind.REVEAL in kinds and DecisionKind.DRAW in kinds


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=12), st.integers(), st.none(), st.binary(max_size=8),
                 st.lists(st.text(max_size=3), max_size=2)))
def test_a_ruleset_dict_with_any_other_variant_is_one_clear_error(value: object) -> None:
    if value in ("allegra", "grande"):
        assert ruleset_from_dict({"variant": value}).variant == value
        return
    with pytest.raises(RulesetError, match=r"^unknown variant "):
        ruleset_from_dict({"variant": value})
    with pytest.raises(RulesetError, match=r"^unknown variant .*: choose allegra or grande$"):
        ruleset_for(value)  # type: ignore[arg-type]


def test_a_table_names_its_stages_with_members_from_genesis_to_over() -> None:
    g = local("allegra", 3)
    play_random(g, 20_000)
    assert to_act(g.state) is None
    t = Table()
    seen = [t.stage()]
    for ev in g.table.events:
        t.append(ev.signed)
        if t.stage() is not seen[-1]:
            seen.append(t.stage())
    assert seen == [Stage.GENESIS, *CEREMONY_STAGES, Stage.PLAY, Stage.OVER]
    assert all(type(s) is Stage for s in seen)


def _ad(variant: str) -> TableAd:
    return TableAd(name="Kitchen", variant=variant, seats_taken=1, seats_total=3,  # type: ignore[arg-type]
                   game_id=bytes(16), pin=False, host="HSXE-DL7C-VDBV-BFWU", address="127.0.0.1",
                   port=4000, proto=1)


def test_an_ad_read_from_text_holds_a_variant_and_advertises_the_same_bytes() -> None:
    ad = _ad("allegra")
    assert ad.variant is Variant.ALLEGRA
    props = ad.to_properties()
    assert props[b"variant"] == b"allegra"
    again = TableAd.from_properties(props, "127.0.0.1", 4000)
    assert again.variant is Variant.ALLEGRA and again == ad
    with pytest.raises(AdError, match=r"^unknown variant 'poker': allegra or grande$"):
        _ad("poker")


def test_the_command_line_still_words_a_bad_variant_as_argparse_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--variant", "poker"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --variant: invalid choice: 'poker'" in err
    assert main(["rules", "--variant", "allegra", "--width", "60"]) == 0
    assert "ALLEGRA" in capsys.readouterr().out


_WORDS = {v.value for v in Variant} | {k.value for k in DecisionKind} | {s.value for s in Stage}


def _bare_words(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in _WORDS else []
    if isinstance(node, (ast.Tuple, ast.List)):
        return [w for e in node.elts for w in _bare_words(e)]
    return []


def _an_event_kind(node: ast.expr) -> bool:
    """`ev.kind` / `event.kind`: a log event's kind, which is wire text (log/bodies.py), not
    one of these enums (a "reveal" event is not the "reveal" decision)."""
    return (isinstance(node, ast.Attribute) and node.attr == "kind"
            and isinstance(node.value, ast.Name) and node.value.id in ("ev", "event"))


def test_no_comparison_with_a_bare_variant_kind_or_stage_string_is_left() -> None:
    """Issue 11 counted 27 comparisons with "grande" alone; compare members instead."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            if any(_an_event_kind(s) for s in sides):
                continue
            words = [w for s in sides for w in _bare_words(s)]
            if words:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
