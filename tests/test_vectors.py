"""The seed-to-deck test vectors (protocol/vectors/) against the package and against the spec.

The committed vector files are the contract: they are read, never
regenerated here. Each vector is checked twice: against the package (so the
package still shuffles as it promised), and against a second implementation
written below from PROTOCOL.md alone with nothing but hashlib (so a change to
the package that stays consistent with itself, and a vector file regenerated
from such a change, both fail).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Iterator

import pytest

from allegra_lan.rules import (
    JOKER, DrawFromDeck, Move, Place, RulesetError, State, TurnUp, apply, legal_moves, new_game,
    ruleset_for, ruleset_from_dict, to_act,
)
from allegra_lan.rules.cards import SeededCards
from allegra_lan.rules.effects import Reshuffled
from allegra_lan.rules.engine import area_slots
from allegra_lan.rules.rng import Stream, deal_purpose, reshuffle_purpose, seed_from_number
from allegra_lan.rules.state import Phase

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "protocol" / "vectors"
PROTOCOL = ROOT / "protocol" / "PROTOCOL.md"

Value = int | str  # a card value as the vectors write it: "J" is a Joker


@cache
def load(name: str) -> dict[str, Any]:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def engine_value(v: Value) -> int:
    return JOKER if v == "J" else int(v)


# ----------------------------------------------------------------- the spec, re-implemented


class RefStream:
    """PROTOCOL.md "The stream", "A uniform integer below n" and "Shuffle", from the text."""

    def __init__(self, seed: bytes, purpose: str) -> None:
        self.seed = seed
        self.purpose = purpose.encode("utf-8")
        self.words = self._words()

    def block_data(self, i: int) -> bytes:
        return bytes([len(self.purpose)]) + self.purpose + i.to_bytes(8, "big")

    def _words(self) -> Iterator[int]:
        i = 0
        while True:
            block = hashlib.blake2b(self.block_data(i), key=self.seed, digest_size=64).digest()
            for k in range(8):
                yield int.from_bytes(block[8 * k: 8 * k + 8], "big")
            i += 1

    def word(self) -> int:
        return next(self.words)

    def uniform(self, n: int) -> int:
        limit = 2**64 - (2**64 % n)
        while True:
            w = self.word()
            if w < limit:
                return w % n

    def shuffle(self, items: list[Any]) -> list[Any]:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.uniform(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


REF_COUNTS: dict[str, list[tuple[int, int]]] = {
    # R12, as PROTOCOL.md lists it
    "allegra": [(-1, 5), (0, 7), (1, 8), (2, 9), (3, 10), (4, 11), (5, 12), (6, 12), (7, 11),
                (8, 10), (9, 9), (10, 8), (11, 8)],
    # R18, as PROTOCOL.md lists it; then 3 Jokers
    "grande": [(-2, 4), (-1, 8), (0, 9), (1, 10), (2, 10), (3, 10), (4, 10), (5, 16), (6, 10),
               (7, 10), (8, 10), (9, 10), (10, 10), (11, 10), (12, 10), (13, 10)],
}
REF_JOKERS = {"allegra": 0, "grande": 3}
REF_DIMS: dict[str, dict[int, tuple[int, int]]] = {"allegra": {n: (3, 4) for n in range(2, 7)},
            "grande": {2: (4, 5), 3: (4, 4), 4: (4, 4), 5: (4, 4)}}


def ref_unshuffled(variant: str) -> list[Value]:
    out: list[Value] = []
    for value, count in REF_COUNTS[variant]:
        out.extend([value] * count)
    out.extend(["J"] * REF_JOKERS[variant])
    return out


def ref_deck(variant: str, seed: bytes, round_no: int) -> list[Value]:
    return RefStream(seed, f"allegra-lan/deal/{round_no}").shuffle(ref_unshuffled(variant))


@dataclass(frozen=True)
class RefDeal:
    dealer: int
    starter: int
    ids: list[list[list[int]]]  # seat -> rows -> card ids
    first_discard: int
    deck_next: int
    deck_left: int


def ref_deal(variant: str, players: int, round_no: int) -> RefDeal:
    rows, cols = REF_DIMS[variant][players]
    per = rows * cols
    dealer = round_no % players
    starter = (round_no + 1) % players
    places: list[list[int]] = [[-1] * per for _ in range(players)]
    for k in range(per * players):
        places[(starter + k % players) % players][k // players] = k
    ids = [[p[r * cols:(r + 1) * cols] for r in range(rows)] for p in places]
    size = len(ref_unshuffled(variant))
    return RefDeal(dealer, starter, ids, per * players, per * players + 1, size - per * players - 1)


def ref_reshuffle(seed: bytes, round_no: int, count: int, pile: list[int]) -> list[int]:
    """The new deck, top first; the pile's top stays behind."""
    return RefStream(seed, f"allegra-lan/reshuffle/{round_no}/{count}").shuffle(pile[:-1])


def ref_seed_from_number(number: int, game: int) -> bytes:
    return hashlib.blake2b(f"allegra-lan/seed-from-number/{number}/{game}".encode("ascii"),
                           digest_size=32).digest()


# ----------------------------------------------------------------- rng.json


def test_stream_words_match_package_and_spec() -> None:
    streams = load("rng.json")["streams"]
    assert len(streams) >= 20
    for v in streams:
        seed = bytes.fromhex(v["seed"])
        package = Stream(seed, v["purpose"])
        ref = RefStream(seed, v["purpose"])
        assert ref.block_data(0).hex() == v["block0_data"]
        words = [int(w, 16) for w in v["words"]]
        assert [package.word() for _ in words] == words, (v["seed"], v["purpose"])
        assert [ref.word() for _ in words] == words, (v["seed"], v["purpose"])


def test_uniform_draws_match_package_and_spec() -> None:
    for v in load("rng.json")["streams"]:
        seed = bytes.fromhex(v["seed"])
        for d in v["draws"]:
            package = Stream(seed, v["purpose"])
            ref = RefStream(seed, v["purpose"])
            assert [package.below(d["bound"]) for _ in d["values"]] == d["values"]
            assert [ref.uniform(d["bound"]) for _ in d["values"]] == d["values"]


def test_rejecting_draws_match_package_and_spec() -> None:
    cases = load("rng.json")["rejecting_draws"]
    assert cases
    for v in cases:
        seed = bytes.fromhex(v["seed"])
        bound = int(v["bound_hex"], 16)
        values = [int(x, 16) for x in v["values_hex"]]
        package = Stream(seed, v["purpose"])
        assert [package.below(bound) for _ in values] == values
        ref = RefStream(seed, v["purpose"])
        assert [ref.uniform(bound) for _ in values] == values
        # The vector really exercises rejection: the draws took more words than values.
        used = 0
        limit = 2**64 - 2**64 % bound
        words = RefStream(seed, v["purpose"])
        accepted = 0
        while accepted < len(values):
            used += 1
            accepted += words.word() < limit
        assert used == v["words_used"] > len(values)


def test_shuffles_match_package_and_spec() -> None:
    for v in load("rng.json")["shuffles"]:
        seed = bytes.fromhex(v["seed"])
        items = list(range(v["size"]))
        Stream(seed, v["purpose"]).shuffle(items)
        assert items == v["result"]
        assert RefStream(seed, v["purpose"]).shuffle(list(range(v["size"]))) == v["result"]


def test_seed_from_number_matches_package_and_spec() -> None:
    for v in load("rng.json")["seed_from_number"]:
        assert v["text"] == f"allegra-lan/seed-from-number/{v['number']}/{v['game']}"
        assert seed_from_number(v["number"], v["game"]).hex() == v["seed"]
        assert ref_seed_from_number(v["number"], v["game"]).hex() == v["seed"]


def test_purposes_are_as_specified() -> None:
    assert deal_purpose(0) == "allegra-lan/deal/0"
    assert deal_purpose(12) == "allegra-lan/deal/12"
    assert reshuffle_purpose(2, 10) == "allegra-lan/reshuffle/2/10"


def test_package_stream_matches_spec_on_fresh_seeds() -> None:
    """Seeds and purposes no vector holds: the package and the spec agree beyond the files."""
    for n in range(12):
        seed = hashlib.sha256(f"fresh {n}".encode()).digest()[: 1 + 5 * n]
        purpose = f"allegra-lan/deal/{n}" if n % 2 else f"x\u00e9{n}"
        package = Stream(seed, purpose)
        ref = RefStream(seed, purpose)
        for bound in (1, 3, 7, 120, 160, 2**63 + 1, 2**64 - 1):
            assert package.below(bound) == ref.uniform(bound)
        items = list(range(37))
        Stream(seed, purpose).shuffle(items)
        assert items == RefStream(seed, purpose).shuffle(list(range(37)))


# ----------------------------------------------------------------- deck-*.json


@pytest.mark.parametrize("variant", ["allegra", "grande"])
def test_unshuffled_deck_and_ruleset(variant: str) -> None:
    v = load(f"deck-{variant}.json")
    rs = ruleset_for(variant)
    assert v["variant"] == variant
    assert v["ruleset"] == rs.to_dict()
    assert v["unshuffled"] == ref_unshuffled(variant)
    assert [engine_value(x) for x in v["unshuffled"]] == rs.deck_values()
    assert len(v["unshuffled"]) == rs.deck_size == (120 if variant == "allegra" else 160)


def test_custom_card_counts_ascending_zero_counts_and_jokers_last() -> None:
    """PROTOCOL.md: values ascending as `card_counts` lists them, zero counts add nothing,
    Jokers come last; a list out of order is refused (one deck, one description)."""
    counts = [[-2, 3], [5, 1], [7, 0], [13, 2]]
    rs = ruleset_from_dict({"variant": "grande", "card_counts": counts, "jokers": 2})
    unshuffled: list[Value] = [-2, -2, -2, 5, 13, 13, "J", "J"]
    assert rs.deck_values() == [engine_value(v) for v in unshuffled]
    seed = seed_from_number(3)
    expected = RefStream(seed, "allegra-lan/deal/0").shuffle(unshuffled)
    assert SeededCards(rs, seed).deck(0) == [engine_value(v) for v in expected]
    with pytest.raises(RulesetError, match="ascending"):
        ruleset_from_dict({"variant": "grande", "card_counts": [[13, 2], [-2, 3]]})
    with pytest.raises(RulesetError, match="ascending"):
        ruleset_from_dict({"variant": "grande", "card_counts": [[5, 2], [5, 3]]})


@pytest.mark.parametrize("variant", ["allegra", "grande"])
def test_round_decks_match_package_and_spec(variant: str) -> None:
    rs = ruleset_for(variant)
    deals = load(f"deck-{variant}.json")["deals"]
    assert {d["round"] for d in deals} == {0, 1, 2}
    for d in deals:
        seed = bytes.fromhex(d["seed"])
        assert d["purpose"] == deal_purpose(d["round"])
        assert SeededCards(rs, seed).deck(d["round"]) == [engine_value(x) for x in d["deck"]]
        assert ref_deck(variant, seed, d["round"]) == d["deck"]


@pytest.mark.parametrize("variant", ["allegra", "grande"])
def test_deal_tables_match_spec(variant: str) -> None:
    rs = ruleset_for(variant)
    for d in load(f"deck-{variant}.json")["deals"]:
        tables = d["tables"]
        assert [t["players"] for t in tables] == list(range(rs.min_players, rs.max_players + 1))
        for t in tables:
            ref = ref_deal(variant, t["players"], d["round"])
            assert (t["dealer"], t["starter"]) == (ref.dealer, ref.starter)
            assert [x["ids"] for x in t["displays"]] == ref.ids
            for x in t["displays"]:
                assert x["values"] == [[d["deck"][i] for i in row] for row in x["ids"]]
            assert t["first_discard"] == {"card": ref.first_discard,
                                          "value": d["deck"][ref.first_discard]}
            assert (t["deck_next"], t["deck_left"]) == (ref.deck_next, ref.deck_left)


def _reveal_all(state: State) -> State:
    while state.phase is Phase.REVEAL:
        state = apply(state, legal_moves(state)[0])
    return state


def _random_move(state: State, stream: Stream) -> Move:
    moves = legal_moves(state)
    kinds = sorted({type(m).__name__ for m in moves})
    kind = kinds[stream.below(len(kinds))]
    same = [m for m in moves if type(m).__name__ == kind]
    return same[stream.below(len(same))]


def _check_table(state: State, d: dict[str, Any], t: dict[str, Any]) -> None:
    """The engine's state at a round's start against one deal table of the vectors."""
    assert state.round_no == d["round"]
    assert state.dealer == t["dealer"]
    decision = to_act(state)
    assert decision is not None and decision.seat == t["starter"] and decision.kind == "reveal"
    for x in t["displays"]:
        g = state.grids[x["seat"]]
        ids = [[g.at(r, c) for c in range(g.cols)] for r in range(g.rows)]
        assert ids == x["ids"]
        assert [[state.source.value(state.round_no, i) for i in row] for row in ids] == [
            [engine_value(v) for v in row] for row in x["values"]]
    assert not state.up and not state.discard
    state = _reveal_all(state)
    first = t["first_discard"]
    assert state.discard == [first["card"]]
    assert state.known[first["card"]] == engine_value(first["value"])
    assert state.deck[-1] == t["deck_next"]
    assert len(state.deck) == t["deck_left"]


@pytest.mark.parametrize("variant", ["allegra", "grande"])
def test_engine_deals_round_zero_as_the_vectors(variant: str) -> None:
    rs = ruleset_for(variant)
    for d in load(f"deck-{variant}.json")["deals"]:
        if d["round"] != 0:
            continue
        for t in d["tables"]:
            _check_table(new_game(rs, t["players"], bytes.fromhex(d["seed"])), d, t)


@pytest.mark.parametrize("variant", ["allegra", "grande"])
def test_engine_deals_later_rounds_as_the_vectors(variant: str) -> None:
    """Play whole rounds (moves picked by a seeded stream) and meet rounds 1 and 2 as dealt."""
    rs = ruleset_for(variant)
    later = [d for d in load(f"deck-{variant}.json")["deals"] if d["round"] > 0]
    assert later
    seed = bytes.fromhex(later[0]["seed"])
    assert all(d["seed"] == later[0]["seed"] for d in later)
    for players in range(rs.min_players, rs.max_players + 1):
        state = new_game(rs, players, seed)
        picker = Stream(b"test-vectors", f"later rounds {variant} {players}")
        for d in later:
            table = next(t for t in d["tables"] if t["players"] == players)
            for _ in range(20000):
                if state.round_no == d["round"]:
                    break
                state = apply(state, _random_move(state, picker))
            _check_table(state, d, table)


# ----------------------------------------------------------------- reshuffle.json


def test_reshuffles_match_package_and_spec() -> None:
    cases = load("reshuffle.json")["cases"]
    assert {c["variant"] for c in cases} == {"allegra", "grande"}
    for c in cases:
        seed = bytes.fromhex(c["seed"])
        rs = ruleset_for(c["variant"])
        assert c["purpose"] == reshuffle_purpose(c["round"], c["count"])
        assert c["kept"] == c["pile"][-1]
        source = SeededCards(rs, seed)
        assert source.reshuffle(c["round"], c["count"], c["pile"][:-1]) == c["new_deck"]
        assert ref_reshuffle(seed, c["round"], c["count"], c["pile"]) == c["new_deck"]
        assert [source.value(c["round"], i) for i in c["new_deck"]] == [
            engine_value(v) for v in c["new_deck_values"]]
        deck = ref_deck(c["variant"], seed, c["round"])
        assert [deck[i] for i in c["new_deck"]] == c["new_deck_values"]


def _hoarding_move(state: State) -> Move:
    """Draw from the deck and lay the card on a face-up card, so the deck runs out (R8)."""
    moves = legal_moves(state)
    if state.phase is Phase.DRAW and DrawFromDeck() in moves:
        return DrawFromDeck()
    if state.phase is Phase.PLAY:
        card = state.hand[0][0]
        for sl in area_slots(state, state.active):
            m = Place(card, sl)
            if m in moves and state.grids[sl.seat].at(sl.row, sl.col) in state.up:
                return m
    turn_ups = [m for m in moves if isinstance(m, TurnUp)]
    return (turn_ups or moves)[0]


@pytest.mark.parametrize("variant,players", [("allegra", 2), ("allegra", 4), ("grande", 2)])
def test_engine_reshuffles_as_the_spec(variant: str, players: int) -> None:
    """Three reshuffles of a hoarding game (it keeps its closed cards closed, so the deck runs
    out again and again): the pile but its top, shuffled by the spec, becomes the deck."""
    rs = ruleset_for(variant)
    seed = seed_from_number(5)
    state = new_game(rs, players, seed)
    decks = {r: ref_deck(variant, seed, r) for r in range(rs.rounds)}
    seen = 0
    for _ in range(3000):
        if seen == 3 or to_act(state) is None:
            break
        move = _hoarding_move(state)
        after = apply(state, move)
        if any(isinstance(e, Reshuffled) for e in after.effects):
            assert not state.deck and len(state.discard) >= 2
            assert after.reshuffles == state.reshuffles + 1
            new_deck = ref_reshuffle(seed, state.round_no, after.reshuffles, state.discard)
            assert isinstance(move, DrawFromDeck)
            assert after.hand[-1][0] == new_deck[0]
            assert after.deck == list(reversed(new_deck[1:]))
            assert after.discard == [state.discard[-1]]
            assert after.known[new_deck[0]] == engine_value(decks[state.round_no][new_deck[0]])
            seen += 1
        state = after
    assert seen == 3


# ----------------------------------------------------------------- the document and the script


def test_protocol_examples_are_taken_from_the_vectors() -> None:
    """Every full hex word or seed in "Seed to deck" appears in a vector file."""
    text = PROTOCOL.read_text(encoding="utf-8")
    section = text[text.index("## Seed to deck"):text.index("## Canonical msgpack")]
    tokens = set(re.findall(r"\b[0-9a-f]{64}\b|\b[0-9a-f]{16}\b", section))
    assert len(tokens) >= 10
    corpus = "".join(p.read_text(encoding="utf-8") for p in sorted(VECTORS.rglob("*.json")))
    missing = sorted(t for t in tokens if t not in corpus)
    assert not missing


def test_make_vectors_check_reproduces_committed_files() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "protocol" / "make_vectors.py"), "--check"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
