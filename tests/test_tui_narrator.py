"""One narrator for the table and the replay viewer (issue 11, "Vocabulary" and "last moves").

The client's "Last moves" and the replay viewer's move list used to be told by
two functions that said the same move in different words ("greedy drew 5 from
the deck" / "greedy took a 5 ..."). Both now come from tui/words.describe_effects:
the client from the person's seat, the viewer from a spectator's view. These
tests check it where a person meets it: a whole game played by keys in the
real client, then its replay file folded by the viewer; golden replays for the
peeks; and the viewer's screen read in tmux for the marks and the last turns.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prompt_toolkit.input import create_pipe_input

from allegra_lan.log.identity import Identity
from allegra_lan.rules import (
    HOLE, PeekCard, PeekLine, Slot, apply, legal_moves, new_game, ruleset_for, to_act, view,
)
from allegra_lan.rules.effects import Closed, Collapsed, Peeked, Placed, Revealed, Swapped
from allegra_lan.rules.rng import Stream
from allegra_lan.rules.view import SPECTATOR
from allegra_lan.tui.app import Pace, PlayClient, make_application
from allegra_lan.tui.play import PlayArgs, start_game
from allegra_lan.tui.replay_view import open_viewer
from allegra_lan.tui.seat_notes import Notes, note_move
from allegra_lan.tui.stepper import Stepper, load_replay
from allegra_lan.tui.words import describe_effects, first_time_hints

from helpers import KeySession, Screen24, press_offered
from tmux_pane import Pane, allegra, needs_tmux

ROOT = Path(__file__).resolve().parents[1]
REPLAYS = ROOT / "replays"
ENTRIES: list[dict[str, Any]] = json.loads((REPLAYS / "manifest.json").read_text("utf-8"))["replays"]
BY_NAME = {Path(e["file"]).stem: e for e in ENTRIES}
ME = Identity.from_seed(b"test-tui-narrator")
_CACHE: dict[str, Stepper] = {}


def golden(name: str) -> Stepper:
    if name not in _CACHE:
        _CACHE[name] = load_replay(REPLAYS / BY_NAME[name]["file"])
    return _CACHE[name]


# ------------------------------------------------------------------ a game played by keys


Session = KeySession  # (tests/helpers.py)


def play_by_keys(variant: str, players: int, seed: int, tmp: Path, knock: str) -> tuple[list[str], Path]:
    """A whole game against bots, the person's keys chosen from the footer; every line the
    client's "Last moves" ever held, in order, and the replay file it wrote."""
    game, bots, writer, path = start_game(
        PlayArgs(variant=variant, players=players, seed=seed, name="ann"), ME, tmp)
    client = PlayClient(game, bots, 0, writer=writer, pace=Pace(bot=0, knock=None), replay_path=path)
    client.moves = deque()  # keep every line (the pane keeps the last 40)

    async def go() -> None:
        with create_pipe_input() as inp:
            app = make_application(client, input=inp, output=Screen24())
            task = asyncio.ensure_future(app.run_async())
            s = Session(client, inp)
            await asyncio.wait_for(client.idle.wait(), 30)
            try:
                for _ in range(8000):
                    if client.finished:
                        break
                    assert await press_offered(s, knock) is not None, s.screen()
                assert client.finished, "the game did not end"
            finally:
                if not task.done():
                    inp.send_text("\x03\x03")
                await asyncio.wait_for(task, 30)

    asyncio.run(go())
    client.close()
    return list(client.moves), path


def as_the_table_saw_it(line: str, me: str) -> str:
    """A line of the person's "Last moves" in the words of someone else at the table: their
    own cards are `ann's`, their peek says where it looked and not what it saw."""
    m = re.fullmatch(r"you secretly saw: (.+) (at|in) (.+)", line)
    if m:
        n = len(m.group(1).split())
        return f"{me} secretly looked at {m.group(3) if m.group(2) == 'at' else f'{n} cards in {m.group(3)}'}"
    line = line.replace("game over: you win", f"game over, winner {me}")
    line = re.sub(r"\byour\b", f"{me}'s", line)
    line = re.sub(r"\byou have\b", f"{me} has", line)
    return re.sub(r"\byou\b", me, line)


@pytest.mark.parametrize("variant,seed,knock", [("grande", 5, "n"), ("allegra", 3, "y")])
def test_a_move_reads_the_same_at_the_table_and_in_the_replay(tmp_path: Path, variant: str, seed: int,
                                                              knock: str) -> None:
    """Every line of the client's "Last moves", from deal to final scores, is the viewer's
    line for the same move of the replay the game wrote (the person's own cards named as
    the others name them); on today's code the viewer said it in its own words."""
    table, path = play_by_keys(variant, 3, seed, tmp_path, knock)
    table = [t for t in table if not t.startswith("you knocked for ")]  # the client's own note
    s = load_replay(path)
    me = s.names[0]
    replay = [line for p in s.positions[1:] for line in p.words.split("; ")]
    assert len(table) == len(replay) > 100
    told = [as_the_table_saw_it(t, me) for t in table]
    for i, (ours, theirs) in enumerate(zip(told, replay)):
        assert ours == theirs, (i, table[i], theirs)
    # The game showed what this is about: others' moves, the person's own, clears, the end.
    assert sum(t != o for t, o in zip(table, told)) > 5  # lines about the person's own cards
    assert any(t.startswith("cleared ") for t in table)
    assert replay[-1].startswith("game over")
    if variant == "grande":
        assert any("secretly" in t for t in table)
    else:
        assert any("who knocked" in t for t in table)


# ------------------------------------------------------------------ peeks


@pytest.mark.parametrize("name", ["grande-3p-actions", "grande-3p-sealed", "grande-5p"])
def test_a_peeks_value_never_reaches_the_viewers_move_list(name: str) -> None:
    """The engine's state holds what a peek saw; the viewer's words for that move are the
    ones any other seat at the table read, where the peek looked and nothing more, in
    every seat's view and under --all (on today's code the stepper told its words from the
    whole state: the words must now be a spectator's, the same as a watching seat's)."""
    s = golden(name)
    peeks = 0
    for p in s.positions[1:]:
        seen = [e for e in p.state.effects if isinstance(e, Peeked)]
        if not seen:
            continue
        peeks += 1
        assert isinstance(p.move, (PeekCard, PeekLine))
        peeker = seen[0].seat
        prev = s.positions[p.index - 1].state
        own = describe_effects(view(prev, peeker), view(p.state, peeker), view(p.state, peeker).effects, s.names)
        assert own[0].startswith("you secretly saw: ")  # the peeker's client says what it saw
        watcher = next(w for w in range(p.state.players) if w != peeker
                       and not (isinstance(p.move, PeekCard) and p.move.at.seat == w))
        theirs = describe_effects(view(prev, watcher), view(p.state, watcher),
                                  view(p.state, watcher).effects, s.names)
        assert p.words == "; ".join(theirs)
        assert "saw" not in p.words and re.search(r"secretly looked at (\d+ cards in )?"
                                                  r"(row|column) \d+", p.words)
        for eyes in (0, peeker, None):  # the move list on the screen, any eyes
            viewer = open_viewer(str(REPLAYS / BY_NAME[name]["file"]), eyes, eyes is None)
            viewer.stepper.goto_seq(p.seq)
            assert "saw" not in " ".join(viewer.ui_state().moves)
    assert peeks >= 2


# ------------------------------------------------------------------ names


def test_a_name_is_written_as_its_player_wrote_it_in_every_line() -> None:
    """One name_of for every line: a round's ender named in a tip keeps its capitals (the
    tip lower-cased the whole name: "Greedy-0 turned up their last closed card: random-1
    ended the round"), the round-end note and the move's words say the same names."""
    s = golden("allegra-3p-knocks")
    names = ("Greedy-0", "Random-1", "Greedy-2")
    end = next(p for p in s.positions if p.round_end and p.notes.end_note)
    exchange = next(p for p in s.positions[1:end.index + 1] if "knock exchange" in p.notes.end_note)
    prev = s.positions[end.index - 1].state
    ended_by = exchange.seat
    assert ended_by is not None
    ender = end.state.results[-1].ender
    assert ender is not None and ender != ended_by and end.state.results[-1].doubled
    watcher = next(w for w in range(3) if w not in (ender, ended_by))
    tips = dict(first_time_hints(view(prev, watcher), view(end.state, watcher),
                                 view(end.state, watcher).effects, names, ended_by))
    assert tips["doubled"].startswith(f"{names[ended_by]} turned up their last closed card: "
                                      f"{names[ender]} ended the round, ")
    mine = dict(first_time_hints(view(prev, ender), view(end.state, ender),
                                 view(end.state, ender).effects, names, ended_by))
    assert mine["doubled"].startswith(f"{names[ended_by]} turned up your last closed card: you ended")
    before = s.positions[exchange.index - 1].state
    note = note_move(Notes.empty(3), view(before, watcher), view(exchange.state, watcher), names)
    assert note.end_note == (f"{names[ended_by]}'s knock exchange turned up {names[ender]}'s last "
                             f"closed card, so {names[ender]} ended the round")


# ------------------------------------------------------------------ the viewer's notes


def test_the_viewer_keeps_the_tables_notes_for_every_seat() -> None:
    """Each position of a replay carries what tui/seat_notes makes for the client, from the
    spectator's views: each seat's last turn and whose move is ending the round."""
    s = golden("allegra-3p-knocks")
    notes = Notes.empty(3)
    for p in s.positions[1:]:
        prev = s.positions[p.index - 1].state
        if p.move is not None:
            notes = note_move(notes, view(prev, SPECTATOR), view(p.state, SPECTATOR), s.names)
        assert p.notes == notes
    ends = [p for p in s.positions if p.round_end and p.notes.end_note]
    assert ends and "knock exchange" in ends[0].notes.end_note


@pytest.mark.parametrize("name", ["grande-4p", "grande-4p-cut", "grande-2p-chain"])
def test_last_turn_marks_follow_a_display_that_closed_up_and_go_at_a_rounds_end(name: str) -> None:
    """A Grande display closes up after a line is cleared (its places renumber), and a round's
    end deals new cards: each `*` must sit on a card the seat's last turn put, turned up or
    swapped there (or the hole where it was cleared), and each such card still in a display
    must be marked; after a round's end nothing is. Today's seat_notes kept the old places:
    past the display's edge, or on a card the turn never touched."""
    s = golden(name)
    collapses = ends = 0
    notes = Notes.empty(s.positions[0].state.players)
    for p in s.positions[1:]:
        prev = s.positions[p.index - 1].state
        notes = note_move(notes, view(prev, SPECTATOR), view(p.state, SPECTATOR), s.names)
        if any(isinstance(e, Collapsed) for e in p.state.effects):
            collapses += 1
        if p.round_end:
            ends += 1
            assert notes.last_slots(SPECTATOR) == frozenset()
        for seat, turn in enumerate(notes.turns):
            if turn is None or turn.round_no != p.state.round_no or len(p.state.results) > turn.round_no:
                continue
            touched: set[int] = set()  # the cards this turn put, turned up or swapped
            for q in s.positions[1:p.index + 1]:
                if q.seat != seat or (q.round_no, q.turn) != (turn.round_no, turn.turn):
                    continue
                before = s.positions[q.index - 1].state
                for e in q.state.effects:
                    if isinstance(e, (Placed, Closed)) or isinstance(e, Revealed) and e.at is not None:
                        touched.add(e.card)
                    elif isinstance(e, Swapped):
                        touched.update(before.grids[sl.seat].cells[sl.row * before.grids[sl.seat].cols + sl.col]
                                       for sl in (e.a, e.b))
            g = p.state.grids[seat]
            for sl in turn.slots:
                assert sl.seat == seat and 0 <= sl.row < g.rows and 0 <= sl.col < g.cols, (p.seq, sl)
                card = g.cells[sl.row * g.cols + sl.col]
                assert card == HOLE or card in touched, (p.seq, seat, sl)
            for i, card in enumerate(g.cells):
                if card in touched:
                    assert Slot(seat, i // g.cols, i % g.cols) in turn.slots, (p.seq, seat, card)
    assert collapses and ends


VARIANTS_AND_PLAYERS = [("allegra", n) for n in range(2, 7)] + [("grande", n) for n in range(2, 6)]


@pytest.mark.parametrize("variant,players", VARIANTS_AND_PLAYERS)
@settings(derandomize=True, database=None, max_examples=2, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.binary(min_size=32, max_size=32), move_seed=st.binary(min_size=1, max_size=8))
def test_random_games_are_told_from_nobodys_seat_with_marks_inside_the_displays(
        variant: str, players: int, seed: bytes, move_seed: bytes) -> None:
    """Whole random games (hypothesis draws the deal and the stream of legal moves): every
    move's words from a spectator's view say no peeked value and name nobody "you", and
    every `*` of the notes lies inside its display, on a card or the hole a clear left."""
    stream = Stream(move_seed, "tests/narrator/moves")
    state = new_game(ruleset_for(variant), players, seed)
    names = tuple(f"p{i}" for i in range(players))
    notes = Notes.empty(players)
    moves = 0
    while to_act(state) is not None and moves < 5000:
        legal = legal_moves(state)
        kinds = sorted({type(m).__name__ for m in legal})  # a kind first: Swaps do not crowd out
        kind = kinds[stream.below(len(kinds))]
        same = [m for m in legal if type(m).__name__ == kind]
        after = apply(state, same[stream.below(len(same))])
        moves += 1
        seen_before, seen_after = view(state, SPECTATOR), view(after, SPECTATOR)
        told = describe_effects(seen_before, seen_after, seen_after.effects, names)
        assert told, (moves, after.effects)
        for line in told:
            assert "saw" not in line and not re.search(r"\byou(r)?\b", line), line
        notes = note_move(notes, seen_before, seen_after, names, told)
        for sl in notes.last_slots(SPECTATOR):
            g = after.grids[sl.seat]
            assert 0 <= sl.row < g.rows and 0 <= sl.col < g.cols, (moves, sl)
        state = after
    assert to_act(state) is None, "the game did not end"


# ------------------------------------------------------------------ the screen, in tmux


def _cells_marked(screen: str) -> list[str]:
    return re.findall(r"\*(?:-?\d+|J|\?|\.)", screen)


@needs_tmux
def test_the_viewers_screen_marks_each_seats_last_turn_and_tells_it_in_a_line(
        pane_factory: Callable[[list[str]], Pane]) -> None:
    """`allegra replay view FILE --all` at 80x24, mid-round: the places each seat's last turn
    went carry `*`, the legend says so, and under "Last turns:" each seat has its line, in
    the words of the move list (today the viewer drew no mark and no such line)."""
    name = "grande-4p"
    s = golden(name)
    seq = 200
    p = s.positions[s.index_of_seq(seq)]
    pane = pane_factory(allegra("replay", "view", str(REPLAYS / BY_NAME[name]["file"]), "--all"))
    pane.wait_for(lambda t: "the cards are dealt" in t, "the viewer's first screen")
    pane.keys(*str(seq), "Enter")
    screen = pane.wait_for(lambda t: f"seq {seq} of " in t, f"the table after seq {seq}")
    assert "* last move" in screen
    marked = _cells_marked(screen)
    slots = p.notes.last_slots(SPECTATOR)
    assert slots and len(marked) >= len(slots) - 1  # one may sit under the cursor's [ ]
    rows = screen.splitlines()
    at = next(i for i, r in enumerate(rows) if "Last turns:" in r)
    col = rows[at].index("Last turns:")
    lines = [r[col:].rstrip() for r in rows[at + 1:at + 1 + s.positions[0].state.players]]
    for seat, words in enumerate(p.notes.last_turns()):
        if not words:
            continue
        line = next(ln for ln in lines if ln.startswith(f"{s.names[seat]}: "))
        tail = line[len(s.names[seat]) + 2:].removeprefix("...").removesuffix("...")
        assert tail and tail in words, (line, words)
    # The move list says the same move in the same words as the status line under it.
    assert f"seq {seq}: {p.words}"[:80] in screen


@needs_tmux
def test_the_viewers_round_end_names_the_knock_exchange_that_ended_it(
        pane_factory: Callable[[list[str]], Pane]) -> None:
    """ALLEGRA: another seat's knock exchange turned up random-1's last closed card; the
    round-end screen of the replay says so above the doubling line (as the client's does)."""
    name = "allegra-3p-knocks"
    pane = pane_factory(allegra("replay", "view", str(REPLAYS / BY_NAME[name]["file"]), "--seat", "1"))
    pane.wait_for(lambda t: "the cards are dealt" in t, "the viewer's first screen")
    pane.keys("]")
    screen = pane.wait_for(lambda t: "Round 1 of 3 is over" in t, "the first round's end")
    flat = " ".join(screen.split())
    assert "greedy-0's knock exchange turned up your last closed card, so you ended the round" in flat \
        or "greedy-0's knock exchange turned up random-1's last closed card, so random-1 ended the round" in flat
    assert "doubled to" in flat
