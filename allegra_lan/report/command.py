"""`allegra replay report FILE|DIR... --out SITE`: the run of the command, one line per problem."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from allegra_lan.files import WriteFailed
from allegra_lan.report.args import DEFAULT_TITLE
from allegra_lan.tools import ToolError, files_and_jobs, prog_of, usage_error
from allegra_lan.tools.players import PlayersError, players_option
from allegra_lan.tools.verify import verify_readable

if TYPE_CHECKING:
    from allegra_lan.report.model import Site

PROG = "allegra replay report"


def run_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Exit 0 when the site was written; 2 for bad arguments, a SITE that is not a folder, an
    unusable players file, or a page that cannot be written (nothing more is done), and 2 too
    when a file is not a replay at all: it is named on stderr and on the page, and the site
    is still written from the others, as `replay standings` still ranks them."""
    from allegra_lan.report.build import ReportError, build_site
    from allegra_lan.report.write import SiteError, check_site

    prog = prog_of(args, PROG)
    folder = str(args.out)
    try:
        check_site(folder)
        paths, jobs = files_and_jobs(args)
    except (SiteError, ToolError) as e:
        return usage_error(err, prog, str(e))
    try:
        players, label = players_option(args)
    except PlayersError as e:
        return usage_error(err, prog, str(e))
    verdicts, not_replays = verify_readable(paths, jobs, prog, err)
    unread = [f"FAIL {v.path}  {v.reason}" for v in not_replays]
    title = getattr(args, "title", None) or DEFAULT_TITLE
    try:
        site = build_site(verdicts, players, title=title, players_label=label, unreadable=unread)
    except ReportError as e:
        return usage_error(err, prog, str(e))
    status = publish(site, folder, prog, out, err)
    return status if status else 2 if unread else 0


def publish(site: Site, folder: str, prog: str, out: TextIO, err: TextIO) -> int:
    """Render `site` into `folder` and say so in a line: 0, or 2 with the one line of a
    folder or page that cannot be written. Every report (replay's, a tournament's) ends so."""
    from allegra_lan.report.render import INDEX, render_site
    from allegra_lan.report.write import SiteError, write_site

    try:
        written = write_site(folder, render_site(site))
    except (SiteError, WriteFailed) as e:
        return usage_error(err, prog, str(e))
    games = len(site.games)
    out.write(f"wrote {written[0].parent / INDEX} and {games} game page{'s' if games != 1 else ''} "
              f"({site.summary})\n")
    out.flush()
    err.flush()
    return 0


__all__ = ["PROG", "run_report", "publish"]
