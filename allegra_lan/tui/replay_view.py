"""`allegra replay view FILE [--seat N | --all]`: the table screen over a replay.

The viewer is the play client's table screen (tui/screen.py) drawn from a
`Stepper` position instead of a live game: one seat's view by default (what
that player saw, its own peeks included, nobody else's closed cards), or
`--all` with every card open. All the viewer adds is a cursor over the
positions and the keys that move it; `ReplayViewer.press` is a plain
function of a key name so the key handling is the same in the Application,
in tests and in the benchmark.

A file that cannot be read, or that is refused somewhere (a tampered event),
is one error line and exit 2: a replay that does not verify is not shown as
if it were a game. A log cut short (a crash while writing, or a game left
unfinished) verifies as far as it goes, so it is shown, and says so.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from allegra_lan.bots import UnknownBot, make_bot
from allegra_lan.bots.hint import HINT_BOT
from allegra_lan.names import name_of
from allegra_lan.rules import (
    Exchange, PeekCard, Place, ReplaceOpen, SeatView, Slot, Swap, TurnUp, full_view, view,
)
from allegra_lan.rules.effects import Cleared, Collapsed
from allegra_lan.rules.view import SPECTATOR
from allegra_lan.tui.screen import (
    MIN_HEIGHT, MIN_WIDTH, Fragment, Line, UiState, fit, join_lines, screen_lines,
)
from allegra_lan.tui.review import Review
from allegra_lan.tui.stepper import Position, Stepper, StepperError, load_replay

PROG = "allegra replay view"
MOVES_SHOWN = 30  # lines of the move list kept (the pane shows as many as fit)

# The footer, in the order people reach for them.
KEYS: tuple[tuple[str, str], ...] = (
    ("<- ->", "move"),
    ("up dn", "turn"),
    ("[ ]", "round"),
    ("home end", "start, end"),
    ("0-9 enter", "go to seq"),
    ("tab", "big display"),
    ("?", "help"),
    ("q", "quit"),
)
REVIEW_KEYS: tuple[tuple[str, str], ...] = (("n p", "next, previous differing move"),)

HELP: tuple[str, ...] = (
    "Keys",
    "  right or l, left or h     one move forward, one back",
    "  down or j, up or k        to the end of the next turn, of the turn before",
    "  ] or pagedown             to the end of the round (its scores)",
    "  [ or pageup               to the end of the round before",
    "  home or g, end or G       the deal, the last move",
    "  digits, then enter        the table after that seq (esc cancels)",
    "  tab, shift-tab            draw the next (previous) seat's display large",
    "  ?                         this help (any key closes it)",
    "  q or Ctrl-C               quit",
    "",
    "Cards: ? closed, . cleared, (7) a closed card only this seat has seen,",
    "?7 a closed card under --all. [ ] marks where the last move went,",
    "* where each seat's last turn went, highlighted cards were just cleared.",
    "Moves are told as the whole table saw them: a peek says where, not what.",
)
REVIEW_HELP: tuple[str, ...] = (
    "",
    "Review (--review): at each move of the seat, the bot's choice from the same view.",
    "  n, p                      the next, the previous move where the bot chose otherwise",
    "                            (a move its rating finds as good as the bot's is no miss)",
)

# Key names as prompt_toolkit gives them, and what each one does.
ACTIONS: dict[str, str] = {
    "right": "forward", "l": "forward", "left": "back", "h": "back",
    "down": "next_turn", "j": "next_turn", "up": "prev_turn", "k": "prev_turn",
    "]": "next_round", "pagedown": "next_round", "[": "prev_round", "pageup": "prev_round",
    "home": "home", "g": "home", "end": "end", "G": "end",
    "tab": "next_focus", "s-tab": "prev_focus",
}


@dataclass
class ReplayViewer:
    """The viewer's state: a stepper, whose eyes, and what is being typed or shown."""

    stepper: Stepper
    seat: int | None = 0  # None with --all
    title: str = "replay"
    focus: int = 0
    help: bool = False
    typed: str = ""  # digits of a seq being typed
    note: str = ""  # a one-line answer to the last key (a seq not in the log ...)
    refused: bool = False
    last_screen: str = field(default="", repr=False)  # plain text of the last drawn screen
    review: Review | None = None  # --review: the bot's verdict on the seat's every decision

    def __post_init__(self) -> None:
        if self.seat is not None:
            self.focus = self.seat

    @property
    def players(self) -> int:
        return self.stepper.current.state.players

    # -------------------------------------------------------------- what is drawn

    def seat_view(self) -> SeatView:
        state = self.stepper.current.state
        return full_view(state) if self.seat is None else view(state, self.seat)

    def ui_state(self) -> UiState:
        s = self.stepper
        p = s.current
        cursor, highlight = _marks(p)
        eyes = "every card open" if self.seat is None else f"as {name_of(s.names, self.seat)} saw it"
        status = (f"seq {p.seq} of {s.last_seq}, move {p.index} of {s.last}, {eyes}")
        if s.cut_short:
            status += f". {s.cut_short[0].upper()}{s.cut_short[1:]}"
        verdict = self.review.at(p.index) if self.review is not None else None
        if self.review is not None:
            status += f"; {self.review.summary()}"
        if self.typed:
            message, refused = f"go to seq: {self.typed}_  (enter jumps, esc cancels)", False
        elif self.note:
            message, refused = self.note, self.refused
        elif verdict is not None:
            message, refused = f"seq {p.seq}, {verdict.line()}", False
        else:
            message, refused = f"seq {p.seq}: {p.words}", False
        first = max(1, p.index - MOVES_SHOWN + 1)
        moves = tuple(f"{q.seq} {q.words}" for q in s.positions[first:p.index + 1])
        overlay = None
        if p.round_end:
            overlay = "game" if p.game_over else "round"
        # As at the table (tui/seat_notes.py): each seat's last turn marked `*` on the
        # displays and told on one line per seat, and whose move is ending the round.
        notes = p.notes
        return UiState(names=s.names, focus=self.focus, cursor=cursor, highlight=highlight,
                       message=message, refused=refused, moves=moves,
                       keys=KEYS if self.review is None else KEYS[:-2] + REVIEW_KEYS + KEYS[-2:],
                       title=self.title, status=status, overlay=overlay,
                       last_turns=notes.last_turns(), last_slots=notes.last_slots(SPECTATOR),
                       end_note=notes.end_note)

    def lines(self, width: int, height: int) -> list[Line]:
        if self.help and width >= MIN_WIDTH and height >= MIN_HEIGHT:
            return _help_lines(self.seat_view().ruleset.title, width, height,
                               review=self.review is not None)
        return screen_lines(self.seat_view(), self.ui_state(), width, height)

    def fragments(self, width: int, height: int) -> list[Fragment]:
        """Formatted text for the Application (and `last_screen` for anyone reading it)."""
        lines = self.lines(width, height)
        self.last_screen = "\n".join("".join(t for _, t in line).rstrip() for line in lines)
        return join_lines(lines)

    def text(self, width: int = 80, height: int = 24) -> str:
        self.fragments(width, height)
        return self.last_screen

    # -------------------------------------------------------------- keys

    def press(self, key: str) -> bool:
        """Handle one key (prompt_toolkit's name for it); False means quit."""
        if self.help:
            self.help = False  # any key closes the help, and does nothing else
            return key not in ("c-c",)
        if key == "c-c":
            return False
        if key.isdigit() and len(key) == 1:
            if len(self.typed) < 9:
                self.typed += key
            self.note = ""
            return True
        if self.typed:
            if key == "enter":
                self._jump(int(self.typed))
                self.typed = ""
            elif key == "backspace":
                self.typed = self.typed[:-1]
            elif key == "escape":
                self.typed = ""
            elif key == "q":
                return False
            else:
                self.typed = ""
                return self.press(key)
            return True
        self.note, self.refused = "", False
        if key == "q":
            return False
        if key == "?":
            self.help = True
            return True
        if self.review is not None and key in ("n", "p"):
            self._to_disagreement(1 if key == "n" else -1)
            return True
        action = ACTIONS.get(key)
        if action is None:
            if key not in ("escape", "enter", "backspace"):
                self.note, self.refused = f"{_key_text(key)} does nothing here; ? lists the keys", True
            return True
        if action == "next_focus":
            self.focus = (self.focus + 1) % self.players
        elif action == "prev_focus":
            self.focus = (self.focus - 1) % self.players
        else:
            getattr(self.stepper, action)()
        return True

    def _to_disagreement(self, step: int) -> None:
        assert self.review is not None
        found = self.review.next_disagreement(self.stepper.index, step)
        if found is None:
            where = "later" if step > 0 else "earlier"
            self.note = f"no {where} move (of those judged so far) where the bot chose otherwise"
            return
        self.stepper.index = found

    def _jump(self, seq: int) -> None:
        try:
            self.stepper.goto_seq(seq)
        except StepperError as e:
            self.note, self.refused = str(e), True
            return
        if seq < self.stepper.first_seq:
            self.note = (f"seq {seq} is part of the seed ceremony; "
                         f"the cards are dealt at seq {self.stepper.first_seq}")


# prompt_toolkit names some keys by their control code.
_ALIASES = {"c-i": "tab", "c-m": "enter", "c-j": "enter", "c-h": "backspace"}


def _key_text(key: str) -> str:
    return key if len(key) == 1 else f"<{key}>"


def _marks(p: Position) -> tuple[Slot | None, frozenset[Slot]]:
    """Where the last move went (the cursor) and the cards it cleared (highlighted).

    A display that closed up after a clear has new coordinates, so nothing is
    marked on it: a mark must never point at a card the move did not touch."""
    collapsed = {e.seat for e in p.state.effects if isinstance(e, Collapsed)}
    highlight = frozenset(s for e in p.state.effects if isinstance(e, Cleared)
                          for s in e.slots if s.seat not in collapsed)
    m = p.move
    slots: tuple[Slot, ...] = ()
    if isinstance(m, (TurnUp, Place, PeekCard, ReplaceOpen, Exchange)):
        slots = (m.at,)
    elif isinstance(m, Swap):
        slots = (m.b,)
        highlight |= frozenset(s for s in (m.a, m.b) if s.seat not in collapsed)
    cursor = next((s for s in slots if s.seat not in collapsed and s not in highlight), None)
    if p.round_end:
        cursor, highlight = None, frozenset()
    return cursor, highlight


def _help_lines(title: str, width: int, height: int, review: bool = False) -> list[Line]:
    lines: list[Line] = [[("class:header", f"{title}: replay viewer help")], []]
    lines.extend([("", t)] for t in HELP + (REVIEW_HELP if review else ()))
    lines = lines[:height - 1]
    while len(lines) < height - 1:
        lines.append([])
    lines.append([("class:footer", "any key closes the help")])
    return [fit(line, width) for line in lines]


# ------------------------------------------------------------------ the Application


def make_app(viewer: ReplayViewer, *, input=None, output=None, color: bool | None = None):  # type: ignore[no-untyped-def]
    """A full-screen prompt_toolkit Application over `viewer` (input/output: None for the terminal)."""
    from prompt_toolkit.application import Application, get_app
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.keys import Keys
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    from allegra_lan.tui.screen import color_depth, make_style

    def content() -> list[Fragment]:
        size = get_app().output.get_size()
        return viewer.fragments(size.columns, size.rows)

    kb = KeyBindings()

    def handle(event: KeyPressEvent) -> None:
        key = event.key_sequence[-1].key
        name = key.value if isinstance(key, Keys) else key
        if not viewer.press(_ALIASES.get(name, name)):
            event.app.exit(result=0)

    names = set(ACTIONS) | {"q", "?", "enter", "escape", "backspace", "c-c"} | set("0123456789")
    for name in sorted(names):
        kb.add(name)(handle)
    kb.add(Keys.Any)(handle)
    window = Window(FormattedTextControl(content, focusable=True, show_cursor=False),
                    always_hide_cursor=True)
    app: Application[int] = Application(
        layout=Layout(window), key_bindings=kb, full_screen=True, style=make_style(color),
        color_depth=color_depth(color), input=input, output=output, mouse_support=False)
    review = viewer.review
    if review is not None:
        async def judge_all() -> None:
            """The bot's verdicts, one decision at a time off the loop (a searching bot may
            take a second each): the screen answers keys meanwhile and fills them in."""
            for i in review.pending():
                review.verdicts[i] = await asyncio.to_thread(review.verdict_of, i)
                app.invalidate()

        app.pre_run_callables.append(lambda: app.create_background_task(judge_all()))
    return app


# ------------------------------------------------------------------ the command


def open_viewer(path: str, seat: int | None, show_all: bool, *, review: bool = False,
                bot: str | None = None) -> ReplayViewer:
    """The viewer of a replay file; StepperError (one line) for a file or seat it cannot show.

    `review`: the bot `bot` (default: the hint's) judges every move of the seat (default 0)."""
    if review and show_all:
        raise StepperError("--review looks at one seat's decisions: give --seat N, not --all")
    if bot is not None and not review:
        raise StepperError("--bot names the reviewing bot: it needs --review")
    bot = HINT_BOT if bot is None else bot
    if review:
        try:
            make_bot(bot, b"check")
        except UnknownBot as e:
            raise StepperError(f"--bot: {e}") from None
    stepper = load_replay(path)
    players = stepper.current.state.players
    if show_all:
        eyes: int | None = None
    else:
        eyes = 0 if seat is None else seat
        if not 0 <= eyes < players:
            raise StepperError(f"--seat {eyes}: the game has seats 0 to {players - 1}")
    viewer = ReplayViewer(stepper, eyes, title=f"replay {Path(path).name}")
    if review:
        assert eyes is not None
        viewer.review = Review(stepper, eyes, bot)
        viewer.title += " review"
    return viewer


def run_view(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Exit 0 after the viewer quits; 2 for bad arguments, a file that cannot be shown, or
    no terminal to show it on."""
    prog = getattr(args, "prog", None) or PROG
    try:
        viewer = open_viewer(args.file, args.seat, bool(args.show_all),
                             review=bool(getattr(args, "review", False)), bot=getattr(args, "bot", None))
    except StepperError as e:
        err.write(f"{prog}: error: {e}\n")
        return 2
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        err.write(f"{prog}: error: the viewer needs a terminal (allegra replay show prints a table "
                  "as text)\n")
        return 2
    app = make_app(viewer)
    app.run()
    if viewer.stepper.cut_short:
        out.write(f"{viewer.stepper.cut_short}\n")
    return 0


__all__ = [
    "ReplayViewer", "KEYS", "HELP", "make_app", "open_viewer", "run_view",
]
