"""The golden replays: old signed games must fold to the same game under today's engine.

Each committed file in replays/golden is verified and folded with the current
code, and its result, totals, event count and final state hash are compared
with replays/manifest.json; an engine change that alters an old game fails
here. The features a file claims (knocks, every action card activated, a
chain reaction of 8 or more cards, a cut-short file) are checked in the log
itself, by replaying it through a Table and reading the engine's effects
after every event, independently of make_golden.py's own counting.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from allegra_lan.log.envelope import decode_event
from allegra_lan.log.replay import read_replay
from allegra_lan.rules import ruleset_for, to_act
from allegra_lan.rules.effects import Cleared, Discarded, Given
from allegra_lan.table import Table, fold
from allegra_lan.tools.verify import verify_file

ROOT = Path(__file__).resolve().parents[1]
REPLAYS = ROOT / "replays"
MANIFEST = json.loads((REPLAYS / "manifest.json").read_text(encoding="utf-8"))
ENTRIES: list[dict[str, Any]] = MANIFEST["replays"]
BY_NAME = {Path(e["file"]).stem: e for e in ENTRIES}
ACTION_FOLLOW_UP = {-2: "peek_line", 5: "peek_card", 13: "replace_open"}  # Grande R23, R24


def path_of(entry: dict[str, Any]) -> Path:
    return REPLAYS / entry["file"]


def ids(entries: list[dict[str, Any]]) -> list[str]:
    return [Path(e["file"]).stem for e in entries]


# ------------------------------------------------------------------ what the set covers


def test_the_set_covers_both_variants_every_end_of_the_player_range_and_each_feature() -> None:
    assert len(ENTRIES) >= 8
    for variant in ("allegra", "grande"):
        rs = ruleset_for(variant)
        counts = {e["players"] for e in ENTRIES if e["variant"] == variant and e["finished"]}
        assert {rs.min_players, rs.max_players} <= counts, (variant, counts)
    features = {f for e in ENTRIES for f in e["features"]}
    assert {"knocks", "actions", "chain>=8", "cut short"} <= features
    assert any("knocks" in e["features"] and e["variant"] == "allegra" for e in ENTRIES)
    assert any("actions" in e["features"] and e["variant"] == "grande" for e in ENTRIES)


def test_the_manifest_lists_exactly_the_committed_files() -> None:
    listed = sorted(Path(e["file"]).name for e in ENTRIES)
    committed = sorted(p.name for p in (REPLAYS / "golden").glob("*.allegra"))
    assert listed == committed
    assert len(set(listed)) == len(listed)


# ------------------------------------------------------------------ results and hashes


@pytest.mark.parametrize("entry", ENTRIES, ids=ids(ENTRIES))
def test_the_file_is_the_committed_one(entry: dict[str, Any]) -> None:
    """Byte for byte, so that a header edit (Date, Event: tags nobody signs) shows too."""
    assert hashlib.sha256(path_of(entry).read_bytes()).hexdigest() == entry["sha256"]


@pytest.mark.parametrize("entry", ENTRIES, ids=ids(ENTRIES))
def test_verify_gives_the_manifest_result(entry: dict[str, Any]) -> None:
    v = verify_file(path_of(entry))
    assert v.ok, f"{v.where} seq {v.seq}: {v.reason}"
    assert v.events == entry["events"]
    assert v.finished == entry["finished"]
    if entry["finished"]:
        assert v.result == entry["result"]
        assert list(v.totals) == entry["totals"]
        assert list(v.winners) == entry["winners"]
        assert v.notes == []
    else:
        assert entry["result"] == "*" and entry["winners"] == []
        assert v.result is None


@pytest.mark.parametrize("entry", ENTRIES, ids=ids(ENTRIES))
def test_the_fold_gives_the_manifest_state(entry: dict[str, Any]) -> None:
    replay = read_replay(path_of(entry))
    assert len(replay.events) == entry["events"]
    table, fault = fold(replay.events)
    assert fault is None, str(fault)
    assert table.seq == entry["events"]
    assert table.state is not None
    assert table.state_hash() == entry["state_hash"]
    assert list(table.state.totals) == entry["totals"]
    assert (to_act(table.state) is None) == entry["finished"]
    assert table.genesis is not None
    assert table.genesis.ruleset["variant"] == entry["variant"]
    assert len(table.genesis.seats) == entry["players"]
    # The header says the same (verify checks it too; this pins the manifest to it).
    assert replay.tags["Variant"] == entry["variant"]
    assert replay.tags["Players"] == str(entry["players"])
    assert replay.tags["Result"] == entry["result"]
    assert replay.tags.get("Winners", "") == " ".join(map(str, entry["winners"]))


# ------------------------------------------------------------------ the features, in the log


@dataclass
class Seen:
    """What the log's moves caused, counted from the effects after each event."""

    activated: dict[int, int] = field(default_factory=lambda: {-2: 0, 5: 0, 13: 0})
    acted: dict[int, int] = field(default_factory=lambda: {-2: 0, 5: 0, 13: 0})  # activation + action
    gives: int = 0
    give_events: int = 0
    exchange_events: int = 0
    cleared_by_seq: dict[int, int] = field(default_factory=dict)
    steps_by_seq: dict[int, int] = field(default_factory=dict)
    kinds: list[str] = field(default_factory=list)
    sealed_discards: int = 0  # R24 revised: discards after a 13's action in the same turn
    turn_up_after_sealed: int = 0  # ... followed by a turn-up decision (never, today)


def replay_effects(events: list[bytes]) -> Seen:
    """Replay a log event by event through a Table and read state.effects after each move."""
    t = Table()
    seen = Seen()
    pending: int | None = None  # the value of an action card just activated
    for raw in events:
        before = t.state
        ev = t.append(raw)
        assert ev is not None
        seen.kinds.append(ev.kind)
        if pending is not None:
            if ev.kind == ACTION_FOLLOW_UP[pending]:
                seen.acted[pending] += 1
            pending = None
        if before is None or t.state is None:
            continue
        if before.sealed and ev.kind == "discard":
            seen.sealed_discards += 1
            d = to_act(t.state)
            seen.turn_up_after_sealed += d is not None and d.kind == "turn_up"
        seen.give_events += ev.kind == "give"
        seen.exchange_events += ev.kind == "exchange"
        for e in t.state.effects:
            if isinstance(e, Cleared):
                seen.cleared_by_seq[ev.seq] = seen.cleared_by_seq.get(ev.seq, 0) + len(e.cards)
                seen.steps_by_seq[ev.seq] = max(seen.steps_by_seq.get(ev.seq, 0), e.step)
            elif isinstance(e, Discarded) and e.activated:
                # The card came from the deck, so it was shown (R4) before this move.
                value = before.known[e.card]
                assert value in seen.activated, value
                seen.activated[value] += 1
                pending = value
            elif isinstance(e, Given):
                seen.gives += 1
    return seen


@pytest.fixture(scope="module")
def seen() -> dict[str, Seen]:
    return {name: replay_effects(read_replay(path_of(e)).events) for name, e in BY_NAME.items()}


@pytest.mark.parametrize("entry", ENTRIES, ids=ids(ENTRIES))
def test_the_counts_in_the_manifest_are_what_the_log_does(entry: dict[str, Any],
                                                          seen: dict[str, Seen]) -> None:
    s = seen[Path(entry["file"]).stem]
    c = entry["counts"]
    assert {int(k): n for k, n in c["activated"].items()} == s.activated
    assert c["gives"] == s.gives
    most = max(s.cleared_by_seq.values(), default=0)
    assert c["max_cleared"] == most
    if most:
        first = min(q for q, n in s.cleared_by_seq.items() if n == most)
        assert c["max_cleared_seq"] == first
        assert c["max_cleared_steps"] == s.steps_by_seq[first]


@pytest.mark.parametrize("entry", [e for e in ENTRIES if "knocks" in e["features"]],
                         ids=ids([e for e in ENTRIES if "knocks" in e["features"]]))
def test_knocks_really_happen(entry: dict[str, Any], seen: dict[str, Seen]) -> None:
    """R16: a give event (carrying the knocker's signed knock) gives the card, and the active
    player's exchange follows each one."""
    assert entry["variant"] == "allegra"
    knock_from = entry["rules"].get("knock_min_players", ruleset_for("allegra").knock_min_players)
    assert entry["players"] >= knock_from
    s = seen[Path(entry["file"]).stem]
    assert s.gives >= 1
    assert s.give_events == s.gives
    assert s.exchange_events >= 1
    events = read_replay(path_of(entry)).events
    gives = [decode_event(raw) for raw in events if decode_event(raw).kind == "give"]
    assert gives and all(isinstance(g.body.get("knock"), bytes) for g in gives)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if "actions" in e["features"]],
                         ids=ids([e for e in ENTRIES if "actions" in e["features"]]))
def test_every_action_card_is_activated_and_acts(entry: dict[str, Any], seen: dict[str, Seen]) -> None:
    """R22-R24: each of -2, 5 and 13 is discarded from the deck, activated, and its action
    (peek a line, peek a card, replace an open card) is the next event at least once."""
    assert entry["variant"] == "grande"
    s = seen[Path(entry["file"]).stem]
    for value in (-2, 5, 13):
        assert s.activated[value] >= 1, (value, s.activated)
        assert s.acted[value] >= 1, (value, s.acted)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if "chain>=8" in e["features"]],
                         ids=ids([e for e in ENTRIES if "chain>=8" in e["features"]]))
def test_one_move_clears_eight_or_more(entry: dict[str, Any], seen: dict[str, Seen]) -> None:
    s = seen[Path(entry["file"]).stem]
    seq = entry["counts"]["max_cleared_seq"]
    assert s.cleared_by_seq[seq] >= 8
    assert s.steps_by_seq[seq] == entry["counts"]["max_cleared_steps"] >= 2  # a chain (R27)
    assert s.kinds[seq] in ("place", "turn_up")  # one player's move, not a setup event
    # The table at that seq, folded alone, shows the clearing in its effects too.
    table, fault = fold(read_replay(path_of(entry)).events[:seq + 1])
    assert fault is None and table.state is not None
    assert sum(len(e.cards) for e in table.state.effects if isinstance(e, Cleared)) >= 8


@pytest.mark.parametrize("entry", [e for e in ENTRIES if "cut short" in e["features"]],
                         ids=ids([e for e in ENTRIES if "cut short" in e["features"]]))
def test_the_cut_short_file_is_a_valid_unfinished_prefix(entry: dict[str, Any]) -> None:
    path = path_of(entry)
    data = path.read_bytes()
    assert not data.endswith(b"\n"), "the file must end inside an event line"
    replay = read_replay(path)
    n = entry["events"]
    assert replay.cut_short and replay.fault is None and not replay.finished
    assert replay.notes == [f"the event at seq {n} is cut short"]
    v = verify_file(path)
    assert v.ok and not v.finished and v.unfinished and v.events == n
    assert v.notes == [f"the event at seq {n} is cut short"]
    # It is a prefix of the game it was cut from, ending in the middle of that game's event n.
    source = BY_NAME[entry["cut_from"]]
    whole = read_replay(path_of(source))
    assert whole.finished and len(whole.events) > n
    assert replay.events == whole.events[:n]
    tail = data.rsplit(b"\n", 1)[1].decode("ascii")
    full_line = path_of(source).read_bytes().decode("ascii").partition("\n\n")[2].split("\n")[n]
    assert 0 < len(tail) < len(full_line) and full_line.startswith(tail)
    # The header is the one the game had while being written: the log's tags, Result "*".
    assert replay.tags["Result"] == "*" and "Winners" not in replay.tags
    assert {k: v for k, v in replay.tags.items() if k not in ("Result",)} == {
        k: v for k, v in whole.tags.items() if k not in ("Result", "Winners")}


# ------------------------------------------------------------------ make_golden.py --check


def run_make_golden(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_make_golden_check_rebuilds_every_file_byte_for_byte() -> None:
    p = run_make_golden(REPLAYS / "make_golden.py", "--check")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == (
        f"make_golden --check: {len(ENTRIES)} golden replays and the manifest rebuild byte for byte")


def test_make_golden_check_fails_on_a_changed_file(tmp_path: Path) -> None:
    """The check can fail: a copy of replays/ with one changed byte in one file exits 1 naming it."""
    copy = tmp_path / "replays"
    shutil.copytree(REPLAYS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    victim = copy / "golden" / "allegra-2p.allegra"
    data = bytearray(victim.read_bytes())
    i = data.index(b"\n\n") + 100  # inside the first event line
    data[i] = ord("A") if data[i] != ord("A") else ord("B")
    victim.write_bytes(bytes(data))
    p = run_make_golden(copy / "make_golden.py", "--check")
    assert p.returncode == 1
    assert p.stderr.splitlines() == [f"make_golden --check: {victim} differs from its rebuild"]


# ------------------------------------------------------------------ the rules each file keeps


@pytest.mark.parametrize("entry", ENTRIES, ids=ids(ENTRIES))
def test_each_file_keeps_the_rules_it_was_played_with(entry: dict[str, Any]) -> None:
    """A replay records its ruleset: the files made before issue 11 revised R16 and R24 say
    knock_min_players 3 (ALLEGRA) or carry no turn_up_after_13 field (Grande, read as the old
    rule), and still fold as the manifest says under them; the later ones use today's rules."""
    table, fault = fold(read_replay(path_of(entry)).events)
    assert fault is None and table.genesis is not None
    rs = replace(ruleset_for(entry["variant"]), **entry["rules"])
    assert table.genesis.ruleset == rs.to_dict()
    if entry["rules"].get("turn_up_after_13") is True:
        assert "turn_up_after_13" not in table.genesis.ruleset


def test_the_set_has_games_under_the_old_and_the_revised_rulings() -> None:
    assert any(e["rules"] == {"knock_min_players": 3} for e in ENTRIES)
    assert any(e["rules"] == {"turn_up_after_13": True} for e in ENTRIES)
    assert any(e["variant"] == "allegra" and e["players"] == 2 and "knocks" in e["features"]
               and not e["rules"] for e in ENTRIES)
    assert any("sealed" in e["features"] and not e["rules"] for e in ENTRIES)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if "sealed" in e["features"]],
                         ids=ids([e for e in ENTRIES if "sealed" in e["features"]]))
def test_no_turn_up_after_a_thirteen_in_the_log(entry: dict[str, Any], seen: dict[str, Seen]) -> None:
    """R24 (revised): the turn's other card discarded after a 13's action asks for no turn-up."""
    s = seen[Path(entry["file"]).stem]
    assert s.sealed_discards == entry["counts"]["sealed_discards"] >= 1
    assert s.turn_up_after_sealed == 0
