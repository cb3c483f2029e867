"""The replay stepper over the golden replays: positions, turns, rounds, seqs and plain words.

Every expectation is checked against something the stepper does not compute
itself: the manifest's totals and winners, the engine's own round results
(turns per round), the event kinds in the log, and real files cut short or
tampered with on disk.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from allegra_lan.log.envelope import sign_event
from allegra_lan.log.replay import read_replay
from allegra_lan.rules import (
    DrawFromDeck, PeekCard, PeekLine, Swap, TakeDiscard, TurnUp, legal_moves, to_act,
)
from allegra_lan.table import move_body
from allegra_lan.tools.render import card_text
from allegra_lan.tui.stepper import Stepper, StepperError, load_replay
from allegra_lan.tui.words import a_card

from helpers import local, new_key, play_random, takeover

ROOT = Path(__file__).resolve().parents[1]
REPLAYS = ROOT / "replays"
ENTRIES: list[dict[str, Any]] = json.loads((REPLAYS / "manifest.json").read_text("utf-8"))["replays"]
BY_NAME = {Path(e["file"]).stem: e for e in ENTRIES}
_CACHE: dict[str, Stepper] = {}


def stepper(name: str) -> Stepper:
    """One fold per golden file for the whole module (each test moves its own cursor home)."""
    if name not in _CACHE:
        _CACHE[name] = load_replay(REPLAYS / BY_NAME[name]["file"])
    s = _CACHE[name]
    s.home()
    return s


NAMES = sorted(BY_NAME)


@pytest.mark.parametrize("name", NAMES)
def test_positions_are_the_deal_then_one_per_move_ending_on_the_manifest_totals(name: str) -> None:
    entry = BY_NAME[name]
    s = stepper(name)
    n = entry["players"]
    assert s.positions[0].seq == 3 * n  # genesis, n accepts, n commits, n reveals: seqs 0..3n
    assert s.positions[0].move is None and s.positions[0].words == "the cards are dealt"
    assert len(s.positions) == entry["events"] - 3 * n
    assert [p.seq for p in s.positions] == list(range(3 * n, entry["events"]))
    assert [p.index for p in s.positions] == list(range(len(s.positions)))
    assert s.last_seq == entry["events"] - 1
    final = s.end()
    assert list(final.state.totals) == entry["totals"]
    assert final.game_over == entry["finished"]
    if entry["finished"]:
        assert s.cut_short is None
        winners = " and ".join(s.names[w] for w in entry["winners"])
        assert final.words.endswith(f"game over, winner{'s' if len(entry['winners']) > 1 else ''} {winners}")
    else:
        assert s.cut_short and "cut short" in s.cut_short


@pytest.mark.parametrize("name", NAMES)
def test_stepping_by_move_visits_every_position_both_ways(name: str) -> None:
    s = stepper(name)
    seen = [s.current.index]
    while s.current.index < s.last:
        seen.append(s.forward().index)
    assert seen == list(range(len(s.positions)))
    assert s.forward().index == s.last  # the end holds
    back = [s.current.index]
    while s.current.index > 0:
        back.append(s.back().index)
    assert back == seen[::-1]
    assert s.back().index == 0
    assert s.forward(10).index == 10 and s.back(3).index == 7
    assert s.end().index == s.last and s.home().index == 0


@pytest.mark.parametrize("name", NAMES)
def test_turns_match_the_engines_turn_count_and_start_with_a_draw(name: str) -> None:
    s = stepper(name)
    players = BY_NAME[name]["players"]
    final = s.positions[-1].state
    ends = [p for p in s.positions[1:] if p.turn_end]
    for r, result in enumerate(final.results):
        in_round = [p for p in ends if p.round_no == r]
        # The opening turn-ups are one group per seat, then the engine's own count of turns.
        assert len([p for p in in_round if p.turn == 0]) == players
        assert len([p for p in in_round if p.turn > 0]) == result.turns
    for p in ends:
        if p.index == s.last:
            continue
        nxt = s.positions[p.index + 1]
        assert nxt.seat != p.seat or nxt.turn != p.turn or nxt.round_no != p.round_no
        if nxt.turn > 0:
            assert isinstance(nxt.move, (DrawFromDeck, TakeDiscard, Swap))
        else:
            assert isinstance(nxt.move, TurnUp)
    # next_turn walks exactly over those ends, and prev_turn walks back over them to the deal.
    hops = []
    while s.current.index < s.last:
        hops.append(s.next_turn().index)
    assert hops == [p.index for p in ends]  # the last position counts as a turn's end
    back = []
    while s.current.index > 0:
        back.append(s.prev_turn().index)
    assert back == [p.index for p in ends[::-1]][1:] + [0]


def test_a_turn_with_a_knock_is_the_active_seats_turn_from_draw_to_exchange() -> None:
    s = stepper("allegra-3p-knocks")
    gives = [p for p in s.positions if type(p.move).__name__ == "Give"]
    assert gives
    for give in gives[:5]:
        s.goto_seq(give.seq - 1)  # the draw that the knock answered
        end = s.next_turn()
        kinds = [type(p.move).__name__ for p in s.positions[give.index - 1:end.index + 1]]
        assert kinds[:3] == ["DrawFromDeck", "Give", "Place"], kinds
        assert kinds[-1] == "Exchange"
        assert end.seat == give.seat and end.turn == give.turn


@pytest.mark.parametrize("name", NAMES)
def test_rounds_step_to_each_rounds_scores_and_back(name: str) -> None:
    entry = BY_NAME[name]
    s = stepper(name)
    final = s.positions[-1].state
    stops = []
    while s.current.index < s.last:
        stops.append(s.next_round())
    ended = [p for p in stops if p.round_end]
    assert len(ended) == len(final.results)
    for r, p in enumerate(ended):
        assert len(p.state.results) == r + 1
        assert p.state.results[-1].totals == final.results[r].totals
        assert p.round_no == r and f"round {r + 1} is over" in p.words
    if entry["finished"]:
        assert stops[-1].index == s.last and tuple(entry["totals"]) == ended[-1].state.results[-1].totals
    else:
        assert not stops[-1].round_end  # a cut-short game ends mid-round
    back = []
    while s.current.index > 0:
        back.append(s.prev_round().index)
    assert back == [p.index for p in ended[::-1] if p.index != stops[-1].index] + [0]


def test_seq_jumps_land_on_the_table_after_that_event() -> None:
    s = stepper("grande-4p")
    for seq in range(0, s.last_seq + 1):
        p = s.goto_seq(seq)
        assert p.seq == max(seq, s.first_seq)
        assert s.current is p
    with pytest.raises(StepperError, match=r"seq 508 is not in the log \(seqs 0 to 507\)"):
        s.goto_seq(508)
    with pytest.raises(StepperError):
        s.goto_seq(-1)
    assert s.current.seq == 507  # a refused jump leaves the cursor where it was


def test_round_and_turn_of_each_position_follow_the_log() -> None:
    s = stepper("grande-2p")
    rounds = [p.round_no for p in s.positions]
    assert rounds == sorted(rounds)  # never goes back
    for a, b in zip(s.positions[1:], s.positions[2:]):
        if b.round_no == a.round_no:
            assert b.turn >= a.turn
            if b.turn > a.turn:
                assert a.turn_end  # a new turn starts only after one ended
        else:
            assert a.round_end and b.turn == 0


def test_plain_words_name_what_the_table_saw_and_never_a_peeked_value() -> None:
    """The client's words for a move, told from nobody's seat: the card drawn (R4: shown to
    all), where a peek looked and never what it saw, the round's end in one clause."""
    s = stepper("grande-3p-actions")
    peeks = 0
    for p in s.positions[1:]:
        prev = s.positions[p.index - 1].state
        who = s.names[p.seat] if p.seat is not None else "?"
        assert p.words.startswith((who + " ", who + "'s "))
        assert "you" not in p.words.split() and "your" not in p.words.split()
        if isinstance(p.move, DrawFromDeck):
            drawn = p.state.hand[-1][0]
            assert p.words.startswith(f"{who} took {a_card(card_text(p.state.known[drawn]))} from the deck")
        if isinstance(p.move, TakeDiscard):
            top = prev.discard[-1]
            assert p.words.startswith(f"{who} took {a_card(card_text(prev.known[top]))} from the discard pile")
        if isinstance(p.move, PeekCard):
            peeks += 1
            at = p.move.at
            place = f"row {at.row + 1} col {at.col + 1}"
            if at.seat != p.seat:
                place = f"{s.names[at.seat]}'s {place}"
            assert p.words == f"{who} secretly looked at {place}", p.words
        if isinstance(p.move, PeekLine):
            peeks += 1
            line = f"{'row' if p.move.axis == 'row' else 'column'} {p.move.index + 1}"
            assert re.fullmatch(rf"{re.escape(who)} secretly looked at (row \d+ col \d+|\d+ cards in "
                                rf"{line})", p.words), p.words
        if p.round_end:  # R9's turn-ups: one clause, not one per card
            assert "turned up" not in p.words.partition("; ")[2] or "cards still closed" in p.words
    assert peeks >= 3


def test_a_file_cut_short_mid_line_is_shown_with_the_reason(tmp_path: Path) -> None:
    data = (REPLAYS / BY_NAME["grande-2p"]["file"]).read_bytes()
    cut = tmp_path / "cut.allegra"
    cut.write_bytes(data[: len(data) - 40])  # inside the last event's line
    s = load_replay(cut)
    assert s.cut_short is not None and "cut short" in s.cut_short
    assert s.last_seq == BY_NAME["grande-2p"]["events"] - 2
    assert to_act(s.end().state) is not None


def test_a_tampered_event_is_refused_in_one_line_naming_its_seq(tmp_path: Path) -> None:
    src = REPLAYS / BY_NAME["allegra-2p"]["file"]
    replay = read_replay(src)
    head, _, body = src.read_text("utf-8").partition("\n\n")
    lines = body.splitlines()
    raw = bytearray(base64.b64decode(lines[40]))
    raw[-1] ^= 1  # one bit of the event's body: the signature no longer holds
    lines[40] = base64.b64encode(bytes(raw)).decode()
    bad = tmp_path / "bad.allegra"
    bad.write_text(head + "\n\n" + "\n".join(lines) + "\n", "utf-8")
    with pytest.raises(StepperError) as e:
        load_replay(bad)
    assert "seq 40" in str(e.value) and "\n" not in str(e.value)
    assert len(replay.events) == BY_NAME["allegra-2p"]["events"]


def test_unreadable_files_and_logs_without_a_deal_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(StepperError, match="no-such"):
        load_replay(tmp_path / "no-such.allegra")
    junk = tmp_path / "junk.allegra"
    junk.write_text("hello\n", "utf-8")
    with pytest.raises(StepperError, match="not a"):
        load_replay(junk)
    replay = read_replay(REPLAYS / BY_NAME["grande-2p"]["file"])
    with pytest.raises(StepperError, match=r"before the deal \(seat 1's reveal is missing at seq 6\)"):
        Stepper.from_events(replay.events[:6])
    with pytest.raises(StepperError, match="before the deal"):
        Stepper.from_events([])


def test_a_takeover_is_a_position_of_its_own_inside_the_turn_it_stands_before() -> None:
    g = local("grande", 3)
    play_random(g, 12)
    d = to_act(g.state)
    assert d is not None
    bot = new_key("bot")
    g.table.append(takeover(g, g.table, [d.seat], keys=[bot]))
    at = g.table.seq - 1
    for _ in range(6):  # the bot plays the taken seat on, the others as before
        move = legal_moves(g.state)[0]
        if to_act(g.state).seat == d.seat:  # type: ignore[union-attr]
            kind, body = move_body(move)
            g.table.append(sign_event(bot.key, game=g.game_id, seq=g.table.seq, prev=g.table.head,
                                      kind=kind, body=body).signed)
        else:
            g.submit(move)
    s = Stepper.from_events([e.signed for e in g.table.events])
    names = [p.name for p in g.players]
    p = s.goto_seq(at)
    assert p.seq == at and p.move is None and p.seat is None
    assert p.words == (f"{names[d.seat]} is played by a bot from here: away too long, "
                       "every other seat agreed")
    assert p.state is s.positions[p.index - 1].state  # the table itself did not change
    assert not p.turn_end  # it belongs to the turn of the decision it stands before
    nxt = s.forward()
    assert nxt.seat == d.seat and nxt.seq == at + 1
    assert len(s.positions) == len(g.table.events) - 9


def test_one_narrator_tells_a_moves_effects_in_the_replay_and_at_the_table() -> None:
    """The replay viewer said "3 cards cleared" where the table said "cleared 3 cards: 4 4 4":
    both now read tui/words.narrate_effect, so an effect is told in the same words."""
    from allegra_lan.rules import view
    from allegra_lan.rules.effects import Cleared, EndTriggered
    from allegra_lan.tui.words import describe_effects

    checked = 0
    for name in NAMES:
        s = stepper(name)
        for i in range(1, len(s.positions)):
            p, prev = s.positions[i], s.positions[i - 1]
            fx = p.state.effects
            if p.move is None or not any(isinstance(e, (Cleared, EndTriggered)) for e in fx):
                continue
            seat = (p.seat + 1) % p.state.players  # a seat that watched the move
            table = describe_effects(view(prev.state, seat), view(p.state, seat), fx, s.names)
            told = [t for t in table if t.startswith(("cleared ", "chain"))
                    or "no closed card" in t]
            assert told, table
            for t in told:
                t = t.replace("you have", f"{s.names[seat]} has").replace(" you ", f" {s.names[seat]} ")
                assert t in p.words, (t, p.words)
                checked += 1
    assert checked > 10
