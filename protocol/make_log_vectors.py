"""Regenerate the signed-log test vectors of PROTOCOL.md (protocol/vectors/logs/), or check them.

    python protocol/make_log_vectors.py            # write protocol/vectors/logs/
    python protocol/make_log_vectors.py --check    # exit 1 if any committed file differs

Every key, nonce, game id and move here comes from a fixed text (see
`derive`), and Ed25519 signing is deterministic, so the same package always
writes the same bytes. `--check` compares them byte for byte with the
committed files and never writes: a difference means the package no longer
encodes, signs, chains or judges logs as PROTOCOL.md says, and it is the
package that must be mended, not the vectors. Regenerate only on a
deliberate, versioned change of the protocol.

The verdicts of the tampered files in `manifest.json` are not recorded
from the package: each file is made to break exactly one rule, and its
expected verdict is written here from that rule. (The Results of the two
valid games are the engine's, pinned by the byte-for-byte check.) The
tests then check that the package, and an independent reader written from
PROTOCOL.md, agree.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
from nacl.signing import SigningKey

from allegra_lan.local import LocalGame, Player, simulated_setup
from allegra_lan.log.ceremony import commitment
from allegra_lan.log.codec import encode
from allegra_lan.log.envelope import KEYS, MAX_EVENT, NO_PREV, Event, decode_event, sign_event
from allegra_lan.log.identity import Identity, fingerprint
from allegra_lan.log.knock import KNOCK_KEYS, sign_knock
from allegra_lan.log.replay import FORMAT, format_header
from allegra_lan.rules import (
    Move, Ruleset, legal_moves, move_name, move_to_dict, ruleset_for, ruleset_from_dict, to_act, winners,
)
from allegra_lan.rules.rng import Stream
from allegra_lan.table import fold

LOGS = Path(__file__).resolve().parent / "vectors" / "logs"
MANIFEST = "manifest.json"
EVENTS = "events.json"
CODEC = "codec.json"

SEAT_NAMES = ("alice", "bob", "carol")
STRANGER = "mallory"  # a key that holds no seat
DATE = "2025.01.01"
SIMULATED: tuple[tuple[int, int, int], ...] = ((0, 0, 2), (1, 0, 3), (1, 1, 3), (2026, 4, 6))  # (S, g, seats)

# How often each kind of legal move is chosen (others: 1). Drawing from the deck and
# discarding turn a closed card up every turn, so rounds end in a few dozen moves;
# give, place and swap are weighted up so that every move kind appears.
WEIGHTS: dict[str, int] = {"draw_deck": 6, "discard": 6, "give": 3, "place": 2, "swap": 2}


# ------------------------------------------------------------------ names


def derive(label: str, size: int = 32) -> bytes:
    """BLAKE2b (unkeyed, `size` bytes) of `allegra-lan/vectors/{label}`: every vector's raw material."""
    return hashlib.blake2b(f"allegra-lan/vectors/{label}".encode(), digest_size=size).digest()


def signing_key(name: str) -> SigningKey:
    return SigningKey(derive(f"key/{name}"))


def game_id(label: str) -> bytes:
    return derive(f"game/{label}", 16)


def nonce(label: str, seat: int) -> bytes:
    return derive(f"nonce/{label}/{seat}")


def b64(signed: bytes) -> str:
    return base64.b64encode(signed).decode("ascii")


def typed(value: Any) -> Any:
    """A decoded msgpack value as JSON: byte strings become {"$bytes": hex} (no key starts with $)."""
    if isinstance(value, bytes):
        return {"$bytes": value.hex()}
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return value


# ------------------------------------------------------------------ the valid games


def choose(state: Any, rng: Stream) -> Move:
    """A move by kind weight, then uniformly within the kind.

    The legal moves are ordered by their canonical encoding, never by the
    engine's list order, so the vectors depend on the rules only."""
    by_kind: dict[str, list[Move]] = {}
    for m in legal_moves(state):
        by_kind.setdefault(move_name(m), []).append(m)
    kinds = sorted(by_kind)
    weights = [WEIGHTS.get(k, 1) for k in kinds]
    x = rng.below(sum(weights))
    chosen = kinds[-1]
    for kind, w in zip(kinds, weights):
        if x < w:
            chosen = kind
            break
        x -= w
    moves = sorted(by_kind[chosen], key=lambda m: encode(move_to_dict(m)))
    return moves[rng.below(len(moves))]


@dataclass
class Log:
    """One signed game played to its end, with the tags its replay file carries."""

    label: str
    variant_tag: str
    local: LocalGame

    @property
    def events(self) -> list[Event]:
        return self.local.table.events

    @property
    def signed(self) -> list[bytes]:
        return [e.signed for e in self.events]

    @property
    def players(self) -> list[Player]:
        return self.local.players

    def key(self, seat: int) -> SigningKey:
        return self.players[seat].identity.key

    def seat_of(self, ev: Event) -> int:
        seat = self.local.table.seat_of(ev.author)
        assert seat is not None
        return seat

    def tags(self, *, final: bool) -> dict[str, str]:
        """The header: free-text tags, the tags the genesis fixes, and the Result."""
        tags = {"Event": "allegra-lan protocol vectors", "Site": "protocol/vectors/logs", "Date": DATE,
                "Variant": self.variant_tag, "Table": self.label, "Players": str(len(self.players)),
                "Game": self.events[0].game.hex()}
        for i, p in enumerate(self.players):
            tags[f"Seat{i}"] = f"{p.name} {fingerprint(p.identity.public)}"
        state = self.local.state
        if final and self.local.table.over:
            tags["Result"] = " ".join(str(x) for x in state.totals)
            tags["Winners"] = " ".join(str(s) for s in winners(state))
        else:
            tags["Result"] = "*"
        return tags

    def first(self, kind: str, start: int = 0) -> int:
        return next(i for i, e in enumerate(self.events) if e.kind == kind and i >= start)


class VectorClock:
    """A fixed clock for the log with signed results: SIGNED_START, then 1.5 s later on each
    reading, so the file is the same on every run."""

    def __init__(self) -> None:
        self.now = SIGNED_START - 1500

    def __call__(self) -> int:
        self.now += 1500
        return self.now


SIGNED_START = 1_767_225_600_000  # 2026-01-01T00:00:00Z, the genesis's `started`


def play_log(label: str, ruleset: Ruleset, seats: int, variant_tag: str, *,
             signed_results: bool = False) -> Log:
    players = [Player(name, Identity(signing_key(name))) for name in SEAT_NAMES[:seats]]
    local = LocalGame(ruleset, players, game_id=game_id(label),
                      nonces=[nonce(label, i) for i in range(seats)], table_name=label,
                      clock=VectorClock() if signed_results else None)
    rng = Stream(derive(f"moves/{label}"), "moves")
    while to_act(local.state) is not None:
        local.submit(choose(local.state, rng))  # a give carries the receiver's knock (LocalGame.knock)
    return Log(label, variant_tag, local)


GRANDE_KINDS = {"turn_up", "draw_deck", "take_discard", "place", "discard", "swap", "peek_line",
                "peek_card", "replace_open"}
ALLEGRA_KINDS = {"turn_up", "draw_deck", "take_discard", "place", "discard", "give", "exchange"}


def valid_logs() -> tuple[Log, Log]:
    # The rules these logs were first made with (before issue 11 revised R16 and R24), kept so
    # that the vectors stay byte for byte what other implementations already check against.
    grande = play_log("grande-2p", ruleset_from_dict({"variant": "grande", "rounds": 1,
                                                      "turn_up_after_13": True}), 2, "ALLEGRA Grande")
    allegra = play_log("allegra-3p", ruleset_from_dict({"variant": "allegra", "rounds": 1,
                                                        "knock_min_players": 3}), 3, "allegra")
    for log, kinds in ((grande, GRANDE_KINDS), (allegra, ALLEGRA_KINDS)):
        missing = kinds - {e.kind for e in log.events}
        if missing:  # the vectors promise every move kind of the variant
            raise SystemExit(f"{log.label}: no {', '.join(sorted(missing))} event; change WEIGHTS")
    return grande, allegra


def signed_log() -> Log:
    """A 2-player ALLEGRA game of 2 rounds of the version with signed results (issue 13)."""
    log = play_log("signed-2p", ruleset_from_dict({**ruleset_for("allegra").to_dict(), "rounds": 2}),
                   2, "allegra", signed_results=True)
    assert log.local.table.over and len(log.local.table.results) == 2
    return log


# ------------------------------------------------------------------ raw envelopes


def pieces(ev: Event) -> list[tuple[str, bytes]]:
    """The envelope as (key, canonical encoding of the value) pairs, in the fixed order."""
    return [(k, encode(v)) for k, v in ev.as_dict().items()]


def raw_sign(key: SigningKey, parts: list[tuple[Any, bytes]], *, header: bytes | None = None,
             tail: bytes = b"") -> bytes:
    """Sign a hand-made map (keys packed as given, values as given bytes): for non-canonical vectors."""
    head = header if header is not None else bytes([0x80 | len(parts)])
    message = head + b"".join(msgpack.packb(k, use_bin_type=True) + v for k, v in parts) + tail
    return bytes(key.sign(message))


def replace(parts: list[tuple[Any, bytes]], key: str, value: bytes) -> list[tuple[Any, bytes]]:
    return [(k, value if k == key else v) for k, v in parts]


def resign(key: SigningKey, ev: Event, **changes: Any) -> bytes:
    """`ev` signed again by `key`, with some fields changed (a canonical event)."""
    f: dict[str, Any] = {"game": ev.game, "seq": ev.seq, "prev": ev.prev, "kind": ev.kind, "body": ev.body}
    f.update(changes)
    return sign_event(key, **f).signed


def flip(data: bytes, index: int, mask: int = 0x01) -> bytes:
    b = bytearray(data)
    b[index] ^= mask
    return bytes(b)


# ------------------------------------------------------------------ replay files


def replay_text(tags: dict[str, str], events: list[bytes]) -> bytes:
    return (format_header({"Format": FORMAT, **tags}) + "".join(b64(e) + "\n" for e in events)).encode()


@dataclass
class Files:
    """The replay files and their manifest entries, built together so no file goes unlisted."""

    data: dict[str, bytes] = field(default_factory=dict)
    entries: list[dict[str, Any]] = field(default_factory=list)

    def add(self, name: str, content: bytes, about: str, **verdict: Any) -> None:
        assert name not in self.data, name
        self.data[name] = content
        self.entries.append({"file": name, "about": about, **verdict})

    def ok(self, name: str, content: bytes, about: str, *, events: int, result: str | None = None,
           winners: list[int] | None = None) -> None:
        if result is None:
            self.add(name, content, about, verdict="ok", finished=False, events=events)
        else:
            self.add(name, content, about, verdict="ok", finished=True, events=events, result=result,
                     winners=winners)

    def fail(self, name: str, content: bytes, about: str, *, fault: str, reason: str,
             seq: int | None = None, **extra: Any) -> None:
        where = {"header": "header", "file": "file"}.get(fault, "seq")
        verdict: dict[str, Any] = {"verdict": "fail", "where": where}
        if where == "seq":
            verdict["seq"] = seq
        verdict.update(fault=fault, reason=reason, **extra)
        self.add(name, content, about, **verdict)


AFTER = 2  # lines kept after a faulty one: verify must name the first fault, not a later one


def faulty(log: Log, at: int, line: bytes, tags: dict[str, str] | None = None) -> bytes:
    """The log up to seq `at`, the faulty line in place of event `at`, then AFTER original lines."""
    events = log.signed[:at] + [line] + log.signed[at + 1:at + 1 + AFTER]
    return replay_text(tags or log.tags(final=False), events)


def replay_files(grande: Log, allegra: Log, signed: Log) -> tuple[Files, list[dict[str, Any]]]:
    f = Files()
    tags = signed.tags(final=True)
    f.ok(f"{signed.label}.allegra", replay_text(tags, signed.signed),
         "a whole 2-player ALLEGRA game (rounds 2) of the version with signed results: a start time "
         "in the genesis, every seat's result after each round", events=len(signed.events),
         result=tags["Result"], winners=[int(s) for s in tags["Winners"].split()])
    at = signed.first("result") + 1  # seat 1's result of round 1
    ev = signed.events[at]
    before, _ = fold(signed.signed[:at])
    ours = before.state_hash()
    f.fail("result-disagrees.allegra",
           faulty(signed, at, resign(signed.key(1), ev, body={**ev.body, "hash": bytes(16)})),
           "seat 1 signs round 1's result with a state hash of 16 zero bytes: a disagreement",
           seq=at, fault="result",
           reason=f"result: seat 1 (bob) signed round 1 with state hash {'0' * 32}, this engine's is {ours}")
    a = allegra
    n = len(a.players)
    setup_end = 1 + 3 * n  # the first move's seq
    total = len(a.events)

    for log, about in ((grande, "a whole 2-player ALLEGRA Grande game (rounds 1); every Grande move kind"),
                       (a, "a whole 3-player ALLEGRA game (rounds 1) with gives, their knocks and exchanges")):
        tags = log.tags(final=True)
        f.ok(f"{log.label}.allegra", replay_text(tags, log.signed), about, events=len(log.events),
             result=tags["Result"], winners=[int(s) for s in tags["Winners"].split()])

    unfinished = 40
    f.ok("unfinished.allegra", replay_text(a.tags(final=False), a.signed[:unfinished]),
         "the first 40 events as a writer leaves them while the game goes on (Result *)", events=unfinished)
    whole = replay_text(a.tags(final=False), a.signed[:unfinished + 1])
    cut = len(whole) - 1 - len(b64(a.signed[unfinished])) // 2
    f.ok("truncated-line.allegra", whole[:cut],
         "cut short in the middle of the line of seq 40: seqs 0..39 are a valid prefix", events=unfinished)
    header = format_header({"Format": FORMAT, **a.tags(final=False)}).encode()
    f.ok("truncated-header.allegra", header[:header.index(b"[Game ") + 4],
         "cut short inside the header: no events, nothing wrong", events=0)

    # ---- one flipped bit
    k = setup_end + 10
    ev = a.events[k]
    f.fail("flip-signature.allegra", faulty(a, k, flip(ev.signed, 10)),
           f"one bit of seq {k}'s signature flipped", seq=k, fault="format", reason="bad signature")
    # A turn_up after a discard (not one of the round's opening turn-ups).
    turn = next(i for i in range(setup_end, total)
                if a.events[i].kind == "turn_up" and a.events[i - 1].kind == "discard")
    ev = a.events[turn]
    assert ev.signed[-4] == 0x93  # the body ends with the slot [seat, row, col]: flip the column
    f.fail("flip-body.allegra", faulty(a, turn, flip(ev.signed, len(ev.signed) - 1)),
           f"one bit of seq {turn}'s body flipped (the column of its turn_up, still canonical msgpack)",
           seq=turn, fault="format", reason="bad signature")
    rev = 2 * n + 2
    ev = a.events[rev]
    f.fail("flip-reveal.allegra", faulty(a, rev, flip(ev.signed, len(ev.signed) - 1)),
           f"one bit of seat 1's nonce in its reveal (seq {rev}) flipped: the signature fails "
           "before the commitment is compared", seq=rev, fault="format", reason="bad signature")

    # ---- chain, author, seq, game
    ev = a.events[k]
    seat = a.seat_of(ev)
    other = (seat + 1) % n
    f.fail("wrong-prev.allegra", faulty(a, k, resign(a.key(seat), ev, prev=a.events[k - 2].id)),
           f"seq {k} re-signed by its author with prev = the id of seq {k - 2}",
           seq=k, fault="prev", reason="prev is not the id of the event before")
    f.fail("wrong-author.allegra", faulty(a, k, resign(a.key(other), ev)),
           f"seq {k} signed by seat {other} when seat {seat} must write it",
           seq=k, fault="author", reason=f"is seat {seat}'s to write, not seat {other}'s")
    f.fail("stranger-author.allegra", faulty(a, k, resign(signing_key(STRANGER), ev)),
           f"seq {k} signed by a key that holds no seat", seq=k, fault="author",
           reason="not a key that holds no seat's")
    commit1 = n + 2
    f.fail("wrong-author-setup.allegra", faulty(a, commit1, resign(a.key(2), a.events[commit1])),
           f"seat 1's commit (seq {commit1}) signed by seat 2", seq=commit1, fault="author",
           reason=f"the commit at seq {commit1} is seat 1's to write, not seat 2's")
    f.fail("other-game.allegra", faulty(a, k, resign(a.key(seat), ev, game=game_id("elsewhere"))),
           f"seq {k} signed by its author for another game id", seq=k, fault="game",
           reason="belongs to another game")
    f.fail("seq-too-early.allegra", faulty(a, k, resign(a.key(seat), ev, seq=k + 1)),
           f"the line of seq {k} holds an event that says seq {k + 1}", seq=k, fault="seq",
           reason=f"seq {k + 1} comes too early: the next seq is {k}")
    f.fail("repeat.allegra", faulty(a, k + 1, a.signed[k]),
           f"the line after seq {k} repeats it", seq=k + 1, fault="repeat",
           reason=f"a repeat of the event at seq {k}")

    # ---- fork
    twin = resign(a.key(seat), ev, body={**ev.body, "fork": 1})
    f.fail("fork.allegra", replay_text(a.tags(final=False), a.signed[:k + 1] + [twin] + a.signed[k + 1:k + 3]),
           f"after seq {k}, a second event for seq {k} signed by the same author (seat {seat}): "
           "a fork; both events are the proof", seq=k, fault="fork", reason="fork",
           fork=[ev.signed.hex(), twin.hex()])

    # ---- setup
    f.fail("bad-reveal.allegra", faulty(a, rev, resign(a.key(1), a.events[rev], body={"nonce": nonce("other", 1)})),
           f"seat 1 reveals (seq {rev}) a nonce that is not the one it committed to",
           seq=rev, fault="reveal", reason="seat 1's reveal does not match its commitment")
    f.fail("accept-body.allegra", faulty(a, 2, resign(a.key(1), a.events[2], body={"ok": True})),
           "seat 1's accept (seq 2) has a non-empty body", seq=2, fault="setup", reason="an accept body is empty")
    g0 = a.events[0]
    rules = dict(g0.body["ruleset"])
    rules["speed"] = 2
    f.fail("genesis-unknown-rule.allegra",
           faulty(a, 0, resign(a.key(0), g0, body={**g0.body, "ruleset": rules})),
           "the genesis's ruleset has a field no variant knows", seq=0, fault="setup",
           reason="unknown ruleset field 'speed'")
    f.fail("commit-before-accept.allegra", faulty(a, n, resign(a.key(n - 1), a.events[n], kind="commit",
                                                                body={"commit": commitment(nonce("x", 0))})),
           f"seat {n - 1} commits at seq {n}, where its accept belongs", seq=n, fault="setup",
           reason=f"expected seat {n - 1}'s accept, got commit")

    # ---- moves
    d = turn  # a turn_up decision
    f.fail("illegal-move.allegra", faulty(a, d, resign(a.key(a.seat_of(a.events[d])), a.events[d],
                                                        kind="draw_deck", body={})),
           f"at seq {d} the seat must turn a card up after its discard; a validly signed draw_deck instead",
           seq=d, fault="illegal", reason="illegal move (draw from the deck)")
    f.fail("unknown-kind.allegra", faulty(a, k, resign(a.key(seat), ev, kind="jump", body={})),
           f"seq {k} is a validly signed event of a kind no move has", seq=k, fault="illegal",
           reason="unknown move 'jump'")
    f.fail("move-extra-field.allegra", faulty(a, turn, resign(a.key(a.seat_of(a.events[turn])), a.events[turn],
                                                             body={**a.events[turn].body, "why": "luck"})),
           f"the turn_up at seq {turn} carries a field its move does not have", seq=turn, fault="illegal",
           reason="unexpected field 'why'")
    f.fail("after-end.allegra",
           replay_text(a.tags(final=True), a.signed + [sign_event(a.key(0), game=a.events[0].game, seq=total,
                                                                  prev=a.events[-1].id, kind="draw_deck",
                                                                  body={}).signed]),
           "a whole game and one more event after its end", seq=total, fault="over", reason="the game is over")

    # ---- knocks
    give = a.first("give")
    gev = a.events[give]
    giver = a.seat_of(gev)
    to = gev.body["to"]
    draw = a.events[give - 1]
    assert draw.kind == "draw_deck"
    forged = sign_knock(a.key(giver), gev.game, draw.id)
    f.fail("forged-knock.allegra", faulty(a, give, resign(a.key(giver), gev, body={**gev.body, "knock": forged})),
           f"the give at seq {give} carries a knock the giver (seat {giver}) signed in seat {to}'s name",
           seq=give, fault="illegal", reason="the knock is not signed by the seat that receives the card")
    give2 = a.first("give", give + 1)
    g2 = a.events[give2]
    stale = sign_knock(a.key(g2.body["to"]), g2.game, draw.id)
    f.fail("stale-knock.allegra", faulty(a, give2, resign(a.key(a.seat_of(g2)), g2, body={**g2.body, "knock": stale})),
           f"the give at seq {give2} carries its receiver's real knock, but for the draw at seq {give - 1}",
           seq=give2, fault="illegal", reason="the knock answers another draw")
    f.fail("give-without-knock.allegra",
           faulty(a, give, resign(a.key(giver), gev, body={"to": to})),
           f"the give at seq {give} carries no knock", seq=give, fault="illegal",
           reason="the knock is not a signed knock message")
    knock_true = bytes(a.key(to).sign(encode({"knock": True, "game": gev.game, "draw": draw.id},
                                             key_order=KNOCK_KEYS)))
    f.fail("knock-true.allegra",
           faulty(a, give, resign(a.key(giver), gev, body={**gev.body, "knock": knock_true})),
           f"the give at seq {give} carries a knock signed by seat {to} whose knock field is true, not 1",
           seq=give, fault="illegal", reason="knock")
    smuggled = resign(a.key(seat), ev, kind="jump", body={**ev.body, "move": ev.kind})
    f.fail("kind-in-body.allegra", faulty(a, k, smuggled),
           f"seq {k} has kind jump and a body field move = {ev.kind!r}: the kind names the move, and "
           "a body has no field move", seq=k, fault="illegal", reason="move")

    # ---- non-canonical msgpack, validly signed
    parts = pieces(ev)
    f.fail("noncanonical-int.allegra",
           faulty(a, k, raw_sign(a.key(seat), replace(parts, "seq", b"\xcd" + k.to_bytes(2, "big")))),
           f"seq {k}'s envelope writes its seq as a uint16 (cd 00 {k:02x}), not a fixint; validly signed",
           seq=k, fault="format", reason="not canonical msgpack")
    gparts = pieces(gev)
    body = msgpack.packb(gev.body["to"], use_bin_type=True)
    unsorted = b"\x82" + msgpack.packb("to") + body + msgpack.packb("knock") + encode(gev.body["knock"])
    f.fail("noncanonical-body-order.allegra",
           faulty(a, give, raw_sign(a.key(giver), replace(gparts, "body", unsorted))),
           f"the give at seq {give} has its body keys as to, knock (not ascending); validly signed",
           seq=give, fault="format", reason="map keys are not in ascending order")
    f.fail("noncanonical-envelope-order.allegra",
           faulty(a, k, raw_sign(a.key(seat), sorted(parts))),
           f"seq {k}'s envelope has its keys in ascending order instead of the fixed order; validly signed",
           seq=k, fault="format", reason="must have exactly the keys ['v', 'game', 'seq', 'prev', 'author', 'kind', 'body']")
    f.fail("unknown-version.allegra", faulty(a, k, raw_sign(a.key(seat), replace(parts, "v", b"\x02"))),
           f"seq {k} says v = 2; validly signed", seq=k, fault="format", reason="unknown version 2")

    # ---- the file itself
    line = b64(a.signed[k])
    text = faulty(a, k, a.signed[k])
    f.fail("not-base64.allegra", text.replace(line.encode(), line[:20].encode() + b"*" + line[21:].encode()),
           f"the line of seq {k} has a * in it", seq=k, fault="line", reason="not base64")
    # A line whose event is not a multiple of 3 bytes long ends in = or ==, and its last letter
    # before them carries bits base64 does not use: flipping one gives other text, the same bytes.
    kb = next(i for i in range(k, total) if len(a.signed[i]) % 3)
    line = b64(a.signed[kb])
    pad = line.index("=")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    bent = line[:pad - 1] + alphabet[alphabet.index(line[pad - 1]) ^ 1] + line[pad:]
    assert bent != line and base64.b64decode(bent) == a.signed[kb]
    f.fail("noncanonical-base64.allegra", faulty(a, kb, a.signed[kb]).replace(line.encode(), bent.encode()),
           f"the line of seq {kb} sets a bit base64 leaves unused: the same bytes, another text",
           seq=kb, fault="line", reason="not the canonical base64")
    f.fail("not-a-replay.allegra",
           text.replace(FORMAT.encode(), b"allegra-replay/9"), "the Format tag names another format",
           fault="file", reason="not an allegra-replay/1 file")
    fin = replay_text(a.tags(final=True), a.signed)
    extra = b64(sign_event(a.key(0), game=a.events[0].game, seq=total, prev=a.events[-1].id,
                           kind="draw_deck", body={}).signed)
    f.fail("cut-after-end.allegra", fin + extra[:40].encode(),
           "a whole game, then part of a line after its end", seq=total, fault="cut",
           reason="a line after the game's end is cut short")

    # ---- the header
    tags = a.tags(final=True)
    totals = [int(x) for x in tags["Result"].split()]
    wrong = " ".join(str(t + (1 if i == 0 else 0)) for i, t in enumerate(totals))
    f.fail("wrong-result.allegra", replay_text({**tags, "Result": wrong}, a.signed),
           "a whole game whose Result tag gives seat 0 one point more than the moves do",
           fault="header", reason=f'Result is "{wrong}" but the moves give "{tags["Result"]}"')
    pre = setup_end + 2
    ptags = a.tags(final=False)
    f.fail("result-on-unfinished.allegra", replay_text({**ptags, "Result": tags["Result"]}, a.signed[:pre]),
           "an unfinished game with a final-looking Result", fault="header",
           reason="an unfinished game's Result is \"*\"")
    fake = f"bob {fingerprint(bytes(signing_key(STRANGER).verify_key))}"
    f.fail("wrong-seat-tag.allegra", replay_text({**ptags, "Seat1": fake}, a.signed[:pre]),
           "Seat1 names bob with another key's fingerprint", fault="header",
           reason=f'Seat1 is "{fake}" but the log says "{ptags["Seat1"]}"')
    f.fail("missing-game-tag.allegra",
           replay_text({t: v for t, v in ptags.items() if t != "Game"}, a.signed[:pre]),
           "the header has no Game tag", fault="header", reason="the header has no Game tag")
    f.fail("extra-seat-tag.allegra", replay_text({**ptags, "Seat3": fake}, a.signed[:pre]),
           "the header names a Seat3 in a 3-seat game", fault="header",
           reason="the header has a Seat3 tag but the game has 3 seats")

    # ---- Table-level vectors: raw events folded with table.fold
    other_author = resign(a.key(other), ev, body={**ev.body})
    table = [
        {"name": "fork-pair", "log": f"{a.label}.allegra", "prefix": k,
         "events": [ev.signed.hex(), twin.hex()],
         "about": f"the log's first {k} events, then two different events for seq {k} by seat {seat}",
         "verdict": "fork", "seq": k, "fault": "fork"},
        {"name": "seq-taken", "log": f"{a.label}.allegra", "prefix": k,
         "events": [ev.signed.hex(), other_author.hex()],
         "about": f"seq {k} by its author, then another event for seq {k} by seat {other}: not a fork "
                  "(two authors), a refusal", "verdict": "fail", "seq": k, "fault": "seq",
         "reason": f"seq {k} is already taken by another author"},
        {"name": "repeat-is-held", "log": f"{a.label}.allegra", "prefix": k,
         "events": [ev.signed.hex(), ev.signed.hex()],
         "about": f"seq {k} twice, the same bytes: a peer takes the second copy as already held",
         "verdict": "ok", "events_after": k + 1},
    ]
    return f, table


# ------------------------------------------------------------------ events.json


def event_vector(name: str, signed: bytes, about: str) -> dict[str, Any]:
    ev = decode_event(signed)
    return {"name": name, "about": about, "signed": signed.hex(), "signature": signed[:64].hex(),
            "envelope": signed[64:].hex(), "id": ev.id.hex(),
            "decoded": {"v": ev.v, "game": ev.game.hex(), "seq": ev.seq, "prev": ev.prev.hex(),
                        "author": ev.author.hex(), "kind": ev.kind, "body": typed(ev.body)}}


def padded(key: SigningKey, size: int, game: bytes) -> bytes:
    """An event of exactly `size` signed bytes (a bin16 field of the right length in its body)."""
    n = size - 200
    while True:
        env = encode({"v": 1, "game": game, "seq": 3, "prev": bytes(32), "author": bytes(key.verify_key),
                      "kind": "pad", "body": {"pad": bytes(n)}}, key_order=KEYS)
        if 64 + len(env) == size:
            return bytes(key.sign(env))
        n += size - 64 - len(env)


def events_json(grande: Log, allegra: Log, signed: Log) -> dict[str, Any]:
    keys = []
    for name in (*SEAT_NAMES, STRANGER):
        sk = signing_key(name)
        keys.append({"name": name, "text": f"allegra-lan/vectors/key/{name}", "seed": bytes(sk).hex(),
                     "public": bytes(sk.verify_key).hex(), "fingerprint": fingerprint(bytes(sk.verify_key))})

    valid = []
    seen: set[str] = set()
    for log in (allegra, grande, signed):
        for ev in log.events:
            if ev.kind in seen:
                continue
            seen.add(ev.kind)
            valid.append(event_vector(f"{log.label}/{ev.kind}", ev.signed,
                                      f"the first {ev.kind} event of {log.label}.allegra (seq {ev.seq})"))

    valid.append(event_vector("signed-2p/genesis", signed.events[0].signed,
                              "the genesis of signed-2p.allegra, with the start time that marks a "
                              "log with signed results"))

    alice = signing_key("alice")
    g = game_id("envelope")
    base = sign_event(alice, game=g, seq=1, prev=derive("prev", 32), kind="accept", body={})
    parts = pieces(base)
    deep: Any = 0
    for _ in range(6):  # the envelope is at depth 0, the body at 1, x's array at 2
        deep = [deep]
    valid.append(event_vector("limits/deepest-body", sign_event(alice, game=g, seq=2, prev=base.id,
                                                                   kind="deep", body={"x": deep}).signed,
                              "a body nested to the depth limit: body at depth 1, six arrays, the innermost 0 at depth 8"))
    valid.append(event_vector("limits/largest-seq", sign_event(alice, game=g, seq=(1 << 32) - 1, prev=base.id,
                                                                  kind="accept", body={}).signed,
                              "seq 2^32-1, the largest (a uint32)"))
    valid.append(event_vector("limits/longest-kind", sign_event(alice, game=g, seq=2, prev=base.id,
                                                                   kind="k" + "_9" * 15 + "z", body={}).signed,
                              "a kind of 32 characters, the longest"))
    valid.append(event_vector("limits/genesis-prev", sign_event(alice, game=g, seq=0, prev=NO_PREV,
                                                                   kind="genesis", body={}).signed,
                              "seq 0 with prev = 32 zero bytes (decoding does not judge the body)"))
    biggest = padded(alice, MAX_EVENT, g)
    valid.append(event_vector("limits/largest-event", biggest, f"an event of exactly {MAX_EVENT} signed bytes"))

    def bad(name: str, signed: bytes, reason: str, about: str, **extra: Any) -> dict[str, Any]:
        return {"name": name, "about": about, "signed": signed.hex(), "reason": reason, **extra}

    def body_raw(raw: bytes) -> list[tuple[Any, bytes]]:
        return replace(parts, "body", raw)

    invalid = [
        bad("flipped-signature", flip(base.signed, 0), "bad signature", "bit 0 of the signature flipped"),
        bad("flipped-envelope", flip(base.signed, 64 + 12), "bad signature",
            "a bit of the game id flipped (the envelope is still canonical)"),
        bad("other-author", raw_sign(alice, replace(parts, "author", encode(bytes(signing_key('bob').verify_key)))),
            "bad signature", "signed by alice, author field says bob"),
        bad("too-short", base.signed[:64], "too short", "the signature alone"),
        bad("oversize", padded(alice, MAX_EVENT + 1, g), f"more than {MAX_EVENT}",
            f"{MAX_EVENT + 1} signed bytes"),
        bad("not-msgpack", raw_sign(alice, [], header=b"\xc1"), "not msgpack", "0xc1 is never used"),
        bad("truncated-envelope", bytes(alice.sign(base.signed[64:-1])), "not msgpack",
            "the envelope without its last byte, signed"),
        bad("trailing-byte", raw_sign(alice, parts, tail=b"\x00"), "bytes left over",
            "a byte after the envelope, signed"),
        bad("array-envelope", bytes(alice.sign(msgpack.packb([1, 2, 3]))),
            "the envelope must be a map", "an array where the envelope map belongs"),
        bad("sorted-envelope", raw_sign(alice, sorted(parts)), "must have exactly the keys",
            "the envelope's keys in ascending order: it has its own fixed order"),
        bad("missing-body", raw_sign(alice, parts[:-1]), "must have exactly the keys", "no body field"),
        bad("extra-field", raw_sign(alice, parts + [("x", b"\x00")]), "must have exactly the keys",
            "an eighth field"),
        bad("seq-uint8", raw_sign(alice, replace(parts, "seq", b"\xcc\x01")), "not canonical",
            "seq 1 as a uint8 instead of a positive fixint"),
        bad("seq-int8", raw_sign(alice, replace(parts, "seq", b"\xd0\x01")), "not canonical",
            "seq 1 as an int8: non-negative integers use the unsigned forms"),
        bad("kind-str8", raw_sign(alice, replace(parts, "kind", b"\xd9\x06accept")), "not canonical",
            "the kind as a str8 though it fits a fixstr"),
        bad("game-bin16", raw_sign(alice, replace(parts, "game", b"\xc5\x00\x10" + g)), "not canonical",
            "the game id as a bin16 though it fits a bin8"),
        bad("body-map16", raw_sign(alice, body_raw(b"\xde\x00\x00")), "not canonical",
            "the empty body as a map16"),
        bad("body-array16", raw_sign(alice, body_raw(b"\x81\xa1x\xdc\x00\x01\x00")), "not canonical",
            "a one-element array as an array16"),
        bad("body-keys-unsorted", raw_sign(alice, body_raw(b"\x82\xa1b\x01\xa1a\x02")),
            "map keys are not in ascending order", "body keys b, a"),
        bad("body-duplicate-key", raw_sign(alice, body_raw(b"\x82\xa1a\x01\xa1a\x02")), "appears twice",
            "body key a twice"),
        bad("body-int-key", raw_sign(alice, body_raw(b"\x81\x01\x02")), "map key", "a map key 1"),
        bad("body-bin-key", raw_sign(alice, body_raw(b"\x81\xc4\x01a\x02")), "is not a string",
            "a map key that is a byte string"),
        bad("body-float32", raw_sign(alice, body_raw(b"\x81\xa1x\xca\x3f\x80\x00\x00")), "floats are not allowed",
            "a float32 1.0"),
        bad("body-float64", raw_sign(alice, body_raw(b"\x81\xa1x\xcb\x3f\xf0" + bytes(6))),
            "floats are not allowed", "a float64 1.0"),
        bad("body-ext", raw_sign(alice, body_raw(b"\x81\xa1x\xd4\x01\x00")), "extension type",
            "an extension value (fixext1, type 1)"),
        bad("body-timestamp", raw_sign(alice, body_raw(b"\x81\xa1x\xd6\xff\x00\x00\x00\x05")),
            "extension type", "a timestamp (extension type -1)"),
        bad("body-too-deep", raw_sign(alice, body_raw(b"\x81\xa1x" + b"\x91" * 7 + b"\x00")),
            "nested deeper than 8", "one array more than limits/deepest-body: the innermost 0 at depth 9"),
        bad("kind-not-utf8", raw_sign(alice, replace(parts, "kind", b"\xa2\xff\xfe")), "not valid UTF-8",
            "the kind's bytes are not UTF-8"),
        bad("v-2", raw_sign(alice, replace(parts, "v", b"\x02")), "unknown version 2", "v = 2"),
        bad("v-0", raw_sign(alice, replace(parts, "v", b"\x00")), "unknown version 0", "v = 0"),
        bad("v-true", raw_sign(alice, replace(parts, "v", b"\xc3")), "field v must be an integer", "v = true"),
        bad("game-15", raw_sign(alice, replace(parts, "game", encode(g[:15]))), "field game must be 16 bytes",
            "a 15-byte game id"),
        bad("game-str", raw_sign(alice, replace(parts, "game", encode("g" * 16))), "field game must be 16 bytes",
            "the game id as a string"),
        bad("prev-31", raw_sign(alice, replace(parts, "prev", encode(bytes(31)))), "field prev must be 32 bytes",
            "a 31-byte prev"),
        bad("author-31", raw_sign(alice, replace(parts, "author", encode(bytes(alice.verify_key)[:31]))),
            "field author must be 32 bytes", "a 31-byte author"),
        bad("seq-negative", raw_sign(alice, replace(parts, "seq", b"\xff")),
            "field seq must be an integer from 0 to 2^32-1", "seq -1"),
        bad("seq-2^32", raw_sign(alice, replace(parts, "seq", encode(1 << 32))),
            "field seq must be an integer from 0 to 2^32-1", "seq 2^32"),
        bad("seq-false", raw_sign(alice, replace(parts, "seq", b"\xc2")),
            "field seq must be an integer from 0 to 2^32-1", "seq false"),
        bad("kind-upper", raw_sign(alice, replace(parts, "kind", encode("Accept"))),
            "field kind must be a short lowercase name", "kind Accept"),
        bad("kind-empty", raw_sign(alice, replace(parts, "kind", encode(""))),
            "field kind must be a short lowercase name", "an empty kind"),
        bad("kind-33", raw_sign(alice, replace(parts, "kind", encode("k" * 33))),
            "field kind must be a short lowercase name", "a kind of 33 characters"),
        bad("kind-digit-first", raw_sign(alice, replace(parts, "kind", encode("9lives"))),
            "field kind must be a short lowercase name", "a kind that starts with a digit"),
        bad("kind-bin", raw_sign(alice, replace(parts, "kind", encode(b"accept"))),
            "field kind must be a short lowercase name", "the kind as a byte string"),
        bad("body-list", raw_sign(alice, body_raw(b"\x90")), "field body must be a map", "the body an array"),
        bad("body-nil", raw_sign(alice, body_raw(b"\xc0")), "field body must be a map", "the body nil"),
    ]
    give = allegra.first("give")
    gev = allegra.events[give]
    knock = gev.body["knock"]
    kmsg = msgpack.unpackb(knock[64:])
    knocks = [{"name": "allegra-3p/first-give", "about": f"the knock inside the give at seq {give}",
               "signed": knock.hex(), "signer": SEAT_NAMES[gev.body["to"]],
               "draw_seq": give - 1,
               "decoded": {"knock": kmsg["knock"], "game": kmsg["game"].hex(), "draw": kmsg["draw"].hex()}}]

    ceremonies = []
    for log in (allegra, grande):
        t = log.local.table
        assert t.seed is not None
        ceremonies.append({"log": f"{log.label}.allegra", "game": log.events[0].game.hex(),
                           "nonces": [x.hex() for x in t.nonces], "commits": [x.hex() for x in t.commits],
                           "seed": t.seed.hex()})

    simulated = []
    for number, game, seats in SIMULATED:
        setup = simulated_setup(number, game, seats)
        simulated.append({"number": number, "game": game, "seats": seats,
                          "game_id": setup.game_id.hex(), "nonces": [x.hex() for x in setup.nonces],
                          "keys": [i.public.hex() for i in setup.identities], "seed": setup.seed.hex()})

    return {
        "about": "Signed events for PROTOCOL.md, 'Signed events': keys, valid events with their ids and "
                 "decoded fields, knocks, and byte strings every decoder must refuse (with a phrase of "
                 "this implementation's reason); the seed ceremonies of the valid logs; the setups of "
                 "`allegra simulate` ('Seeds from numbers'). Bytes in hex; in decoded bodies a byte "
                 "string is written {\"$bytes\": hex}.",
        "keys": keys,
        "valid": valid,
        "knocks": knocks,
        "invalid": invalid,
        "ceremonies": ceremonies,
        "simulated": simulated,
    }


# ------------------------------------------------------------------ codec.json


def codec_json() -> dict[str, Any]:
    values: list[tuple[str, Any]] = [
        ("nil", None), ("false", False), ("true", True),
        ("0", 0), ("127", 127), ("128", 128), ("255", 255), ("256", 256), ("65535", 65535),
        ("65536", 65536), ("2^32-1", (1 << 32) - 1), ("2^32", 1 << 32), ("2^64-1", (1 << 64) - 1),
        ("-1", -1), ("-32", -32), ("-33", -33), ("-128", -128), ("-129", -129), ("-32768", -32768),
        ("-32769", -32769), ("-2^31", -(1 << 31)), ("-2^31-1", -(1 << 31) - 1), ("-2^63", -(1 << 63)),
        ("empty string", ""), ("31-byte string", "s" * 31), ("32-byte string", "s" * 32),
        ("255-byte string", "s" * 255), ("256-byte string", "s" * 256),
        ("utf-8 string", "gr\u00fc\u00dfe \U0001f0cf"),
        ("empty bytes", b""), ("255 bytes", bytes(range(256))[:255]), ("256 bytes", bytes(range(256))),
        ("empty array", []), ("15 items", list(range(15))), ("16 items", list(range(16))),
        ("empty map", {}), ("15 keys", {f"k{i:02d}": i for i in range(15)}),
        ("16 keys", {f"k{i:02d}": i for i in range(16)}),
        ("keys by UTF-8 bytes", {"b": 1, "a": 2, "B": 3, "aa": 4, "\u00e9": 5, "\uff61": 6, "\U0001f600": 7}),
        ("nested", {"z": [1, {"y": b"\x00", "x": None}], "a": {"c": [], "b": True}}),
        ("depth limit", [[[[[[[[0]]]]]]]]),
    ]
    valid = []
    for name, value in values:
        data = encode(value)
        canon = msgpack.unpackb(data, raw=False)
        valid.append({"name": name, "value": typed(canon), "bytes": data.hex()})

    def bad(name: str, hexdata: str, reason: str, **extra: Any) -> dict[str, Any]:
        return {"name": name, "bytes": hexdata, "reason": reason, **extra}

    invalid = [
        bad("uint8 for a fixint", "cc7f", "not canonical"), bad("uint16 for a uint8", "cd00ff", "not canonical"),
        bad("uint32 for a uint16", "ce0000ffff", "not canonical"),
        bad("uint64 for a uint32", "cf00000000ffffffff", "not canonical"),
        bad("int8 for a positive fixint", "d001", "not canonical"),
        bad("int8 for a negative fixint", "d0e0", "not canonical"),
        bad("int16 for an int8", "d1ff80", "not canonical"),
        bad("int32 for an int16", "d2ffff8000", "not canonical"),
        bad("int64 for an int32", "d3ffffffff80000000", "not canonical"),
        bad("int16 for a positive uint8", "d100ff", "not canonical"),
        bad("str8 for a fixstr", "d90161", "not canonical"), bad("str16 for a str8", "da000161", "not canonical"),
        bad("str32 for a fixstr", "db0000000161", "not canonical"),
        bad("bin16 for a bin8", "c5000100", "not canonical"), bad("bin32 for a bin8", "c60000000100", "not canonical"),
        bad("array16 for a fixarray", "dc000100", "not canonical"),
        bad("array32 for a fixarray", "dd0000000100", "not canonical"),
        bad("map16 for a fixmap", "de0001a16100", "not canonical"),
        bad("map32 for a fixmap", "df00000001a16100", "not canonical"),
        bad("keys out of order", "82a16201a16102", "not in ascending order"),
        bad("keys in UTF-16 order", "82a4f09f988001a3efbda102", "not in ascending order"),
        bad("duplicate key", "82a16101a16102", "appears twice"),
        bad("integer key", "810102", "map key"), bad("nil key", "81c001", "map key"),
        bad("bytes key", "81c4016101", "is not a string"),
        bad("float32", "ca3f800000", "floats are not allowed"),
        bad("float64", "cb3ff0000000000000", "floats are not allowed"),
        bad("fixext1", "d40100", "extension type"), bad("ext8", "c7010100", "extension type"),
        bad("timestamp32", "d6ff00000005", "extension type"),
        bad("0xc1", "c1", "not msgpack"), bad("cut short", "92", "not msgpack"),
        bad("cut short string", "a36162", "not msgpack"),
        bad("trailing byte", "0000", "bytes left over"),
        bad("invalid UTF-8", "a2fffe", "not valid UTF-8"),
        bad("UTF-8 surrogate", "a3eda080", "not valid UTF-8"),
        bad("overlong UTF-8", "a2c0af", "not valid UTF-8"),
        bad("too deep", "91" * 9 + "00", "nested deeper than 8"),
    ]
    return {
        "about": "Canonical msgpack for PROTOCOL.md, 'Canonical msgpack': each value with its one "
                 "encoding, and byte strings a decoder must refuse (with a phrase of this "
                 "implementation's reason). Values as JSON; a byte string is {\"$bytes\": hex}.",
        "max_size": 65536,
        "valid": valid,
        "invalid": invalid,
    }


# ------------------------------------------------------------------ output


def _emit(obj: Any, indent: int = 0) -> str:
    """JSON with short lists of scalars on one line."""
    pad = "  " * indent
    inner = "  " * (indent + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_emit(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if not obj:
            return "[]"
        if all(not isinstance(x, (dict, list)) for x in obj):
            return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))
        return "[\n" + ",\n".join(inner + _emit(x, indent + 1) for x in obj) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False)


def build() -> dict[str, bytes]:
    """Every file of vectors/logs/ by name."""
    grande, allegra = valid_logs()
    signed = signed_log()
    files, table = replay_files(grande, allegra, signed)
    out = dict(files.data)
    manifest = {
        "about": "Replay files and their verdicts for PROTOCOL.md, 'Replay files' and 'Taking an event'. "
                 "verdict ok: the file verifies, finished or not, with `events` events; verdict fail: "
                 "where is seq (then seq and fault name the refused line), header or file; reason is a "
                 "phrase of this implementation's message. `table` vectors fold raw events (hex) after "
                 "the first `prefix` events of a log.",
        "files": files.entries,
        "table": table,
        "other": [EVENTS, CODEC],
    }
    out[MANIFEST] = (_emit(manifest) + "\n").encode()
    out[EVENTS] = (_emit(events_json(grande, allegra, signed)) + "\n").encode()
    out[CODEC] = (_emit(codec_json()) + "\n").encode()
    return out


def check(directory: Path = LOGS) -> list[str]:
    """What differs between the committed vectors and the package's output (empty: nothing)."""
    want = build()
    have = {p.name for p in directory.iterdir()} if directory.is_dir() else set()
    problems = [f"{name}: missing" for name in sorted(set(want) - have)]
    problems += [f"{name}: not a vector (remove it or add it to make_log_vectors.py)"
                 for name in sorted(have - set(want))]
    for name in sorted(set(want) & have):
        if (directory / name).read_bytes() != want[name]:
            problems.append(f"{name}: the package's output differs from the committed file")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare the committed vectors with the package byte for byte; write nothing")
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        for p in problems:
            print(p, file=sys.stderr)
        if not problems:
            print(f"{len(build())} log vector files match the package")
        return 1 if problems else 0
    LOGS.mkdir(parents=True, exist_ok=True)
    files = build()
    for p in LOGS.iterdir():
        if p.name not in files and p.suffix in (".allegra", ".json"):
            p.unlink()
    for name, data in files.items():
        (LOGS / name).write_bytes(data)
    print(f"wrote {len(files)} files to {LOGS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
