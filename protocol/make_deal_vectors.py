"""Regenerate the fair deal's test vectors of PROTOCOL.md (protocol/vectors/deal.json), or check them.

    python protocol/make_deal_vectors.py            # write protocol/vectors/deal.json
    python protocol/make_deal_vectors.py --check    # exit 1 if the committed file differs

Three seats with fixed secrets deal one pile of 12 cards (PROTOCOL.md, "Fair deal: the
cryptography"): every seat's keys (with the proof of its deal key), permutation and
re-encryption scalars, the joint key, the card points, each shuffle, every seat's share
of every card with its proof and what the card opens to, a peek (the shares of all seats
but the peeker), one seat's escrow; then negative vectors a checker must refuse (invalid
points, wrong shares, bad proofs, rogue keys, a copied card, a wrong escrow piece), each
with why. Every byte is deterministic, so the
same package always writes the same file; regenerate only on a deliberate, versioned
change of the protocol.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from allegra_lan.deal import (
    Pile, box_keypair, deal_key, make_escrow, open_point, permutation, rerandomizer, split,
)
from allegra_lan.deal.derive import frame, hash_, keyed
from allegra_lan.deal.group import add, mul_base, sc, sub
from allegra_lan.deal.passes import initial
from allegra_lan.deal.whole import deal, shares_of

import one_vector_file  # noqa: E402 (this directory: run as a script)

OUT = Path(__file__).parent / "vectors" / "deal.json"
GAME = hashlib.blake2b(b"allegra-lan/vectors/deal/game", digest_size=16).digest()
VALUES = [-2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
SEATS = 3
PILE = Pile(GAME, 1, 0, len(VALUES))
PEEK_CARD, PEEKER = 5, 1
ORDER_8 = "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"


def secret(seat: int) -> bytes:
    return hashlib.blake2b(f"allegra-lan/vectors/deal/secret/{seat}".encode(), digest_size=32).digest()


def hx(items: Any) -> Any:
    return [x.hex() for x in items]


def vectors() -> dict[str, Any]:
    secrets = [secret(s) for s in range(SEATS)]
    boxes = [box_keypair(s, GAME) for s in secrets]
    dealt = deal(PILE, secrets)
    seats = [{
        "seat": s, "secret": secrets[s].hex(), "commitment": dealt.keys[s].commitment.hex(),
        "box_secret": boxes[s][0].hex(), "box_key": dealt.keys[s].box_key.hex(),
        "x": sc(deal_key(secrets[s], GAME)).hex(), "X": dealt.keys[s].deal_key.hex(),
        "key_proof": dealt.keys[s].key_proof.hex(),
        "permutation": permutation(secrets[s], GAME, 1, 0, PILE.size),
        "rerandomizers": [sc(rerandomizer(secrets[s], GAME, 1, 0, i)).hex() for i in range(PILE.size)],
    } for s in range(SEATS)]
    reveals: list[dict[str, Any]] = []
    for i in range(PILE.size):
        shares = shares_of(dealt, secrets, i)
        opens = dealt.cards.card_index(open_point(dealt.final[i], [sh.point for sh in shares]))
        reveals.append({"card": i, "shares": [{"seat": sh.seat, "point": sh.point.hex(), "proof": sh.proof.hex()}
                                               for sh in shares],
                        "opens_to": opens, "value": VALUES[opens] if opens is not None else None})
    others = shares_of(dealt, secrets, PEEK_CARD, but=PEEKER)
    peek = {"card": PEEK_CARD, "peeker": PEEKER, "published_by": [sh.seat for sh in others],
            "left_under_the_peeker_s_key": open_point(dealt.final[PEEK_CARD], [sh.point for sh in others]).hex(),
            "opens_to": reveals[PEEK_CARD]["opens_to"]}
    holders = {h: boxes[h][1] for h in range(SEATS) if h != 0}
    pieces = split(secrets[0], GAME, 0, sorted(holders))
    escrow = {"dealer": 0, "holders": [{
        "holder": e.holder, "piece": pieces[e.holder].hex(), "commitment": e.commitment.hex(), "sealed": e.sealed.hex(),
        "ephemeral_secret": keyed(secrets[0], "seal-key", b"escrow", GAME, 0, e.holder, holders[e.holder],
                                  size=32).hex(),
    } for e in make_escrow(secrets[0], GAME, 0, holders)]}

    good = reveals[2]["shares"][1]
    flipped = bytes.fromhex(good["proof"])
    flipped = flipped[:40] + bytes([flipped[40] ^ 1]) + flipped[41:]
    copied = list(dealt.shuffles[1].cards)
    copied[4] = copied[0]
    rogue = sub(mul_base(12345), add(dealt.keys[0].deal_key, dealt.keys[1].deal_key))
    negative = {
        "points": [
            {"point": "01" + "00" * 31, "why": "the identity"},
            {"point": "ec" + "ff" * 30 + "7f", "why": "order 2"},
            {"point": ORDER_8, "why": "order 8"},
            {"point": "ed" + "ff" * 30 + "7f", "why": "y = p: not canonical"},
            {"point": "02" + "00" * 31, "why": "y = 2: not on the curve"},
            {"point": add(dealt.cards.points[0], bytes.fromhex(ORDER_8)).hex(),
             "why": "card point 0 plus a point of order 8: outside the main subgroup"},
            {"point": "00" * 31, "why": "31 bytes"},
        ],
        "shares": [
            {"seat": 1, "card": 2, "point": reveals[3]["shares"][1]["point"], "proof": good["proof"],
             "why": "seat 1's share of card 3 given for card 2"},
            {"seat": 1, "card": 2, "point": good["point"], "proof": flipped.hex(), "why": "a bit flipped in z"},
            {"seat": 1, "card": 2, "point": good["point"], "proof": reveals[3]["shares"][1]["proof"],
             "why": "the proof of card 3 moved to card 2"},
            {"seat": 2, "card": 2, "point": good["point"], "proof": good["proof"],
             "why": "seat 1's share and proof presented as seat 2's"},
            {"seat": 1, "card": 2, "point": "01" + "00" * 31, "proof": good["proof"], "why": "the identity as a share"},
            {"seat": 1, "card": 2, "point": good["point"], "proof": good["proof"][:64] + "ff" * 32,
             "why": "z not below L"},
        ],
        "keys": [
            {"seat": 2, "X": rogue.hex(), "key_proof": dealt.keys[2].key_proof.hex(),
             "why": "a rogue key X_0 + X_1 + X_2 = 12345*G, with seat 2's real proof"},
            {"seat": 2, "X": dealt.keys[1].deal_key.hex(), "key_proof": dealt.keys[1].key_proof.hex(),
             "why": "seat 1's key and proof presented as seat 2's"},
        ],
        "shuffles": [{"seat": 1, "cards": hx(copied), "why": "card 4 repeats card 0 (a copied card)"}],
        "escrow_release": [{"dealer": 0, "holder": 2, "piece": "00" * 32, "why": "misses its commitment"}],
    }
    return {
        "about": "PROTOCOL.md, Fair deal: the cryptography (allegra-lan/deal/v1). Hex strings are bytes; "
                 "scalars are 32 bytes little-endian; points are Ed25519 encodings; a card is 64 bytes, C1 || C2. "
                 "card_point_inputs[j] is the 32-byte BLAKE2b of frame(card, game, round, pile, j), mapped by "
                 "libsodium's crypto_core_ed25519_from_uniform to card_points[j]. initial is the pile before any "
                 "shuffle; shuffles[s] is seat s's published list (seat 0 works on initial, seat s on shuffles[s-1]); "
                 "card id i is place i of shuffles[-1]. The escrow pieces are sealed boxes (crypto_box_seal layout) "
                 "with the given ephemeral secrets.",
        "game": GAME.hex(), "round": PILE.round_no, "pile": PILE.pile, "size": PILE.size, "values": VALUES,
        "frame_example": {"name": "rerand", "parts": [GAME.hex(), 1, 0, 0],
                          "frame": frame("rerand", GAME, 1, 0, 0).hex()},
        "seats": seats, "joint_key": dealt.joint.hex(),
        "card_point_inputs": [hash_("card", GAME, 1, 0, j, size=32).hex() for j in range(PILE.size)],
        "card_points": hx(dealt.cards.points),
        "initial": hx(initial(dealt.cards, dealt.joint)),
        "shuffles": [{"seat": m.seat, "cards": hx(m.cards)} for m in dealt.shuffles],
        "reveals": reveals, "peek": peek, "escrow": escrow, "negative": negative,
    }


def main() -> int:
    return one_vector_file.main(__doc__ or "", OUT, vectors)


if __name__ == "__main__":
    sys.exit(main())
