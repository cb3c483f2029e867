"""The command-line arguments of `allegra tournament plan`.

argparse only, so that `allegra --help` builds the whole parser without the
scheduler or the rules (tests/test_cli_startup.py); the command itself
(`tournament.command`) is imported by the handler that runs it.
"""

from __future__ import annotations

import argparse

DEFAULT_OUT = "plan.json"


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Seat a list of players over N rounds at tables of the sizes the variant allows "
        "(ALLEGRA 2 to 6, Grande 2 to 5), each round's tables as equal as possible and as "
        "near the preferred size as the count allows, so that every two players meet as "
        "evenly as possible (then seat 0, who starts, is spread). The same seed and inputs "
        "give the same plan, byte for byte. Prints the plan (or CSV) and the spread of pair "
        "meetings, and writes the plan file (JSON) that `tournament check` reads. Exit "
        "status 0 done; 2 a bad argument, a players file that cannot be used, a count that "
        "cannot be seated, or a plan file that cannot be written (one line on stderr)."
    )
    parser.add_argument("--players", required=True, metavar="FILE",
                        help="who plays: a players file (.csv of name,fingerprint lines or .toml, "
                             "as replay standings reads) or a .txt list of one name a line")
    parser.add_argument("--rounds", required=True, type=int, metavar="N", help="rounds to plan")
    parser.add_argument("--variant", required=True, choices=["allegra", "grande"], help="the game")
    parser.add_argument("--seed", type=int, default=1, metavar="S",
                        help="the search's seed: the same seed, the same plan (default: 1)")
    parser.add_argument("--table-size", type=int, default=None, metavar="K", dest="table_size",
                        help="the preferred table size (default: 4); tables are as near it as "
                             "the count of players allows")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="FILE",
                        help=f"write the plan file here (default: {DEFAULT_OUT}; an existing file is replaced)")
    parser.add_argument("--csv", action="store_true",
                        help="print the plan as CSV (round,table,seat,player,keys); the summary "
                             "goes to stderr")


__all__ = ["add_plan_arguments", "DEFAULT_OUT"]
