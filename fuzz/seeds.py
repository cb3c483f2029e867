"""Seed inputs for each fuzz target: real frames, events, knocks, replays and messages.

A coverage-guided fuzzer mutates what it has; starting from real inputs (the
test vectors under protocol/vectors/ and the golden replays) puts it past the
first checks at once, so its time goes to the corners. Seeds are made here
from those files, the same on every run, and written to fuzz/corpus/NAME/ by
the runner (that folder also keeps what libFuzzer finds; it is not in git).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from allegra_lan.log.codec import encode
from allegra_lan.log.knock import sign_knock
from allegra_lan.net.framing import encode_frame
from allegra_lan.net.handshake import Handshake
from allegra_lan.net.lobby import Claim, Lobby
from allegra_lan.rules import ruleset_for

from . import targets as T
from .fixtures import POINTS, ROOT, golden, next_events, TablePool

VECTORS = ROOT / "protocol" / "vectors" / "logs"


def _json(name: str) -> dict[str, Any]:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def _events(count: int = 12) -> list[bytes]:
    g = golden().events
    return list(g[:count]) + [g[21], g[100]]  # the ceremony, a give (with its knock), the play


def _messages() -> list[dict[str, Any]]:
    """One of each message a peer sends, with real values from the golden game."""
    g = golden()
    pool = TablePool()
    t = pool.table(21)
    draw = t.head
    knock = sign_knock(g.identities[2].key, g.game, draw, True)
    lobby = Lobby(g.game, "golden", ruleset_for("allegra").to_dict(), 3, g.keys[0], takeover=60)
    for seat, key in enumerate(g.keys):
        lobby.claims[seat] = Claim(f"seat {seat}", key, key, "greedy", seat != 1)
        lobby.addresses[key] = ("127.0.0.1", 40000 + seat)
    return [
        {"t": "have", "seq": t.seq, "head": t.head},
        {"t": "events", "from": 21, "items": [e.signed for e in next_events(21, 2)]},
        {"t": "events", "from": 18, "items": list(g.events[18:22])},
        {"t": "refused", "seq": 21, "reason": "illegal move", "fault": "illegal"},
        {"t": "knock", "seat": 2, "draw": draw, "k": knock},
        {"t": "ping"},
        lobby.to_msg(),
        {"t": "sit", "claims": [[1, Claim("guest", T.NODE_GUEST.public, T.NODE_GUEST.public).to_msg()]],
         "address": ["127.0.0.1", 40001]},
        {"t": "sit", "claims": [[None, Claim("stranger", T.NODE_STRANGER.public,
                                             T.NODE_STRANGER.public, "greedy").to_msg()]],
         "address": ["127.0.0.1", 40002]},
        {"t": "ready", "ready": True},
        {"t": "lobby_error", "reason": "that seat is taken"},
        {"t": "takeover_ask", "seq": t.seq, "prev": t.head, "seats": [[0, bytes(32)]]},
        {"t": "takeover_yes", "seq": t.seq, "signs": [[2, bytes(64)]]},
        {"t": "takeover_no", "seq": t.seq, "reason": "no"},
        {"t": "takeover_off", "seq": t.seq},
    ]


def codec() -> list[bytes]:
    c = _json("codec.json")
    out = [bytes.fromhex(v["bytes"]) for v in c["valid"] + c["invalid"]]
    out += [e[64:] for e in _events()]
    out += [encode(m) for m in _messages()]
    return out


def envelope() -> list[bytes]:
    e = _json("events.json")
    out = [bytes.fromhex(v["signed"]) for v in e["valid"] + e["invalid"]]
    return out + _events()


def knock() -> list[bytes]:
    e = _json("events.json")
    out = [bytes.fromhex(k["signed"]) for k in e["knocks"]]
    for wants in (True, False):
        signed = sign_knock(T.KNOCK_SIGNER.key, T.KNOCK_GAME, T.KNOCK_DRAW, wants)
        out += [signed, signed[64:]]
    return out


def frames() -> list[bytes]:
    msgs = _messages()
    whole = b"".join(encode_frame(m) for m in msgs)
    return [bytes([200]) + encode_frame(m) for m in msgs] + [bytes([7]) + whole, bytes([200]) + whole]


def replay() -> list[bytes]:
    out = [p.read_bytes() for p in sorted(VECTORS.glob("*.allegra")) if p.stat().st_size <= 16 * 1024]
    text = (ROOT / "replays" / "golden" / "allegra-3p-knocks.allegra").read_bytes()
    head, _, body = text.partition(b"\n\n")
    lines = body.split(b"\n")
    out += [head + b"\n\n" + b"\n".join(lines[:n]) + b"\n" for n in (0, 3, 25)]
    return out


def handshake() -> list[bytes]:
    patches: list[Any] = [
        [{}, {}, {}],
        [{}, {}, {}, {}],
        [{"proto": 2}],
        [{"proto": 1}],
        [{}, {"share": bytes(32)}, {}, {}],
        [{}, {"-confirm": 0}, {}, {}],
        [{}, {}, {"confirm": bytes(32)}, {}],
        [{"-key": 0}, {}, {}],
        [{}, {"-pin": 0}, {}],
        [{}, {"pin": bytes(32)}, {}],
        [{"t": "refuse", "reason": "no seat for you"}],
        [{}, {"sig": bytes(64)}, {}],
        [{}, {}, {"extra": 1}],
        [{"key": Handshake(T.HS_ME, initiator=True, table_id=T.HS_TABLE, nonce=bytes(32)).hello.key}],
    ]
    return [encode(p) for p in patches]


def sync() -> list[bytes]:
    msgs = [m for m in _messages() if m["t"] in ("have", "events", "refused")]
    out = []
    pool = TablePool()
    for i, point in enumerate(POINTS):
        evs = next_events(point, 3)
        have = {"t": "have", "seq": point, "head": pool.table(point).head}
        out.append(bytes([i]) + encode([{"t": "events", "from": point, "items": [e.signed for e in evs]}]))
        out.append(bytes([i]) + encode([have] + msgs))
    return out


def table() -> list[bytes]:
    out = []
    for i, point in enumerate(POINTS):
        for ev in next_events(point, 1):
            out.append(bytes([i]) + encode([ev.kind, ev.body]))
            out.append(bytes([i]) + ev.signed)
    return out


def genesis() -> list[bytes]:
    out = []
    for variant, players in (("allegra", 2), ("allegra", 6), ("grande", 2), ("grande", 5)):
        rs = ruleset_for(variant).to_dict()
        body = {"table": "fuzz table", "ruleset": rs,
                "seats": [{"name": f"seat {i}", "key": bytes([i]) * 32} for i in range(players)]}
        out.append(encode(body))
    out.append(encode(golden_genesis_body()))
    return out


def golden_genesis_body() -> dict[str, Any]:
    g = TablePool().table(1).genesis
    assert g is not None
    return g.body()


def lobby() -> list[bytes]:
    msgs = _messages()
    out = [encode(m) for m in msgs if m["t"] == "lobby"]
    out += [encode(Claim("guest", T.NODE_GUEST.public, T.NODE_GUEST.public, "greedy", True).to_msg())]
    return out


def node() -> list[bytes]:
    msgs = _messages()
    out = []
    for i, s in enumerate(T.SCENARIOS):
        if s.point is None:
            chosen = [m for m in msgs if m["t"] in ("sit", "ready", "lobby", "ping", "lobby_error", "knock")]
        else:
            chosen = [m for m in msgs if m["t"] not in ("sit", "ready", "lobby")]
        out.append(bytes([i]) + encode(chosen))
        out += [bytes([i]) + encode(m) for m in chosen[:4]]
    return out


SEEDS: dict[str, Callable[[], list[bytes]]] = {
    "codec": codec, "envelope": envelope, "knock": knock, "frames": frames, "replay": replay,
    "handshake": handshake, "sync": sync, "table": table, "genesis": genesis, "lobby": lobby,
    "node": node,
}


def write_seeds(name: str, corpus: Path) -> int:
    """Put the target's seeds in its corpus folder (named by content, so none is written twice)."""
    import hashlib

    corpus.mkdir(parents=True, exist_ok=True)
    seeds = SEEDS[name]()
    for data in seeds:
        path = corpus / f"seed-{hashlib.sha1(data).hexdigest()[:16]}"
        if not path.exists():
            path.write_bytes(data)
    return len(seeds)
