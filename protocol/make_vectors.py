"""Regenerate the seed-to-deck test vectors of PROTOCOL.md from the package, or check them.

    python protocol/make_vectors.py            # write protocol/vectors/*.json
    python protocol/make_vectors.py --check    # exit 1 if a committed file differs

The committed files are the contract that every implementation (and every
later version of this one) is checked against, so `--check` compares bytes
and never rewrites: a difference means the package no longer shuffles as the
protocol says, and it is the package that must be mended, not the vectors.
Regenerate only on a deliberate, versioned change of the protocol.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from allegra_lan.rules import JOKER, Ruleset, TurnUp, apply, legal_moves, new_game, ruleset_for
from allegra_lan.rules.cards import SeededCards
from allegra_lan.rules.engine import _start_round
from allegra_lan.rules.rng import Stream, deal_purpose, reshuffle_purpose, seed_from_number
from allegra_lan.rules.state import Phase, State

VECTORS = Path(__file__).resolve().parent / "vectors"

WORDS = 16  # two blocks: the second shows the counter moving on
DRAWS = 20

# Seeds of several lengths (the stream takes 1 to 64 bytes) and of the game size (32).
STREAM_SEEDS: tuple[bytes, ...] = (
    seed_from_number(0),
    seed_from_number(1),
    bytes(32),
    bytes([1]),
    bytes(range(64)),
)
STREAM_PURPOSES: tuple[str, ...] = (
    deal_purpose(0),
    deal_purpose(1),
    reshuffle_purpose(0, 1),
    "",
    "allegra-lan/t\u00e9st",  # the length byte counts UTF-8 bytes, not characters
)
SMALL_BOUNDS: tuple[int, ...] = (1, 2, 6, 120, 160)
# Bounds that reject often: 2**63 + 1 rejects about half the words, 2**62 + 1
# about a quarter and then reduces the accepted word modulo the bound.
REJECTING_BOUNDS: tuple[int, ...] = ((1 << 63) + 1, (1 << 62) + 1)

DECK_SEEDS: tuple[bytes, ...] = (
    seed_from_number(0),
    seed_from_number(1),
    seed_from_number(7, 3),
    bytes(32),
    bytes(range(32)),
)
LATER_ROUNDS: tuple[int, ...] = (1, 2)  # dealt for the first deck seed only

SEED_NUMBERS: tuple[tuple[int, int], ...] = ((0, 0), (1, 0), (1, 1), (7, 3), (2026, 0), (123456789, 2))


@dataclass(frozen=True)
class PileCase:
    """A discard pile (card ids, bottom first) that must be reshuffled (R8)."""

    variant: str
    seed: bytes
    round_no: int
    count: int
    pile: tuple[int, ...]


RESHUFFLES: tuple[PileCase, ...] = (
    PileCase("allegra", seed_from_number(0), 0, 1, (24, 3, 25, 26)),
    PileCase("allegra", seed_from_number(0), 0, 2, (24, 3, 25)),
    PileCase("allegra", seed_from_number(0), 0, 3, (61, 80)),
    PileCase("allegra", seed_from_number(1), 2, 1, (
        48, 5, 49, 50, 17, 51, 52, 53, 30, 54, 55, 2, 56, 57, 58, 59, 41, 60, 61,
        62, 63, 11, 64, 65, 66, 67, 68, 69, 70, 33, 71, 72, 73,
    )),
    PileCase("grande", seed_from_number(0), 0, 1, tuple(range(32, 72))),
    PileCase("grande", seed_from_number(0), 1, 2, (
        64, 12, 65, 66, 3, 67, 68, 69, 70, 71, 7, 72, 73, 74, 75, 76, 77, 78, 79, 80,
    )),
    PileCase("grande", bytes(32), 0, 1, tuple(range(159, 80, -1))),
)


def hex_word(w: int) -> str:
    return f"{w:016x}"


def card_value(v: int) -> int | str:
    """Values as the vectors write them: integers, and "J" for a Joker."""
    return "J" if v == JOKER else v


def block_data(purpose: str, counter: int) -> bytes:
    p = purpose.encode("utf-8")
    return bytes([len(p)]) + p + counter.to_bytes(8, "big")


def draws(seed: bytes, purpose: str, bound: int) -> tuple[list[int], int]:
    """`DRAWS` uniform integers below `bound` from a fresh stream, and the words they used.

    The values come from the package's `Stream.below`; the word count is found
    by reading a second fresh stream word by word, and the two must agree.
    """
    stream = Stream(seed, purpose)
    values = [stream.below(bound) for _ in range(DRAWS)]
    words = Stream(seed, purpose)
    limit = (1 << 64) - ((1 << 64) % bound)
    accepted: list[int] = []
    used = 0
    while len(accepted) < DRAWS:
        w = words.word()
        used += 1
        if w < limit:
            accepted.append(w % bound)
    if accepted != values:
        raise SystemExit(f"Stream.below disagrees with Stream.word for bound {bound}")
    return values, used


def rng_vectors() -> dict[str, Any]:
    streams = []
    for seed in STREAM_SEEDS:
        for purpose in STREAM_PURPOSES:
            s = Stream(seed, purpose)
            entry: dict[str, Any] = {
                "seed": seed.hex(),
                "purpose": purpose,
                "block0_data": block_data(purpose, 0).hex(),
                "words": [hex_word(s.word()) for _ in range(WORDS)],
                "draws": [],
            }
            for bound in SMALL_BOUNDS:
                values, used = draws(seed, purpose, bound)
                entry["draws"].append({"bound": bound, "values": values, "words_used": used})
            streams.append(entry)
    rejecting = []
    for seed in STREAM_SEEDS[:2]:
        for purpose in STREAM_PURPOSES[:2]:
            for bound in REJECTING_BOUNDS:
                values, used = draws(seed, purpose, bound)
                rejecting.append({
                    "seed": seed.hex(), "purpose": purpose, "bound_hex": hex_word(bound),
                    "values_hex": [hex_word(v) for v in values], "words_used": used,
                })
    shuffles = []
    for seed in STREAM_SEEDS[:3]:
        for purpose, size in ((STREAM_PURPOSES[0], 10), (STREAM_PURPOSES[2], 52)):
            items = list(range(size))
            Stream(seed, purpose).shuffle(items)
            shuffles.append({"seed": seed.hex(), "purpose": purpose, "size": size, "result": items})
    seeds = [
        {"number": n, "game": g, "text": f"allegra-lan/seed-from-number/{n}/{g}",
         "seed": seed_from_number(n, g).hex()}
        for n, g in SEED_NUMBERS
    ]
    return {
        "about": "PROTOCOL.md, Seed to deck: the stream, uniform draws and Fisher-Yates. "
                 "words: the first 16 words (blocks 0 and 1) as 16 hex digits. "
                 "Every draws list and every shuffle starts from a fresh stream.",
        "streams": streams,
        "rejecting_draws": rejecting,
        "shuffles": shuffles,
        "seed_from_number": seeds,
    }


def _revealed(state: State) -> State:
    """Play the round-start turn-ups (R3), first closed card each time, until the pile starts."""
    while state.phase is Phase.REVEAL:
        moves = legal_moves(state)
        state = apply(state, next(m for m in moves if isinstance(m, TurnUp)))
    return state


def _table(ruleset: Ruleset, seed: bytes, round_no: int, players: int) -> dict[str, Any]:
    source = SeededCards(ruleset, seed)
    rows, cols = ruleset.dims(players)
    per = rows * cols
    dealer = round_no % players
    starter = (dealer + 1) % players
    state = new_game(ruleset, players, source=source)
    if round_no:
        # A later round is dealt by the engine's own round start, as at a round's end.
        _start_round(state, round_no)
    displays = []
    for seat, g in enumerate(state.grids):
        ids = [[g.cells[r * g.cols + c] for c in range(g.cols)] for r in range(g.rows)]
        displays.append({
            "seat": seat,
            "ids": ids,
            "values": [[card_value(source.value(round_no, i)) for i in row] for row in ids],
        })
    state = _revealed(state)
    first = state.discard[0]
    return {
        "players": players,
        "dealer": dealer,
        "starter": starter,
        "displays": displays,
        "first_discard": {"card": first, "value": card_value(source.value(round_no, first))},
        "deck_left": len(state.deck),
        "deck_next": state.deck[-1],
        "dealt": per * players,
    }


def deck_vectors(variant: str) -> dict[str, Any]:
    ruleset = ruleset_for(variant)
    deals = []
    plan = [(seed, 0) for seed in DECK_SEEDS] + [(DECK_SEEDS[0], r) for r in LATER_ROUNDS]
    for seed, round_no in plan:
        source = SeededCards(ruleset, seed)
        deals.append({
            "seed": seed.hex(),
            "round": round_no,
            "purpose": deal_purpose(round_no),
            "deck": [card_value(v) for v in source.deck(round_no)],
            "tables": [
                _table(ruleset, seed, round_no, p)
                for p in range(ruleset.min_players, ruleset.max_players + 1)
            ],
        })
    return {
        "about": "PROTOCOL.md, Seed to deck: deck[i] is the value of card id i (id 0 is the top); "
                 "\"J\" is a Joker. Each table is the deal for that many players: every seat's "
                 "display as card ids and values, rows in reading order; the first discard after "
                 "the round-start turn-ups; deck_next is the id the next draw takes.",
        "variant": variant,
        "ruleset": ruleset.to_dict(),
        "unshuffled": [card_value(v) for v in ruleset.deck_values()],
        "deals": deals,
    }


def reshuffle_vectors() -> dict[str, Any]:
    cases = []
    for case in RESHUFFLES:
        ruleset = ruleset_for(case.variant)
        source = SeededCards(ruleset, case.seed)
        shuffled = list(case.pile[:-1])
        new_deck = source.reshuffle(case.round_no, case.count, shuffled)
        cases.append({
            "variant": case.variant,
            "seed": case.seed.hex(),
            "round": case.round_no,
            "count": case.count,
            "purpose": reshuffle_purpose(case.round_no, case.count),
            "pile": list(case.pile),
            "kept": case.pile[-1],
            "new_deck": new_deck,
            "new_deck_values": [card_value(source.value(case.round_no, c)) for c in new_deck],
        })
    return {
        "about": "PROTOCOL.md, Seed to deck, Reshuffle (R8): pile is the discard pile bottom first "
                 "when a card must be taken from the empty deck; kept is its top, which stays; "
                 "new_deck lists the new deck top first (the shuffled pile but its top); "
                 "new_deck_values are their values, dealt for that round by the seed.",
        "cases": cases,
    }


def _emit(obj: Any, indent: int = 0) -> str:
    """JSON with lists of scalars on one line, so a deck reads as one row of values."""
    pad = "  " * indent
    inner = "  " * (indent + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {_emit(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if all(not isinstance(x, (dict, list)) for x in obj):
            return json.dumps(obj, separators=(", ", ": "))
        if all(isinstance(x, list) and all(not isinstance(y, (dict, list)) for y in x) for x in obj):
            return "[" + ", ".join(json.dumps(x, separators=(", ", ": ")) for x in obj) + "]"
        return "[\n" + ",\n".join(inner + _emit(x, indent + 1) for x in obj) + "\n" + pad + "]"
    return json.dumps(obj)


BUILDERS: dict[str, Callable[[], dict[str, Any]]] = {
    "rng.json": rng_vectors,
    "deck-allegra.json": lambda: deck_vectors("allegra"),
    "deck-grande.json": lambda: deck_vectors("grande"),
    "reshuffle.json": reshuffle_vectors,
}


def render(name: str) -> str:
    return _emit(BUILDERS[name]()) + "\n"


def check(directory: Path = VECTORS) -> list[str]:
    """The names of committed vector files that the package no longer reproduces."""
    problems = []
    for name in BUILDERS:
        path = directory / name
        if not path.exists():
            problems.append(f"{name}: missing")
        elif path.read_text(encoding="utf-8") != render(name):
            problems.append(f"{name}: the package's output differs from the committed file")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare the committed vectors with the package; write nothing")
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        for p in problems:
            print(p, file=sys.stderr)
        if not problems:
            print(f"{len(BUILDERS)} vector files match the package")
        return 1 if problems else 0
    VECTORS.mkdir(parents=True, exist_ok=True)
    for name in BUILDERS:
        (VECTORS / name).write_text(render(name), encoding="utf-8")
        print(f"wrote {VECTORS / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
