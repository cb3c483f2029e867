"""The pure rules engine of ALLEGRA and ALLEGRA Grande (no I/O, clock, threads or `random`).

    >>> from allegra_lan.rules import DecisionKind, Variant, new_game, ruleset_for, to_act
    >>> from allegra_lan.rules.rng import seed_from_number
    >>> state = new_game(ruleset_for(Variant.GRANDE), 4, seed_from_number(1))
    >>> to_act(state).kind is DecisionKind.REVEAL
    True
"""

from .cards import (
    HIDDEN, CardSource, FixedCards, NeedValues, PartialCards, PileInfo, RevealRequest,
    SeededCards, ValueConflict,
)
from .effects import Effect
from .engine import (
    IllegalMove, apply, area_slots, closed_in_display, is_over, legal_moves, needed,
    new_game, play, round_scores, to_act, winners,
)
from .moves import (
    Discard, DrawFromDeck, Exchange, Give, Move, MoveError, PeekCard, PeekLine, Place,
    ReplaceOpen, Slot, Swap, TakeDiscard, TurnUp, describe_move, move_from_dict,
    move_name, move_to_dict,
)
from .ruleset import (
    JOKER, AllegraRuleset, GrandeRuleset, Ruleset, RulesetError, Variant, ruleset_for,
    ruleset_from_dict, ruleset_with,
)
from .state import HOLE, Decision, DecisionKind, Phase, RoundResult, State, state_hash
from .view import CardView, HandCard, SeatView, full_view, view

__all__ = [
    "HIDDEN", "CardSource", "FixedCards", "NeedValues", "PartialCards", "PileInfo",
    "RevealRequest", "SeededCards", "ValueConflict", "Effect", "IllegalMove", "apply",
    "area_slots", "closed_in_display", "is_over", "legal_moves", "needed", "new_game", "play",
    "round_scores", "to_act", "winners", "Discard", "DrawFromDeck", "Exchange", "Give",
    "Move", "MoveError", "PeekCard", "PeekLine", "Place", "ReplaceOpen", "Slot", "Swap",
    "TakeDiscard", "TurnUp", "describe_move", "move_from_dict", "move_name",
    "move_to_dict", "JOKER", "AllegraRuleset", "GrandeRuleset", "Ruleset",
    "RulesetError", "Variant", "ruleset_for", "ruleset_from_dict", "ruleset_with", "HOLE",
    "Decision",
    "DecisionKind", "Phase",
    "RoundResult", "State", "state_hash", "CardView", "HandCard", "SeatView",
    "full_view", "view",
]
