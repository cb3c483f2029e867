"""The published site in a real browser: Debian's chromium, headless, over file:// URLs.

What a person opening the site would meet: the index's DOM (as chromium built it from
the file, not as the template wrote it) holds the standings rows, every link of every
page opened resolves to a file the site has (or an anchor on the page), and the
screenshots are real pictures of the expected size, not blank. Skips, saying why, where
chromium is not installed; .ci/run installs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from report_helpers import (
    CHROMIUM, Written, check_links, dom, person, read_page, report_cli, tables_of, write_game,
)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Written]]:
    base = tmp_path_factory.mktemp("browser")
    people = [person(name, f"browser{i}") for i, name in
              enumerate(["ann", "bob", "<b>cy</b> & \"dee\"", "eve"])]
    games = [write_game(base / "in" / "a.allegra", people[:3], seed=21, table="kitchen", rounds=3),
             write_game(base / "in" / "b.allegra", people[1:], seed=22, variant="allegra", table="hall"),
             write_game(base / "in" / "c.allegra", people[:2], seed=23, table="attic")]
    out = base / "site"
    p = report_cli(base / "in", "--out", out, "--title", "Browser night")
    assert p.returncode == 0, p.stderr
    return out, games


def test_the_index_in_chromium_has_the_standings_and_links_that_resolve(site: tuple[Path, list[Written]],
                                                                        tmp_path: Path) -> None:
    out, games = site
    html = dom(out / "index.html", tmp_path / "index.png")
    page = read_page(html)
    rows = {row[2]: row for rows in tables_of(page, "standings") for row in rows[1:]}
    want = {pl.identity.fingerprint for g in games for pl in g.local.players}
    assert set(rows) == want  # every player once in each table they played; here by key
    assert any(row[1] == "<b>cy</b> & \"dee\"" for row in rows.values())
    assert "b" not in page.tags and "script" not in page.tags
    assert check_links(out / "index.html", html) >= len(games) + 2


def test_a_game_page_in_chromium_has_its_rounds_a_chart_and_links_back(site: tuple[Path, list[Written]],
                                                                      tmp_path: Path) -> None:
    out, games = site
    g = games[0]
    page_file = out / f"game-{g.game_id}.html"
    html = dom(page_file, tmp_path / "game.png")
    page = read_page(html)
    (rounds,) = tables_of(page, "rounds")
    assert len(rounds) == 2 + len(g.local.state.results)
    assert [int(c.split()[0]) for c in rounds[-1][1:]] == list(g.local.state.totals)
    assert page.tags.count("polyline") == 3
    assert check_links(page_file, html) >= 2
