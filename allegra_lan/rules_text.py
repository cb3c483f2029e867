"""The rules for people: each variant in plain words, with small drawn examples.

Pure text (no terminal, no engine state): `allegra rules` prints it and the play
client's rules page (key `r`) shows it. The words follow docs/rules.md and the
rulings it names (R-numbers in the comments, never in the text a player reads);
the numbers that a ruleset can change (rounds, who may knock, doubling, the
Joker's value) are read from the variant's default ruleset, so the text says
what the engine does.
"""

from __future__ import annotations

import textwrap

from allegra_lan.rules import Variant, ruleset_for

# A paragraph is wrapped to the width; a block starting with "|" is drawn as it is
# (an example), the "|" removed.


def _doubling(rs: object) -> str:
    if not getattr(rs, "double_ender", True):
        return "The player who ended the round scores their sum like everybody else."
    only_pos = getattr(rs, "double_only_positive", True)
    return ("Why end a round early? To catch the others with closed cards. But if the player "
            "who ended the round does not have the lowest sum of that round (a tie is not "
            "lowest), their sum is doubled"
            + (" (only when it is above 0)." if only_pos else "."))


def _common_start(title: str, low: int, high: int, rounds: int, grid: str) -> list[str]:
    return [
        f"{title}: THE RULES",
        f"Aim: the lowest total wins. Cards count their value ({low} to {high}); after "
        f"{rounds} rounds the player with the lowest total wins (equal totals share the win).",
        f"Each player has a display of {grid}, dealt face down (? on the screen). At the "
        "start of a round everybody turns up two of their cards.",
    ]


def _allegra(rs: object) -> list[str]:
    knock_min = getattr(rs, "knock_min_players", 3)
    who_knocks = ("any other player" if knock_min <= 2
                  else f"any other player (at a table of {knock_min} or more players)")
    return _common_start("ALLEGRA", -1, 11, getattr(rs, "rounds", 3), "12 cards in 3 rows of 4") + [
        "YOUR AREA. You play in your area: your own four columns and, on their left, the "
        "rightmost column of your left neighbour (the next player to play). That column is "
        "shared: it is in your area and in theirs, and your own rightmost column is likewise "
        "in the area of your right neighbour. A shared card counts for both players who have "
        "it in their area. On the screen the neighbour's column is drawn left of yours, set "
        "off by | and named after its owner:",
        "|   ann  | 1  2  3  4        (ann's column, then yours)\n"
        "|    7   | 7  7  ?  2   <- three 7s side by side: cleared\n"
        "|    ?   | 4  ?  ?  0\n"
        "|    1   | 9  ?  5  ?",
        "A TURN. Take the top card of the discard pile and put it in place of any card of "
        "your area (the replaced card goes on the discard pile); or draw the top card of the "
        "deck: put it in place of a card of your area, or discard it and turn up one closed "
        "card of your area.",
        "CLEARING. Whenever three or more equal face-up cards lie side by side in a row of an "
        "area (the neighbour's card included) or in a column, they are cleared at once: they "
        "leave the round and count nothing. A closed card or an empty place (.) breaks the "
        "line. Empty places stay empty.",
        f"KNOCKING. When a player draws from the deck, {who_knocks} may knock: they want that "
        "card. The drawing player may ignore it, or give the card to one knocker. The knocker "
        "puts it in place of a card of their area and holds the card it replaced; the giver "
        "then takes any card of the knocker's area and puts it in place of a card of their "
        "own area (that card is discarded); the knocker's held card goes into the hole. In "
        "the client: y knocks when the knock window opens, n lets it pass; the giver presses "
        "the knocker's seat number.",
        "END OF A ROUND. At the end of a turn, when a player has no closed card left in their "
        "own display (cleared places count as done), that player ends the round: every other "
        "player has one more turn. Careful: another player's move in a shared column can turn "
        "up your last closed card, and then it is you who ended the round. Then all cards are "
        "turned up and each player scores the cards of their area.",
        _doubling(rs),
    ]


def _grande(rs: object) -> list[str]:
    joker = getattr(rs, "joker_value", 0)
    return _common_start("ALLEGRA Grande", -2, 13, getattr(rs, "rounds", 3),
                         "16 cards in 4 rows of 4 (with two players, 20 in 4 rows of 5)") + [
        "You play in your own display only: no shared columns, no knocking.",
        "A TURN. Draw two cards one after the other and play each: from the deck, from the "
        "discard pile, or the first from the discard pile and the second from the deck (once "
        "a card came from the deck, the second comes from the deck too). A player with only "
        "one closed card left draws one card. Play a card by putting it in place of any card "
        "of your display, open or closed (the replaced card is discarded); a card from the "
        "deck may instead be discarded, and then you turn up one closed card. A card from "
        "the discard pile must be placed. The second card may replace the first one "
        "(dodging).",
        "SWAP. Instead of drawing, swap two cards of your display (each keeps its face), then "
        "turn up one closed card.",
        "CLEARING. Whenever three or more equal face-up cards lie side by side in a row or a "
        "column, they are cleared at once, even if you hoped for a fourth. A row or column "
        "left empty closes up, and new lines of three can then clear too: a chain reaction.",
        "|  3  4  3  3     the 4 is replaced by a 3:\n"
        "|  3  3  3  3  -> all four 3s are cleared",
        "ACTION CARDS work only when drawn from the deck and discarded at once (placed, taken "
        "from the discard pile or turned up, they are only their value):",
        "* -2: look in secret at every closed card of one row or column, then turn up one "
        "closed card.",
        "* 5: look in secret at one closed card, then turn up one closed card.",
        "* 13: discard one face-up card of your display; the deck's top card goes in its "
        "place, closed. No card is turned up for the rest of that turn.",
        f"* J, the Joker: matches any value, has no action and counts {joker}.",
        "|  6  J  6  1  -> the Joker joins the 6s: three cards cleared",
        "END OF A ROUND. At the end of a turn, when a player has no closed card left (cleared "
        "places count as done), that player ends the round: every other player has one more "
        "turn. Then all cards are turned up and each player scores their display.",
        _doubling(rs),
    ]


def rules_text(variant: str, width: int = 78) -> str:
    """The rules of `variant` ("allegra" or "grande") for people, wrapped to `width` columns
    (drawn examples are kept as drawn). ValueError, one line, for an unknown variant."""
    rs = ruleset_for(variant)  # RulesetError (a ValueError) names a bad variant
    width = max(20, width)
    blocks = _allegra(rs) if rs.variant is Variant.ALLEGRA else _grande(rs)
    out: list[str] = []
    for i, block in enumerate(blocks):
        if i:
            out.append("")
        if block.startswith("|"):
            out.extend(line[1:].rstrip()[:width] for line in block.split("\n"))
        elif block.startswith("* "):  # a list item: its lines hang under its first word
            if out and out[-1] == "" and i > 0 and blocks[i - 1].startswith("* "):
                out.pop()
            out.extend(textwrap.wrap(block[2:], width, initial_indent="  ",
                                     subsequent_indent="      "))
        else:
            out.extend(textwrap.wrap(block, width) or [""])
    return "\n".join(out) + "\n"


__all__ = ["rules_text"]
