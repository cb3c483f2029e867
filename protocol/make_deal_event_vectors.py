"""Regenerate the fair deal's event vectors of PROTOCOL.md (protocol/vectors/deal_events.json), or check them.

    python protocol/make_deal_event_vectors.py            # write protocol/vectors/deal_events.json
    python protocol/make_deal_event_vectors.py --check    # exit 1 if the committed file differs

The seats, game and pile of vectors/deal.json (three seats, round 1, pile 0, 12 cards of
values -2..9) dealt through the deal events (PROTOCOL.md, "Fair deal: the events"): every
event in log order with its author, its body and its signed bytes, what is owed before
it, one batch (cards 0 and 3 shown to all, card 5 peeked by seat 1), what each peer's
engine learns from it, the secrets at the end; then bodies a decoder must refuse, events
that are not the one owed, and events that are taken but name their author (a Fault).
Every byte is deterministic.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

from nacl.signing import SigningKey

from allegra_lan.deal.cards import CardPoints, Pile
from allegra_lan.deal.events import KINDS, SCHEMAS, encode
from allegra_lan.deal.group import add, mul_base
from allegra_lan.deal.ledger import Ledger, LedgerError
from allegra_lan.log.codec import encode as msgpack
from allegra_lan.log.envelope import NO_PREV, sign_event
from allegra_lan.rules.cards import PileInfo, RevealRequest

import one_vector_file  # noqa: E402 (this directory: run as a script)

OUT = Path(__file__).parent / "vectors" / "deal_events.json"
GAME = hashlib.blake2b(b"allegra-lan/vectors/deal/game", digest_size=16).digest()
VALUES = (-2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
SEATS = 3
ROUND = 1
INFO = PileInfo(ROUND, 0, 0, VALUES)
REQUESTS = (RevealRequest(ROUND, 0), RevealRequest(ROUND, 3), RevealRequest(ROUND, 5, to=1))


def secret(seat: int) -> bytes:
    return hashlib.blake2b(f"allegra-lan/vectors/deal/secret/{seat}".encode(), digest_size=32).digest()


def identity(seat: int) -> SigningKey:
    return SigningKey(hashlib.blake2b(f"allegra-lan/vectors/deal-events/identity/{seat}".encode(),
                                      digest_size=32).digest())


class Where:
    """The engine's answer to "which pile is this card in": the one pile of the vectors."""

    def pile_of(self, round_no: int, card: int) -> PileInfo:
        return INFO


def jsonable(v: Any) -> Any:
    """A body in JSON: byte strings as {"hex": ...}, so that bytes and text never mix."""
    if isinstance(v, bytes):
        return {"hex": v.hex()}
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    return v


def vectors() -> dict[str, Any]:
    ledgers = [Ledger(GAME, SEATS, s, secret(s)) for s in range(SEATS)] + [Ledger(GAME, SEATS)]
    events: list[dict[str, Any]] = []
    prev = NO_PREV
    snapshots: dict[str, Any] = {}

    def write_owed() -> None:
        nonlocal prev
        while (o := ledgers[-1].owed()) is not None:
            snapshots.setdefault(o.kind, (copy.deepcopy(ledgers[-1]), o.seat, len(events)))
            kind, body = encode(ledgers[o.seat].mine())  # type: ignore[arg-type]
            ev = sign_event(identity(o.seat), game=GAME, seq=len(events), prev=prev, kind=kind, body=body)
            prev = ev.id
            events.append({"seq": ev.seq, "owed": str(o), "author": o.seat, "kind": kind, "body": jsonable(body),
                           "body_msgpack": msgpack(body).hex(), "signed": ev.signed.hex()})
            for l in ledgers:
                l.take(o.seat, kind, body)

    write_owed()  # keys, escrow
    for l in ledgers:
        l.open_piles([INFO])
        l.need(REQUESTS, Where())
    write_owed()  # the shuffles, the shares
    answers = {("spectator" if l.seat is None else f"seat {l.seat}"): [[r.card, j] for r, j in l.answers()]
               for l in ledgers}
    for l in ledgers:
        l.end()
    write_owed()  # the secrets
    assert all(l.verdict() == () for l in ledgers)

    refused_bodies = [
        {"kind": "deal_keys", "body": {"commitment": {"hex": "00" * 32}, "box_key": {"hex": "00" * 32},
                                       "deal_key": {"hex": "00" * 32}}, "why": "key_proof is missing"},
        {"kind": "deal_keys", "body": {"commitment": {"hex": "00" * 31}, "box_key": {"hex": "00" * 32},
                                       "deal_key": {"hex": "00" * 32}, "key_proof": {"hex": "00" * 64}},
         "why": "a 31-byte commitment"},
        {"kind": "deal_secret", "body": {"secret": {"hex": "00" * 32}, "x": 1}, "why": "an unexpected field"},
        {"kind": "deal_secret", "body": {"secret": "00" * 32}, "why": "text where bytes are wanted"},
        {"kind": "deal_shuffle", "body": {"round": 1, "pile": 0, "part": 0, "cards": []}, "why": "no cards"},
        {"kind": "deal_shuffle", "body": {"round": True, "pile": 0, "part": 0, "cards": [{"hex": "00" * 64}]},
         "why": "a boolean where a number is wanted"},
        {"kind": "deal_shuffle", "body": {"round": 2**32, "pile": 0, "part": 0, "cards": [{"hex": "00" * 64}]},
         "why": "a number above 2^32-1"},
        {"kind": "deal_shares", "body": {"batch": 0, "part": 0, "shares": [[0, {"hex": "00" * 32}, {"hex": "00" * 63}]]},
         "why": "a 63-byte proof"},
        {"kind": "deal_shares", "body": {"batch": 0, "part": 0, "shares": [[0, {"hex": "00" * 32}]]},
         "why": "a share of two items"},
        {"kind": "deal_escrow", "body": {"pieces": [[{"hex": "00" * 32}, {"hex": "00" * 79}]]},
         "why": "a 79-byte sealed piece"},
        {"kind": "deal_reveal", "body": {}, "why": "not a deal event kind"},
    ]

    def case(kind: str, change: Any, why: str) -> dict[str, Any]:
        """An event of `kind` taken at the first moment it was owed, its honest body changed."""
        ledger, author, at = snapshots[kind]
        body = copy.deepcopy(events[at]["body"])
        change(body)
        ledger = copy.deepcopy(ledger)
        try:
            ledger.take(author, kind, unjson(body))
        except LedgerError as e:
            return {"at": at, "author": author, "kind": kind, "body": body, "refused": str(e), "why": why}
        return {"at": at, "author": author, "kind": kind, "body": body, "why": why,
                "fault": None if not ledger.faults else {"seat": ledger.faults[0].seat, "step": ledger.faults[0].step,
                                                         "card": ledger.faults[0].card}}

    shares_at = snapshots["deal_shares"][2]
    d = bytes.fromhex(events[shares_at]["body"]["shares"][0][1]["hex"])
    other_d = add(d, mul_base(1)).hex()
    low_order = "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"
    card0 = events[snapshots["deal_shuffle"][2]]["body"]["cards"][0]

    def set_share(b: dict[str, Any]) -> None:
        b["shares"][0][1] = {"hex": other_d}

    def copy_card(b: dict[str, Any]) -> None:
        b["cards"][4] = card0

    def set_box(b: dict[str, Any]) -> None:
        b["box_key"] = {"hex": low_order}

    def set_secret(b: dict[str, Any]) -> None:
        b["secret"] = {"hex": "00" * 32}

    def other_card(b: dict[str, Any]) -> None:
        b["shares"][0][0] = 1

    def other_batch(b: dict[str, Any]) -> None:
        b["batch"] = 1

    judged = [
        case("deal_shares", set_share, "seat 0's share of card 0 replaced by D + G, its proof kept"),
        case("deal_shuffle", copy_card, "seat 0's shuffle repeats its card 0 at place 4 (a plain copy)"),
        case("deal_keys", set_box, "seat 0's box key is a point of low order (no box can be sealed to it)"),
        case("deal_secret", set_secret, "seat 0's secret is not the one it committed to"),
        case("deal_shares", other_card, "seat 0's shares name card 1, which it does not owe"),
        case("deal_shares", other_batch, "seat 0's shares name batch 1 while batch 0 is owed"),
    ]
    refused_events = [
        {"at": 0, "author": 1, "kind": "deal_keys", "why": "seat 0's keys are owed, not seat 1's"},
        {"at": SEATS, "author": 0, "kind": "deal_shuffle", "why": "seat 0's escrow is owed, not a shuffle"},
    ]
    for r in refused_events:
        assert r["at"] < len(events)
    cards = CardPoints.of(Pile(GAME, ROUND, 0, len(VALUES)))
    return {
        "about": "PROTOCOL.md, Fair deal: the events. The seats, game, pile and secrets of deal.json. "
                 "A body is shown as JSON with every byte string as {hex: ...}; body_msgpack is its canonical "
                 "msgpack, signed the signed event (log/envelope.py) by the author's identity key. owed is what "
                 "the ledger says is owed before that event. The batch is cards 0 and 3 shown to all and card 5 "
                 "to seat 1; answers are each peer's learn(card, place) calls after it (place null: the reveal "
                 "happened, to another seat). judged: an event taken at the first moment its kind was owed "
                 "(at = its seq) with its honest body changed: refused (not taken) or taken with the fault named.",
        "game": GAME.hex(), "players": SEATS, "round": ROUND, "values": list(VALUES),
        "card_points": [p.hex() for p in cards.points],
        "seats": [{"seat": s, "secret": secret(s).hex(), "identity": bytes(identity(s).verify_key).hex()}
                  for s in range(SEATS)],
        "kinds": {k: SCHEMAS[k].describe() for k in KINDS},
        "batch": [{"card": r.card, "to": r.to} for r in REQUESTS],
        "events": events,
        "answers": answers,
        "refused_bodies": refused_bodies,
        "refused_events": refused_events,
        "judged": judged,
    }


def unjson(v: Any) -> Any:
    if isinstance(v, dict) and set(v) == {"hex"}:
        return bytes.fromhex(v["hex"])
    if isinstance(v, list):
        return [unjson(x) for x in v]
    if isinstance(v, dict):
        return {k: unjson(x) for k, x in v.items()}
    return v


if __name__ == "__main__":
    raise SystemExit(one_vector_file.main(__doc__ or "", OUT, vectors))
