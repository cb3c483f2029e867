"""The signed-log vectors of protocol/vectors/logs/: every one gets its verdict, twice.

Once through the real package (tools.verify.verify_file for replay files,
table.fold and log.envelope.decode_event for raw events, log.codec for
msgpack), and once through a small second implementation written here from
PROTOCOL.md alone (hashlib, PyNaCl and a hand-written canonical msgpack
reader; no allegra_lan import), so that a change in the package that
contradicts the written protocol fails even if the package still agrees with
itself. The second implementation judges everything that does not need the
rules engine: encoding, signatures, the hash chain, seqs, the seed ceremony,
the shapes of move bodies and the knocks.

Vectors marked `known_code_bug` in the vector files are places where the
package disagrees with PROTOCOL.md today; their package-side checks are
strict xfails, so mending the package turns them into failures that ask for
the mark to be removed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from allegra_lan.local import simulated_setup
from allegra_lan.log.codec import CodecError, decode, encode
from allegra_lan.log.envelope import EventError, decode_event
from allegra_lan.table import Fork, Refused, fold
from allegra_lan.tools import fold_log
from allegra_lan.tools.verify import read_for_verify, verify_file

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "protocol" / "vectors" / "logs"
MANIFEST: dict[str, Any] = json.loads((LOGS / "manifest.json").read_text(encoding="utf-8"))
EVENTS: dict[str, Any] = json.loads((LOGS / "events.json").read_text(encoding="utf-8"))
CODEC: dict[str, Any] = json.loads((LOGS / "codec.json").read_text(encoding="utf-8"))


def untyped(value: Any) -> Any:
    """A vector's JSON value as the msgpack value it stands for ({"$bytes": hex} is a byte string)."""
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return bytes.fromhex(value["$bytes"])
        return {k: untyped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [untyped(v) for v in value]
    return value


def package_side(vectors: list[dict[str, Any]]) -> list[Any]:
    """Parameters for the package's checks: a known code bug is a strict xfail."""
    return [pytest.param(v, id=v.get("name") or v["file"],
                         marks=[pytest.mark.xfail(strict=True, reason=v["known_code_bug"])]
                         if "known_code_bug" in v else [])
            for v in vectors]


def ids(vectors: list[dict[str, Any]]) -> list[str]:
    return [v.get("name") or v["file"] for v in vectors]


# ================================================================== the second implementation
# Written from PROTOCOL.md: "Canonical msgpack", "Signed events", "The log of a game",
# "Taking an event", "Forks", "Replay files", "Identities and fingerprints".


class Bad(Exception):
    """Bytes or a log the protocol refuses; `cls` is the refusal class of PROTOCOL.md."""

    def __init__(self, cls: str, why: str) -> None:
        super().__init__(f"{cls}: {why}")
        self.cls = cls


MAX_DEPTH = 8
MAX_EVENT = 16384
ENVELOPE = ("v", "game", "seq", "prev", "author", "kind", "body")
KNOCK = ("knock", "game", "draw")
KIND = re.compile(r"[a-z][a-z0-9_]{0,31}")


class Reader:
    """A canonical msgpack reader: every value in its shortest form, or Bad."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise Bad("format", "cut short")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def uint(self, n: int) -> int:
        return int.from_bytes(self.take(n), "big")

    def sint(self, n: int) -> int:
        return int.from_bytes(self.take(n), "big", signed=True)

    def length(self, n: int, least: int) -> int:
        size = self.uint(n)
        if size < least:
            raise Bad("format", "a length in a longer form than needed")
        return size

    def value(self, depth: int, order: tuple[str, ...] | None = None) -> Any:
        if depth > MAX_DEPTH:
            raise Bad("format", "nested too deep")
        b = self.take(1)[0]
        if b <= 0x7F:
            return b
        if b >= 0xE0:
            return b - 0x100
        if 0x80 <= b <= 0x8F:
            return self.map(b & 0x0F, depth, order)
        if order is not None:
            raise Bad("format", "not a map")
        if 0x90 <= b <= 0x9F:
            return [self.value(depth + 1) for _ in range(b & 0x0F)]
        if 0xA0 <= b <= 0xBF:
            return self.text(b & 0x1F)
        if b == 0xC0:
            return None
        if b in (0xC2, 0xC3):
            return b == 0xC3
        unsigned = {0xCC: (1, 1 << 7), 0xCD: (2, 1 << 8), 0xCE: (4, 1 << 16), 0xCF: (8, 1 << 32)}
        if b in unsigned:
            n, least = unsigned[b]
            x = self.uint(n)
            if x < least:
                raise Bad("format", "an integer in a longer form than needed")
            return x
        signed = {0xD0: (1, -32), 0xD1: (2, -(1 << 7)), 0xD2: (4, -(1 << 15)), 0xD3: (8, -(1 << 31))}
        if b in signed:
            n, above = signed[b]
            x = self.sint(n)
            if x >= above:  # fits the next shorter form (or is not negative at all)
                raise Bad("format", "an integer in a longer form than needed")
            return x
        if b in (0xC4, 0xC5, 0xC6):
            n = {0xC4: 1, 0xC5: 2, 0xC6: 4}[b]
            return self.take(self.length(n, {1: 0, 2: 1 << 8, 4: 1 << 16}[n]))
        if b in (0xD9, 0xDA, 0xDB):
            n = {0xD9: 1, 0xDA: 2, 0xDB: 4}[b]
            return self.text(self.length(n, {1: 32, 2: 1 << 8, 4: 1 << 16}[n]))
        if b in (0xDC, 0xDD):
            size = self.length(2 if b == 0xDC else 4, 16 if b == 0xDC else 1 << 16)
            return [self.value(depth + 1) for _ in range(size)]
        if b in (0xDE, 0xDF):
            return self.map(self.length(2 if b == 0xDE else 4, 16 if b == 0xDE else 1 << 16), depth, None)
        raise Bad("format", f"type byte {b:02x} is not allowed (float, extension or unused)")

    def text(self, n: int) -> str:
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError:
            raise Bad("format", "a string that is not UTF-8") from None

    def map(self, size: int, depth: int, order: tuple[str, ...] | None) -> dict[str, Any]:
        if order is not None and size != len(order):
            raise Bad("format", "a fixed-order map with other keys")
        out: dict[str, Any] = {}
        last: bytes | None = None
        for i in range(size):
            start = self.data[self.pos] if self.pos < len(self.data) else 0
            if not (0xA0 <= start <= 0xBF or start in (0xD9, 0xDA, 0xDB)):
                raise Bad("format", "a map key that is not a string")
            key = self.value(depth + 1)
            raw = key.encode("utf-8")
            if order is not None:
                if key != order[i]:
                    raise Bad("format", "a fixed-order map with other keys")
            elif last is not None and raw <= last:
                raise Bad("format", "map keys not in strictly ascending order of their UTF-8 bytes")
            last = raw
            out[key] = self.value(depth + 1)
        return out


def read_canonical(data: bytes, order: tuple[str, ...] | None = None) -> Any:
    r = Reader(data)
    value = r.value(0, order)
    if r.pos != len(data):
        raise Bad("format", "bytes after the value")
    return value


def is_int(x: Any) -> bool:
    return type(x) is int


@dataclass(frozen=True)
class Ev:
    signed: bytes
    id: bytes
    v: int
    game: bytes
    seq: int
    prev: bytes
    author: bytes
    kind: str
    body: dict[str, Any]


def read_event(signed: bytes) -> Ev:
    """PROTOCOL.md, 'Signed events': the checks a decoder makes, with its own reader."""
    if len(signed) > MAX_EVENT or len(signed) <= 64:
        raise Bad("format", "size")
    env = read_canonical(signed[64:], ENVELOPE)
    if not is_int(env["v"]) or env["v"] != 1:
        raise Bad("format", "version")
    for name, size in (("game", 16), ("prev", 32), ("author", 32)):
        if not isinstance(env[name], bytes) or len(env[name]) != size:
            raise Bad("format", name)
    if not is_int(env["seq"]) or not 0 <= env["seq"] < 1 << 32:
        raise Bad("format", "seq")
    if not isinstance(env["kind"], str) or not KIND.fullmatch(env["kind"]):
        raise Bad("format", "kind")
    if not isinstance(env["body"], dict):
        raise Bad("format", "body")
    try:
        VerifyKey(env["author"]).verify(signed)
    except (BadSignatureError, ValueError):
        raise Bad("format", "signature") from None
    return Ev(signed, hashlib.blake2b(signed, digest_size=32).digest(), **env)


def check_knock(knock: Any, key: bytes, game: bytes, draw: bytes) -> None:
    """PROTOCOL.md, 'Knocks': the receiver's signature over {knock: 1, game, draw}."""
    if not isinstance(knock, bytes) or not 64 < len(knock) <= 200:
        raise Bad("illegal", "no signed knock")
    msg = read_canonical(knock[64:], KNOCK)
    if not is_int(msg["knock"]) or msg["knock"] != 1 or msg["game"] != game or msg["draw"] != draw:
        raise Bad("illegal", "a knock for something else")
    try:
        VerifyKey(key).verify(knock)
    except BadSignatureError:
        raise Bad("illegal", "a knock not signed by the receiver") from None


SLOT, INT = "slot", "int"
MOVES: dict[str, dict[str, str]] = {  # PROTOCOL.md, 'Move events'
    "turn_up": {"at": SLOT}, "draw_deck": {}, "take_discard": {}, "place": {"card": INT, "at": SLOT},
    "discard": {"card": INT}, "swap": {"a": SLOT, "b": SLOT}, "peek_line": {"axis": "axis", "index": INT},
    "peek_card": {"at": SLOT}, "replace_open": {"at": SLOT}, "give": {"to": INT, "knock": "knock"},
    "exchange": {"take": SLOT, "at": SLOT},
}
RULESET_FIELDS = {  # PROTOCOL.md, 'The ruleset'
    "allegra": {"variant", "rounds", "double_ender", "double_only_positive", "cleared_to_discard",
                "card_counts", "knock_min_players"},
    "grande": {"variant", "rounds", "double_ender", "double_only_positive", "cleared_to_discard",
               "card_counts", "jokers", "joker_value", "turn_up_after_13"},
}


def check_move_body(kind: str, body: dict[str, Any]) -> None:
    fields = MOVES.get(kind)
    if fields is None or set(body) != set(fields):
        raise Bad("illegal", "not a move's kind and fields")
    for name, what in fields.items():
        x = body[name]
        ok = {SLOT: isinstance(x, list) and len(x) == 3 and all(is_int(y) for y in x),
              INT: is_int(x), "axis": x in ("row", "col"), "knock": True}[what]
        if not ok:
            raise Bad("illegal", f"field {name}")


def check_result_body(body: dict[str, Any], started: int) -> None:
    """PROTOCOL.md, "Round results": exactly {at, hash, round, scores, totals} of their types."""
    def ints(x: Any) -> bool:
        return isinstance(x, list) and 1 <= len(x) <= 16 and all(is_int(y) and -2**31 <= y < 2**31 for y in x)
    b = body
    if set(b) != {"at", "hash", "round", "scores", "totals"} or not (
            is_int(b["round"]) and 0 <= b["round"] <= 98 and isinstance(b["hash"], bytes)
            and len(b["hash"]) == 16 and ints(b["scores"]) and ints(b["totals"])
            and is_int(b["at"]) and 1577836800000 <= b["at"] <= 4102444800000):
        raise Bad("result", "a result's fields")
    if b["at"] < started - 300_000:
        raise Bad("result", "a time before the start")


@dataclass
class MiniTable:
    """The fold of a log as far as it goes without a rules engine (setup fully, moves by shape)."""

    events: list[Ev] = field(default_factory=list)
    seats: list[bytes] = field(default_factory=list)
    commits: list[bytes] = field(default_factory=list)
    nonces: list[bytes] = field(default_factory=list)
    started: int | None = None  # the genesis's start time: a log with signed results

    @property
    def seed(self) -> bytes:
        h = hashlib.blake2b(digest_size=32)
        h.update(b"allegra-lan/seed/v1" + self.events[0].game + b"".join(self.nonces))
        return h.digest()

    def append(self, signed: bytes, at: int) -> None:
        """Take the event of line/position `at`, or raise Bad naming the refusal class."""
        ev = read_event(signed)
        if self.events and ev.game != self.events[0].game:
            raise Bad("game", "another game")
        if ev.seq < len(self.events):
            held = self.events[ev.seq]
            if held.signed == ev.signed:
                raise Bad("repeat", "a line repeats a held event")
            raise Bad("fork" if held.author == ev.author else "seq", "seq taken")
        if ev.seq != at:
            raise Bad("seq", "not the next seq")
        if ev.prev != (self.events[-1].id if self.events else bytes(32)):
            raise Bad("prev", "prev")
        self.take(ev)
        self.events.append(ev)

    def take(self, ev: Ev) -> None:
        seq, n = ev.seq, len(self.seats)
        if seq == 0:
            if ev.kind != "genesis":
                raise Bad("setup", "no genesis")
            b = ev.body
            if set(b) - {"started"} != {"table", "ruleset", "seats"} or not isinstance(b["seats"], list):
                raise Bad("setup", "genesis shape")
            if "started" in b:  # PROTOCOL.md "Setup events": ms since the epoch, 2020 to 2100
                if not is_int(b["started"]) or not 1577836800000 <= b["started"] <= 4102444800000:
                    raise Bad("setup", "genesis start time")
                self.started = b["started"]
            rules = b["ruleset"]
            if not isinstance(rules, dict) or not set(rules) <= RULESET_FIELDS.get(rules.get("variant"), set()):
                raise Bad("setup", "ruleset fields")
            keys = [s["key"] for s in b["seats"]]
            if ev.author != keys[0]:
                raise Bad("author", "the genesis is seat 0's")
            self.seats = keys
            return
        if seq <= 3 * n:
            stage = ("accept", "commit", "reveal")[(seq - 1) // n]
            seat = (seq - 1) % n
            if ev.kind != stage:
                raise Bad("setup", "setup order")
            if ev.author != self.seats[seat]:
                raise Bad("author", "setup author")
            if stage == "accept" and ev.body:
                raise Bad("setup", "accept body")
            if stage != "accept":
                name = "commit" if stage == "commit" else "nonce"
                if set(ev.body) != {name} or not isinstance(ev.body[name], bytes) or len(ev.body[name]) != 32:
                    raise Bad("setup", f"a {stage} body is {{{name}: 32 bytes}}")
            if stage == "commit":
                self.commits.append(ev.body["commit"])
            if stage == "reveal":
                nonce = ev.body["nonce"]
                if hashlib.blake2b(b"allegra-lan/commit/v1" + nonce, digest_size=32).digest() != self.commits[seat]:
                    raise Bad("reveal", "reveal")
                self.nonces.append(nonce)
            return
        if ev.kind == "result" and self.started is not None:
            # "Round results": where one is due, its author and content need the rules (the
            # state hash); its shape and its time do not.
            check_result_body(ev.body, self.started)
            return
        # A move: its author and legality need the rules; its shape and a give's knock do not.
        check_move_body(ev.kind, ev.body)
        if ev.kind == "give":
            to = ev.body["to"]
            if not 0 <= to < n:
                raise Bad("illegal", "no such seat")
            check_knock(ev.body["knock"], self.seats[to], ev.game, ev.prev)


@dataclass
class MiniFile:
    tags: dict[str, str]
    lines: list[bytes]
    fault: tuple[int, str] | None  # a line that is not canonical base64


def read_file(data: bytes) -> MiniFile:
    """PROTOCOL.md, 'Replay files': header tags, a blank line, whole base64 lines (a cut one dropped)."""
    text = data.decode("utf-8")
    head, sep, rest = text.partition("\n\n")
    tags: dict[str, str] = {}
    for line in head.split("\n"):
        m = re.fullmatch(r'\[([A-Za-z][A-Za-z0-9_]*) "((?:[^"\\]|\\.)*)"\]', line)
        if m is None:
            if not sep:
                break  # the file ends inside its header
            raise Bad("file", "not a tag line")
        tags[m.group(1)] = re.sub(r"\\(.)", r"\1", m.group(2))
    if tags.get("Format") != "allegra-replay/1":
        raise Bad("file", "not a replay")
    whole = rest.split("\n")[:-1]  # a line counts once its newline is written
    lines: list[bytes] = []
    for i, line in enumerate(whole):
        try:
            raw = base64.b64decode(line, validate=True)
        except (binascii.Error, ValueError):
            return MiniFile(tags, lines, (i, "line"))
        if base64.b64encode(raw).decode("ascii") != line:
            return MiniFile(tags, lines, (i, "line"))
        lines.append(raw)
    return MiniFile(tags, lines, None)


def fingerprint(key: bytes) -> str:
    text = base64.b32encode(hashlib.blake2b(key, digest_size=10).digest()).decode("ascii")
    return "-".join(text[i:i + 4] for i in range(0, 16, 4))


def header_fault(tags: dict[str, str], t: MiniTable) -> str | None:
    """The tags the genesis fixes (not Result and Winners, which need the rules)."""
    if not t.events:
        return None
    g = t.events[0].body
    titles = {"allegra": ("allegra", "ALLEGRA"), "grande": ("grande", "ALLEGRA Grande")}
    want = {"Players": str(len(t.seats)), "Game": t.events[0].game.hex(), "Table": g["table"]}
    want.update({f"Seat{i}": f"{s['name']} {fingerprint(s['key'])}" for i, s in enumerate(g["seats"])})
    if tags.get("Variant") not in titles[g["ruleset"]["variant"]]:
        return "Variant"
    for name, value in want.items():
        if tags.get(name) != value:
            return name
    if any(re.fullmatch(r"Seat\d+", name) and name not in want for name in tags):
        return "Seat"
    return None


def mini_verify(data: bytes) -> tuple[str, int | None, MiniTable]:
    """(refusal class or "ok", seq or None, the fold so far) as far as no rules engine is needed."""
    try:
        f = read_file(data)
    except Bad as e:
        return e.cls, None, MiniTable()
    t = MiniTable()
    for i, raw in enumerate(f.lines):
        try:
            t.append(raw, i)
        except Bad as e:
            if e.cls == "fork":
                return "fork", read_event(raw).seq, t
            return e.cls, i, t
    if f.fault is not None:
        return f.fault[1], f.fault[0], t
    if header_fault(f.tags, t) is not None:
        return "header", None, t
    return "ok", None, t


# Refusal classes the second implementation decides; the rest need the rules engine
# (an illegal move, a move's author, a move after the end, the Result).
MINI_DECIDES = {"format", "game", "seq", "prev", "fork", "repeat", "reveal", "line", "file", "setup"}


def mini_decides(v: dict[str, Any]) -> bool:
    if v["verdict"] == "ok":
        return True
    fault = v["fault"]
    if fault in MINI_DECIDES:
        return True
    if fault == "author":
        return v["seq"] <= 3 * 3  # the setup of a 3-seat log
    if fault == "illegal":
        return "illegal move (" not in v["reason"]  # a body's shape or a knock, not the engine's judgment
    if fault == "header":
        return "Result" not in v["reason"]
    return False


# ================================================================== the manifest itself


def test_every_file_in_the_directory_is_a_listed_vector() -> None:
    listed = [e["file"] for e in MANIFEST["files"]]
    assert len(listed) == len(set(listed))
    assert {p.name for p in LOGS.iterdir()} == set(listed) | {"manifest.json", *MANIFEST["other"]}
    faults = {e["fault"] for e in MANIFEST["files"] if e["verdict"] == "fail"}
    # The list: one flipped byte, wrong prev, wrong author, a fork, an illegal move, a bad
    # reveal, non-canonical msgpack; and every refusal class of PROTOCOL.md has a file.
    assert faults >= {"format", "game", "seq", "prev", "author", "setup", "reveal", "illegal", "over",
                      "fork", "repeat", "line", "cut", "header", "file"}
    ok = [e for e in MANIFEST["files"] if e["verdict"] == "ok"]
    assert {e["finished"] for e in ok} == {True, False}


def test_make_log_vectors_check_reproduces_every_byte() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "protocol" / "make_log_vectors.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "match the package" in proc.stdout


# ================================================================== replay files, through the package


def fault_class(path: Path, where: str) -> str:
    """The refusal class behind a failed verdict (verify's Verdict carries only the reason)."""
    if where in ("header", "file"):
        return where
    replay = read_for_verify(path)
    folded = fold_log(replay.events)
    if folded.fault is not None:
        return folded.fault.fault
    return "line" if replay.fault is not None else "cut"


@pytest.mark.parametrize("vector", package_side(MANIFEST["files"]))
def test_replay_file_gets_its_verdict(vector: dict[str, Any]) -> None:
    path = LOGS / vector["file"]
    v = verify_file(path)
    if vector["verdict"] == "ok":
        assert v.ok, v.reason
        assert (v.finished, v.events) == (vector["finished"], vector["events"])
        if vector["finished"]:
            assert v.result == vector["result"] and list(v.winners) == vector["winners"]
        return
    assert not v.ok
    assert (v.where, v.seq) == (vector["where"], vector.get("seq")), v.reason
    assert vector["reason"] in v.reason
    assert fault_class(path, v.where) == vector["fault"]
    if "fork" in vector:
        assert v.fork == tuple(bytes.fromhex(x) for x in vector["fork"])
        assert decode_event(v.fork[0]).seq == decode_event(v.fork[1]).seq == vector["seq"]


@pytest.mark.parametrize("vector", MANIFEST["table"], ids=ids(MANIFEST["table"]))
def test_table_vector_gets_its_verdict(vector: dict[str, Any]) -> None:
    prefix = read_for_verify(LOGS / vector["log"]).events[:vector["prefix"]]
    raw = [bytes.fromhex(x) for x in vector["events"]]
    t, fault = fold(prefix + raw)
    if vector["verdict"] == "ok":
        assert fault is None and t.seq == vector["events_after"]
        return
    assert isinstance(fault, Refused) and (fault.fault, fault.seq) == (vector["fault"], vector["seq"])
    assert t.seq == vector["prefix"] + 1  # the refused event changed nothing
    if vector["verdict"] == "fork":
        assert isinstance(fault, Fork)
        assert (fault.first.signed, fault.second.signed) == (raw[0], raw[1])
    else:
        assert vector["reason"] in fault.reason


# ================================================================== replay files, independently


@pytest.mark.parametrize("vector", MANIFEST["files"], ids=ids(MANIFEST["files"]))
def test_second_implementation_agrees_on_replay_file(vector: dict[str, Any]) -> None:
    cls, seq, _ = mini_verify((LOGS / vector["file"]).read_bytes())
    if vector["verdict"] == "ok":
        assert cls == "ok", (cls, seq)
    elif mini_decides(vector):
        assert (cls, seq) == (vector["fault"], vector.get("seq"))
    else:  # the engine decides; the second implementation must not find an earlier fault
        assert cls == "ok" or (seq is not None and vector.get("seq") is not None and seq > vector["seq"])


@pytest.mark.parametrize("vector", MANIFEST["table"], ids=ids(MANIFEST["table"]))
def test_second_implementation_agrees_on_table_vector(vector: dict[str, Any]) -> None:
    f = read_file((LOGS / vector["log"]).read_bytes())
    t = MiniTable()
    lines = f.lines[:vector["prefix"]] + [bytes.fromhex(x) for x in vector["events"]]
    got = "ok"
    for raw in lines:
        try:
            t.append(raw, len(t.events))
        except Bad as e:
            got = "ok" if e.cls == "repeat" else e.cls  # a peer holds an identical copy already
            if got != "ok":
                break
    assert got == ("ok" if vector["verdict"] == "ok" else vector["fault"])


def test_valid_logs_carry_their_ceremony_and_knocks() -> None:
    """The seed of each valid log from its revealed nonces, and every give's knock, by the spec."""
    for c in EVENTS["ceremonies"]:
        cls, _, t = mini_verify((LOGS / c["log"]).read_bytes())
        assert cls == "ok"
        assert [x.hex() for x in t.nonces] == c["nonces"] and [x.hex() for x in t.commits] == c["commits"]
        assert t.seed.hex() == c["seed"] and t.events[0].game.hex() == c["game"]
        package, fault = fold(e.signed for e in t.events)
        assert fault is None and package.seed is not None and package.seed.hex() == c["seed"]
    gives = [e for e in mini_verify((LOGS / "allegra-3p.allegra").read_bytes())[2].events if e.kind == "give"]
    assert gives  # each was checked by MiniTable.take
    (k,) = EVENTS["knocks"]
    assert gives[0].body["knock"].hex() == k["signed"]


# ================================================================== signed events


@pytest.mark.parametrize("vector", EVENTS["valid"], ids=ids(EVENTS["valid"]))
def test_valid_event_decodes_to_its_fields(vector: dict[str, Any]) -> None:
    signed = bytes.fromhex(vector["signed"])
    assert signed[:64].hex() == vector["signature"] and signed[64:].hex() == vector["envelope"]
    d = vector["decoded"]
    want = {"v": d["v"], "game": bytes.fromhex(d["game"]), "seq": d["seq"], "prev": bytes.fromhex(d["prev"]),
            "author": bytes.fromhex(d["author"]), "kind": d["kind"], "body": untyped(d["body"])}
    ev = decode_event(signed)
    assert ev.as_dict() == want and ev.id.hex() == vector["id"]
    mine = read_event(signed)
    assert {k: getattr(mine, k) for k in ENVELOPE} == want and mine.id.hex() == vector["id"]
    # The envelope is the canonical encoding of its fields in the fixed order.
    assert encode(want, key_order=ENVELOPE) == signed[64:]


@pytest.mark.parametrize("vector", package_side(EVENTS["invalid"]))
def test_invalid_event_is_refused_by_the_package(vector: dict[str, Any]) -> None:
    signed = bytes.fromhex(vector["signed"])
    with pytest.raises(EventError) as info:
        decode_event(signed)
    assert vector["reason"] in str(info.value)
    _, fault = fold([signed])
    assert fault is not None and fault.fault == "format"


@pytest.mark.parametrize("vector", EVENTS["invalid"], ids=ids(EVENTS["invalid"]))
def test_invalid_event_is_refused_by_the_second_implementation(vector: dict[str, Any]) -> None:
    with pytest.raises(Bad) as info:
        read_event(bytes.fromhex(vector["signed"]))
    assert info.value.cls == "format"


def test_keys_and_knocks() -> None:
    for k in EVENTS["keys"]:
        seed = hashlib.blake2b(k["text"].encode(), digest_size=32).digest()
        sk = SigningKey(seed)
        assert (seed.hex(), bytes(sk.verify_key).hex()) == (k["seed"], k["public"])
        assert fingerprint(bytes(sk.verify_key)) == k["fingerprint"]
    publics = {k["name"]: bytes.fromhex(k["public"]) for k in EVENTS["keys"]}
    for kn in EVENTS["knocks"]:
        d = kn["decoded"]
        check_knock(bytes.fromhex(kn["signed"]), publics[kn["signer"]], bytes.fromhex(d["game"]),
                    bytes.fromhex(d["draw"]))
        assert read_canonical(bytes.fromhex(kn["signed"])[64:], KNOCK) == {
            "knock": 1, "game": bytes.fromhex(d["game"]), "draw": bytes.fromhex(d["draw"])}


def test_simulated_setups_follow_seeds_from_numbers() -> None:
    """PROTOCOL.md, 'Simulated games': game id, nonces and bot keys keyed under seed_from_number."""

    def seed_from_number(number: int, game: int) -> bytes:
        return hashlib.blake2b(f"allegra-lan/seed-from-number/{number}/{game}".encode(), digest_size=32).digest()

    def part(key: bytes, label: str, size: int = 32) -> bytes:
        return hashlib.blake2b(label.encode(), key=key, digest_size=size).digest()

    for c in EVENTS["simulated"]:
        base, series = seed_from_number(c["number"], c["game"]), seed_from_number(c["number"], 0)
        game = part(base, "allegra-lan/simulate/game", 16)
        nonces = [part(base, f"allegra-lan/simulate/nonce/{i}") for i in range(c["seats"])]
        keys = [bytes(SigningKey(part(series, f"allegra-lan/simulate/key/{i}")).verify_key)
                for i in range(c["seats"])]
        seed = hashlib.blake2b(b"allegra-lan/seed/v1" + game + b"".join(nonces), digest_size=32).digest()
        assert (game.hex(), [x.hex() for x in nonces], [x.hex() for x in keys], seed.hex()) == (
            c["game_id"], c["nonces"], c["keys"], c["seed"])
        s = simulated_setup(c["number"], c["game"], c["seats"])
        assert (s.game_id, list(s.nonces), [i.public for i in s.identities], s.seed) == (
            game, nonces, keys, seed)


def test_protocol_md_shows_the_worked_example() -> None:
    """The hex dump of PROTOCOL.md is the accept vector's bytes, so the text cannot drift from them."""
    doc = re.sub(r"\s+", "", (ROOT / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8"))
    (ex,) = [v for v in EVENTS["valid"] if v["name"] == "allegra-3p/accept"]
    for part in (ex["signature"], ex["id"], ex["decoded"]["game"], ex["decoded"]["prev"],
                 ex["decoded"]["author"]):
        assert part in doc


# ================================================================== canonical msgpack


@pytest.mark.parametrize("vector", CODEC["valid"], ids=ids(CODEC["valid"]))
def test_codec_value_has_one_encoding(vector: dict[str, Any]) -> None:
    data = bytes.fromhex(vector["bytes"])
    value = untyped(vector["value"])
    assert encode(value) == data
    assert decode(data, max_size=CODEC["max_size"]) == value
    assert read_canonical(data) == value


@pytest.mark.parametrize("vector", package_side(CODEC["invalid"]))
def test_codec_refuses_by_the_package(vector: dict[str, Any]) -> None:
    with pytest.raises(CodecError) as info:
        decode(bytes.fromhex(vector["bytes"]), max_size=CODEC["max_size"])
    assert vector["reason"] in str(info.value)


@pytest.mark.parametrize("vector", CODEC["invalid"], ids=ids(CODEC["invalid"]))
def test_codec_refuses_by_the_second_implementation(vector: dict[str, Any]) -> None:
    with pytest.raises(Bad):
        read_canonical(bytes.fromhex(vector["bytes"]))
