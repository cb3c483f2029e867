"""The command-line arguments of `allegra tournament plan`, `check` and `standings`.

argparse only, so that `allegra --help` builds the whole parser without the
scheduler or the rules (tests/test_cli_startup.py); the command itself
(`tournament.command`) is imported by the handler that runs it.
"""

from __future__ import annotations

import argparse

from allegra_lan.tool_args import jobs_arg

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


def _check_common(parser: argparse.ArgumentParser, *, formats: bool = True) -> None:
    """What check and standings share: the plan, the players file, the files, the format."""
    parser.add_argument("paths", nargs="+", metavar="FILE|DIR",
                        help="the collected replay files, or directories searched for *.allegra files")
    parser.add_argument("--plan", required=True, metavar="FILE", help="the plan file `tournament plan` wrote")
    parser.add_argument("--players", metavar="FILE", default=None,
                        help="who is who: a players file (.csv of name,fingerprint lines or .toml) "
                             "naming keys by the plan's names; needed when the plan was made from a "
                             "list of names, which holds no keys")
    if formats:
        parser.add_argument("--format", choices=("text", "csv"), default="text",
                            help="text (default) or csv")
    parser.add_argument("--jobs", "-j", type=jobs_arg, default=1, metavar="N",
                        help="verify N files at once in worker processes (default: 1)")


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Match a folder of collected replays to the plan. Each game counts once however many "
        "copies arrived (as replay standings groups them). A game is a planned table's when "
        "its variant, its seat count and its players (by key, named through the plan's keys "
        "and --players) are the table's; a set of players planned to meet more than once takes "
        "its tables in time order. Prints every planned table (played, with the game and its "
        "files; missing; wrong players, naming who was planned and who sat; unfinished; "
        "disputed), then games not in the plan, files that fail verify (verify's line), "
        "unfinished games, copies that disagree (the seq where they part), copies cut short "
        "and keys the players file lacks. Exit status 0 every planned table has one verified, "
        "finished game of its players and nothing failed; 1 the check found something (a "
        "table missing or played by wrong players, a file that fails verify, an unfinished "
        "game, copies that disagree); 2 bad input: no such plan, a bad plan or players file, "
        "a bad argument, or a file that is not a replay at all (one line on stderr each; "
        "the other files are still checked)."
    )
    _check_common(parser)


def add_standings_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Rank the tournament by points per table: at each table a player earns the share of "
        "their opponents they beat (a lower total beats, an equal total is half), so first "
        "earns 1 and last 0 at a table of 3 as of 4. Ties in points are broken by the margin: "
        "the opponents' mean total minus the player's own, summed over the games. Shows games, "
        "points, margin and the openskill (Plackett-Luce) rating, sigma and ordinal. Only "
        "games `tournament check` matches to a planned table count; everything else is "
        "named, one line each, as check words it. Exit status 0 the standings were made "
        "(whatever was left out); 1 with --strict when anything was left out; 2 bad input: "
        "no such plan, a bad plan or players file, a bad argument, or a file that is not a "
        "replay at all (one line on stderr each; the other files are still ranked)."
    )
    _check_common(parser)
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when any planned table or collected game was left out")


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Write the tournament's static HTML site into the folder SITE (offline, no "
        "JavaScript): allegra replay report's pages of the games tournament check finds "
        "played at a planned table (standings per variant and table size with ratings, the "
        "games with their round scores, a page per game with a chart of the totals), and on "
        "the index the standings by points (as tournament standings ranks them), every "
        "planned table with its status and a link to its game, and what the check found "
        "besides (files that fail verify, games not in the plan, unfinished and disputed "
        "games). SITE is made if missing; only the files the report writes (index.html, "
        "style.css, game-*.html) are replaced. Exit status 0 the site was written, whatever "
        "the check found (tournament check gives that status); 2 bad input: no such plan, a "
        "bad plan or players file, a bad argument, a SITE that is not a folder, a page that "
        "cannot be written, or a file that is not a replay at all (one line on stderr each; "
        "the site is still written from the other files)."
    )
    _check_common(parser, formats=False)
    parser.add_argument("--out", required=True, metavar="SITE",
                        help="the site's folder (made if missing; only the report's own files in "
                             "it are replaced)")
    parser.add_argument("--title", default=None, metavar="TEXT",
                        help="the site's title (default: the tournament's variant, seed, players "
                             "and rounds)")


__all__ = ["add_plan_arguments", "add_check_arguments", "add_standings_arguments", "add_report_arguments",
           "DEFAULT_OUT"]
