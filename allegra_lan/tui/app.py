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
from allegra_lan.local import LocalGame, log_tags
from allegra_lan.log.replay import ReplayWriter
from allegra_lan.rules import (
    Discard, DrawFromDeck, Exchange, Give, Move, PeekCard, PeekLine, Place, ReplaceOpen,
    IllegalMove, SeatView, Slot, Swap, TakeDiscard, TurnUp, apply, legal_moves, to_act, view,
)
from allegra_lan.rules.effects import GameEnded, RoundEnded
from allegra_lan.rules.state import DECISION_WORDS, Phase
from allegra_lan.table import Refused

from .screen import UiState, area_layout, color_depth, home_pos, make_style, name_of, render, value_text
from .seat_notes import Notes, note_move
from .words import Frame, clear_frames, describe_effects

MOVES_KEPT = 40

_ARROWS = {"left": (0, -1), "right": (0, 1), "up": (-1, 0), "down": (1, 0),
           "h": (0, -1), "l": (0, 1), "k": (-1, 0), "j": (1, 0)}


@dataclass
class Pace:
    """How fast the table moves. `bot`: seconds before each bot move and per clearing step
    shown (0 in tests); `knock`: seconds the knock window stays open (None: until you
    answer k or n)."""

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
        overlay = "help" if self.help else self.overlay
        status = ""
        if self.knock_open:
            drawn = v.hand[0] if v.hand else None
            what = f"the {value_text(drawn.value)}" if drawn else "the card"
            window = "" if self.pace.knock is None else f" ({self.pace.knock:g} s)"
            status = f"Knock window open{window}: k to knock for {what}, n to pass"
        elif self.finished and self.replay_path is not None:
            status = f"replay: {self.replay_path.name} in {self.replay_path.parent}"
        elif self._my_decision() is not None:
            status = self._prompt(v)
        message = self.frame.message if self.frame is not None else self.message
        return UiState(
            names=self.names, focus=self.board, cursor=self.cursor(v),
            marked=frozenset(marked), highlight=self.frame.highlight if self.frame else frozenset(),
            message=message, refused=self.refused and self.frame is None,
            moves=tuple(self.moves), keys=tuple(self.keys()), status=status, overlay=overlay,
            last_turns=self.notes.last_turns(), last_slots=self.notes.last_slots(self.human),
            end_note=self.notes.end_note,
        )

    def screen(self, width: int, height: int) -> list[tuple[str, str]]:
        return render(self.view(), self.ui_state(), width, height)

    def _prompt(self, v: SeatView) -> str:
        d = self._my_decision()
        assert d is not None
        if d.kind == "play" and len(v.hand) > 1:
            h = v.hand[self.hand_index % len(v.hand)]
            return f"Your turn: play a card in hand (chosen: the {value_text(h.value)})"
        if self.swap_first is not None:
            return "Swap: choose the second card"
        if d.kind == "exchange":
            if self.take is None:
                return f"Take a card from {name_of(self.names, self._knocker())}'s area"
            return "Put it in place of one of your cards"
        knockers = self._offered_knockers()
        if knockers:
            return "Knocked: " + ", ".join(f"{name_of(self.names, k)} ({k})" for k in sorted(knockers))
        return f"Your turn: {DECISION_WORDS.get(d.kind, d.kind)}"

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
        if state.ruleset.variant != "allegra" or state.phase is not Phase.PLAY:
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

    def keys(self) -> list[tuple[str, str]]:
        """The footer: the keys that do something now, and what."""
        if self.help:
            return [("any key", "back to the table")]
        if self.confirm_quit:
            return [("y", "quit (the replay is kept)"), ("any key", "go on playing")]
        if self.overlay in ("round", "game"):
            if self.overlay == "game":
                return [("q", "quit")]
            return [("enter", "next round"), ("?", "help"), ("q", "quit")]
        out: list[tuple[str, str]] = []
        if self.knock_open:
            out += [("k", "knock"), ("n", "pass")]
        moves = self.offered()
        kinds = {type(m) for m in moves}
        v = view(self.game.state, self.human)
        if moves:
            out.append(("arrows/hjkl", "move"))
        if TurnUp in kinds:
            out.append(("enter", "turn up"))
        if DrawFromDeck in kinds:
            out.append(("d", "draw from deck"))
        if TakeDiscard in kinds:
            out.append(("t", "take discard"))
        if Swap in kinds:
            out.append(("enter", "swap with this") if self.swap_first else ("s", "swap two cards"))
            if self.swap_first:
                out.append(("esc", "cancel"))
        if Place in kinds:
            d = self._my_decision()
            if d is not None and d.kind == "place_given":
                out.append(("enter", "place the given card"))
            else:
                if len(v.hand) > 1:
                    out.append(("1/2", "choose card"))
                out.append(("enter", "place here"))
        if Discard in kinds:
            card = self._hand_card(v)
            if card is not None and any(isinstance(m, Discard) and m.card == card for m in moves):
                out.append(("x", "discard it"))
            elif any(isinstance(m, Discard) for m in moves):
                out.append(("x", "discard the deck card"))
        for m in moves:
            if isinstance(m, Give):
                out.append((str(m.to), f"give to {name_of(self.names, m.to)}"))
        if PeekLine in kinds:
            if any(isinstance(m, PeekLine) and m.axis == "row" for m in moves):
                out.append(("r", "peek at this row"))
            if any(isinstance(m, PeekLine) and m.axis == "col" for m in moves):
                out.append(("c", "peek at this column"))
        if PeekCard in kinds:
            out.append(("enter", "peek at this card"))
        if ReplaceOpen in kinds:
            out.append(("enter", "replace this open card"))
        if Exchange in kinds:
            out.append(("enter", "take this card" if self.take is None else "put it here"))
            if self.take is not None:
                out.append(("esc", "choose again"))
        out += [("?", "help"), ("q", "quit")]
        return out

    def _hand_card(self, v: SeatView) -> int | None:
        if not v.hand:
            return None
        return v.hand[self.hand_index % len(v.hand)].card

    # ------------------------------------------------------------ keys

    def handle_key(self, key: str) -> None:
        self.keys_handled += 1
        try:
            self._key(key)
        finally:
            self.on_change()

    def _say(self, text: str, refused: bool = False) -> None:
        self.message = text
        self.refused = refused

    def _key(self, key: str) -> None:
        if key == "c-c":
            self._quit()
            return
        if self.help:
            self.help = False
            return
        if self.confirm_quit:
            self.confirm_quit = False
            if key == "y":
                self._quit()
            else:
                self._say("")
            return
        if key == "?":
            self.help = True
            return
        if key == "q":
            if self.finished:
                self._quit()
                return
            self.confirm_quit = True
            where = f" (the replay is kept in {self.replay_path})" if self.replay_path else ""
            self._say(f"Quit this game? y quits{where}")
            return
        if self.overlay == "round":
            if key in ("enter", " "):
                self.overlay = None
                self._say("")
                self._wake.set()
            return
        if self.overlay == "game":
            return
        if self.knock_open and key in ("k", "n"):  # k knocks here: no cursor off one's turn
            self.knocked = key == "k"
            self.knock_open = False
            self._say("you knocked" if self.knocked else "you let it pass")
            self._wake.set()
            return
        if key in _ARROWS:
            self._move_cursor(*_ARROWS[key])
            return
        if self.frame is not None:
            self._say("wait: the table is showing what the last move cleared", refused=True)
            return
        d = self._my_decision()
        if d is None:
            if key == "k":
                self._say("you can knock only right after another player draws from the deck",
                          refused=True)
            elif key not in ("escape",):
                who = to_act(self.game.state)
                if who is None:
                    self._say("the game is over", refused=True)
                else:
                    self._say(f"wait: it is {name_of(self.names, who.seat)}'s turn "
                              f"({DECISION_WORDS.get(who.kind, who.kind)})", refused=True)
            return
        move = self._move_for(key, d.kind)
        if move is None:
            return
        self._submit(move)

    def _move_cursor(self, dr: int, dc: int) -> None:
        layout = area_layout(self.view(), self.board)
        if not layout:
            return
        r = min(self.pos[0], len(layout) - 1)
        c = min(self.pos[1], max(len(layout[r]) - 1, 0))
        r = (r + dr) % len(layout)
        c = (c + dc) % max(len(layout[r]), 1)
        self.pos = (r, c)

    def _move_for(self, key: str, kind: str) -> Move | None:
        v = view(self.game.state, self.human)
        at = self.cursor(v)
        if key == "escape":
            self.swap_first = None
            if self.take is not None:
                self.take = None
                self._point_at(self._knocker())
            self._say("")
            return None
        if key in ("1", "2") and kind == "play" and len(v.hand) > 1:
            self.hand_index = int(key) - 1
            self._say(f"chosen: the {value_text(v.hand[self.hand_index % len(v.hand)].value)}")
            return None
        if key.isdigit() and v.variant == "allegra":
            seat = int(key)
            if seat not in self._offered_knockers():
                self._say(f"{name_of(self.names, seat) if seat < v.players else f'seat {seat}'} "
                          "did not knock for this card", refused=True)
                return None
            return Give(seat)
        if key == "d":
            return DrawFromDeck()
        if key == "t":
            return TakeDiscard()
        if key == "x":
            card = self._hand_card(v)
            if card is None:
                return Discard(-1)
            return Discard(card)
        if key == "s" and v.variant == "grande":
            if kind != "draw":
                return Swap(at or Slot(self.human, 0, 0), at or Slot(self.human, 0, 0))
            if at is None or v.card_at(at) is None:
                self._say("choose a card to swap: move the cursor onto one", refused=True)
                return None
            self.swap_first = at
            self._say("swap: now choose the second card and press enter")
            return None
        if key in ("r", "c") and v.variant == "grande":
            axis = "row" if key == "r" else "col"
            index = at.row if at is not None and key == "r" else (at.col if at is not None else 0)
            return PeekLine(axis, index)
        if key not in ("enter", " "):
            return None
        if at is None:
            self._say("there is no card here", refused=True)
            return None
        if self.swap_first is not None:
            return Swap(self.swap_first, at)
        if kind in ("reveal", "turn_up"):
            return TurnUp(at)
        if kind == "peek_card":
            return PeekCard(at)
        if kind == "replace_open":
            return ReplaceOpen(at)
        if kind == "place_given":
            assert v.knock is not None
            return Place(v.knock[1].card, at)
        if kind == "exchange":
            if self.take is None:
                if not any(isinstance(m, Exchange) and m.take == at for m in self.offered()):
                    self._say("refused: there is no card to take there", refused=True)
                    return None
                self.take = at
                self._point_at(self.human)
                self._say("now choose the card of yours it replaces")
                return None
            return Exchange(self.take, at)
        if kind == "play":
            card = self._hand_card(v)
            if card is None:
                return None
            return Place(card, at)
        if kind in ("draw", "draw_second"):
            self._say("draw first: d from the deck or t from the discard pile"
                      + (", or s to swap" if kind == "draw" and v.variant == "grande" else ""),
                      refused=True)
            return None
        if kind == "peek_line":
            self._say("peek at a row (r) or a column (c) through the cursor", refused=True)
            return None
        return None

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
            self._say(f"refused: {e.reason if isinstance(e, Refused) else e}", refused=True)
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
        # The cursor follows the decision: the knocker's area to take from, else one's own.
        d = to_act(self.game.state)
        if d is not None and d.seat == self.human and d.kind == "exchange":
            self._point_at(self._knocker())
        elif self.board != self.human:
            self._point_at(self.human)
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
        for f in frames:
            self.frame = f
            self.on_change()
            await asyncio.sleep(self.pace.bot)
        self.frame = None
        self.on_change()

    async def _knock_window(self) -> bool:
        """Let the person knock for the card a bot just drew (ALLEGRA R16)."""
        self.knock_open = True
        self.knocked = False
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
                    self.moves.append(f"you knocked for {name_of(self.names, d.seat)}'s card")
                offered += [m for m in gives if m.to in knockers]
            if self.pace.bot > 0:
                await asyncio.sleep(self.pace.bot)
            if self.quit:
                return
            move = bot.choose(view(state, d.seat), offered)
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
