"""The command-line arguments of `allegra replay report`.

argparse only, so that `allegra --help` builds its whole parser without Jinja2,
the rules or the log (tests/test_cli_startup.py); report.command is imported
by the handler that runs it.
"""

from __future__ import annotations

import argparse

from allegra_lan.tool_args import jobs_arg

DEFAULT_TITLE = "Results"


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Write a static HTML site of replays into the folder SITE, to publish as it is: it "
        "works offline and without JavaScript. index.html holds the standings (as replay "
        "standings makes them: one table per variant and table size, with the ratings), the "
        "list of games (date, duration where known, players, scores per round, winner, and "
        "which files were copies, cut short or left out and why), and each game has a page "
        "game-ID.html with its round scores and a chart of the totals round by round. SITE is "
        "made if missing; only the files the report writes (index.html, style.css, "
        "game-*.html of the games counted) are replaced, anything else in SITE is left alone. "
        "Exit status 0 when the site was written; 2 for bad arguments, a SITE that is not a "
        "folder, an unusable players file, a file that is not a replay at all, or a page "
        "that cannot be written (one line on stderr)."
    )
    parser.add_argument("paths", nargs="+", metavar="FILE|DIR",
                        help="replay files, or directories searched for *.allegra files")
    parser.add_argument("--out", required=True, metavar="SITE",
                        help="the site's folder (made if missing; only the report's own files "
                             "in it are replaced)")
    parser.add_argument("--players", metavar="FILE", default=None,
                        help="who is who, as replay standings reads it (.csv or .toml)")
    parser.add_argument("--title", default=DEFAULT_TITLE, metavar="TEXT",
                        help=f"the site's title (default: {DEFAULT_TITLE!r})")
    parser.add_argument("--jobs", "-j", type=jobs_arg, default=1, metavar="N",
                        help="verify N files at once in worker processes (default: 1)")


__all__ = ["DEFAULT_TITLE", "add_report_arguments"]
