"""The organisers' and testers' tools on real replay files: verify, show, export, standings, diff.

Every replay here is a real signed game played through LocalGame with
seeded random legal moves and written by ReplayWriter, so the tools are
tested on the files they will meet; tampered copies are made by changing
bytes of those files or by signing other events with the seats' own keys.
"""

from __future__ import annotations

import argparse
import base64
import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from allegra_lan.local import LocalGame, Player, derived, seat_tags
from allegra_lan.tags import result_tags
from allegra_lan.log.envelope import decode_event, sign_event
from allegra_lan.log.identity import Identity, fingerprint
from allegra_lan.log.replay import ReplayWriter, read_replay, write_replay
from allegra_lan.rules import (
    JOKER, Give, Move, legal_moves, ruleset_from_dict, to_act,
)
from allegra_lan.rules.rng import Stream
from allegra_lan.table import Table, move_body
from allegra_lan.tools import fold_log
from allegra_lan.tools.diff import add_diff_arguments, first_difference, run_diff
from allegra_lan.tools.export import add_export_arguments, run_export
from allegra_lan.tools.render import add_show_arguments, render_table, run_show
from allegra_lan.tools.standings import (
    add_standings_arguments, format_text, run_standings, standings,
)
from allegra_lan.tools.verify import (
    Verdict, add_verify_arguments, log_tags, run_verify, verify_file,
)

# ------------------------------------------------------------------ helpers

POOL = [Player(f"player{i}", Identity.from_seed(derived("tools-test-key", i))) for i in range(6)]


@dataclass
class Game:
    """A game written to a replay file, with the moves that made it (to replay them elsewhere)."""

    path: Path
    local: LocalGame
    moves: list[Move]

    @property
    def events(self) -> list[bytes]:
        return [e.signed for e in self.local.table.events]


def random_move(g: LocalGame, rng: Stream) -> Move:
    """A legal move of a random kind, then a random one of that kind: picking among all legal
    moves alike would nearly always swap (Grande offers dozens of swaps and one draw)."""
    by_kind: dict[type, list[Move]] = {}
    for m in legal_moves(g.state):
        by_kind.setdefault(type(m), []).append(m)
    kinds = list(by_kind.values())
    moves = kinds[rng.below(len(kinds))]
    return moves[rng.below(len(moves))]


def play(tmp: Path, name: str, *, variant: str = "grande", seats: tuple[int, ...] = (0, 1),
         rounds: int = 1, seed: int = 0, limit: int | None = None, finish: bool = True,
         moves: list[Move] | None = None) -> Game:
    """A game of random legal moves (the first ones `moves` if given), written to tmp/name as it
    goes. With `limit` moves or finish=False the file stays as a crash would leave it."""
    rs = ruleset_from_dict({"variant": variant, "rounds": rounds})
    players = [POOL[i] for i in seats]
    n = len(players)
    gid = derived("tools-game", variant, seats, seed)[:16]
    # The header as a writer puts it, from local.py's helpers (not from the verifier's).
    tags = {"Event": "Club night", "Site": "Kitchen", "Date": "2025.01.31", "Variant": variant,
            "Table": "test table", "Players": str(n), "Game": gid.hex(), **seat_tags(players)}
    writer = ReplayWriter(tmp / name, tags, fsync=False)
    g = LocalGame(rs, players, game_id=gid, nonces=[derived("tools-nonce", seed, i) for i in range(n)],
                  table_name="test table", writer=writer)
    rng = Stream(derived("tools-moves", seed), "moves")
    played: list[Move] = []
    given = list(moves or [])
    while to_act(g.state) is not None and (limit is None or len(played) < limit):
        if given:
            move = given.pop(0)
        else:
            move = random_move(g, rng)
        g.submit(move)
        played.append(move)
    if finish and to_act(g.state) is None:
        writer.finish(result_tags(g.state))
    else:
        writer.close()
    return Game(tmp / name, g, played)


def ns(**kw: Any) -> argparse.Namespace:
    return argparse.Namespace(**kw)


def run(fn: Any, adder: Any, argv: list[str]) -> tuple[int, str, str]:
    """Parse argv with the tool's own parser and run it: (exit status, stdout, stderr)."""
    parser = argparse.ArgumentParser(prog="test")
    adder(parser)
    args = parser.parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    code = fn(args, out, err)
    return code, out.getvalue(), err.getvalue()


def rewrite(src: Path, dst: Path, *, tags: dict[str, str] | None = None,
            events: list[bytes] | None = None, drop: tuple[str, ...] = ()) -> Path:
    """A copy of a replay with tags changed or dropped, or other events."""
    r = read_replay(src)
    new_tags = {k: v for k, v in r.tags.items() if k not in drop}
    new_tags.update(tags or {})
    write_replay(dst, new_tags, r.events if events is None else events)
    return dst


def prefix(src: Path, dst: Path, n: int) -> Path:
    """The first n events of a finished game, with the header of an unfinished one."""
    return rewrite(src, dst, tags={"Result": "*"}, drop=("Winners",),
                   events=read_replay(src).events[:n])


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Game]:
    tmp = tmp_path_factory.mktemp("games")
    return {
        "grande2": play(tmp, "grande2.allegra"),
        "allegra3": play(tmp, "allegra3.allegra", variant="allegra", seats=(1, 2, 3), seed=1),
        "grande3": play(tmp, "grande3.allegra", seats=(2, 0, 4), rounds=2, seed=2),
    }


# ------------------------------------------------------------------ verify


def test_a_finished_game_verifies_with_its_result(games: dict[str, Game]) -> None:
    for game in games.values():
        v = verify_file(game.path)
        st = game.local.state
        assert v.ok and v.finished, v
        assert v.events == len(game.events)
        assert v.result == " ".join(map(str, st.totals))
        assert v.totals == tuple(st.totals)
        assert v.seats == tuple((p.name, p.identity.fingerprint) for p in game.local.players)
        # The verifier's tags are the ones a writer built from local.py's helpers.
        tags = read_replay(game.path).tags
        want = log_tags(game.local.table)
        assert {k: tags[k] for k in want} == want
    code, out, err = run(run_verify, add_verify_arguments, [str(games["grande2"].path)])
    v = verify_file(games["grande2"].path)
    assert code == 0 and err == ""
    assert out.splitlines() == [
        f"OK  {games['grande2'].path}  ({v.events} events, finished: {v.result}; "
        "no signed results (a log of an older version))",
        "1 file: 1 OK, 0 failed",
    ]


def test_every_flipped_byte_is_found_and_named_by_seq_or_header(tmp_path: Path) -> None:
    game = play(tmp_path, "small.allegra", variant="allegra", seats=(0, 1), seed=5)
    data = game.path.read_bytes()
    body_at = data.index(b"\n\n") + 2
    free_text = [(data.index(f"[{t} ".encode()), data.index(f"[{t} ".encode()) + 1
                  + data[data.index(f"[{t} ".encode()):].index(b"\n")) for t in ("Event", "Site", "Date")]
    rng = Stream(b"flips" * 4, "positions")
    # Header: every byte of every tag the log decides (free-text tags are signed by nobody).
    header = [p for p in range(body_at) if not any(a <= p < b for a, b in free_text)]
    # Body: every third line's break, first and last characters, and random places.
    breaks = [p for p in range(body_at, len(data)) if data[p] == 0x0A]
    body = [breaks[-1]] + breaks[::3] + [p + 1 for p in breaks[:-1:3]] + [p - 1 for p in breaks[::3]]
    body += [body_at + rng.below(len(data) - body_at) for _ in range(100)]
    flipped = tmp_path / "flipped.allegra"
    checked = 0
    for pos in sorted(set(header[::3] + body)):
        for mask in (0x01, 0x80) if pos % 7 == 0 else (0x01,):
            copy = bytearray(data)
            copy[pos] ^= mask
            flipped.write_bytes(bytes(copy))
            v = verify_file(flipped)
            assert not v.ok, (pos, mask, v)
            if pos < body_at:
                assert v.where in ("header", "file"), (pos, v)
            elif pos == len(data) - 1 and mask == 0x01:
                # The last line break as another character: the last event reads as cut short,
                # so the log ends before the Result the header claims.
                assert v.where == "header" and "Result" in v.reason, v
            else:
                line = data.count(b"\n", body_at, pos)
                assert (v.where, v.seq) == ("seq", line), (pos, mask, v)
            checked += 1
    assert checked > 300


def test_unused_base64_bits_are_checked_too(tmp_path: Path) -> None:
    """base64 ignores the low bits of a line's last character; a flip there changes no event."""
    game = play(tmp_path, "g.allegra", limit=20, finish=False)
    lines = game.path.read_text().split("\n")
    body = lines.index("") + 1
    for i, line in enumerate(lines[body:-1]):
        raw = base64.b64decode(line)
        if len(raw) % 3:
            pad = line.index("=")
            alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
            ch = alphabet[alphabet.index(line[pad - 1]) ^ 1]
            lines[body + i] = line[:pad - 1] + ch + line[pad:]
            assert base64.b64decode(lines[body + i]) == raw
            break
    else:
        pytest.skip("every event happened to be a multiple of 3 bytes")
    bad = tmp_path / "bad.allegra"
    bad.write_text("\n".join(lines))
    v = verify_file(bad)
    assert (v.ok, v.seq) == (False, i) and "canonical base64" in v.reason


def test_a_fork_is_reported_with_both_events(tmp_path: Path, games: dict[str, Game]) -> None:
    src = games["allegra3"]
    t = src.local.table
    k = 30
    last = t.events[k]
    seat = t.seat_of(last.author)
    assert seat is not None
    twin = sign_event(src.local.players[seat].identity.key, game=last.game, seq=last.seq,
                      prev=last.prev, kind=last.kind, body={**last.body, "zz": 1})
    path = tmp_path / "fork.allegra"
    prefix(src.path, path, k + 1)
    r = read_replay(path)
    write_replay(path, r.tags, r.events + [twin.signed])
    v = verify_file(path)
    assert not v.ok and v.seq == k and "fork" in v.reason
    assert v.fork == (last.signed, twin.signed)
    code, out, _ = run(run_verify, add_verify_arguments, [str(path)])
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"FAIL {path}  seq {k}: {v.reason}"
    assert lines[1].startswith(f"    first:  seq {k} by seat {seat} ") and last.id.hex()[:16] in lines[1]
    assert lines[2].startswith(f"    second: seq {k} by seat {seat} ") and twin.id.hex()[:16] in lines[2]


def test_a_file_cut_short_by_a_crash_is_ok_but_unfinished(tmp_path: Path) -> None:
    game = play(tmp_path, "crash.allegra", limit=25, finish=False)
    data = game.path.read_bytes()
    n = len(game.events)
    v = verify_file(game.path)
    assert v.ok and not v.finished and v.events == n and v.result is None
    # Cut in the middle of the last line: that event is dropped and the rest is a valid prefix.
    cut = tmp_path / "cut.allegra"
    cut.write_bytes(data[:len(data) - 40])
    v = verify_file(cut)
    assert v.ok and not v.finished and v.events == n - 1
    assert v.notes == [f"the event at seq {n - 1} is cut short"]
    code, out, _ = run(run_verify, add_verify_arguments, [str(cut)])
    assert code == 0
    assert out.splitlines()[0] == (f"OK  {cut}  (unfinished after seq {n - 2}; "
                                   f"the event at seq {n - 1} is cut short)")
    # Cut inside the header: nothing to check but what is there.
    cut.write_bytes(data[:data.index(b"[Seat1")])
    v = verify_file(cut)
    assert v.ok and v.events == 0 and "ends inside its header" in v.notes[0]
    # A finished game's file cut at a line break is a prefix, but its Result no longer holds.
    fin = play(tmp_path, "fin.allegra", seed=3)
    lines = fin.path.read_bytes().split(b"\n")
    cut.write_bytes(b"\n".join(lines[:-5]) + b"\n")
    v = verify_file(cut)
    assert not v.ok and v.where == "header" and "ends before the game does" in v.reason


def test_header_tags_are_checked_against_the_log(tmp_path: Path, games: dict[str, Game]) -> None:
    src = games["grande3"].path
    tags = read_replay(src).tags
    bad = tmp_path / "bad.allegra"
    cases = {
        "Result": ("1 2 3", "Result is"),
        "Winners": ("2", "Winners is"),
        "Seat1": (f"mallory {POOL[0].identity.fingerprint}", "Seat1 is"),
        "Players": ("4", "Players is"),
        "Variant": ("allegra", "Variant is"),
        "Game": ("00" * 16, "Game is"),
        "Table": ("other", "Table is"),
        "Seat3": ("extra X", "has a Seat3 tag"),
    }
    for tag, (value, expect) in cases.items():
        rewrite(src, bad, tags={tag: value})
        v = verify_file(bad)
        assert not v.ok and v.where == "header" and expect in v.reason, (tag, v)
    for tag in ("Result", "Seat0", "Game", "Winners", "Table"):
        write_replay(bad, {k: v for k, v in tags.items() if k != tag}, read_replay(src).events)
        if tag == "Result":  # write_replay puts Result "*" when there is none: take it out by hand
            bad.write_text("\n".join(x for x in bad.read_text().split("\n") if not x.startswith("[Result")))
        v = verify_file(bad)
        assert not v.ok and v.where == "header" and tag in v.reason, (tag, v)
    # The variant's title is as good as its name.
    rewrite(src, bad, tags={"Variant": "ALLEGRA Grande"})
    assert verify_file(bad).ok
    # An unfinished game claiming a result.
    part = play(tmp_path, "part.allegra", limit=10, finish=False)
    rewrite(part.path, bad, tags={"Result": "3 4", "Winners": "0"})
    v = verify_file(bad)
    assert not v.ok and "unfinished game's Result" in v.reason
    rewrite(part.path, bad, tags={"Winners": "0"})
    v = verify_file(bad)
    assert not v.ok and v.reason == 'Winners is "0" but the game is unfinished'
    rewrite(part.path, bad, tags={"Seat01": "x"})
    assert "Seat01" in verify_file(bad).reason
    assert verify_file(part.path).ok


def test_log_faults_are_named_by_seq(tmp_path: Path, games: dict[str, Game]) -> None:
    src = games["grande2"]
    tags = {k: v for k, v in read_replay(src.path).tags.items() if k != "Winners"}
    tags["Result"] = "*"
    t = src.local.table
    bad = tmp_path / "bad.allegra"
    k = 40
    # An illegal move, correctly signed by the seat to act.
    head = fold_log(src.events[:k]).table
    d = to_act(head.state)  # type: ignore[arg-type]
    assert d is not None
    key = src.local.players[d.seat].identity.key
    illegal = sign_event(key, game=t.game, seq=k, prev=head.head, kind="swap",  # type: ignore[arg-type]
                         body={"a": [d.seat, 9, 9], "b": [d.seat, 0, 0]}).signed
    write_replay(bad, tags, src.events[:k] + [illegal] + src.events[k + 1:])
    v = verify_file(bad)
    assert (v.ok, v.seq, v.events) == (False, k, k) and v.reason.startswith("illegal move")
    # A dropped event breaks the chain at its place; a repeated line is a fault too.
    write_replay(bad, tags, src.events[:k] + src.events[k + 1:])
    v = verify_file(bad)
    assert (v.ok, v.seq) == (False, k), v
    write_replay(bad, tags, src.events[:k + 1] + src.events[k:])
    v = verify_file(bad)
    assert (v.ok, v.seq) == (False, k + 1) and "repeat of the event at seq" in v.reason
    # Events by someone else, or for another seat.
    other = POOL[5].identity.key
    forged = sign_event(other, game=t.game, seq=k, prev=head.head, kind="draw_deck",  # type: ignore[arg-type]
                        body={}).signed
    write_replay(bad, tags, src.events[:k] + [forged])
    v = verify_file(bad)
    assert (v.ok, v.seq) == (False, k) and "wrong author" in v.reason
    # A byte that is not text inside an event line.
    write_replay(bad, tags, src.events[:k + 3])
    data = bytearray(bad.read_bytes())
    start = data.index(b"\n\n") + 2
    for _ in range(k + 1):
        start = data.index(b"\n", start) + 1
    data[start + 10] = 0xFF
    bad.write_bytes(bytes(data))
    v = verify_file(bad)
    assert (v.ok, v.seq) == (False, k + 1) and "not text" in v.reason
    # Not a replay at all.
    bad.write_bytes(b"\x00\x01garbage")
    v = verify_file(bad)
    assert not v.ok and v.where == "file" and v.seq is None


def test_verify_walks_directories_in_order_with_parallel_jobs(tmp_path: Path,
                                                             games: dict[str, Game]) -> None:
    root = tmp_path / "night"
    (root / "b").mkdir(parents=True)
    (root / "a" / "deep").mkdir(parents=True)
    files = [
        rewrite(games["grande2"].path, root / "b" / "2.allegra"),
        rewrite(games["allegra3"].path, root / "a" / "deep" / "1.allegra"),
        rewrite(games["grande3"].path, root / "a" / "0.allegra", tags={"Result": "0 0 0"}),
        prefix(games["grande2"].path, root / "b" / "1.allegra", 30),
    ]
    (root / "notes.txt").write_text("not a replay, not looked at")
    expect = sorted(files)
    for jobs in ("1", "2"):
        code, out, err = run(run_verify, add_verify_arguments, ["--jobs", jobs, str(root)])
        lines = out.splitlines()
        assert code == 1 and err == ""
        assert [line.split()[1] for line in lines[:4]] == [str(p) for p in expect]
        assert lines[0].startswith(f"FAIL {root / 'a' / '0.allegra'}  header: Result is")
        assert lines[1].startswith("OK  ") and "finished" in lines[1]
        assert lines[2].startswith("OK  ") and "unfinished after seq 29" in lines[2]
        assert lines[4] == "4 files: 3 OK (1 unfinished), 1 failed"
    code, out, _ = run(run_verify, add_verify_arguments,
                       ["-j", "2", str(files[0]), str(files[1]), str(files[3])])
    assert code == 0 and out.splitlines()[-1] == "3 files: 3 OK (1 unfinished), 0 failed"


def test_verify_progress_bar_and_bad_arguments(tmp_path: Path, games: dict[str, Game]) -> None:
    path = str(games["grande2"].path)
    code, out, err = run(run_verify, add_verify_arguments, ["--progress", path, path])
    assert code == 0 and "[" + "#" * 30 + "] 2/2 files" in err
    assert out.splitlines()[-1] == "2 files: 2 OK, 0 failed"
    code, _, err = run(run_verify, add_verify_arguments, [path])  # not a terminal: no bar
    assert err == ""
    # More than 20 files and a terminal: a bar without asking for it.
    many = tmp_path / "many"
    for i in range(21):
        prefix(games["grande2"].path, many / f"{i:02}.allegra", 12)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Terminal()
    assert run_verify(ns(paths=[str(many)], jobs=1, progress=False), io.StringIO(), tty) == 0
    assert "] 21/21 files" in tty.getvalue()
    tty = Terminal()
    assert run_verify(ns(paths=[str(many / "00.allegra")] * 20, jobs=1, progress=False),
                      io.StringIO(), tty) == 0
    assert tty.getvalue() == ""
    code, out, err = run(run_verify, add_verify_arguments, [path, str(tmp_path / "missing.allegra")])
    assert code == 2 and out == ""
    assert err == f"allegra replay verify: error: no such file or directory: {tmp_path / 'missing.allegra'}\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    out_, err_ = io.StringIO(), io.StringIO()
    assert run_verify(ns(paths=[str(empty)], jobs=1, progress=False), out_, err_) == 2
    assert err_.getvalue() == f"allegra replay verify: error: no .allegra files in the directory {empty}\n"
    assert run_verify(ns(paths=[path], jobs=0, progress=False), out_, err_) == 2
    with pytest.raises(SystemExit):
        run(run_verify, add_verify_arguments, ["--jobs", "0", path])


# ------------------------------------------------------------------ show


def test_show_renders_any_seq_for_any_eyes(games: dict[str, Game]) -> None:
    game = games["allegra3"]
    path = str(game.path)
    code, out, err = run(run_show, add_show_arguments, [path, "--at", "2"])
    assert code == 0 and err == ""
    assert "setup: 2 of 3 accepted, 0 of 3 committed, 0 of 3 revealed" in out
    assert "waiting for: seat 2 player3's accept" in out
    for p in game.local.players:
        assert p.identity.fingerprint in out
    code, out, _ = run(run_show, add_show_arguments, [path])
    assert code == 0 and "game over: winner" in out and "rounds played:" in out
    assert out.count(" |") == 3 * 4  # each seat's shared column: its heading and three rows
    assert "column 4 is also in seat 2 player3's area" in out
    last = len(game.events) - 1
    assert out.startswith(f"after seq {last} by seat ")
    code, out, _ = run(run_show, add_show_arguments, [path, "--at", "12", "--all"])
    assert code == 0 and "every card shown" in out and "?" in out
    code, out, err = run(run_show, add_show_arguments, [path, "--at", str(last + 1)])
    assert code == 2 and out == "" and f"--at {last + 1} is not in the log (seqs 0 to {last})" in err
    code, out, err = run(run_show, add_show_arguments, [path, "--seat", "3"])
    assert code == 2 and "the game has seats 0 to 2" in err
    with pytest.raises(SystemExit):
        run(run_show, add_show_arguments, [path, "--seat", "1", "--all"])


PEEK = re.compile(r"\((?:-?\d+|J)\)")


def peek_mark(value: int) -> str:
    return f"({'J' if value == JOKER else value})"


def test_a_peeked_card_shows_only_to_the_peeker(tmp_path: Path) -> None:
    """Grande -2 and 5 (R23): the peeker sees the value as (v); others and spectators see ?."""
    for seed in range(40):
        game = play(tmp_path, "peek.allegra", seats=(0, 1, 2), seed=100 + seed, limit=400, finish=False)
        t = Table()
        for i, raw in enumerate(game.events):
            t.append(raw)
            st = t.state
            if st is None or i < 10:
                continue
            ev = t.events[-1]
            if ev.kind not in ("peek_line", "peek_card"):
                continue
            peeker = t.seat_of(ev.author)
            assert peeker is not None
            closed = [c for g in st.grids for c in g.cells if c in st.peeked[peeker] and c not in st.up]
            if not closed:
                continue
            mine = render_table(t, seat=peeker)
            want = sorted(peek_mark(st.source.value(st.round_no, c)) for c in closed)
            assert sorted(PEEK.findall(mine)) == want, mine
            other = (peeker + 1) % 3
            if not any(c not in st.up for c in st.peeked[other]):
                assert PEEK.findall(render_table(t, seat=other)) == []
            assert PEEK.findall(render_table(t)) == []
            # --all shows the same cards as closed ones with their values, not as peeks.
            assert PEEK.findall(render_table(t, show_all=True)) == []
            code, out, _ = run(run_show, add_show_arguments,
                               [str(game.path), "--at", str(i), "--seat", str(peeker)])
            assert code == 0 and sorted(PEEK.findall(out)) == want
            return
    pytest.fail("no peek at a card that stayed closed in 40 games")


# ------------------------------------------------------------------ export


def test_export_writes_one_object_per_event_with_the_state_hash(games: dict[str, Game]) -> None:
    game = games["allegra3"]
    code, out, err = run(run_export, add_export_arguments, [str(game.path), "--format", "jsonl"])
    assert code == 0 and err == ""
    recs = [json.loads(line) for line in out.splitlines()]
    assert len(recs) == len(game.events)
    t = Table()
    names = {p.identity.fingerprint: p.name for p in game.local.players}
    for rec, raw in zip(recs, game.events):
        ev = t.append(raw)
        assert ev is not None
        assert rec["seq"] == ev.seq and rec["id"] == ev.id.hex() and rec["prev"] == ev.prev.hex()
        assert rec["author"] == fingerprint(ev.author) and rec["name"] == names[rec["author"]]
        assert rec["seat"] == t.seat_of(ev.author) and rec["kind"] == ev.kind
        assert rec["state_hash"] == (t.state_hash() if t.state is not None else None)
    assert recs[-1]["state_hash"] == game.local.table.state_hash()
    gives = [r for r in recs if r["kind"] == "give"]
    assert gives, "a 3-seat ALLEGRA game with random moves gives cards to knockers"
    knock = bytes.fromhex(gives[0]["body"]["knock"])
    assert len(knock) > 64
    assert recs[0]["body"]["seats"][0]["key"] == game.local.players[0].identity.public.hex()


def test_export_stops_at_the_first_refused_event(tmp_path: Path, games: dict[str, Game]) -> None:
    src = games["grande2"]
    k = 25
    head = fold_log(src.events[:k]).table
    d = to_act(head.state)  # type: ignore[arg-type]
    assert d is not None
    wrong = src.local.players[1 - d.seat].identity.key
    kind, body = move_body(legal_moves(head.state)[0])  # type: ignore[arg-type]
    bad_ev = sign_event(wrong, game=head.game, seq=k, prev=head.head, kind=kind,  # type: ignore[arg-type]
                        body=body).signed
    bad = tmp_path / "bad.allegra"
    write_replay(bad, {"Variant": "grande"}, src.events[:k] + [bad_ev] + src.events[k + 1:])
    code, out, _ = run(run_export, add_export_arguments, [str(bad)])
    recs = [json.loads(line) for line in out.splitlines()]
    assert code == 1 and len(recs) == k + 1
    assert recs[-1]["seq"] == k and recs[-1]["type"] == "author" and "wrong author" in recs[-1]["fault"]
    bad.write_text("garbage")
    code, out, err = run(run_export, add_export_arguments, [str(bad)])
    assert code == 2 and out == "" and err.count("\n") == 1 and "error:" in err


# ------------------------------------------------------------------ standings


def test_standings_sum_verified_finished_games(tmp_path: Path) -> None:
    """Sums per key within each (variant, seats) table; games left out are listed, exit 0
    (issue 13: the standings were made; tests/test_standings.py has the organiser's cases)."""
    night = tmp_path / "night"
    plays = [
        play(night, "g1.allegra", seats=(0, 1, 2), seed=11),
        play(night, "g2.allegra", seats=(2, 3), seed=12),
        play(night, "g3.allegra", variant="allegra", seats=(3, 0, 2, 1), seed=13),
        play(night, "g4.allegra", seats=(1, 2), seed=14),
    ]
    unfinished = play(night, "g5.allegra", seats=(0, 1), seed=15, limit=30, finish=False)
    tampered = rewrite(plays[0].path, night / "g6.allegra", tags={"Result": "1 1 1"})
    expect: dict[tuple[str, str], dict[str, list[int]]] = {}  # table: fingerprint: [games, wins, total]
    for g in plays:
        w = [int(x) for x in result_tags(g.local.state)["Winners"].split()]
        table = expect.setdefault((g.local.table.genesis.ruleset["variant"], str(len(g.local.players))), {})  # type: ignore[union-attr]
        for seat, p in enumerate(g.local.players):
            row = table.setdefault(p.identity.fingerprint, [0, 0, 0])
            row[0] += 1
            row[1] += seat in w
            row[2] += g.local.state.totals[seat]
    code, out, err = run(run_standings, add_standings_arguments, [str(night), "--format", "csv"])
    assert code == 0  # made, though two games were left out
    rows = list(csv.DictReader(io.StringIO(out)))
    got: dict[tuple[str, str], dict[str, list[int]]] = {}
    for r in rows:
        got.setdefault((r["variant"], r["seats"]), {})[r["fingerprint"]] = [int(r["games"]), int(r["wins"]),
                                                                           int(r["total"])]
    assert got == expect
    for r in rows:
        assert r["mean"] == f"{int(r['total']) / int(r['games']):.2f}"
        assert r["player"] == next(p.name for p in POOL if p.identity.fingerprint == r["fingerprint"])
    for table in {(r["variant"], r["seats"]) for r in rows}:
        keys = [(-int(r["wins"]), int(r["total"]) / int(r["games"]), r["player"])
                for r in rows if (r["variant"], r["seats"]) == table]
        assert keys == sorted(keys)
    assert str(unfinished.path) in err and str(tampered) in err and "unfinished (the longest copy" in err
    code, out, _ = run(run_standings, add_standings_arguments, [str(night)])
    lines = out.splitlines()
    assert lines[1].split() == ["rank", "player", "fingerprint", "games", "wins", "total", "mean",
                                "rating", "sigma", "ordinal"]
    assert "4 games counted, 2 left out" in out
    left = lines[lines.index("left out:") + 1:lines.index("left out:") + 3]
    assert left[0].startswith("  FAIL ") and left[1].startswith("  game ")
    code, out, _ = run(run_standings, add_standings_arguments, [str(p.path) for p in plays])
    assert code == 0 and "4 games counted, 0 left out" in out


def test_standings_count_shared_wins_for_each_and_sort_ties_by_mean_then_name() -> None:
    a, b, c = ("ann", "FP-A"), ("bob", "FP-B"), ("cy", "FP-C")

    def v(path: str, seats: tuple[tuple[str, str], ...], totals: tuple[int, ...],
          winners: tuple[int, ...]) -> Verdict:
        return Verdict(path, True, finished=True, seats=seats, totals=totals, winners=winners,
                       game=f"game{path}", variant="grande", head=f"h{path}", events=9)

    verdicts = [
        v("1", (a, b), (10, 10), (0, 1)),
        v("2", (c, b), (5, 30), (0,)),
        v("3", (("anne", "FP-A"), c), (20, 40), (0,)),
        Verdict("4", False, 9, "bad signature"),
        Verdict("5", True, events=40, game="game5", head="h5"),
        v("6", (("zed", "FP-Z"), ("al", "FP-L"), ("eve", "FP-E")), (50, 50, 10), (2,)),
    ]
    s = standings(verdicts, rating=False)
    assert [(t.variant, t.seats) for t in s.tables] == [("grande", 2), ("grande", 3)]
    got = [(r.fingerprint, r.name, r.games, r.wins, r.total) for r in s.tables[0].players]
    assert got == [("FP-A", "ann/anne", 2, 2, 30), ("FP-B", "bob", 2, 1, 40), ("FP-C", "cy", 2, 1, 45)]
    got = [(r.fingerprint, r.name, r.games, r.wins, r.total) for r in s.tables[1].players]
    assert got == [("FP-E", "eve", 1, 1, 10), ("FP-L", "al", 1, 0, 50), ("FP-Z", "zed", 1, 0, 50)]
    assert [x.line.split()[1] for x in s.left_out] == ["4", "game5:"]
    text = format_text(s).splitlines()
    assert [line.split()[0] for line in text[2:5]] == ["1", "2", "3"]
    assert [line.split()[0] for line in text[8:11]] == ["1", "2", "2"]
    assert text[2].split() == ["1", "ann/anne", "FP-A", "2", "2", "30", "15.00", "-", "-", "-"]


# ------------------------------------------------------------------ diff


def test_diff_of_a_log_with_itself_is_same(games: dict[str, Game], tmp_path: Path) -> None:
    path = games["grande3"].path
    code, out, err = run(run_diff, add_diff_arguments, [str(path), str(path)])
    assert code == 0 and err == ""
    assert out.splitlines()[0] == f"same: both logs hold the same {len(games['grande3'].events)} events"
    copy = rewrite(path, tmp_path / "copy.allegra", tags={"Site": "elsewhere"})
    code, out, _ = run(run_diff, add_diff_arguments, [str(path), str(copy)])
    assert code == 0 and "the headers differ in Site" in out


def test_diff_names_the_seq_where_an_alternative_history_parts(tmp_path: Path) -> None:
    a = play(tmp_path, "a.allegra", variant="allegra", seats=(0, 1, 2), seed=21)
    setup = 1 + 3 * 3
    m = 17  # the 18th move is made differently
    state = fold_log(a.events[:setup + m]).table.state
    assert state is not None
    other = next(x for x in legal_moves(state) if x != a.moves[m] and not isinstance(x, Give))
    b = play(tmp_path, "b.allegra", variant="allegra", seats=(0, 1, 2), seed=21,
             moves=a.moves[:m] + [other])
    k = setup + m
    assert first_difference(a.events, b.events) == k
    assert verify_file(b.path).ok
    code, out, err = run(run_diff, add_diff_arguments, [str(a.path), str(b.path)])
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"different: the logs part at seq {k}"
    ea, eb = decode_event(a.events[k]), decode_event(b.events[k])
    kind_row = next(x for x in lines if x[2:].startswith("kind"))
    assert kind_row.startswith("*" if ea.kind != eb.kind else " ")
    assert ea.kind in kind_row and eb.kind in kind_row
    id_row = next(x for x in lines if x[2:].startswith("id "))
    assert id_row.startswith("*") and ea.id.hex()[:20] in out and eb.id.hex()[:20] in out
    assert any(x.startswith(f"the state after seq {k} differs in: ") for x in lines)
    assert lines[-1] == (f"after seq {k}: A has {len(a.events) - k - 1} more events (to seq "
                         f"{len(a.events) - 1}); B has {len(b.events) - k - 1} more events "
                         f"(to seq {len(b.events) - 1})")
    # A log that is a prefix of the other.
    short = rewrite(a.path, tmp_path / "short.allegra", events=a.events[:k])
    code, out, _ = run(run_diff, add_diff_arguments, [str(short), str(a.path)])
    assert code == 1
    assert out.splitlines()[0] == (f"different: A ends at seq {k - 1}, B goes on to seq "
                                   f"{len(a.events) - 1} ({len(a.events) - k} more events)")
    assert out.splitlines()[1].startswith(f"B's next event: seq {k} by seat ")


def test_diff_of_an_unreadable_file_exits_2(tmp_path: Path, games: dict[str, Game]) -> None:
    junk = tmp_path / "junk.allegra"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n")
    code, out, err = run(run_diff, add_diff_arguments, [str(games["grande2"].path), str(junk)])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("allegra diff: error: ") and str(junk) in err
    code, out, err = run(run_diff, add_diff_arguments, [str(tmp_path / "nope"), str(junk)])
    assert code == 2 and err.count("\n") == 1
