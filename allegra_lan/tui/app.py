"""`allegra play`: one person against bots on this machine, in a full-screen table.

The client is one asyncio loop: prompt_toolkit reads keys and redraws, and a
single driver task plays the bots' seats. The driver never polls: it awaits
an `asyncio.Event` set by a key (the person's move, a knock, "next round")
or an `asyncio.sleep` of the bots' pace, so an idle table uses no CPU. Every
move, the person's and the bots', goes through `LocalGame.submit`, signed by
its seat and appended to the replay file (fsynced) before the screen shows it;
an illegal move is refused there and its reason is the message line.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Protocol

from prompt_toolkit.application import Application
from prompt_toolkit.application.current import get_app
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output

from allegra_lan.bots.base import Bot
from allegra_lan.bots.hint import HINT_BOT, Hint, hint
from allegra_lan.local import LocalGame
from allegra_lan.tags import log_tags
from allegra_lan.log.replay import ReplayWriter
from allegra_lan.rules import (
    Discard, DrawFromDeck, Exchange, Give, Move, PeekCard, PeekLine, Place, ReplaceOpen,
    IllegalMove, SeatView, Slot, Swap, TakeDiscard, TurnUp, apply, legal_moves, to_act, view,
)
from allegra_lan.rules.effects import EndTriggered, GameEnded, RoundEnded
from allegra_lan.rules.state import DECISION_WORDS, Phase
from allegra_lan.rules.state import DecisionKind
from allegra_lan.rules.ruleset import Variant
from allegra_lan.table import Refused

from allegra_lan.rules_text import rules_text

from .keys import CURSOR_KEYS, Key, bindings, game_keys, lookup
from .screen import (
    Line, UiState, area_layout, color_depth, fit, footer_lines, home_pos, join_lines, make_style,
    name_of, render, value_text,
)
from .seat_notes import Notes, note_move
from .words import KNOCK_HINT, Frame, clear_frames, describe_effects, first_time_hints, refusal_words

MOVES_KEPT = 40
THINKING = "Thinking about a hint..."

_ARROWS = {"left": (0, -1), "right": (0, 1), "up": (-1, 0), "down": (1, 0),
           "h": (0, -1), "l": (0, 1), "k": (-1, 0), "j": (1, 0)}


@dataclass
class Pace:
    """How fast the table moves. `bot`: seconds before each bot move and per clearing step
    shown (0 in tests); `knock`: seconds the knock window stays open (None: until you
    answer y or n)."""

    bot: float = 0.7
    knock: float | None = 3.0


class PlayClient:
    """The table's logic for one person's seat: keys in, moves out, a UiState to draw.

    Knows nothing of terminals: `handle_key` takes key names ("d", "enter", "left",
    "c-c"...) and `screen` draws at any size, so tests drive it like a keyboard would."""

    def __init__(self, game: LocalGame, bots: dict[int, Bot], human: int, *,
                 writer: ReplayWriter | None = None, pace: Pace | None = None,
                 replay_path: Path | None = None) -> None:
        self.game = game
        self.bots = bots
        self.human = human
        self.writer = writer
        self.pace = pace or Pace()
        self.replay_path = replay_path
        self.names = tuple(p.name for p in game.players)
        self.moves: deque[str] = deque(maxlen=MOVES_KEPT)
        self.notes = Notes.empty(len(self.names))  # each seat's last turn (tui/seat_notes.py)
        self.message = ""
        self.refused = False
        self.overlay: str | None = None
        self.help = False
        self.confirm_quit = False
        self.rules_top: int | None = None  # the rules page's first line shown (None: closed)
        self.hint = ""  # a first-time tip (words.first_time_hints), gone at the next key
        self.hint_bot = HINT_BOT  # whose move the hint key shows (bots/hint.py)
        self.advice: Hint | None = None  # the hint shown, for the table it was asked at
        self._advice_at: object = None  # that table (a state object: any move makes a new one)
        self._thinking: asyncio.Task[None] | None = None  # the hint being worked out
        self.hints_given: set[str] = set()
        self._ended_by: int | None = None  # whose move triggered this round's end
        self._said_at = 0  # the table's seq when the message was said
        self.board = human  # whose area the cursor is over (the knocker's, to take a card)
        self.pos = home_pos(view(game.state, human), human)  # cursor row, col in area_layout
        self.hand_index = 0
        self.swap_first: Slot | None = None
        self.take: Slot | None = None  # ALLEGRA exchange: the card chosen from the knocker
        self.frame: Frame | None = None
        self._pending_frames: list[Frame] = []  # the last move's clears, shown by the driver
        self.knock_open = False
        self.knocked = False
        self._knockers: tuple[int, frozenset[int]] | None = None  # (seq, seats) for a deck draw
        self.finished = False
        self.quit = False
        self.keys_handled = 0
        self.idle = asyncio.Event()  # the driver waits for this person
        self._wake = asyncio.Event()
        self._skip = asyncio.Event()  # a key ends the clear being shown
        self.on_change: Callable[[], None] = lambda: None
        self.on_quit: Callable[[], None] = lambda: None

    # ------------------------------------------------------------ what is shown

    def view(self) -> SeatView:
        v = view(self.game.state, self.human)
        if self.frame is not None:
            v = replace(v, displays=self.frame.displays)
        return v

    def cursor(self, v: SeatView) -> Slot | None:
        layout = area_layout(v, self.board)
        if not layout:
            return None
        r = min(self.pos[0], len(layout) - 1)
        row = layout[r]
        if not row:
            return None
        c = min(self.pos[1], len(row) - 1)
        return row[c]

    def ui_state(self) -> UiState:
        v = self.view()
        marked = {s for s in (self.swap_first, self.take) if s is not None}
        advice = self.advice_now()
        if advice is not None:  # drawn like a choice: the places the hinted move touches
            marked |= set(advice.cells)
        overlay = "help" if self.help else self.overlay
        status = ""
        if self.knock_open:
            drawn = v.hand[0] if v.hand else None
            what = f"the {value_text(drawn.value)}" if drawn else "the card"
            window = "" if self.pace.knock is None else f" ({self.pace.knock:g} s)"
            status = f"Knock window open{window}: y to knock for {what}, n to pass"
        elif self.finished and self.replay_path is not None:
            status = f"replay: {self.replay_path.name} in {self.replay_path.parent}"
        elif advice is not None:
            status = f"Hint: {advice.text}"
        elif self._my_decision() is not None:
            status = self._prompt(v)
        message, refused = self.message_now()
        last_turns, last_slots = self._this_rounds_turns(v)
        return UiState(
            names=self.names, focus=self.board, cursor=self.cursor(v),
            marked=frozenset(marked), highlight=self.frame.highlight if self.frame else frozenset(),
            message=message, refused=refused,
            moves=tuple(self.moves), keys=tuple(self.keys()), status=status, overlay=overlay,
            last_turns=last_turns, last_slots=last_slots, end_note=self.notes.end_note,
        )

    def _this_rounds_turns(self, v: SeatView) -> tuple[tuple[str, ...], frozenset[Slot]]:
        """Each seat's last turn and the places it changed, for the turns of the round being
        played only: a turn of the round before is stale once a new deal is on the table
        (its `*` marked a new round's closed card, its words a move of the old deal)."""
        turns = self.notes.turns
        now = [t if t is not None and t.round_no == v.round_no else None for t in turns]
        words = tuple("; ".join(t.words) if t is not None else "" for t in now)
        slots = frozenset(x for seat, t in enumerate(now) if t is not None and seat != self.human
                          for x in t.slots)
        return words, slots

    def advice_now(self) -> Hint | None:
        """The hint, while the table it was asked at is the table now (a move ends it)."""
        if self.advice is None or self._advice_at is not self.game.state or self._my_decision() is None:
            return None
        return self.advice

    def message_now(self) -> tuple[str, bool]:
        """The message line and whether it is a refusal. A message said before the table moved
        on no longer applies and goes (a question asked stays while it is asked); with no
        message, the first-time tip shows."""
        if self.frame is not None:
            return self.frame.message, False
        if self.message and (self._said_at == self._seq() or self.confirm_quit or self.finished):
            return self.message, self.refused
        return (f"Tip: {self.hint}" if self.hint else ""), False

    def screen(self, width: int, height: int) -> list[tuple[str, str]]:
        if self.rules_top is not None and not self.help:
            return join_lines(self.rules_page(width, height))
        return render(self.view(), self.ui_state(), width, height)

    def rules_page(self, width: int, height: int) -> list[Line]:
        """The rules for people (rules_text), scrolled to `rules_top`, with the footer."""
        body = rules_text(self._variant(), max(20, width - 2)).split("\n")
        room = max(1, height - 3)
        top = min(self.rules_top or 0, max(0, len(body) - room))
        self.rules_top = top
        lines: list[Line] = [[("", " " + t)] for t in body[top:top + room]]
        while len(lines) < room:
            lines.append([])
        more = len(body) - top - room
        note = f"{more} more line{'s' if more != 1 else ''} below" if more > 0 else "end of the rules"
        lines.append([("class:label", f" {note} ({top + 1}-{min(len(body), top + room)} of {len(body)})")])
        lines.extend(footer_lines(self.keys(), width, 2))
        lines = lines[:height]
        while len(lines) < height:
            lines.append([])
        return [fit(line, width) for line in lines]

    def _prompt(self, v: SeatView) -> str:
        d = self._my_decision()
        assert d is not None
        if d.kind is DecisionKind.PLAY and len(v.hand) > 1:
            h = v.hand[self.hand_index % len(v.hand)]
            return f"Your turn: play a card in hand (chosen: the {value_text(h.value)})"
        if self.swap_first is not None:
            return "Swap: choose the second card"
        if d.kind is DecisionKind.EXCHANGE:
            if self.take is None:
                return f"Take a card from {name_of(self.names, self._knocker())}'s area"
            return "Put it in place of one of your cards"
        knockers = self._offered_knockers()
        if knockers:
            return "Knocked: " + ", ".join(f"{name_of(self.names, k)} ({k})" for k in sorted(knockers))
        return f"Your turn: {DECISION_WORDS.get(d.kind, str(d.kind))}"

    # ------------------------------------------------------------ legal keys

    def _my_decision(self):  # type: ignore[no-untyped-def]
        d = to_act(self.game.state)
        return d if d is not None and d.seat == self.human and self.frame is None else None

    def _knocker(self) -> int:
        k = self.game.state.knock
        assert k is not None
        return k[0]

    def _offered_knockers(self) -> frozenset[int]:
        """ALLEGRA R16: the seats that knocked for the card just drawn (asked once per draw)."""
        state = self.game.state
        if state.ruleset.variant is not Variant.ALLEGRA or state.phase is not Phase.PLAY:
            return frozenset()
        seq = self.game.table.seq
        if self._knockers is not None and self._knockers[0] == seq:
            return self._knockers[1]
        gives = [m.to for m in legal_moves(state) if isinstance(m, Give)]
        seats = frozenset(s for s in gives if s != self.human and s in self.bots
                          and self.bots[s].knocks(view(state, s)))
        self._knockers = (seq, seats)
        return seats

    def offered(self) -> list[Move]:
        """The moves this person may make now (Gives only to seats that knocked)."""
        if self._my_decision() is None:
            return []
        knockers = self._offered_knockers()
        return [m for m in legal_moves(self.game.state)
                if not isinstance(m, Give) or m.to in knockers]

    # ------------------------------------------------------------ the key table, now

    def situation(self) -> str:
        """Which part of the key table (tui/keys.py) holds now."""
        if self.help:
            return "help"
        if self.rules_top is not None:
            return "rules"
        if self.confirm_quit:
            return "confirm_quit"
        if self.overlay == "game":
            return "game_over"
        if self.overlay == "round":
            return "round_over"
        if self.knock_open:
            return "knock_window"
        d = self._my_decision()
        if d is None:
            return "waiting"
        if self.swap_first is not None:
            return "swap_second"
        if d.kind is DecisionKind.EXCHANGE and self.take is not None:
            return "exchange_put"
        return str(d.kind)

    def _variant(self) -> Variant:
        return self.game.state.ruleset.variant

    def bindings_now(self) -> list[tuple[str, str, Key]]:
        """The footer as (key as written, what it does, its binding): only keys that do
        something now; the same bindings `handle_key` dispatches on."""
        sit = self.situation()
        moves = self.offered() if sit not in ("help", "rules", "confirm_quit") else []
        kinds = {type(m).__name__ for m in moves}
        v = view(self.game.state, self.human)
        out: list[tuple[str, str, Key]] = []
        for k in bindings(self._variant(), sit):
            if not k.footer or (k.move is not None and k.move not in kinds):
                continue
            if k.action == "give":
                out += [(str(m.to), f"give to {name_of(self.names, m.to)}", k)
                        for m in moves if isinstance(m, Give)]
                continue
            if k.action == "choose_hand" and len(v.hand) < 2:
                continue
            if k.action == "cursor" and not moves:
                continue
            does = k.does
            if k.action == "discard" and self._discard_move(v) != self._chosen_discard(v):
                does = "discard the deck card"
            out.append((k.label, does, k))
        return out

    def keys(self) -> list[tuple[str, str]]:
        """The footer: the keys that do something now, and what."""
        return [(label, does) for label, does, _ in self.bindings_now()]

    def _hand_card(self, v: SeatView) -> int | None:
        if not v.hand:
            return None
        return v.hand[self.hand_index % len(v.hand)].card

    def _chosen_discard(self, v: SeatView) -> Discard | None:
        card = self._hand_card(v)
        m = Discard(card) if card is not None else None
        return m if m is not None and m in self.offered() else None

    def _discard_move(self, v: SeatView) -> Discard | None:
        """What x discards: the chosen card in hand when it may be discarded, else the one
        card that may (the deck card), so the footer's words are what x does."""
        chosen = self._chosen_discard(v)
        if chosen is not None:
            return chosen
        return next((m for m in self.offered() if isinstance(m, Discard)), None)

    # ------------------------------------------------------------ keys

    def handle_key(self, key: str) -> None:
        self.keys_handled += 1
        try:
            self._key(key)
        finally:
            self.on_change()

    def _say(self, text: str, refused: bool = False) -> None:
        """A message for the message line. It lasts until the next key, or until the table
        moves on (another seat's move): an old refusal never stays for turns."""
        self.message = text
        self.refused = refused
        self._said_at = self._seq()

    def _seq(self) -> int:
        return int(getattr(self.game.table, "seq", 0))

    def _key(self, key: str) -> None:
        self.hint = ""  # a tip is read once; the next key takes it away
        if self.frame is not None:  # a key during a clear's animation ends it, and counts
            self._skip_frames()
        if key == "escape":
            self.advice = None  # esc clears a hint, and does what it does besides
        sit = self.situation()
        b = lookup(self._variant(), sit, key)
        if b is None:
            self._nothing(sit, key)
            return
        getattr(self, f"_do_{b.action}")(key)

    def _nothing(self, situation: str, key: str) -> None:
        """A key that does nothing now: say what would, in a player's words."""
        if situation == "waiting":
            who = to_act(self.game.state)
            if key == "y" and self._variant() is Variant.ALLEGRA:
                self._say("You can knock only right after another player draws from the deck.",
                          refused=True)
            elif who is None:
                self._say("The game is over.", refused=True)
            elif key not in CURSOR_KEYS and key != "escape":
                self._say(f"Wait: it is {name_of(self.names, who.seat)}'s turn.", refused=True)
            return
        if situation in (DecisionKind.DRAW, DecisionKind.DRAW_SECOND) and key in ("enter", " "):
            swap = " or s to swap two cards" if situation == DecisionKind.DRAW and self._variant() is Variant.GRANDE else ""
            self._say(f"Draw first: d from the deck, t from the discard pile{swap}.", refused=True)
            return
        if key == "escape":
            self._say("")
            return
        d = self._my_decision()
        if situation in ("swap_second", "exchange_put") and key in game_keys(self._variant()):
            what = "swap" if situation == "swap_second" else "exchange"
            self._say(f"Finish the {what} first: enter on a card of yours, or esc to choose again.",
                      refused=True)
            return
        if d is not None and key in game_keys(self._variant()):
            self._say(f"First {DECISION_WORDS.get(d.kind, str(d.kind))}.", refused=True)
            return
        shown = {"enter": "enter", " ": "space"}.get(key, key)
        if len(shown) == 1 or shown in ("enter", "space"):
            self._say(f"{shown} does nothing now: the keys at the bottom are the ones that do.",
                      refused=True)

    # the actions of the key table (keys.py names them; one method each)

    def _do_help(self, key: str) -> None:
        self.help = True

    def _do_close(self, key: str) -> None:
        self.help = False
        self.rules_top = None

    def _do_rules(self, key: str) -> None:
        self.help = False
        self.rules_top = 0

    def _do_scroll_up(self, key: str) -> None:
        self.rules_top = max(0, (self.rules_top or 0) - 1)

    def _do_scroll_down(self, key: str) -> None:
        self.rules_top = (self.rules_top or 0) + 1  # the page keeps it in range when drawn

    def _do_ask_quit(self, key: str) -> None:
        if self.finished:
            self._quit()
            return
        self.confirm_quit = True
        where = f" (the replay is kept in {self.replay_path})" if self.replay_path else ""
        self._say(f"Quit this game? y quits{where}")

    def _do_quit(self, key: str) -> None:
        self.confirm_quit = False
        self._quit()

    def _do_stay(self, key: str) -> None:
        self.confirm_quit = False
        self._say("")

    def _do_next_round(self, key: str) -> None:
        self.overlay = None
        self._say("")
        self._wake.set()

    def _do_hint(self, key: str) -> None:
        """Ask the hinting bot, off the event loop: a searching bot may think for a second,
        and the screen must keep answering keys meanwhile (asyncio.to_thread)."""
        if self._thinking is not None and not self._thinking.done():
            return
        state = self.game.state
        v, offered = view(state, self.human), self.offered()
        if not offered:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a caller driving the client by hand): think here
            self._show_hint(state, hint(v, offered, bot=self.hint_bot))
            return
        self._say(THINKING)

        async def think() -> None:
            found = await asyncio.to_thread(hint, v, offered, bot=self.hint_bot)
            if self.game.state is state:
                self._show_hint(state, found)
                self.on_change()

        self._thinking = loop.create_task(think())

    def _show_hint(self, state: object, found: Hint) -> None:
        self.advice, self._advice_at = found, state
        if self.message == THINKING:  # a key pressed meanwhile may have said something since
            self._say("")

    def _do_knock(self, key: str) -> None:
        self._answer_knock(True)

    def _do_pass(self, key: str) -> None:
        self._answer_knock(False)

    def _answer_knock(self, knocked: bool) -> None:
        self.knocked = knocked
        self.knock_open = False
        self._say("You knocked." if knocked else "You let it pass.")
        d = to_act(self.game.state)
        if knocked and d is not None:  # the moves pane keeps it (the message goes)
            self.moves.append(f"you knocked for {name_of(self.names, d.seat)}'s card")
        self._wake.set()

    def _do_cursor(self, key: str) -> None:
        self._move_cursor(*_ARROWS[key])
        if self.refused:  # "Not this card" was about the card the cursor has left
            self._say("")

    def _do_cancel(self, key: str) -> None:
        self.swap_first = None
        if self.take is not None:
            self.take = None
            self._point_at(self._knocker())
        self._say("")

    def _do_choose_hand(self, key: str) -> None:
        v = view(self.game.state, self.human)
        self.hand_index = int(key) - 1
        self._say(f"Chosen: the {value_text(v.hand[self.hand_index % len(v.hand)].value)}.")

    def _do_give(self, key: str) -> None:
        seat = int(key)
        v = view(self.game.state, self.human)
        if seat not in self._offered_knockers():
            who = name_of(self.names, seat) if seat < v.players else f"seat {seat}"
            self._say(f"{who} did not knock for this card.", refused=True)
            return
        self._submit(Give(seat))

    def _do_draw(self, key: str) -> None:
        self._submit(DrawFromDeck())

    def _do_take(self, key: str) -> None:
        self._submit(TakeDiscard())

    def _do_discard(self, key: str) -> None:
        v = view(self.game.state, self.human)
        m = self._discard_move(v)
        card = self._hand_card(v)
        self._submit(m if m is not None else Discard(card if card is not None else -1))

    def _do_swap_start(self, key: str) -> None:
        at = self.cursor(self.view())
        if at is None or self.view().card_at(at) is None:
            self._say("Choose a card to swap: move the cursor onto one.", refused=True)
            return
        self.swap_first = at
        self._say("Swap: now choose the second card and press enter.")

    def _at(self) -> Slot | None:
        at = self.cursor(view(self.game.state, self.human))
        if at is None:
            self._say("There is no card here.", refused=True)
        return at

    def _do_swap(self, key: str) -> None:
        at = self._at()
        if at is not None and self.swap_first is not None:
            a, b = sorted((self.swap_first, at))
            self._submit(Swap(a, b))

    def _do_turn_up(self, key: str) -> None:
        at = self._at()
        if at is not None:
            self._submit(TurnUp(at))

    def _do_peek_card(self, key: str) -> None:
        at = self._at()
        if at is not None:
            self._submit(PeekCard(at))

    def _do_replace_open(self, key: str) -> None:
        at = self._at()
        if at is not None:
            self._submit(ReplaceOpen(at))

    def _do_peek_row(self, key: str) -> None:
        at = self.cursor(view(self.game.state, self.human))
        self._submit(PeekLine("row", at.row if at is not None else 0))

    def _do_peek_col(self, key: str) -> None:
        at = self.cursor(view(self.game.state, self.human))
        self._submit(PeekLine("col", at.col if at is not None else 0))

    def _do_place_given(self, key: str) -> None:
        at = self._at()
        v = view(self.game.state, self.human)
        if at is not None and v.knock is not None:
            self._submit(Place(v.knock[1].card, at))

    def _do_place(self, key: str) -> None:
        at = self._at()
        card = self._hand_card(view(self.game.state, self.human))
        if at is not None and card is not None:
            self._submit(Place(card, at))

    def _do_exchange_take(self, key: str) -> None:
        at = self._at()
        if at is None:
            return
        if not any(isinstance(m, Exchange) and m.take == at for m in self.offered()):
            self._say(f"Choose a card of {name_of(self.names, self._knocker())}'s area to take.",
                      refused=True)
            return
        self.take = at
        self._point_at(self.human)
        self._say("Now choose the card of yours it replaces.")

    def _do_exchange_put(self, key: str) -> None:
        at = self._at()
        if at is not None and self.take is not None:
            self._submit(Exchange(self.take, at))

    def _move_cursor(self, dr: int, dc: int) -> None:
        layout = area_layout(self.view(), self.board)
        if not layout:
            return
        r = min(self.pos[0], len(layout) - 1)
        c = min(self.pos[1], max(len(layout[r]) - 1, 0))
        r = (r + dr) % len(layout)
        c = (c + dc) % max(len(layout[r]), 1)
        self.pos = (r, c)

    def _point_at(self, seat: int) -> None:
        self.board = seat
        self.pos = home_pos(view(self.game.state, self.human), seat)

    def _submit(self, move: Move) -> None:
        if isinstance(move, Give) and move not in self.offered():
            self._say(f"{name_of(self.names, move.to)} did not knock for this card", refused=True)
            return
        before = view(self.game.state, self.human)
        try:
            apply(self.game.state, move)  # the engine's own words for a refusal, short
            self.game.submit(move)
        except (IllegalMove, Refused) as e:
            reason = e.reason if isinstance(e, Refused) else str(e)
            self._say(refusal_words(reason, self.game.state, self.human, self.names), refused=True)
            return  # the choice so far stays: move the cursor and try again, or esc
        self.swap_first = None
        self.take = None
        self.hand_index = 0
        self._say("")
        self.idle.clear()
        self._after_move(before)
        self._wake.set()

    def _quit(self) -> None:
        self.quit = True
        self.on_quit()

    # ------------------------------------------------------------ after every move

    def _after_move(self, before: SeatView) -> None:
        after = view(self.game.state, self.human)
        effects = after.effects
        self.moves.extend(describe_effects(before, after, effects, self.names))
        self.notes = note_move(self.notes, before, after, self.names)
        self._pending_frames = clear_frames(before, after, effects)
        for e in effects:
            if isinstance(e, EndTriggered):  # whose move left the ender with no closed card
                self._ended_by = before.active
        for key, tip in first_time_hints(before, after, effects, self.names, self._ended_by):
            if key not in self.hints_given:
                self.hints_given.add(key)
                self.hint = tip
        # The cursor follows the decision: the knocker's area to take from, else one's own.
        d = to_act(self.game.state)
        if d is not None and d.seat == self.human and d.kind is DecisionKind.EXCHANGE:
            self._point_at(self._knocker())
        elif self.board != self.human:
            self._point_at(self.human)
        if any(isinstance(e, RoundEnded) for e in effects):
            self._ended_by = None
        if any(isinstance(e, GameEnded) for e in effects):
            self.overlay = "game"
            self._finish()
        elif any(isinstance(e, RoundEnded) for e in effects):
            self.overlay = "round"

    def _finish(self) -> None:
        self.finished = True
        if self.writer is not None:
            self.writer.finish(log_tags(self.game.table))
            self.writer = None
        self._say("The game is over: q quits.")

    def close(self) -> None:
        """Keep what was played: an unfinished game's replay ends with Result `*`."""
        if self.writer is not None:
            self.writer.finish(log_tags(self.game.table))
            self.writer = None

    # ------------------------------------------------------------ the driver

    async def _wait_for_person(self) -> None:
        self._wake.clear()
        self.idle.set()
        self.on_change()
        await self._wake.wait()
        self.idle.clear()

    async def _show_frames(self) -> None:
        frames = self._pending_frames
        self._pending_frames = []
        if self.pace.bot <= 0:
            return
        self._skip.clear()
        for f in frames:
            if self._skip.is_set():
                break
            self.frame = f
            self.on_change()
            try:
                await asyncio.wait_for(self._skip.wait(), self.pace.bot)
            except asyncio.TimeoutError:
                pass
        self.frame = None
        self.on_change()

    def _skip_frames(self) -> None:
        """End the clear being shown now: the key that did it is then handled as usual (issue
        11: keys pressed while an opponent's clear was shown were dropped)."""
        self.frame = None
        self._pending_frames = []
        self._skip.set()

    async def _knock_window(self) -> bool:
        """Let the person knock for the card a bot just drew (ALLEGRA R16)."""
        self.knock_open = True
        self.knocked = False
        if "knock" not in self.hints_given:
            self.hints_given.add("knock")
            self.hint = KNOCK_HINT
        self._wake.clear()
        self.idle.set()
        self.on_change()
        try:
            if self.pace.knock is None:
                await self._wake.wait()
            else:
                try:
                    await asyncio.wait_for(self._wake.wait(), self.pace.knock)
                except asyncio.TimeoutError:
                    pass
        finally:
            self.idle.clear()
            self.knock_open = False
        return self.knocked

    async def run(self) -> None:
        """Play the bots' seats until the game ends; wait (without polling) for the person."""
        while not self.quit:
            await self._show_frames()
            if self.overlay in ("round", "game"):
                if self.overlay == "game":
                    self.idle.set()
                    self.on_change()
                    return
                await self._wait_for_person()
                continue
            state = self.game.state
            d = to_act(state)
            if d is None:
                return
            if d.seat == self.human:
                await self._wait_for_person()
                continue
            bot = self.bots[d.seat]
            legal = legal_moves(state)
            gives = [m for m in legal if isinstance(m, Give)]
            offered = [m for m in legal if not isinstance(m, Give)]
            if gives:
                knockers = {m.to for m in gives if m.to != self.human
                            and self.bots[m.to].knocks(view(state, m.to))}
                if any(m.to == self.human for m in gives) and await self._knock_window():
                    knockers.add(self.human)
                offered += [m for m in gives if m.to in knockers]
            if self.pace.bot > 0:
                await asyncio.sleep(self.pace.bot)
            if self.quit:
                return
            # A searching bot thinks for up to a second or two: in a worker thread, so that
            # the screen keeps drawing and the keys keep working meanwhile.
            move = await asyncio.to_thread(bot.choose, view(state, d.seat), offered)
            if self.quit:
                return
            before = view(state, self.human)
            self.game.submit(move)
            self._after_move(before)
            self.on_change()


# ---------------------------------------------------------------- the Application


def _key_name(event: KeyPressEvent) -> str:
    k = event.key_sequence[0].key
    names = {Keys.Left: "left", Keys.Right: "right", Keys.Up: "up", Keys.Down: "down",
             Keys.ControlM: "enter", Keys.ControlJ: "enter", Keys.Escape: "escape",
             Keys.ControlC: "c-c"}
    if k in names:
        return names[k]
    return event.data


class Client(Protocol):
    """What the Application drives: the play client, and the network client around it."""

    on_change: Callable[[], None]
    on_quit: Callable[[], None]

    def handle_key(self, key: str) -> None: ...
    def screen(self, width: int, height: int) -> list[tuple[str, str]]: ...
    async def run(self) -> None: ...


def make_application(client: Client, *, input: Input | None = None,
                     output: Output | None = None) -> Application[int]:
    """The full-screen Application over a client (tests pass a pipe input and DummyOutput)."""
    kb = KeyBindings()

    @kb.add(Keys.Any)
    @kb.add("left")
    @kb.add("right")
    @kb.add("up")
    @kb.add("down")
    @kb.add("enter")
    @kb.add("c-j")
    @kb.add("escape", eager=True)
    @kb.add("c-c")
    def _(event: KeyPressEvent) -> None:
        client.handle_key(_key_name(event))

    def text() -> list[tuple[str, str]]:
        size = get_app().output.get_size()
        return client.screen(size.columns, size.rows)

    control = FormattedTextControl(text, focusable=True, show_cursor=False)
    app: Application[int] = Application(
        layout=Layout(Window(control, wrap_lines=False)), key_bindings=kb, full_screen=True,
        style=make_style(), color_depth=color_depth(), input=input, output=output,
        mouse_support=False,
    )
    client.on_change = app.invalidate
    client.on_quit = lambda: app.exit(result=0) if app.is_running else None

    async def drive() -> None:
        await client.run()

    def start() -> None:
        app.create_background_task(drive())

    app.pre_run_callables.append(start)
    return app


__all__ = ["Pace", "PlayClient", "Client", "make_application"]
