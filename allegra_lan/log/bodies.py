"""One schema per event body kind: what `Table` checks before it folds an event in.

A signed event can still carry any body its author chose; before these
schemas, each reader of a body guessed its shape, and a `give` whose knock
was an array crashed the fold (issue 9, finding 2). Every kind the Table
folds has its body schema here, and `check_body` is the one place it is
checked; the readers behind it (ceremony, moves, takeover) then judge the
meaning (a reveal matching its commitment, a move being legal), not the form.

The bounds are those of the log format (PROTOCOL.md, "The log of a game"):
at most 16 seats, names of at most 64 bytes, slots of three small integers.
"""

from __future__ import annotations

from typing import Any

from .ceremony import MAX_NAME, NONCE_LEN
from .knock import MAX_KNOCK, SIG_LEN
from .results import MAX_SCORE, MAX_TIME, MIN_SCORE, MIN_TIME, RESULT
from .schema import KEY, SEAT, AnyMap, Array, Bytes, Int, Map, OneOf, SchemaError, Spec, Text, Tuple

MAX_SEATS = 16
SMALL = Int(0, 255)  # a row or a column
SLOT = Tuple((SEAT, SMALL, SMALL))  # [seat, row, col]
CARD = Int(0, (1 << 32) - 1)  # a card id (the engine says whether it is in hand)
NAME = Text(MAX_NAME, lo=1, line=True)
TIME = Int(MIN_TIME, MAX_TIME)  # ms since the Unix epoch, UTC (log/results.py)
SCORE = Int(MIN_SCORE, MAX_SCORE)

SETUP_BODIES: dict[str, Spec] = {
    "genesis": Map({
        "table": NAME,
        "ruleset": AnyMap(32),
        "seats": Array(Map({"name": NAME, "key": KEY}), MAX_SEATS, lo=1),
        # The start time marks a log of this version (signed results); an older one has none.
        "started": TIME,
        # Named only for the fair deal (docs/fairdeal.md); a seeded game's genesis has none.
        "deal": OneOf(("fair",)),
    }, optional=frozenset({"started", "deal"})),
    "accept": Map({}),
    "commit": Map({"commit": Bytes(32)}),
    "reveal": Map({"nonce": Bytes(NONCE_LEN)}),
}

# How a refusal words a setup body of the wrong form (before the field at fault).
SETUP_WORDS: dict[str, str] = {
    "genesis": "a genesis body is {table, ruleset, seats[, started][, deal]}",
    "accept": "an accept body is empty",
    "commit": "a commit body is {commit: 32 bytes}",
    "reveal": f"a reveal body is {{nonce: {NONCE_LEN} bytes}}",
}

MOVE_BODIES: dict[str, Spec] = {
    "turn_up": Map({"at": SLOT}),
    "draw_deck": Map({}),
    "take_discard": Map({}),
    "place": Map({"at": SLOT, "card": CARD}),
    "discard": Map({"card": CARD}),
    "swap": Map({"a": SLOT, "b": SLOT}),
    "peek_line": Map({"axis": OneOf(("row", "col")), "index": SMALL}),
    "peek_card": Map({"at": SLOT}),
    "replace_open": Map({"at": SLOT}),
    # A give without its knock is named by the knock's own check (log/knock.py).
    "give": Map({"knock": Bytes(SIG_LEN + 1, MAX_KNOCK), "to": SEAT}, optional=frozenset({"knock"})),
    "exchange": Map({"at": SLOT, "take": SLOT}),
}

TAKEOVER_BODY: Spec = Map({
    # Empty lists pass here so that the takeover rules name what is missing.
    "seats": Array(Tuple((SEAT, KEY)), MAX_SEATS - 1),
    "signs": Array(Tuple((SEAT, Bytes(64))), MAX_SEATS - 1),
    # Fair deal only: [holder, dealer, piece] for the taken seat's escrow (deal/escrow.py),
    # one piece from every seat that stays, so every peer recovers the taken seat's secret.
    "release": Array(Tuple((SEAT, SEAT, Bytes(32))), MAX_SEATS - 1),
}, optional=frozenset({"release"}))

# A seat's signed result of a round (log/results.py): the one schema of its body.
RESULT_BODY: Spec = Map({
    "round": Int(0, 98),  # 0-based; a ruleset has at most 99 rounds
    "hash": Bytes(16),  # the state hash after the round-ending move
    "scores": Array(SCORE, MAX_SEATS, lo=1),  # the round's scores per seat (after doubling)
    "totals": Array(SCORE, MAX_SEATS, lo=1),  # the game's totals per seat after the round
    "at": TIME,  # the signer's clock
})

BODIES: dict[str, Spec] = {**SETUP_BODIES, **MOVE_BODIES, "takeover": TAKEOVER_BODY,
                           RESULT: RESULT_BODY}


def check_body(kind: str, body: Any) -> None:
    """SchemaError (naming the field) unless `body` has the form of a `kind` body; an
    unknown kind is a SchemaError too, so this never raises anything else."""
    spec = BODIES.get(kind)
    if spec is None:
        raise SchemaError("", f"there is no event kind {kind!r}")
    spec.check(body)


__all__ = ["BODIES", "SETUP_BODIES", "SETUP_WORDS", "MOVE_BODIES", "TAKEOVER_BODY", "RESULT_BODY",
           "check_body", "SLOT", "TIME"]
