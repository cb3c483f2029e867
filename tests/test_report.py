"""`allegra replay report` (issue 13, "a page to publish"): a static site an organiser puts online.

Every replay is a real signed game (tests/report_helpers.py); the site is made by the real
command in a subprocess, and its pages are read back as a browser's DOM holds them (text,
entities decoded). What the pages say is checked against the games' own final states and
round results, never against the tool's own output; tests/test_report_browser.py opens the
same kind of site in chromium.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from allegra_lan.tags import result_tags
from allegra_lan.log.replay import read_replay
from allegra_lan.report.chart import (
    DASHES, LEGEND_COLS, SHAPES, WIDTH, marker_path, nice_step, spread_labels, style_of, text_width, totals_chart,
)
from allegra_lan.report.model import GameEntry, Link, RoundRow, Seat, Section, Site
from allegra_lan.report.render import render_site
from report_helpers import Written, person, read_page, report_cli, tables_of, write_game

PEOPLE = [person(f"player{i}", i) for i in range(6)]
HOSTILE = ['<script>alert("x")</script>', "Tom & Jerry's \"table\"", "W" * 64, "</td></tr></table>"]


def winners(w: Written) -> list[int]:
    return [int(x) for x in result_tags(w.local.state)["Winners"].split()]


def standings_by_key(index_html: str) -> dict[str, tuple[int, int, int]]:
    """fingerprint: (games, wins, total), over every standings table of the index."""
    out = {}
    for rows in tables_of(read_page(index_html), "standings"):
        header = rows[0]
        for row in rows[1:]:
            cell = dict(zip(header, row))
            out[cell["Fingerprint"]] = (int(cell["Games"]), int(cell["Wins"]), int(cell["Total"]))
    return out


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Written], dict[str, Path]]:
    """A club night: four finished games (two variants), a copy and a cut copy of one, an
    unfinished game and a file whose Result was forged."""
    base = tmp_path_factory.mktemp("night")
    files = base / "collected"
    games = [
        write_game(files / "host" / "g1.allegra", PEOPLE[0:2], seed=1, table="kitchen"),
        write_game(files / "host" / "g2.allegra", PEOPLE[1:4], seed=2, table="garden", rounds=3),
        write_game(files / "guest" / "g3.allegra", PEOPLE[2:5], variant="allegra", seed=3, table="attic"),
        write_game(files / "guest" / "g4.allegra", [PEOPLE[0], PEOPLE[4]], seed=4, table="hall"),
    ]
    odd = {"copy": files / "guest" / "copy of g1.allegra",
           "cut": files / "guest" / "g1-cut.allegra",
           "unfinished": files / "host" / "unfinished.allegra",
           "forged": files / "host" / "forged.allegra"}
    shutil.copyfile(games[0].path, odd["copy"])
    write_game(odd["cut"], PEOPLE[0:2], seed=1, table="kitchen", limit=30)
    write_game(odd["unfinished"], PEOPLE[3:5], seed=5, limit=20)
    forged = write_game(odd["forged"], PEOPLE[4:6], seed=6)
    result = read_replay(forged.path).tags["Result"]
    odd["forged"].write_text(odd["forged"].read_text().replace(f'[Result "{result}"]', '[Result "0 0"]'))
    return files, games, odd


def test_the_site_holds_the_standings_and_every_game_once(night: tuple[Path, list[Written], dict[str, Path]],
                                                          tmp_path: Path) -> None:
    files, games, odd = night
    site = tmp_path / "site"
    p = report_cli(files, "--out", site, "--title", "Club night")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert p.stdout.startswith(f"wrote {site / 'index.html'} and 4 game pages")
    pages = sorted(x.name for x in site.iterdir())
    assert pages == sorted(["index.html", "style.css"] + [f"game-{g.game_id}.html" for g in games])
    index = (site / "index.html").read_text()
    page = read_page(index)
    # The standings: sums made here from the games' own final states, each game once.
    want: dict[str, list[int]] = {}
    for g in games:
        for seat, pl in enumerate(g.local.players):
            row = want.setdefault(pl.identity.fingerprint, [0, 0, 0])
            row[0] += 1
            row[1] += seat in winners(g)
            row[2] += g.local.state.totals[seat]
    got = standings_by_key(index)
    # PEOPLE[2..4] played both variants: one row per table, so sum them per key here.
    assert set(got) <= set(want)
    captions = [rows[0] for rows in tables_of(page, "standings")]
    assert len(captions) == 3  # grande 2 players, grande 3 players, allegra 3 players
    per_key: dict[str, list[int]] = {}
    for rows in tables_of(page, "standings"):
        for row in rows[1:]:
            cell = dict(zip(rows[0], row))
            acc = per_key.setdefault(cell["Fingerprint"], [0, 0, 0])
            for i, k in enumerate(("Games", "Wins", "Total")):
                acc[i] += int(cell[k])
    assert per_key == want
    # The list of games: one row per game, each links to its page, copies and the cut copy named.
    (listing,) = tables_of(page, "games")
    assert len(listing) == 1 + len(games)
    assert sorted(link for link in page.links if link.startswith("game-")) == sorted(
        f"game-{g.game_id}.html" for g in games)
    assert listing[0] == ["Date", "Game", "Players", "Scores per round", "Winner", "Verified", "Files"]
    g1_row = dict(zip(listing[0], next(r for r in listing[1:] if "kitchen" in r[1])))
    assert str(odd["copy"]) in g1_row["Files"] and str(odd["cut"]) in g1_row["Files"]
    assert g1_row["Verified"] == "yes, 2 copies agree"
    assert g1_row["Date"] == "2026.03.01"  # no Duration column: the logs hold no times
    assert g1_row["Winner"] == ", ".join(games[0].local.players[w].name for w in winners(games[0]))
    # What is left out, and why: the forged Result, the unfinished game.
    assert f"FAIL {odd['forged']} header: Result is \"0 0\"" in page.text
    assert "unfinished" in page.text and str(odd["unfinished"]) in page.text
    assert "4 games counted (and 2 more copies of them), 2 left out" in page.text


def test_each_game_page_has_the_engines_round_scores_and_a_chart_of_the_totals(
        night: tuple[Path, list[Written], dict[str, Path]], tmp_path: Path) -> None:
    files, games, _ = night
    site = tmp_path / "site"
    assert report_cli(files, "--out", site).returncode == 0
    for g in games:
        page = read_page((site / f"game-{g.game_id}.html").read_text())
        (rows,) = tables_of(page, "rounds")
        results = g.local.state.results
        assert len(rows) == 1 + len(results) + 1  # header, one row per round, the totals
        assert rows[0][1:] == [f"seat {i} {pl.name}" for i, pl in enumerate(g.local.players)]
        for r, row in zip(results, rows[1:]):
            assert row[0] == str(r.round_no + 1)
            assert [int(c.split()[0]) for c in row[1:]] == list(r.scores)
            for seat, c in enumerate(row[1:]):
                mark = c.split()[1:]
                assert mark == ((["**"] if r.doubled else ["*"]) if r.ender == seat else [])
        totals = rows[-1][1:]
        assert [int(c.split()[0]) for c in totals] == list(g.local.state.totals)
        assert [i for i, c in enumerate(totals) if "(won)" in c] == winners(g)
        # The chart: one line per seat, its end label the seat's name and final total.
        assert "svg" in page.tags and "polyline" in page.tags
        assert page.tags.count("polyline") == len(g.local.players)
        for seat, pl in enumerate(g.local.players):
            assert f"{pl.name} ({g.local.state.totals[seat]})" in page.text
        assert "index.html" in page.links and "style.css" in page.links
        assert not {"script", "iframe", "object", "embed"} & set(page.tags)


def test_a_log_that_signs_its_times_shows_its_start_and_duration(tmp_path: Path) -> None:
    """A game whose genesis signs its start and whose results sign their times: the list
    and the page show the start (UTC) and how long it took, up to the last result; an older
    log beside it keeps its Date tag."""
    ticks = iter(range(1_900_000_000_000, 1_900_000_000_000 + 10**9, 95_000))  # 95 s a result
    people = [person("ann", "timed0"), person("bob", "timed1")]
    signed = write_game(tmp_path / "in" / "signed.allegra", people, seed=31, clock=lambda: next(ticks))
    older = write_game(tmp_path / "in" / "older.allegra", people, seed=32, date="2026.03.09")
    started, ended = signed.local.table.times()
    assert started == 1_900_000_000_000 and ended is not None and ended > started
    site = tmp_path / "site"
    p = report_cli(tmp_path / "in", "--out", site)
    assert p.returncode == 0, p.stderr
    index = read_page((site / "index.html").read_text())
    (games,) = tables_of(index, "games")
    assert games[0][:2] == ["Start", "Duration"]
    took = (ended - started) // 1000
    want = f"{took // 60} min {took % 60:02d} s" if took >= 60 else f"{took} s"
    assert sum(r[0] == "2030-03-17 17:46 UTC" for r in games[1:]) == 1, games  # 1_900_000_000 s
    assert [r[1] for r in games[1:]].count(want) == 1, (games, want)
    assert any(r[0] == "2026.03.09" and r[1] == "unknown" for r in games[1:]), games
    page = read_page((site / f"game-{signed.game_id}.html").read_text())
    assert "Started" in page.text and want in page.text
    page = read_page((site / f"game-{older.game_id}.html").read_text())
    assert "which nobody signed" in page.text


def test_hostile_names_and_file_names_render_as_text(tmp_path: Path) -> None:
    people = [person(name, f"hostile{i}") for i, name in enumerate(HOSTILE)]
    files = tmp_path / "in"
    a = write_game(files / 'we<i>rd & "odd" name.allegra', people[0:2], seed=11, table=HOSTILE[3])
    b = write_game(files / "b.allegra", people[2:4], seed=12, table=HOSTILE[0])
    site = tmp_path / "site"
    title = '<img src=x onerror="alert(1)"> & co'
    p = report_cli(files, "--out", site, "--title", title)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in site.iterdir()) == sorted(
        ["index.html", "style.css", f"game-{a.game_id}.html", f"game-{b.game_id}.html"])
    for f in site.glob("*.html"):
        html = f.read_text()
        page = read_page(html)
        assert not {"script", "img"} & set(page.tags), f.name  # no name became markup
        assert title in page.text
        assert "&lt;script&gt;" in html or f.name == f"game-{a.game_id}.html"
    index = read_page((site / "index.html").read_text())
    for name in HOSTILE:
        assert name in index.text
    assert str(a.path) in index.text
    assert index.tags.count("table") == len(tables_of(index, "standings")) + 1  # no table closed early
    game = read_page((site / f"game-{a.game_id}.html").read_text())
    assert HOSTILE[0] in game.text and HOSTILE[1] in game.text
    assert any(t.startswith(HOSTILE[3]) for t in game.titles)  # the page's <title> holds it as text


def test_site_folder_is_made_refused_if_a_file_and_only_the_reports_files_are_replaced(
        night: tuple[Path, list[Written], dict[str, Path]], tmp_path: Path) -> None:
    files, games, _ = night
    plain = tmp_path / "a-file"
    plain.write_text("keep me")
    p = report_cli(files, "--out", plain)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == f"allegra replay report: error: --out {plain}: not a folder (a regular file); " \
                       "give a folder for the site\n"
    assert plain.read_text() == "keep me"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    p = report_cli(files, "--out", dangling)
    assert p.returncode == 2 and p.stderr == (
        f"allegra replay report: error: --out {dangling}: a symlink to {tmp_path / 'nowhere'}, which does "
        "not exist; make that folder or give another\n")
    site = tmp_path / "new" / "site"
    assert report_cli(files, "--out", site).returncode == 0
    mine = site / "notes.txt"
    mine.write_text("the organiser's own")
    old = site / "game-00.html"
    old.write_text("an earlier run's page")
    outside = tmp_path / "outside.html"
    outside.write_text("not the site's")
    (site / "index.html").unlink()
    (site / "index.html").symlink_to(outside)
    before = (site / f"game-{games[0].game_id}.html").read_bytes()
    (site / f"game-{games[0].game_id}.html").write_text("stale")
    assert report_cli(files, "--out", site).returncode == 0
    assert mine.read_text() == "the organiser's own" and old.read_text() == "an earlier run's page"
    assert outside.read_text() == "not the site's"  # the link was replaced, not followed
    assert not (site / "index.html").is_symlink()
    assert (site / f"game-{games[0].game_id}.html").read_bytes() == before  # the same bytes again
    assert not [x for x in site.iterdir() if ".tmp" in x.name]


def test_bad_input_is_one_line_and_exit_2(night: tuple[Path, list[Written], dict[str, Path]], tmp_path: Path) -> None:
    files, _, _ = night
    site = tmp_path / "site"
    missing = report_cli(tmp_path / "nowhere", "--out", site)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no such file" in missing.stderr
    assert not site.exists()
    bad_players = tmp_path / "players.csv"
    bad_players.write_text("alice\n")
    p = report_cli(files, "--out", site, "--players", bad_players)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "players.csv" in p.stderr
    no_out = report_cli(files)
    assert no_out.returncode == 2 and "--out" in no_out.stderr and no_out.stderr.count("\n") == 1
    # A file that is not a replay at all: named on stderr and on the page; the others still published.
    folder = tmp_path / "with-junk"
    shutil.copytree(files, folder)
    (folder / "junk.allegra").write_text("not a replay")
    junk = report_cli(folder, "--out", site)
    assert junk.returncode == 2 and junk.stderr.count("\n") == 1 and "junk.allegra" in junk.stderr
    index = read_page((site / "index.html").read_text())
    assert str(folder / "junk.allegra") in index.text
    assert "4 games counted (and 2 more copies of them), 3 left out" in index.text
    assert len(tables_of(index, "games")[0]) == 5


def test_a_players_file_names_the_players_on_every_page(night: tuple[Path, list[Written], dict[str, Path]],
                                                        tmp_path: Path) -> None:
    files, games, _ = night
    who = tmp_path / "players.csv"
    who.write_text("".join(f"Ann {i},{pl.identity.fingerprint}\n" for i, pl in enumerate(PEOPLE[:3])))
    site = tmp_path / "site"
    assert report_cli(files, "--out", site, "--players", who).returncode == 0
    index = read_page((site / "index.html").read_text())
    names = {row[1] for rows in tables_of(index, "standings") for row in rows[1:]}
    assert {"Ann 0", "Ann 1", "Ann 2"} <= names
    assert f"Keys not in {who}" in index.text and PEOPLE[3].identity.fingerprint in index.text
    g1 = read_page((site / f"game-{games[0].game_id}.html").read_text())
    assert "seat 0 Ann 0" in tables_of(g1, "rounds")[0][0]


def test_help_says_what_is_written_and_what_is_left_alone() -> None:
    p = report_cli("--help")
    assert p.returncode == 0
    flat = " ".join(p.stdout.split())
    assert "only the files the report writes (index.html, style.css, game-*.html of the games counted) " \
           "are replaced, anything else in SITE is left alone" in flat
    assert "Exit status 0 when the site was written; 2 for bad arguments" in flat


# ------------------------------------------------------------------ the model and the chart, in-process


def entry(names: list[str], totals: list[list[int]], gid: str = "ab") -> GameEntry:
    rounds = [RoundRow(i + 1, [t - (totals[i - 1][s] if i else 0) for s, t in enumerate(row)], row, 0, False)
              for i, row in enumerate(totals)]
    last = totals[-1]
    g = GameEntry(gid, f"game-{gid}.html", f"{len(names)} players", "t", "2026.01.01", "", "",
                  [Seat(n, f"FP{i}") for i, n in enumerate(names)], rounds, last,
                  [last.index(min(last))], "verified", ["a.allegra"], [])
    g.chart = totals_chart(names, totals, "totals")
    return g


def test_extra_sections_render_on_the_index_with_links_and_escaped_text() -> None:
    """What a tournament report adds: a table of its own, with links to game pages, no template."""
    g = entry(["a", "b"], [[3, 5], [10, 7]])
    sec = Section("Tournament points", ["Player", "Points", "Game"],
                  [["<b>ann</b>", 7, Link("round 1 table 1", g.page)], ["bob", 3.5, "missing"]],
                  notes=["rank points: 3, 1 & ties by score"], anchor="points")
    site = Site("T", "1 game counted, 0 left out", [], [g], [], [], "the players file", sections=[sec])
    files = render_site(site)
    page = read_page(files["index.html"].decode())
    (rows,) = [rows for c, rows in page.tables if c == "section points"]
    assert rows == [["Player", "Points", "Game"], ["<b>ann</b>", "7", "round 1 table 1"], ["bob", "3.5", "missing"]]
    assert "b" not in page.tags and "#points" in page.links and g.page in page.links
    assert "rank points: 3, 1 & ties by score" in page.text


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.text(min_size=1, max_size=64), min_size=2, max_size=6),
       title=st.text(max_size=200))
def test_any_text_as_names_and_title_renders_as_that_text_and_never_as_markup(names: list[str], title: str) -> None:
    totals = [[i * 3 + 1 for i in range(len(names))], [i * 5 + 2 for i in range(len(names))]]
    g = entry(names, totals)
    site = Site(title, "1 game counted, 0 left out", [], [g], [], [], "the players file")
    files = render_site(site)
    plain = render_site(Site("T", "1 game counted, 0 left out", [], [entry(["a"] * len(names), totals)],
                             [], [], "the players file"))
    for name in ("index.html", g.page):
        page = read_page(files[name].decode())
        assert page.tags == read_page(plain[name].decode()).tags  # the same markup whatever the text
        for n in names + [title]:
            flat = " ".join(n.split())
            assert flat in page.text or not flat


@settings(max_examples=200, deadline=None)
@given(ys=st.lists(st.floats(0, 300), max_size=16))
def test_end_labels_keep_their_order_and_never_overlap(ys: list[float]) -> None:
    placed = spread_labels(ys, 0.0, 300.0)
    order = sorted(range(len(ys)), key=lambda i: (ys[i], i))
    at = [placed[i] for i in order]
    assert all(b - a >= 15.0 - 1e-9 for a, b in zip(at, at[1:]))
    if len(ys) * 15.0 <= 300.0:
        assert all(0.0 - 1e-9 <= y <= 300.0 + 1e-9 for y in placed)


def test_every_seat_up_to_16_differs_in_marker_or_dash_and_markers_are_drawn() -> None:
    styles = [style_of(s) for s in range(16)]
    assert len({(shape, dash) for _, dash, shape in styles}) == 16
    assert {shape for _, _, shape in styles} == set(SHAPES) and {dash for _, dash, _ in styles} == set(DASHES)
    for shape in SHAPES:
        assert re.fullmatch(r"M [-\d. MLHVAZ]+", marker_path(shape, 10, 10))
    with pytest.raises(ValueError):
        marker_path("star", 0, 0)


@settings(max_examples=200, deadline=None)
@given(span=st.floats(0, 1e6))
def test_the_axis_step_is_one_two_or_five_times_a_power_of_ten(span: float) -> None:
    step = nice_step(span)
    mantissa = step / 10 ** int(f"{step:e}".split("e")[1])
    assert round(mantissa, 9) in (1.0, 2.0, 5.0)
    assert 2 - 1e-9 <= max(span, 1.0) / step <= 5 + 1e-9


def test_the_chart_spans_every_total_and_starts_at_zero() -> None:
    c = totals_chart(["a", "b", "c"], [[-4, 20, 7], [30, 41, -10]], "t")
    ys = [t.label for t in c.y_ticks]
    assert float(ys[0]) <= -10 and float(ys[-1]) >= 41
    for s in c.series:
        assert s.points[0].value == 0 and s.points[0].round == 0
        assert c.top - 1e-9 <= min(p.y for p in s.points) and max(p.y for p in s.points) <= c.bottom + 1e-9
    assert [s.points[-1].value for s in c.series] == [30, 41, -10]


@pytest.mark.parametrize("names", [["W" * 64, "M" * 40, "\u674e\u5c0f\u9f8d" * 10, "ann"], ["a b " * 16] * 6])
def test_long_names_are_cut_to_fit_the_chart_and_keep_their_full_text_as_the_title(names: list[str]) -> None:
    """Seen in a screenshot: a 64-character name ran off the chart and over the next legend column."""
    c = totals_chart(names, [[10 * (i + 1) for i in range(len(names))]], "t")
    column = (WIDTH - 20) / LEGEND_COLS
    for s in c.series:
        assert c.label_x + text_width(f"{s.label} ({s.points[-1].value})") <= WIDTH
        assert s.legend_text_x + text_width(s.legend) <= s.legend_x + column
        assert s.label.endswith("\u2026") and s.name.startswith(s.label[:-1].rstrip()) or s.label == s.name
    assert c.series[-1].label == "ann" or len(names) == 6


@pytest.mark.parametrize("what", ["fifo", "zero", "directory"])
def test_report_refuses_what_is_not_a_regular_file_at_once(tmp_path: Path, what: str) -> None:
    """As every replay tool does (tests/test_hostile_files.py): no hang on a FIFO, no endless
    read of /dev/zero, one line, and no site made."""
    if what == "fifo":
        target = tmp_path / "pipe.allegra"
        os.mkfifo(target)
        want = f"{target}: not a regular file or directory (a FIFO)"
    elif what == "zero":
        target = Path("/dev/zero")
        want = f"{target}: not a regular file or directory (a device)"
    else:
        target = tmp_path / "dir.allegra"
        (target / "x.allegra").mkdir(parents=True)
        want = f"no .allegra files in the directory {target}"
    site = tmp_path / "site"
    try:
        p = report_cli(target, "--out", site)
    except subprocess.TimeoutExpired:
        pytest.fail(f"report hung on {what}")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == f"allegra replay report: error: {want}\n"
    assert not site.exists()


def test_a_file_changed_between_verifying_and_reading_is_one_line_not_a_wrong_page(tmp_path: Path) -> None:
    from allegra_lan.report.build import ReportError, build_site
    from allegra_lan.tools import replay_paths
    from allegra_lan.tools.verify import verify_many

    g = write_game(tmp_path / "in" / "g.allegra", PEOPLE[:2], seed=41)
    verdicts = list(verify_many(replay_paths([str(tmp_path / "in")])))
    assert [v.finished for v in verdicts] == [True]
    text = g.path.read_text().splitlines(keepends=True)
    g.path.write_text("".join(text[:-3]))  # cut after verifying: the rounds would be short
    with pytest.raises(ReportError) as e:
        build_site(verdicts, title="T")
    assert str(e.value) == f"{g.path}: no longer folds as it did when verified (the file changed)"
    g.path.unlink()
    with pytest.raises(ReportError) as e:
        build_site(verdicts, title="T")
    assert str(e.value).startswith(f"{g.path}: could not be read again after verifying it (")
    assert "\n" not in str(e.value)


@settings(max_examples=200, deadline=None)
@given(gid=st.text(max_size=80))
def test_a_page_name_is_a_plain_safe_file_name_whatever_the_id(gid: str) -> None:
    from allegra_lan.report.build import page_name

    name = page_name(gid)
    assert re.fullmatch(r"game-x?[0-9a-f]{0,128}\.html", name)
    if re.fullmatch(r"[0-9a-f]{1,64}", gid):
        assert name == f"game-{gid}.html"
