"""`allegra replay view`: the table screen over golden replays, driven by keystrokes only.

The viewer runs as a real prompt_toolkit Application with a pipe input and a
dummy output of 80x24; keys go in as the bytes a terminal sends, and the
screen is read from what the renderer actually laid out
(`app.renderer.last_rendered_screen`), after each key's redraw.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from allegra_lan.cli import main
from allegra_lan.rules import view
from allegra_lan.tui.replay_view import ReplayViewer, make_app, open_viewer

ROOT = Path(__file__).resolve().parents[1]
REPLAYS = ROOT / "replays"
ENTRIES: list[dict[str, Any]] = json.loads((REPLAYS / "manifest.json").read_text("utf-8"))["replays"]
BY_NAME = {Path(e["file"]).stem: e for e in ENTRIES}
FINISHED = sorted(n for n, e in BY_NAME.items() if e["finished"])

# What a VT100 terminal sends for each key.
KEY = {"right": "\x1b[C", "left": "\x1b[D", "up": "\x1b[A", "down": "\x1b[B",
       "home": "\x1b[H", "end": "\x1b[F", "enter": "\r", "tab": "\t"}
CLOSED_UNDER_ALL = re.compile(r"\?(-?\d+|J)")  # a closed card's value: only --all may show it
PEEKED = re.compile(r"\((-?\d+|J)\)")


class Terminal80x24(DummyOutput):
    """A dummy output that says it is an 80x24 terminal (DummyOutput says 80x40)."""

    def get_size(self) -> Size:
        return Size(rows=24, columns=80)


def path_of(name: str) -> Path:
    return REPLAYS / BY_NAME[name]["file"]


def screen_of(app: Any) -> str:
    screen = app.renderer.last_rendered_screen
    assert screen is not None
    rows = []
    for y in range(24):
        line = screen.data_buffer[y]
        rows.append("".join(line[x].char for x in range(80)).rstrip())
    return "\n".join(rows)


def drive(viewer: ReplayViewer, keys: list[str]) -> list[str]:
    """Run the viewer's Application, send `keys` one at a time (each a KEY name or literal
    text), and return the screen after the start and after each key; then quit with q."""

    async def go() -> list[str]:
        with create_pipe_input() as inp:
            app = make_app(viewer, input=inp, output=Terminal80x24(), color=False)
            drawn = asyncio.Event()
            app.after_render += lambda _app: drawn.set()
            task = asyncio.ensure_future(app.run_async())
            await asyncio.wait_for(drawn.wait(), 10)
            screens = [screen_of(app)]
            for key in keys:
                drawn.clear()
                inp.send_text(KEY.get(key, key))
                await asyncio.wait_for(drawn.wait(), 10)
                screens.append(screen_of(app))
            inp.send_text("q")
            assert await asyncio.wait_for(task, 10) == 0
            return screens

    return asyncio.run(go())


def score_rows(screen: str, names: tuple[str, ...]) -> dict[int, int]:
    """Seat -> total from the round-end table: the row of each seat under the `sum score
    total` heading, whose last number is the total."""
    lines = screen.splitlines()
    head = next((i for i, ln in enumerate(lines) if ln.split()[-3:] == ["sum", "score", "total"]), None)
    totals: dict[int, int] = {}
    if head is None:
        return totals
    for seat, row in enumerate(lines[head + 1:head + 1 + len(names)]):
        if not row.startswith(names[seat]):
            continue
        numbers = re.findall(r"(?<![\w-])-?\d+(?!\w)", row[len(names[seat]):])
        if numbers:
            totals[seat] = int(numbers[-1])
    return totals


@pytest.mark.parametrize("name", FINISHED)
def test_the_end_key_reaches_the_final_scores_of_the_manifest(name: str) -> None:
    entry = BY_NAME[name]
    viewer = open_viewer(str(path_of(name)), None, False)
    first, last = drive(viewer, ["end"])
    assert f"seq {viewer.stepper.positions[0].seq}: the cards are dealt" in first
    assert "Game over:" in last
    assert score_rows(last, viewer.stepper.names) == dict(enumerate(entry["totals"]))
    winners = [viewer.stepper.names[w] for w in entry["winners"]]
    assert all(w in last.splitlines()[0] for w in winners)


def test_stepping_by_round_turn_and_move_goes_back_and_forth() -> None:
    name = "grande-2p"
    viewer = open_viewer(str(path_of(name)), None, False)
    s = viewer.stepper
    ends = [p for p in s.positions if p.round_end]
    screens = drive(viewer, ["]", "left", "right", "[", "down", "down", "up", "right", "left",
                             "]", "]", "[", "home"])
    start, r1, before_r1, r1_again, deal, t1, t2, t1_again, m1, t1_back, r1b, r2, r1c, home = screens
    assert "Round 1 of 3 is over" in r1 and f"seq {ends[0].seq}:" in r1
    assert score_rows(r1, s.names) == dict(enumerate(ends[0].state.results[0].totals))
    assert "is over" not in before_r1 and f"seq {ends[0].seq - 1}:" in before_r1
    assert r1_again == r1
    assert deal == start and "the cards are dealt" in deal
    turn_ends = [p for p in s.positions[1:] if p.turn_end]
    assert f"seq {turn_ends[0].seq}:" in t1 and f"seq {turn_ends[1].seq}:" in t2
    assert t1_again == t1
    assert f"seq {turn_ends[0].seq + 1}:" in m1 and t1_back == t1
    assert "Round 1 of 3" in r1b and "Round 2 of 3 is over" in r2 and r1c == r1b
    assert home == start


def test_typing_a_seq_jumps_there_and_a_seq_outside_the_log_says_so() -> None:
    viewer = open_viewer(str(path_of("allegra-3p-knocks")), 1, False)
    screens = drive(viewer, ["1", "2", "3", "enter", "9", "9", "9", "enter", "4", "enter"])
    typing, jumped, out, early = screens[3], screens[4], screens[8], screens[10]
    assert "go to seq: 123_" in typing
    words = viewer.stepper.positions[viewer.stepper.index_of_seq(123)].words
    assert f"seq 123: {words}"[:80] in jumped
    assert "seq 123 of 249" in jumped  # the status pane says where we are
    assert "seq 999 is not in the log (seqs 0 to 249)" in out
    assert "seq 123 of 249" in out  # a refused jump stays put
    assert "seq 4 is part of the seed ceremony" in early


def test_help_lists_the_keys_any_key_closes_it_and_other_keys_say_so() -> None:
    viewer = open_viewer(str(path_of("grande-2p")), None, True)
    start, helped, closed, moved, odd, tabbed = drive(viewer, ["?", "x", "right", "z", "tab"])
    assert "replay viewer help" in helped and "digits, then enter" in helped
    assert closed == start
    assert moved != start and f"seq {viewer.stepper.positions[1].seq}:" in moved
    assert "z does nothing here; ? lists the keys" in odd
    assert viewer.focus == 1 and tabbed != odd  # seat 1's display is drawn large now


def test_a_seat_sees_its_own_peeks_and_no_other_closed_card() -> None:
    name = "grande-3p-actions"
    peek = 48  # greedy-2 looked at a card of its own (5, R23)
    keys = [*str(peek), "enter"]
    per_seat = {}
    for seat in (0, 2):
        viewer = open_viewer(str(path_of(name)), seat, False)
        per_seat[seat] = drive(viewer, keys)[-1]
        assert not CLOSED_UNDER_ALL.search(per_seat[seat]), per_seat[seat]
    every = drive(open_viewer(str(path_of(name)), None, True), keys)[-1]
    assert CLOSED_UNDER_ALL.search(every)
    state = open_viewer(str(path_of(name)), 2, False).stepper.goto_seq(peek).state
    peeked = sorted(str(c.value) for rows in view(state, 2).displays for row in rows for c in row
                    if c is not None and c.peeked)
    assert peeked
    extra = PEEKED.findall(per_seat[2])
    for token in PEEKED.findall(per_seat[0]):  # the discard pile's count, in both
        extra.remove(token)
    assert sorted(extra) == peeked


def test_a_cut_short_log_is_shown_and_says_so() -> None:
    entry = BY_NAME["grande-4p-cut"]
    viewer = open_viewer(str(path_of("grande-4p-cut")), None, False)
    last = drive(viewer, ["end"])[-1]
    assert "cut short" in last
    assert f"seq {entry['events'] - 1} of {entry['events'] - 1}" in last
    labels = [ln for ln in last.splitlines() if any(n in ln for n in viewer.stepper.names)]
    for seat, total in enumerate(entry["totals"]):
        name = viewer.stepper.names[seat]
        assert any(re.search(rf"{re.escape(name)}(?: \(you\))?\s+{total}\b", ln) for ln in labels), name


def _tampered(tmp_path: Path) -> Path:
    src = path_of("allegra-2p")
    head, _, body = src.read_text("utf-8").partition("\n\n")
    lines = body.splitlines()
    raw = bytearray(base64.b64decode(lines[30]))
    raw[-1] ^= 1
    lines[30] = base64.b64encode(bytes(raw)).decode()
    bad = tmp_path / "tampered.allegra"
    bad.write_text(head + "\n\n" + "\n".join(lines) + "\n", "utf-8")
    return bad


def test_bad_arguments_and_bad_files_are_one_line_and_exit_2(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.allegra"
    junk.write_text("not a replay\n", "utf-8")
    good = str(path_of("grande-2p"))
    cases = [
        ([str(tmp_path / "missing.allegra")], "No such file"),
        ([str(junk)], "not a"),
        ([str(_tampered(tmp_path))], "refused at seq 30"),
        ([good, "--seat", "2"], "--seat 2: the game has seats 0 to 1"),
        ([good, "--seat", "-1"], "--seat -1"),
        ([good, "--seat", "1", "--all"], "not allowed with"),
        ([good, "--seat", "x"], "invalid int value"),
        ([], "required: FILE"),
        ([good], "needs a terminal"),  # pytest's stdin and stdout are not a terminal
    ]
    for argv, words in cases:
        assert main(["replay", "view", *argv]) == 2, argv
        out, err = capsys.readouterr()
        assert out == ""
        assert err.count("\n") == 1 and err.startswith("allegra replay view: error: "), err
        assert words in err, (argv, err)
