"""The command-line arguments of the replay tools (verify, show, export, standings, diff).

Apart from the tools themselves so that `allegra --help` (and any other command)
builds its whole parser with argparse alone: a tool module imports the rules
engine, the log and the table, and is only imported by the handler that runs it.
"""

from __future__ import annotations

import argparse

EXPORT_FORMATS = ("jsonl", "csv")
STANDINGS_FORMATS = ("text", "csv")


def jobs_arg(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs needs a whole number, not {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be 1 or more, not {n}")
    return n


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Check replay files: signatures, the hash chain, the seed ceremony, every move's "
        "legality, and the header (players, keys, variant, game id, Result) against the log. "
        "Prints one line per file and a summary; exit status 0 if every file is OK, 1 if one "
        "failed a check, 2 if one could not be read as a replay (named on stderr)."
    )
    parser.add_argument("paths", nargs="+", metavar="FILE|DIR",
                        help="replay files, or directories searched for *.allegra files")
    parser.add_argument("--jobs", "-j", type=jobs_arg, default=1, metavar="N",
                        help="verify N files at once in worker processes (default: 1)")
    parser.add_argument("--progress", action="store_true",
                        help="show a progress bar on stderr even when it is not a terminal")


def add_show_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Show the table of a replay as text after any event: as one seat saw it, as a "
        "spectator, or with every card shown."
    )
    parser.add_argument("file", metavar="FILE", help="a replay file")
    parser.add_argument("--at", type=int, default=None, metavar="SEQ",
                        help="show the table after the event SEQ (default: the last event)")
    who_sees = parser.add_mutually_exclusive_group()
    who_sees.add_argument("--seat", type=int, default=None, metavar="N",
                          help="show what seat N saw (its own peeks included)")
    who_sees.add_argument("--all", action="store_true", dest="show_all",
                          help="show every card, closed ones too")


def add_diff_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Compare two replays' logs: the first seq where they part, both events there side by "
        "side, what differs in the state after them, and how much each log has after it. Exit "
        "status 0 if the logs are the same, 1 if they differ, 2 if a file cannot be read."
    )
    parser.add_argument("a", metavar="A", help="a replay file")
    parser.add_argument("b", metavar="B", help="another replay file")


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Write a replay as JSON lines: one object per event (seq, id, prev, author's fingerprint "
        "and name, seat, kind, body with bytes in hex, and the state hash after it). Stops with "
        "a {\"fault\": ...} line and exit status 1 at the first refused event. With --format csv: "
        "the rounds instead, one row per seat per round (game, round, seat, name, score, doubled, "
        "ender, total), for spreadsheets; a refused event is then named on stderr (exit status 1)."
    )
    parser.add_argument("file", metavar="FILE", help="a replay file")
    parser.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl",
                        help="jsonl (default: every event) or csv (every seat's score per round)")


def add_standings_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Rank finished games that verify. Files are grouped by the game id their logs sign: "
        "copies of one game (every peer writes one) count once, a copy cut short is only noted, "
        "and a game whose copies disagree is left out with the first seq where they part. One "
        "table per variant and table size, never mixed: games, wins (a shared win counts for "
        "each winner), total and mean score, sorted by wins then mean, and an openskill "
        "(Plackett-Luce) rating, its uncertainty and the conservative ordinal (rating - 3 "
        "sigma), updated game by game in time order. Players are told apart by key "
        "fingerprint, or named by --players; a seat named as a bot counts under its bot kind. "
        "Everything left out (unfinished games, files that fail verify, disputed games) is "
        "listed. Exit status 0 when the standings were made; 1 with --strict if a file failed "
        "a check or copies disagree; 2 for bad arguments, an unusable players file, or a file "
        "that is not a replay at all (named on stderr)."
    )
    parser.add_argument("paths", nargs="+", metavar="FILE|DIR",
                        help="replay files, or directories searched for *.allegra files")
    parser.add_argument("--format", choices=STANDINGS_FORMATS, default="text",
                        help="text (default) or csv; with csv the games left out go to stderr")
    parser.add_argument("--players", metavar="FILE", default=None,
                        help="who is who: a .csv of name,fingerprint lines, or a .toml with a "
                             "[players] table of name = \"FINGERPRINT\" (or a list of them); "
                             "keys it lacks are listed")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 if a file failed a check or copies of a game disagree "
                             "(unfinished games are still only listed)")
    parser.add_argument("--signed", action="store_true",
                        help="count only games whose results every seat signed (logs of the "
                             "version with signed results); the others are listed as left out")
    parser.add_argument("--jobs", "-j", type=jobs_arg, default=1, metavar="N",
                        help="verify N files at once in worker processes (default: 1)")


__all__ = [
    "EXPORT_FORMATS", "STANDINGS_FORMATS", "jobs_arg", "add_verify_arguments", "add_show_arguments",
    "add_diff_arguments", "add_export_arguments", "add_standings_arguments",
]
