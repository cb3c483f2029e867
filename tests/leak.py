"""The leak script of issue 12: what can a replay file (and secrets pooled by a coalition of
seats) tell about the cards?

It reads only the file: the header, then each line as base64 of a 64-byte signature and the
msgpack envelope (PROTOCOL.md, "Replay files", "Signed events"); it imports nothing of
allegra_lan's fair deal, and its arithmetic is libsodium's (PyNaCl's bindings) and the
spec's derivations (tests/deal_reference.py, itself written from the spec alone).

- A **seeded** game (the genesis names no deal): the seed is public once the nonces are
  revealed, and the seed fixes every card. The script rebuilds every round's deck and claims
  every card of it, closed or not. This is the finding of the issue; it uses the engine's
  seeded shuffle (rules/cards.py SeededCards), since that is what the seed means.
- A **fair-deal** game: for every card of a round's deck whose final ciphertext is in the
  log, the script gathers the decryption shares the log published, adds those it can make
  from the pooled secrets (D_s = x_s * C1), and where it holds one from every seat removes
  them and finds the card point: that card's value is known to it. The secrets the seats
  publish at the end are used the moment they are in the file.

Run as a script: `python tests/leak.py FILE [--upto SEQ] [--secret SEAT:HEX]...` prints
one `round card value` line per card it can tell.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import msgpack
import nacl.bindings as nb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deal_reference import L, scalar, unkeyed  # noqa: E402  (the spec's own derivations)

Claims = dict[tuple[int, int], Any]  # (round, card id) -> value ("J" for a Joker)


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """The envelopes of a replay file, in order (a line that does not decode ends them)."""
    text = Path(path).read_text(encoding="utf-8")
    _, _, body = text.partition("\n\n")
    out = []
    for line in body.splitlines():
        try:
            raw = base64.b64decode(line, validate=True)
            out.append(msgpack.unpackb(raw[64:], raw=False, strict_map_key=False))
        except Exception:
            break
    return out


def deck_values(ruleset: dict[str, Any]) -> list[Any]:
    """The unshuffled deck (PROTOCOL.md, "The unshuffled deck"), Jokers as "J"."""
    out: list[Any] = []
    for value, count in ruleset["card_counts"]:
        out += [value] * count
    return out + ["J"] * ruleset.get("jokers", 0)


@dataclass
class Leak:
    """The script's knowledge, fed one envelope at a time (`claims` after k of them is what
    the file cut at seq k tells, with `secrets`: seat -> its per-game secret)."""

    secrets: dict[int, bytes] = field(default_factory=dict)
    claims: Claims = field(default_factory=dict)
    game: bytes = b""
    seats: list[bytes] = field(default_factory=list)
    deck: list[Any] = field(default_factory=list)
    fair: bool = False
    nonces: list[bytes] = field(default_factory=list)
    ruleset: dict[str, Any] = field(default_factory=dict)
    round_no: int = 0
    passes: dict[tuple[int, int], list[bytes]] = field(default_factory=dict)  # (round, seat) -> cards
    shares: dict[tuple[int, int], dict[int, bytes]] = field(default_factory=dict)  # (round, card) -> seat -> D
    points: dict[int, dict[bytes, int]] = field(default_factory=dict)  # round -> card point -> place

    def feed(self, env: dict[str, Any]) -> None:
        kind, body = env["kind"], env["body"]
        if kind == "genesis":
            self.game = env["game"]
            self.seats = [s["key"] for s in body["seats"]]
            self.ruleset = body["ruleset"]
            self.deck = deck_values(body["ruleset"])
            self.fair = body.get("deal") == "fair"
        elif kind == "reveal":
            self.nonces.append(body["nonce"])
            if len(self.nonces) == len(self.seats) and not self.fair:
                self._seeded()
        elif kind == "deal_shuffle" and body["pile"] == 0:
            self.round_no = body["round"]
            seat = self.seats.index(env["author"])
            self.passes.setdefault((body["round"], seat), []).extend(body["cards"])
            if seat == len(self.seats) - 1 and len(self.passes[(body["round"], seat)]) == len(self.deck):
                self._open(body["round"], range(len(self.deck)))
        elif kind == "deal_secret":  # published at the end: the script uses it at once
            self.secrets[self.seats.index(env["author"])] = body["secret"]
            for r in sorted({r for r, _ in self.passes}):
                self._open(r, range(len(self.deck)))
        elif kind == "deal_shares":
            seat = self.seats.index(env["author"])
            cards = []
            for card, d, _proof in body["shares"]:
                if card < len(self.deck):  # a card of the round's deck (not of a reshuffle)
                    self.shares.setdefault((self.round_no, card), {})[seat] = d
                    cards.append(card)
            self._open(self.round_no, cards)

    def _seeded(self) -> None:
        from allegra_lan.rules import ruleset_from_dict
        from allegra_lan.rules.cards import SeededCards

        seed = hashlib.blake2b(b"allegra-lan/seed/v1" + self.game + b"".join(self.nonces),
                               digest_size=32).digest()
        source = SeededCards(ruleset_from_dict(self.ruleset), seed)
        for r in range(self.ruleset["rounds"]):
            for card, value in enumerate(source.deck(r)):
                self.claims[(r, card)] = "J" if value == 100 else value

    def _open(self, round_no: int, cards: Iterable[int]) -> None:
        final = self.passes.get((round_no, len(self.seats) - 1))
        if final is None or len(final) < len(self.deck):
            return
        if round_no not in self.points:
            self.points[round_no] = {
                nb.crypto_core_ed25519_from_uniform(unkeyed("card", self.game, round_no, 0, j, size=32)): j
                for j in range(len(self.deck))}
        keys = {s: scalar(secret, "deal-key", self.game) for s, secret in self.secrets.items()}
        for card in cards:
            have = dict(self.shares.get((round_no, card), {}))
            c1, c2 = final[card][:32], final[card][32:]
            for s, x in keys.items():
                have.setdefault(s, nb.crypto_scalarmult_ed25519_noclamp((x % L).to_bytes(32, "little"), c1))
            if len(have) < len(self.seats):
                continue  # a seat's share is missing: the card stays locked
            m = c2
            for d in have.values():
                m = nb.crypto_core_ed25519_sub(m, d)
            place = self.points[round_no].get(m)
            if place is not None:
                self.claims[(round_no, card)] = self.deck[place]


def leak_file(path: str | Path, upto: int | None = None, secrets: dict[int, bytes] | None = None) -> Claims:
    """What the file (its first `upto` events) and the pooled `secrets` tell."""
    leak = Leak(dict(secrets or {}))
    for env in read_events(path)[:upto]:
        leak.feed(env)
    return leak.claims


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="leak.py", description=__doc__.split("\n\n")[0])
    p.add_argument("file")
    p.add_argument("--upto", type=int)
    p.add_argument("--secret", action="append", default=[], metavar="SEAT:HEX")
    a = p.parse_args(argv)
    secrets = {int(s.split(":")[0]): bytes.fromhex(s.split(":")[1]) for s in a.secret}
    for (r, card), value in sorted(leak_file(a.file, a.upto, secrets).items()):
        print(r, card, value)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
