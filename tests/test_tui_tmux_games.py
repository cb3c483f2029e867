"""Whole games read by keys in a real terminal (issue 11, "Done when"): a 3-player ALLEGRA
game and a 4-player Grande game, played by keys in a tmux pane at 80x24 from the deal to
the final scores, and a few screens at 60x20 and at the smallest size the table accepts.

The person's keys are chosen from what the screen shows (the footer's keys, the cards
under the cursor), so the game is deterministic from its seed as long as every key waits
for the screen it answers. At every screen the test checks what a person would see:
nothing cut mid-word (every word on the screen is a word the client writes, and a line
reaching the last column ends with the `...` the code put there), at most the pane's lines
and columns, and a header that says whose turn it is. The final screen names the winner
and every seat's total, and those totals (and each round's) agree with `allegra replay
show` and `allegra replay verify` of the replay file the game wrote.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import time
from functools import lru_cache
from pathlib import Path
from typing import Callable

import pytest

from tmux_pane import Pane, allegra, needs_tmux

pytestmark = needs_tmux
ROOT = Path(__file__).resolve().parents[1]
PERSON = "ann"
# Where the screen's words come from: the client, the engine's and the table's reasons,
# the rules text, the bots' names (docstrings excluded: they are not drawn).
WORD_SOURCES = ("allegra_lan/tui", "allegra_lan/rules", "allegra_lan/rules_text.py",
                "allegra_lan/table.py", "allegra_lan/bots", "allegra_lan/local.py")

Cell = tuple[int, int]


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """Every word of a string the client can draw, lower case."""
    words: set[str] = set()
    for src in WORD_SOURCES:
        path = ROOT / src
        for f in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            tree = ast.parse(f.read_text("utf-8"))
            docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                    words.update(w.lower() for w in re.findall(r"[A-Za-z]+", node.value))
    return frozenset(words | {PERSON})


def cut_words(screen: str) -> list[str]:
    """Words on the screen that the client never writes: pieces of cut words (`tur`, `dec`).
    Tokens with digits or a `/` (file names, paths) are not words."""
    known = vocabulary()
    out = []
    for tok in screen.split():
        if re.search(r"[0-9/]", tok):
            continue
        for w in re.findall(r"[A-Za-z]+", tok):
            lw = w.lower()
            if lw not in known and not (lw.endswith("s") and lw[:-1] in known):
                out.append(w)
    return out


def check_screen(screen: str, width: int, height: int, names: tuple[str, ...]) -> None:
    """What every screen must be: inside the pane, no word cut, whose turn it is said."""
    lines = screen.rstrip("\n").split("\n")
    assert len(lines) <= height, screen
    for ln in lines:
        assert len(ln) <= width, (ln, screen)
        if len(ln) == width:  # text reaching the edge was shortened, and says so
            assert ln.endswith("..."), (ln, screen)
    assert not cut_words(screen), (cut_words(screen), screen)
    head = lines[0]
    if "Too small" in screen or "too small" in screen:
        return
    if head.startswith(("Round ", "Game over: ")) or ": help" in head or "THE RULES" in screen:
        return
    m = re.search(r"to act: (.+?)(?: \(|$)", head)
    assert m is not None or "game over" in head, screen
    if m is not None:
        assert m.group(1) in ("you",) + names, (m.group(1), screen)


# ------------------------------------------------------------------ reading the table


def footer(screen: str) -> str:
    return "   ".join(screen.rstrip("\n").split("\n")[-3:])


TOKEN = re.compile(r"(?<![^\s|])(\[[^\]\s]*\]|<[^>\s]*>|\*?\(?-?\d+\)?|\*?\?-?\d*|\*?\.|\*?J)(?![^\s|])")


def big_display(screen: str) -> dict[Cell, str]:
    """The big display (the person's, or the knocker's during an exchange): (row, column)
    -> the card as drawn (`?`, `.`, a value, `[v]` under the cursor), columns as drawn."""
    lines = screen.rstrip("\n").split("\n")
    at = next((i for i, ln in enumerate(lines) if "Deck " in ln), None)
    if at is None:
        return {}
    pane = lines[at].find("Deck ")
    region = []
    for ln in lines[at + 1:-3]:
        left = ln[:pane]
        if left.startswith(("first column", "| col 4:")):
            break
        region.append(left)
    heads = [k for k, ln in enumerate(region) if re.fullmatch(r"[\s|]*(col 4)?[\s|]*1\s+2.*", ln)]
    if not heads:
        return {}
    head = region[heads[0]]
    xs = [m.start() + 0.0 for m in re.finditer(r"(?<=\s)[1-4](?=\s|$)|(?<=col )4", head)]
    cells: dict[Cell, str] = {}
    row = 0
    for ln in region[heads[0] + 1:]:
        if "+-" in ln or not TOKEN.search(ln):
            continue
        for m in TOKEN.finditer(ln):
            centre = (m.start() + m.end() - 1) / 2
            col = min(range(len(xs)), key=lambda k: abs(xs[k] - centre))
            cells[(row, col)] = m.group(1).lstrip("*")
        row += 1
    return cells


def value(text: str) -> int | None:
    """A drawn card's value (None: closed or a hole)."""
    t = text.strip("[]<>()")
    if t == "J":
        return 0
    return int(t) if re.fullmatch(r"-?\d+", t) else None


def cursor(cells: dict[Cell, str]) -> Cell | None:
    return next((k for k, t in cells.items() if t.startswith("[")), None)


def target(cells: dict[Cell, str], want: str, shared_first: bool) -> Cell | None:
    """Where to choose: `closed` a closed card (one's own columns first), `high` the highest
    open card else a closed one, `low` the lowest open card, `open` any open card."""
    def own(c: Cell) -> bool:
        return not (shared_first and c[1] == 0)

    order = sorted(cells, key=lambda c: (not own(c), c))
    closed = [c for c in order if cells[c].strip("[]").startswith("?")]
    opened = [c for c in order if value(cells[c]) is not None]
    if want == "closed":
        return closed[0] if closed else None
    if want == "low":
        return min(opened, key=lambda c: value(cells[c]) or 0) if opened else (closed or [None])[0]
    if want == "open":
        return opened[0] if opened else None
    best = max(opened, key=lambda c: value(cells[c]) or 0, default=None)
    if best is not None and (value(cells[best]) or 0) >= 6:
        return best
    return closed[0] if closed else best


class Player:
    """The person at the keyboard: reads the pane, presses one key (or a few arrows and
    enter), waits for the screen that answers, and checks every screen it sees."""

    def __init__(self, pane: Pane, width: int, height: int, names: tuple[str, ...], variant: str) -> None:
        self.pane, self.width, self.height, self.names = pane, width, height, names
        self.shared_first = variant == "allegra"
        self.screens = 0
        self.rounds: list[str] = []  # every round-end screen, once
        self.last = ""

    def settled(self) -> str:
        """The pane once two captures 30 ms apart agree (at most 2 s): tmux takes a frame the
        client wrote in one go in pieces, and a capture between two of them shows a torn
        screen no person sees (a loaded clean-clone run read "co" of a half-drawn line)."""
        s = self.pane.screen()
        end = time.monotonic() + 2
        while time.monotonic() < end:
            time.sleep(0.03)
            again = self.pane.screen()
            if again == s:
                break
            s = again
        return s

    def look(self) -> str:
        s = self.settled()
        if s != self.last and s.strip():  # (a blank pane: tmux between a resize and the redraw)
            check_screen(s, self.width, self.height, self.names)
            self.screens += 1
            self.last = s
            if re.match(r"(Round \d+ of \d+ is over|Game over: )", s) and (
                    not self.rounds or self.rounds[-1].split("\n")[0] != s.split("\n")[0]):
                self.rounds.append(s)
        return s

    def press(self, *keys: str, until: Callable[[str], bool] | None = None, before: str | None = None) -> str:
        """Press `keys` and return the screen that answers them. `before`: the screen just
        looked at, when nothing but a key can change it (the person's move): a second look
        costs two captures 30 ms apart per key, a third of a whole game's time."""
        if before is None:
            before = self.look()
        self.pane.keys(*keys)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            s = self.look()
            if (until(s) if until is not None else s != before):
                return s
            time.sleep(0.02)
        return self.look()

    def choose(self, want: str, s: str) -> str:
        """Move the cursor to the card `want` names and press enter; when refused, walk on.
        `s`: the screen that asks for the card."""
        cells = big_display(s)
        aim = target(cells, want, self.shared_first)
        here = cursor(cells)
        if aim is not None and here is not None and aim != here:
            dr, dc = aim[0] - here[0], aim[1] - here[1]
            keys = ["Down" if dr > 0 else "Up"] * abs(dr) + ["Right" if dc > 0 else "Left"] * abs(dc)
            s = self.press(*keys, until=lambda t: cursor(big_display(t)) == aim, before=s)
        for step in range(30):
            s = self.press("Enter", before=s)
            if not re.search(r"Not this card|There is no card|Choose a card", s):
                return s
            s = self.press("Down" if step % 5 == 4 else "Right", before=s)
        raise AssertionError("no card could be chosen:\n" + s)

    def turn(self) -> bool:
        """One step of the person; False once the final scores are shown."""
        s = self.look()
        f = footer(s)
        head = s.split("\n")[0]
        if head.startswith("Game over: "):
            return False
        if "next round" in f:
            self.press("Enter", until=lambda t: "next round" not in footer(t))
        elif " y  knock" in f:
            m = re.search(r"knock for the (-?\d+|J)", s.replace("\n", " "))
            knock = m is not None and m.group(1) in ("-2", "-1", "0", "J")
            self.press("y" if knock else "n", until=lambda t: " y  knock" not in footer(t))
        elif "to act: you" not in head:
            time.sleep(0.03)  # the bots are playing
        elif "give to" in f:
            self.press(re.search(r"(\d)  give to", f).group(1), before=s)  # type: ignore[union-attr]
        elif "draw from deck" in f:
            top = re.search(r"Discard \[(-?\d+|J)\]", s)
            low = top is not None and (value(top.group(1)) or 0) <= 2 and " t  take" in f
            self.press("t" if low else "d", before=s)
        elif "take this card" in f:
            self.choose("low", s)
        elif "put it here" in f or "place the given card" in f:
            self.choose("high", s)
        elif "place here" in f or "discard it" in f or "discard the deck card" in f:
            hand = re.search(r"In hand \(you\):\s+\[(-?\d+|J)\]", s.replace("\n", " "))
            v = value(hand.group(1)) if hand else None
            if v is not None and v <= 4 or "x  discard" not in f:
                self.choose("high", s)
            else:
                self.press("x", before=s)
        elif "replace this open card" in f:
            self.choose("open", s)
        elif "peek at this row" in f:
            self.press("Enter", before=s)
        elif "enter" in f:  # turn up, peek at a card
            self.choose("closed", s)
        else:
            time.sleep(0.03)
        return True


NEED = re.compile(r"make it (?:at least )?(\d+)x(\d+)")


def _named(screen: str) -> tuple[int, int] | None:
    """The size a too-small screen asks for, or None (the table is drawn)."""
    need = NEED.search(screen)
    return (int(need.group(1)), int(need.group(2))) if need else None


def _table_drawn(screen: str) -> bool:
    """Whether the screen shows the table (or a round's end) rather than the too-small line."""
    return "Too small" not in screen and "Deck " in screen or "is over" in screen


def _redrawn(screen: str, named: tuple[int, int]) -> bool:
    """Whether the client has redrawn after a resize to the size `named`: the table (or a
    round's end), or a screen naming another size. Not a blank pane, which tmux shows
    between a resize and the redraw and which names no size either."""
    now = _named(screen)
    return now is not None and now != named or _table_drawn(screen)


def totals_on(screen: str, names: tuple[str, ...]) -> dict[str, tuple[int, int, int]]:
    """name -> (sum, score, total) from a round-end or final screen's score table."""
    out = {}
    for ln in screen.split("\n"):
        for name in names:
            shown = f"{PERSON} (you)" if name == PERSON else name
            m = re.match(rf"{re.escape(shown)}\s+(-?\d+)\s+(?:x2 )?(-?\d+)\s+(-?\d+)(\s|$)", ln)
            if m:
                out[name] = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    return out


def start(pane_factory: Callable[[list[str]], Pane], variant: str, players: int, seed: int,
          *more: str) -> Pane:
    return pane_factory(allegra("play", "--variant", variant, "--players", str(players),
                                "--seed", str(seed), "--pace", "0", "--name", PERSON, *more))


def names_of(players: int) -> tuple[str, ...]:
    return (PERSON,) + tuple(f"greedy {s}" for s in range(1, players))


def replay_says(path: Path, home: Path) -> tuple[str, str]:
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"),
           "XDG_CONFIG_HOME": str(home / "config")}
    show = subprocess.run(allegra("replay", "show", str(path)), capture_output=True, text=True,
                          timeout=120, env=env)
    verify = subprocess.run(allegra("replay", "verify", str(path)), capture_output=True, text=True,
                            timeout=120, env=env)
    assert show.returncode == 0 and verify.returncode == 0, (show.stderr, verify.stdout, verify.stderr)
    return show.stdout, verify.stdout


# ------------------------------------------------------------------ whole games at 80x24


# (ALLEGRA's game is played in 2 rounds, `play --rounds 2`: its knock windows make each
# round the slowest by keys, and 2 rounds still show a round's end, the next round's deal
# and the final scores; Grande plays the variant's 3.)
@pytest.mark.parametrize("variant,players,seed,rounds", [("allegra", 3, 7, 2), ("grande", 4, 7, 3)])
def test_a_whole_game_by_keys_at_80x24_reads_right_from_deal_to_final_scores(
        pane_factory: Callable[[list[str]], Pane], tmp_path: Path,
        variant: str, players: int, seed: int, rounds: int) -> None:
    names = names_of(players)
    pane = start(pane_factory, variant, players, seed, "--rounds", str(rounds))
    me = Player(pane, 80, 24, names, variant)
    pane.wait_for(lambda s: "to act:" in s, "the deal", timeout=60)
    deadline = time.monotonic() + 400  # generous: the suite runs under load
    while me.turn():
        assert time.monotonic() < deadline, f"the game did not end in time:\n{me.look()}"
    final = me.look()
    assert len(me.rounds) == rounds, [r.split("\n")[0] for r in me.rounds]
    assert me.rounds[0].startswith(f"Round 1 of {rounds} is over"), me.rounds[0]
    winner = re.match(r"Game over: (.+?) (wins|share the win) with (-?\d+)", final)
    assert winner is not None, final
    totals = totals_on(final, names)
    assert set(totals) == set(names), final  # every seat's total is on the final screen
    low = min(t for _, _, t in totals.values())
    assert int(winner.group(3)) == low
    assert winner.group(1).replace(" (you)", "") in {n for n, (_, _, t) in totals.items() if t == low}
    pane.keys("q")
    assert pane.exit_status(60) == "status 0"
    said = pane.history()
    m = re.search(r"finished game; replay: (\S+\.allegra)", said)
    assert m is not None, said
    show, verify = replay_says(Path(m.group(1)), tmp_path)
    want = " ".join(str(totals[n][2]) for n in names)
    # A game played in the terminal is of the version with signed results: every seat's
    # result of every round was signed (the person was never asked for one).
    assert f"finished: {want}; results signed by every seat)" in verify, verify
    assert "totals: " + ", ".join(f"{n} {totals[n][2]}" for n in names) in show, show
    # Each round's screen said what the replay says of that round.
    for k, screen in enumerate(me.rounds):
        seen = totals_on(screen, names)
        line = re.search(rf"round {k + 1}: (.*); totals (.*)", show)
        assert line is not None, show
        assert line.group(2).split() == [str(seen[n][2]) for n in names], (screen, line.group(0))
        for n in names:
            assert re.search(rf"{re.escape(n)} {seen[n][1]}\b", line.group(1)), (n, screen, line.group(0))
    assert me.screens > 30  # every one of them was checked


# ------------------------------------------------------------------ other sizes


@pytest.mark.parametrize("variant,players", [("allegra", 3), ("grande", 4)])
def test_screens_at_60x20_and_at_the_smallest_size_accepted(
        pane_factory: Callable[[list[str]], Pane], variant: str, players: int) -> None:
    names = names_of(players)
    pane = start(pane_factory, variant, players, 5)
    pane.wait_for(lambda s: "to act:" in s, "the deal", timeout=60)
    pane.resize(39, 12)
    pane_w, pane_h = 39, 12  # the pane's size now, for check_screen
    small = pane.wait_for(lambda s: "make it" in s, "the size needed")
    check_screen(small, pane_w, pane_h, names)
    for width, height in ((60, 20), (0, 0)):
        if not width:  # the smallest size accepted: the one the too-small line names
            s = pane.screen()
            for _ in range(4):
                named = _named(s)
                if named is None:
                    break
                width, height = named
                check_screen(s, pane_w, pane_h, names)
                pane.resize(width, height)
                pane_w, pane_h = width, height
                # The client's redraw for the new size: the table, or a further size it names.
                # (Waited for, not slept on: four half-second sleeps gave a loaded client 2 s to
                # redraw, after which the test would have read its old screen four times over.)
                s = pane.wait_for(lambda t, named=(width, height): _redrawn(t, named),
                                  f"the redraw at {width}x{height}, the size the table named")
            else:
                raise AssertionError(f"the size named is not accepted:\n{pane.screen()}")
        pane.resize(width, height)
        pane_w, pane_h = width, height
        me = Player(pane, width, height, names, variant)
        pane.wait_for(_table_drawn, f"the table at {width}x{height}")
        me.look()
        seen_help = False
        # A few turns (draws, discards, turn-ups, knock windows), bounded by the clock rather
        # than by steps: a step while the bots play is a 30 ms look, and under load 80 of them
        # could pass before the person's first turn.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if not me.turn() or me.screens > 25:
                break
            s = me.look()
            if not seen_help and "to act: you" in s.split("\n")[0]:
                me.press("?", until=lambda t: ": help" in t.split("\n")[0])
                me.press("x", until=lambda t: ": help" not in t.split("\n")[0])
                seen_help = True
        assert seen_help and me.screens > 10, me.look()
        pane.resize(39, 12)  # below the minimum again: the next size is the one it names
        pane_w, pane_h = 39, 12
        pane.wait_for(lambda s: "make it" in s, "the size needed")
    pane.resize(80, 24)
    pane.wait_for(lambda s: "make it" not in s, "the table at 80x24")
    pane.keys("q")
    pane.wait_for(lambda s: "y quits" in s or "Quit" in s, "the quit question")
    pane.keys("y")
    assert pane.exit_status(60) == "status 0"
