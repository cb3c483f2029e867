"""The client in a real terminal: `allegra play` and `allegra replay view` under tmux.

Each test starts its own tmux server on a private socket (`tmux -L <unique>`,
no user configuration), runs the command in an 80x24 pane with its data and
config directories in tmp_path, types with `send-keys`, reads the screen with
`capture-pane -p`, and always kills its server. Nothing here uses the
network. CI installs tmux (.ci/run); without it these tests skip and say so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable


from allegra_lan.rules import TurnUp
from allegra_lan.tui.stepper import load_replay
from tmux_pane import Pane, allegra, needs_tmux

ROOT = Path(__file__).resolve().parents[1]
pytestmark = needs_tmux


def test_play_in_a_real_terminal_a_move_by_keys_and_a_clean_quit(
        pane_factory: Callable[[list[str]], Pane], tmp_path: Path) -> None:
    pane = pane_factory(allegra("play", "--seed", "1"))
    table = pane.wait_for(lambda s: "to act: you" in s, "the person's first decision")
    assert "ALLEGRA Grande" in table and "round 1/" in table
    assert len(table.splitlines()) <= 24 and max(map(len, table.splitlines())) <= 80
    pane.keys("Enter")  # turn up the card under the cursor (R3)
    after = pane.wait_for(lambda s: s != table, "the screen to change after the move")
    assert "ALLEGRA Grande" in after
    pane.keys("q")
    pane.wait_for(lambda s: "y quits" in s, "the quit question")
    pane.keys("y")
    assert pane.exit_status() == "status 0"
    text = pane.screen()
    assert "Traceback" not in text
    games = list((tmp_path / "data" / "allegra-lan" / "games").glob("*.allegra"))
    assert len(games) == 1 and "unfinished game; replay:" in text
    # The move made by keys is in the signed replay: seat 0 turned up a card.
    replay = load_replay(games[0])
    mine = [p for p in replay.positions if p.seat == 0 and isinstance(p.move, TurnUp)]
    assert mine, [p.words for p in replay.positions]


def test_replay_view_in_a_real_terminal(pane_factory: Callable[[list[str]], Pane]) -> None:
    manifest = json.loads((ROOT / "replays" / "manifest.json").read_text("utf-8"))
    entry = next(e for e in manifest["replays"] if e["file"].endswith("grande-2p.allegra"))
    pane = pane_factory(allegra("replay", "view", str(ROOT / "replays" / entry["file"])))
    start = pane.wait_for(lambda s: "the cards are dealt" in s, "the deal")
    pane.keys("End")
    last = pane.wait_for(lambda s: "Game over" in s, "the game's end")
    for total in entry["totals"]:
        assert f" {total}" in last
    pane.keys("Home")
    assert pane.wait_for(lambda s: "the cards are dealt" in s, "the deal again") == start
    pane.keys("q")
    assert pane.exit_status() == "status 0"
