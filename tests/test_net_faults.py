"""Faults (issue 4, point 5): a misbehaving peer on the real protocol, and honest peers that hold.

Every game here has three peers on 127.0.0.1 (real TCP, real handshake, lobby, mesh and
gossip; nothing advertised): an honest host at seat 0, an honest guest at seat 2 and the
evil peer of `evil_peer.py` at seat 1. The evil peer plays its seat with a bot through the
node's own code and, at one moment, sends one kind of bad thing to both honest peers.

What every test checks, in the words of the issue: the honest peers refuse the bad thing
with the right reason and name the evil peer (its fingerprint, in `Node.faults` and in
what they say to their players); nobody's log is corrupted (the honest replays are
byte-identical, verify, and hold none of the bad events); and, except for a fork (which
stops the game by design) and a seed nonce never revealed (which cannot start it), the
honest peers finish their game.

Tests marked xfail(strict=True) show behaviour node.py / sync.py do not have yet; their
reasons say what is missing, and each flips to a failure once it is there.
"""

from __future__ import annotations

import base64
import re
from functools import partial
from pathlib import Path
from typing import Any, Sequence

import pytest
import trio

from allegra_lan.log.envelope import decode_event
from allegra_lan.net.framing import HEADER, encode_frame
from allegra_lan.net.peer import config as node_module
from allegra_lan.rules import to_act

from evil_peer import (
    Attack, BadFrame, BadMessages, GarbageFlood, Fork, ForgedKnocks, ForgedSignature, GiveFirst, IllegalMoves,
    NeverReveal, Outcome, Peer, SeqAhead, Silent, WrongAuthor, WrongResult, WrongReveal, WrongSeqAndPrev,
    not_msgpack, oversize_header, play_with_evil,
)

LIMIT = 30.0  # seconds one table may take before the test fails with every peer's progress
EVIL_SEAT = 1
SETUP_TIMEOUT = 2.0  # node.SETUP_TIMEOUT for the never-reveal game (30 s in the product)
PAUSE_NOTE_EVERY = 0.5  # node.PAUSE_NOTE_EVERY there (5 s in the product)
LINGER = 2.0  # session.LINGER there (10 s in the product): how long a stopped peer waits for others


def play(tmp: Path, attack: Attack, **kwargs: Any) -> Outcome:
    return trio.run(partial(play_with_evil, tmp, attack, limit=LIMIT, evil_seat=EVIL_SEAT, **kwargs))


def seq_of(signed: bytes) -> int:
    return decode_event(signed).seq


# ---------------------------------------------------------------- checks shared by the tests


def assert_refused(out: Outcome, expected: Sequence[str], *, said: bool = True) -> None:
    """Each honest peer's faults are exactly one line per pattern of `expected` (regexes
    matched after the prefix), every line names the evil peer, and (with `said`) every
    line was also said to the player."""
    prefix = f"refused from {out.evil.fp}: "
    for p in out.honest:
        assert p.node is not None
        lines = list(p.node.faults)
        assert all(line.startswith(prefix) for line in lines), \
            f"{p.label} blamed someone else than the evil peer {out.evil.fp}: {lines}\n  {out.report()}"
        rests = [line[len(prefix):] for line in lines]
        for pattern in expected:
            hits = [r for r in rests if re.fullmatch(pattern, r)]
            assert len(hits) == 1, f"{p.label}: /{pattern}/ matched {hits} of {lines}\n  {out.report()}"
        assert len(rests) == len(expected), f"{p.label} refused more than expected: {lines}"
        if said:
            missing = [line for line in lines if line not in p.said()]
            assert not missing, f"{p.label} never told its player: {missing}"


def assert_none_taken(out: Outcome) -> None:
    """No bad event the evil peer sent is in any honest peer's log."""
    bad = set(out.attack.bad_events())
    for p in out.honest:
        assert p.node is not None
        taken = bad & {e.signed for e in p.node.table.events}
        assert not taken, f"{p.label} took bad events at seqs {sorted(map(seq_of, taken))}"


def assert_same_finished_game(out: Outcome) -> None:
    """Both honest peers (and the evil one, which played honestly otherwise) finished the
    same game: one replay each, byte-identical, verified, finished; equal state hashes."""
    peers: list[Peer] = [*out.honest, out.evil]
    for p in peers:
        assert p.node is not None
        t = p.node.table
        assert t.state is not None and to_act(t.state) is None, f"{p.label}'s game is not over:\n  {out.report()}"
        assert p.node.stopped is None and p.node.replica.fork is None
    blobs = []
    for p in peers:
        files = p.replays()
        assert len(files) == 1, f"{p.label} wrote {files}"
        blobs.append(files[0].read_bytes())
    assert blobs[0] == blobs[1], "the honest replays differ"
    assert blobs[2] == blobs[0], "the evil peer's replay differs from the honest ones"
    for p in out.honest:
        v = p.verdict()
        assert v.ok and v.finished, f"{p.label}: {v}"
        assert v.events == out.host.node.table.seq  # type: ignore[union-attr]
    assert len({p.node.table.state_hash() for p in peers if p.node is not None}) == 1
    assert out.attack.struck_at is not None, "the evil peer never struck"
    assert_none_taken(out)


# ---------------------------------------------------------------- (a) - (d): bad events, then honest


def test_a_forged_signature_is_refused_and_the_game_goes_on(tmp_path: Path) -> None:
    out = play(tmp_path, ForgedSignature())
    n = out.attack.struck_at
    assert_refused(out, [rf"seq {n}: bad signature: the event was not signed by its author or was changed"])
    assert_same_finished_game(out)


def test_an_event_by_a_seat_whose_turn_it_is_not_is_refused_as_a_wrong_author(tmp_path: Path) -> None:
    attack = WrongAuthor()
    out = play(tmp_path, attack)
    mine, stranger = (seq_of(s.signed) for s in attack.sent if s.signed is not None)
    assert stranger > mine
    assert_refused(out, [
        rf"seq {mine}: wrong author: the \w+ decision is seat 2's to write, not seat {EVIL_SEAT}'s",
        rf"seq {stranger}: wrong author: the \w+ decision is seat \d's to write, not a key that holds no seat's",
    ])
    assert_same_finished_game(out)


def test_a_taken_seq_and_a_wrong_prev_are_refused(tmp_path: Path) -> None:
    attack = WrongSeqAndPrev()
    out = play(tmp_path, attack)
    taken, wrong_prev = (seq_of(s.signed) for s in attack.sent if s.signed is not None)
    assert taken < wrong_prev == attack.struck_at
    assert_refused(out, [
        rf"seq {taken}: seq {taken} is already taken by another author",
        rf"seq {wrong_prev}: prev is not the id of the event before",
    ])
    assert_same_finished_game(out)


@pytest.fixture(scope="module")
def seq_ahead(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """The evil peer signs its move for seq N+3 on its turn at N, then plays N honestly."""
    return play(tmp_path_factory.mktemp("ahead"), SeqAhead())


def test_an_event_with_a_seq_ahead_is_not_taken(seq_ahead: Outcome) -> None:
    assert_same_finished_game(seq_ahead)


def test_an_event_with_a_seq_ahead_is_named(seq_ahead: Outcome) -> None:
    n = seq_ahead.attack.struck_at
    assert n is not None
    assert_refused(seq_ahead, [rf"seq {n + 3}: .*seq.*"])


def test_illegal_moves_validly_signed_are_refused(tmp_path: Path) -> None:
    out = play(tmp_path, IllegalMoves())
    n = out.attack.struck_at
    assert_refused(out, [
        rf"seq {n}: illegal move \(.+\): .+",
        rf"seq {n}: illegal move: unknown move 'teleport'",
    ])
    assert_same_finished_game(out)


def test_a_wrong_reveal_is_refused_and_cannot_choose_the_deal(tmp_path: Path) -> None:
    """A seat that reveals another nonce than it committed to (to pick the deal) is refused;
    the game is seeded from the committed nonce (verify recomputes the seed from the log)."""
    out = play(tmp_path, WrongReveal())
    n = out.attack.struck_at
    assert n == 7 + EVIL_SEAT  # 3 seats: the reveals are seqs 7, 8, 9
    assert_refused(out, [rf"seq {n}: seat {EVIL_SEAT}'s reveal does not match its commitment"])
    assert_same_finished_game(out)


# ---------------------------------------------------------------- (e) a fork


@pytest.fixture(scope="module")
def forked(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """After a fork the honest peers wait LINGER for a confirmation that the forking peer
    (which holds the other twin) never sends: 10 s in the product, 2 s here (for this game
    only: the other tests run with the product's constants)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(node_module, "LINGER", LINGER)
        return play(tmp_path_factory.mktemp("fork"), Fork())


def _note_time(p: Peer, start: str) -> float:
    times = [t for t, text in p.notes if text.startswith(start)]
    assert times, f"{p.label} never said {start!r}: {p.said()}"
    return times[0]


def test_a_fork_stops_the_game_with_both_events_kept(forked: Outcome) -> None:
    attack = forked.attack
    assert isinstance(attack, Fork)
    n = attack.struck_at
    assert n is not None and seq_of(attack.first) == seq_of(attack.second) == n
    fork_line = rf"seq {n}: fork: two different events by one author at seq {n}"
    prefix = f"refused from {forked.evil.fp}: "
    logs = []
    for p in forked.honest:
        node = p.node
        assert node is not None
        fork = node.replica.fork
        assert fork is not None, f"{p.label} saw no fork:\n  {forked.report()}"
        assert (fork.first.signed, fork.second.signed) == (attack.first, attack.second)
        assert node.stopped == "fork"
        assert any(text.startswith("the game stopped: a fork") for text in p.said())
        # The fork is named; the only other line allowed is the evil peer refusing, in its
        # turn, an event of the honest log (its own log holds the other twin).
        rests = [line[len(prefix):] for line in node.faults if line.startswith(prefix)]
        assert len(rests) == len(node.faults), node.faults
        assert sum(bool(re.fullmatch(fork_line, r)) for r in rests) == 1, node.faults
        assert all(re.fullmatch(fork_line, r) or r.startswith("seq ") and "peer refused our event" in r
                   for r in rests), node.faults
        assert node.table.events[n].signed == attack.first
        assert attack.second not in {e.signed for e in node.table.events}
        assert node.table.state is not None and to_act(node.table.state) is not None  # not the end
        v = p.verdict()
        assert v.ok and not v.finished, f"{p.label}: {v}"
        logs.append([e.signed for e in node.table.events])
    short, long = sorted(logs, key=len)
    assert long[:len(short)] == short, "the honest logs disagree before the fork"
    for p in forked.honest:  # no hang: stopped within a pause note, then at most LINGER
        found = _note_time(p, f"refused from {forked.evil.fp}: seq {n}: fork")
        stopped = _note_time(p, "the game stopped: a fork")
        assert stopped - found <= node_module.PAUSE_NOTE_EVERY + 1.0
        assert p.returned_at is not None and p.returned_at - stopped <= LINGER + 1.0


def test_a_fork_stops_the_game_at_once(forked: Outcome) -> None:
    for p in forked.honest:
        found = _note_time(p, f"refused from {forked.evil.fp}: seq {forked.attack.struck_at}: fork")
        stopped = _note_time(p, "the game stopped: a fork")
        assert stopped - found < 1.0, f"{p.label} stopped {stopped - found:.1f} s after it found the fork"


# ---------------------------------------------------------------- a result that disagrees (issue 13)


@pytest.fixture(scope="module")
def wrong_result(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """The evil seat signs its first result over a wrong state hash. The honest peers stop and
    wait LINGER for confirmations that never come (2 s here, as for the fork)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(node_module, "LINGER", LINGER)
        return play(tmp_path_factory.mktemp("result"), WrongResult())


def test_a_result_that_disagrees_stops_every_honest_peer_naming_the_seat_and_both_hashes(
        wrong_result: Outcome) -> None:
    attack = wrong_result.attack
    assert isinstance(attack, WrongResult) and attack.forged
    n = attack.struck_at
    assert n is not None and seq_of(attack.forged) == n
    reasons = set()
    for p in wrong_result.honest:
        node = p.node
        assert node is not None
        d = node.replica.disagreement
        assert d is not None, f"{p.label} found no disagreement:\n  {wrong_result.report()}"
        assert d.event.signed == attack.forged and d.seat == EVIL_SEAT and d.theirs == "0" * 32
        assert node.table.seq == n and d.ours == node.table.state_hash()  # stopped right there
        assert node.stopped == d.reason == (
            f"result: seat {EVIL_SEAT} ({node.table.name_of(d.event.author)}) signed round 1 with "
            f"state hash {'0' * 32}, this engine's is {d.ours}")
        reasons.add(node.stopped)
        assert any(text.startswith(f"the game stopped: {d.reason}") for text in p.said())
        (replay,) = p.replays()
        kept = replay.with_suffix(".disagreement").read_text().strip()
        assert base64.b64decode(kept) == attack.forged  # the proof, beside the replay
        assert attack.forged not in {e.signed for e in node.table.events}
        v = p.verdict()
        assert v.ok and not v.finished, f"{p.label}: {v}"
        assert p.returned_at is not None
        # Passing the proof on is no fault: no honest peer blames the other for it.
        others = [q.fp for q in wrong_result.honest if q is not p]
        assert not [line for line in node.faults if any(fp in line for fp in others)], node.faults
    assert len(reasons) == 1  # one stop, one proof, on every honest peer


# ---------------------------------------------------------------- (f) frames that break the framing


@pytest.mark.parametrize("label,data,reason", [
    ("not msgpack", not_msgpack(), r"malformed frame: .+"),
    ("not a map", HEADER.pack(1) + b"\x07", r"a message must be a map, not an integer"),
    ("oversize", oversize_header(), r"frame of 65537 bytes is over the 65536 limit"),
    ("flood", encode_frame({"t": "ping"}) * 5000,
     r"more than 4000 messages at once \(2000 a second allowed\)"),
], ids=["not-msgpack", "not-a-map", "oversize", "flood"])
def test_a_bad_frame_drops_the_link_and_names_the_peer(tmp_path: Path, label: str, data: bytes,
                                                       reason: str) -> None:
    """The link to the evil peer is cut and named; the honest peers keep running, the
    evil peer redials (it holds a seat), catches up, and the game finishes."""
    out = play(tmp_path, BadFrame(label, data))
    assert_refused(out, [reason])
    for p in out.honest:
        lost = [text for text in p.said() if text.startswith(f"lost {out.evil.fp}: ")]
        assert lost and re.fullmatch(reason, lost[0][len(f"lost {out.evil.fp}: "):]), \
            f"{p.label} did not say why it dropped the evil peer: {p.said()}"
        assert p.said().count(f"connected to {out.evil.fp}") >= 2  # the link came back
    assert_same_finished_game(out)


# ---------------------------------------------------------------- (g) messages the protocol has not


@pytest.fixture(scope="module")
def bad_messages(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return play(tmp_path_factory.mktemp("messages"), BadMessages())


BAD_MESSAGE_LINES = [
    r"unknown message 'gossip_v9'",
    r"a malformed events message: field from: must be an integer, not a text string",
    r"a malformed have message: field seq: must be 0 to 4294967295, not -4",
]


def test_unknown_and_malformed_messages_are_refused(bad_messages: Outcome) -> None:
    assert_refused(bad_messages, BAD_MESSAGE_LINES, said=False)
    assert_same_finished_game(bad_messages)


def test_an_unknown_message_is_named_to_the_players(bad_messages: Outcome) -> None:
    assert_refused(bad_messages, BAD_MESSAGE_LINES, said=True)


def test_a_peer_that_only_sends_garbage_is_cut_off_after_a_few_refusals(tmp_path: Path) -> None:
    """Issue 9: 200 unknown messages in one burst (under the flood limit) made every honest
    peer print 200 lines and keep 200 refusals. Now a connection is closed after
    MAX_LINK_FAULTS refusals, the players read a few lines, and the game still finishes
    (the evil peer connects again and plays on)."""
    out = play(tmp_path, GarbageFlood())
    assert out.attack.struck_at is not None
    for p in out.honest:
        assert p.node is not None
        said = [t for t in p.said() if out.evil.fp in t and "refused" in t]
        assert 1 <= len(said) <= 2 * node_module.MAX_LINK_FAULTS + 5, len(said)
        assert any("refused messages on one connection: link closed" in t for t in said), said[-3:]
        assert len(p.node.faults) <= node_module.MAX_FAULTS
    assert_same_finished_game(out)


# ---------------------------------------------------------------- knocks (ALLEGRA)


def test_a_forged_knock_is_refused_and_the_game_goes_on(tmp_path: Path) -> None:
    """The honest host always gives to a knocker; the evil seat answers the host's first deck
    draw with a knock signed for another draw. The host must drop it, name the evil peer, and
    finish the game."""
    out = play(tmp_path, ForgedKnocks(victim=0), variant="allegra", host_bot=GiveFirst(b"\x01" * 32))
    for p in out.honest:
        assert p.node is not None
        assert any(line.startswith(f"refused from {out.evil.fp}: ") and "knock" in line
                   for line in p.node.faults), p.node.faults
    assert_same_finished_game(out)


# ---------------------------------------------------------------- the seed ceremony


@pytest.fixture(scope="module")
def never_revealed(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """The evil seat commits and never reveals. The product waits 30 s (SETUP_TIMEOUT) and
    lingers 10 s (LINGER); this game (only) uses 2 s and 2 s to stay short."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(node_module, "SETUP_TIMEOUT", SETUP_TIMEOUT)
        mp.setattr(node_module, "PAUSE_NOTE_EVERY", PAUSE_NOTE_EVERY)
        mp.setattr(node_module, "LINGER", LINGER)
        return play(tmp_path_factory.mktemp("never"), NeverReveal())


def test_a_seed_nonce_never_revealed_aborts_the_start(never_revealed: Outcome) -> None:
    out = never_revealed
    n = out.attack.struck_at
    assert n == 7 + EVIL_SEAT and out.attack.struck_time is not None
    logs = []
    for p in out.honest:
        node = p.node
        assert node is not None
        t = node.table
        assert t.seq == n and t.next_author() == EVIL_SEAT, f"{p.label}:\n  {out.report()}"
        assert t.seed is None and t.state is None  # nobody knows the deal
        assert node.stopped == "evil did not send its reveal"
        aborts = [(when, text) for when, text in p.notes if text.startswith("the game cannot start")]
        assert len(aborts) == 1, p.said()
        when, text = aborts[0]
        assert text == f"the game cannot start: evil (seat {EVIL_SEAT}) did not send its reveal " \
                       f"within {SETUP_TIMEOUT:g} s"
        assert when - out.attack.struck_time <= SETUP_TIMEOUT + 1.0, f"{p.label} aborted late"
        assert p.returned_at is not None and p.returned_at - when <= LINGER + 1.0
        assert node.faults == []
        v = p.verdict()
        assert v.ok and not v.finished and v.events == n, f"{p.label}: {v}"
        logs.append(p.replays()[0].read_bytes())
    assert logs[0] == logs[1]
    assert_none_taken(out)


def test_the_start_is_aborted_only_after_the_whole_setup_timeout(never_revealed: Outcome) -> None:
    start = never_revealed.attack.struck_time
    assert start is not None
    for p in never_revealed.honest:
        when = _note_time(p, "the game cannot start")
        assert when - start >= SETUP_TIMEOUT - 0.1, \
            f"{p.label} aborted {when - start:.2f} s after the stall, before {SETUP_TIMEOUT:g} s"


def test_pause_notes_say_how_long_the_game_really_waited(seq_ahead: Outcome) -> None:
    """Every "waiting for ..." note says at most as many seconds as the game has run."""
    pattern = re.compile(r"waiting for .+ \(seat \d+\): (?:thinking|disconnected) for (\d+) s")
    for p in seq_ahead.honest:
        for when, text in p.notes:
            found = pattern.fullmatch(text)
            if found:
                assert int(found.group(1)) <= when - seq_ahead.began + 0.5, \
                    f"{p.label} said {text!r} {when - seq_ahead.began:.2f} s into the game"


# ---------------------------------------------------------------- (h) a peer that falls silent


def test_a_silent_peer_is_dropped_and_the_others_let_a_bot_take_its_seat(tmp_path: Path) -> None:
    """A peer that keeps its sockets open but says nothing (a pulled cable sends no FIN) is
    dropped after SILENCE (4 s here, 10 s in the product; less could drop honest links of a
    loaded machine, whose peers here share one process); since it never speaks again, it
    stays away even though it reconnects, and after the host's takeover time (1 s) the two
    honest seats agree and a bot plays its seat: the honest peers finish the same game."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(node_module, "SILENCE", 4.0)
        mp.setattr(node_module, "PING_EVERY", 0.5)
        mp.setattr(node_module, "LINGER", LINGER)
        out = play(tmp_path, Silent(), takeover=1)
    assert out.attack.struck_at is not None
    blobs = []
    for p in out.honest:
        assert p.node is not None
        said = p.said()
        assert any(t.startswith(f"lost {out.evil.fp}: no word from the peer for 4 s") for t in said), said
        assert p.node.faults == [], p.node.faults
        t = p.node.table
        assert t.state is not None and to_act(t.state) is None, out.report()
        assert [e.kind for e in t.events].count("takeover") == 1
        (replay,) = p.replays()
        blobs.append(replay.read_bytes())
        v = p.verdict()
        assert v.ok and v.finished, v
    assert blobs[0] == blobs[1]
