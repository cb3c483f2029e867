"""Regenerate the fair deal's test vectors of PROTOCOL.md (protocol/vectors/deal.json), or check them.

    python protocol/make_deal_vectors.py            # write protocol/vectors/deal.json
    python protocol/make_deal_vectors.py --check    # exit 1 if the committed file differs

Three seats with fixed secrets deal one pile of 12 cards (PROTOCOL.md, "Fair deal: the
cryptography"): the card points, every seat's derived keys and permutation, each shuffle
and lock pass, every public share with its proof and what each card opens to, one
private reveal (shares sealed to the peeker), one seat's escrow; then negative vectors a
checker must refuse (invalid points, wrong shares, bad proofs, a duplicated card, a wrong
sealed share, a wrong escrow piece), each with why. Every byte is deterministic, so the
same package always writes the same file; regenerate only on a deliberate, versioned
change of the protocol.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from allegra_lan.deal import Pile, box_keypair, commitment, lock_key, make_escrow, permutation, shuffle_key, split
from allegra_lan.deal.derive import frame, hash_, keyed
from allegra_lan.deal.group import add, sc
from allegra_lan.deal.reveal import open_point, seal, share_context
from allegra_lan.deal.whole import deal, reveal_all, reveal_to

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
        "seat": s, "secret": secrets[s].hex(), "commitment": commitment(GAME, s, secrets[s]).hex(),
        "box_secret": boxes[s][0].hex(), "box_key": boxes[s][1].hex(),
        "shuffle_key": sc(shuffle_key(secrets[s], GAME, 1, 0)).hex(), "K": dealt.shuffles[s].key.hex(),
        "permutation": permutation(secrets[s], GAME, 1, 0, PILE.size),
        "lock_keys": [sc(lock_key(secrets[s], GAME, 1, 0, i)).hex() for i in range(PILE.size)],
    } for s in range(SEATS)]
    reveals = []
    for i in range(PILE.size):
        shares = reveal_all(dealt, secrets, i)
        opens = dealt.cards.card_index(open_point(dealt.final[i], [lock_key(s, GAME, 1, 0, i) for s in secrets]))
        reveals.append({"card": i, "shares": [{"seat": r.seat, "share": r.share.hex(), "proof": r.proof.hex()}
                                               for r in shares],
                        "opens_to": opens, "value": VALUES[opens] if opens is not None else None})
    peeks = reveal_to(dealt, secrets, PEEK_CARD, PEEKER)
    private = {"card": PEEK_CARD, "peeker": PEEKER, "opens_to": reveals[PEEK_CARD]["opens_to"], "shares": [{
        "seat": p.seat, "w": p.point.hex(), "proof": p.proof.hex(), "sealed": p.sealed.hex(),
        "ephemeral_secret": keyed(secrets[p.seat], "seal-key", *share_context(PILE, p.seat, PEEK_CARD, PEEKER),
                                  boxes[PEEKER][1], size=32).hex(),
    } for p in peeks]}
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
    dup = list(dealt.shuffles[1].points)
    dup[4] = dup[0]
    wrong_sealed = seal(secrets[2], (b"not the share context",), boxes[PEEKER][1], sc(lock_key(secrets[2], GAME, 1, 0, 7)))
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
            {"seat": 1, "card": 2, "share": reveals[3]["shares"][1]["share"], "proof": good["proof"],
             "why": "seat 1's share of card 3 given for card 2"},
            {"seat": 1, "card": 2, "share": good["share"], "proof": flipped.hex(), "why": "a bit flipped in z"},
            {"seat": 1, "card": 2, "share": good["share"], "proof": reveals[3]["shares"][1]["proof"],
             "why": "the proof of card 3 moved to card 2"},
            {"seat": 2, "card": 2, "share": good["share"], "proof": good["proof"],
             "why": "seat 1's share and proof presented as seat 2's"},
            {"seat": 1, "card": 2, "share": "00" * 32, "proof": good["proof"], "why": "a zero share"},
            {"seat": 1, "card": 2, "share": good["share"][:-2] + "ff",
             "proof": good["proof"], "why": "a share not below L"},
        ],
        "shuffles": [{"seat": 1, "points": hx(dup), "why": "point 4 repeats point 0 (a duplicated card)"}],
        "sealed": [{"seat": 2, "card": PEEK_CARD, "peeker": PEEKER, "w": peeks[1].point.hex(),
                    "proof": peeks[1].proof.hex(), "sealed": wrong_sealed.hex(),
                    "why": "opens to seat 2's key of card 7: k*W != Y, and not the re-sealed bytes"}],
        "escrow_release": [{"dealer": 0, "holder": 2, "piece": "00" * 32, "why": "misses its commitment"}],
    }
    return {
        "about": "PROTOCOL.md, Fair deal: the cryptography (allegra-lan/deal/v1). Hex strings are bytes; "
                 "scalars are 32 bytes little-endian; points are Ed25519 encodings. card_point_inputs[j] is the "
                 "32-byte BLAKE2b of frame(card, game, round, pile, j), mapped by libsodium's "
                 "crypto_core_ed25519_from_uniform to card_points[j]. shuffles[s] and locks[s] are seat s's "
                 "published lists; the lock input of seat 0 is shuffles[2], of seat s>0 locks[s-1]. The private "
                 "reveal and the escrow are sealed boxes (crypto_box_seal layout) with the given ephemeral secrets.",
        "game": GAME.hex(), "round": PILE.round_no, "pile": PILE.pile, "size": PILE.size, "values": VALUES,
        "frame_example": {"name": "shuffle-key", "parts": [GAME.hex(), 1, 0, 0],
                          "frame": frame("shuffle-key", GAME, 1, 0, 0).hex()},
        "seats": seats,
        "card_point_inputs": [hash_("card", GAME, 1, 0, j, size=32).hex() for j in range(PILE.size)],
        "card_points": hx(dealt.cards.points),
        "shuffles": [{"seat": m.seat, "K": m.key.hex(), "points": hx(m.points)} for m in dealt.shuffles],
        "locks": [{"seat": m.seat, "points": hx(m.points)} for m in dealt.locks],
        "reveals": reveals, "private": private, "escrow": escrow, "negative": negative,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file, write nothing")
    args = parser.parse_args()
    text = json.dumps(vectors(), indent=1, ensure_ascii=True) + "\n"
    if args.check:
        if not OUT.is_file() or OUT.read_text(encoding="ascii") != text:
            print(f"{OUT} differs from what the package makes now", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="ascii")
    return 0


if __name__ == "__main__":
    sys.exit(main())
