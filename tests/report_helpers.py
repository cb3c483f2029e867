"""What the report tests share (tests/test_report*.py): signed games written as replay files,
the tables of an HTML page read back as text, Debian's chromium run headless, a PNG's pixels.

Games are real: LocalGame signs every event and ReplayWriter writes the file, as a peer
does; the moves are seeded random legal moves, so each game differs and every run is the
same. Pages are read with the standard library's HTML parser (what a browser's DOM holds
as text, entities decoded), never by searching the template's own markup.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from urllib.parse import unquote, urlsplit
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable, Sequence

from allegra_lan.local import LocalGame, Player, derived, seat_tags
from allegra_lan.tags import result_tags
from allegra_lan.log.identity import Identity
from allegra_lan.log.replay import ReplayWriter
from allegra_lan.rules import Give, Move, legal_moves, ruleset_from_dict, to_act
from allegra_lan.rules.rng import Stream
from net_helpers import ROOT

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
BROWSER_LIMIT = 120.0  # seconds one headless chromium run may take on a loaded machine
# Flags without which headless chromium tries the network (and waits on it) or needs a sandbox
# that a root CI run has not.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--mute-audio", "--disable-extensions"]


def person(name: str, tag: object) -> Player:
    return Player(name, Identity.from_seed(derived("report-test-key", tag)))


@dataclass
class Written:
    path: Path
    local: LocalGame

    @property
    def game_id(self) -> str:
        assert self.local.game_id is not None
        return self.local.game_id.hex()


def write_game(path: Path, people: Sequence[Player], *, variant: str = "grande", rounds: int = 2,
               seed: int = 0, table: str = "t", date: str = "2026.03.01", limit: int | None = None,
               clock: Callable[[], int] | None = None) -> Written:
    """A signed game of seeded random legal moves (never a Give, so rounds end soon) written to
    `path`; cut after `limit` moves (an unfinished file) if given; with `clock`, a log that
    signs its start and every round's results at the clock's times."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rs = ruleset_from_dict({"variant": variant, "rounds": rounds})
    gid = derived("report-game", variant, len(people), seed)[:16]
    tags = {"Event": "Club night", "Date": date, "Variant": variant, "Table": table,
            "Players": str(len(people)), "Game": gid.hex(), **seat_tags(people)}
    writer = ReplayWriter(path, tags, fsync=False)
    g = LocalGame(rs, list(people), game_id=gid, table_name=table, writer=writer, clock=clock,
                  nonces=[derived("report-nonce", seed, i) for i in range(len(people))])
    rng = Stream(derived("report-moves", seed), "moves")
    played = 0
    while to_act(g.state) is not None and (limit is None or played < limit):
        moves: list[Move] = [m for m in legal_moves(g.state) if not isinstance(m, Give)] or legal_moves(g.state)
        g.submit(moves[rng.below(len(moves))])
        played += 1
    if to_act(g.state) is None:
        writer.finish(result_tags(g.state))
    else:
        writer.close()
    return Written(path, g)


def report_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The real `allegra replay report`, from this interpreter's environment."""
    return subprocess.run([sys.executable, "-m", "allegra_lan", "replay", "report", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=180)


# ------------------------------------------------------------------ pages read back as text


@dataclass
class Page:
    tables: list[tuple[str, list[list[str]]]] = field(default_factory=list)  # (class, rows of cell text)
    links: list[str] = field(default_factory=list)  # every href and src, as written
    text: str = ""  # every text node, joined by spaces
    tags: list[str] = field(default_factory=list)  # every start tag's name, in order
    titles: list[str] = field(default_factory=list)  # the text of every <title> (the page's, the SVG's)
    ids: list[str] = field(default_factory=list)  # every id attribute (what #anchors point at)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._stack: list[tuple[str, list[list[str]]]] = []
        self._cell: list[str] | None = None
        self._texts: list[str] = []
        self._title: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.page.tags.append(tag)
        a = dict(attrs)
        if a.get("id"):
            self.page.ids.append(str(a["id"]))
        for key in ("href", "src"):
            if a.get(key):
                self.page.links.append(str(a[key]))
        if tag == "table":
            self._stack.append((a.get("class") or "", []))
        elif tag == "tr" and self._stack:
            self._stack[-1][1].append([])
        elif tag in ("td", "th") and self._stack:
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")
        elif tag == "title":
            self._title = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._stack and self._stack[-1][1]:
            self._stack[-1][1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table" and self._stack:
            self.page.tables.append(self._stack.pop())
        elif tag == "title" and self._title is not None:
            self.page.titles.append("".join(self._title))
            self._title = None

    def handle_data(self, data: str) -> None:
        self._texts.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._title is not None:
            self._title.append(data)


def read_page(html: str) -> Page:
    r = _Reader()
    r.feed(html)
    r.close()
    r.page.text = " ".join(" ".join(r._texts).split())
    return r.page


def tables_of(page: Page, cls: str) -> list[list[list[str]]]:
    return [rows for c, rows in page.tables if cls in c.split()]


# ------------------------------------------------------------------ chromium and its PNGs


def chromium(*args: str, out: Path) -> subprocess.CompletedProcess[str]:
    """One headless chromium run with a new profile folder (removed after), offline flags on."""
    with tempfile.TemporaryDirectory(prefix="report-chromium-") as profile:
        assert CHROMIUM is not None
        return subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                              cwd=out, capture_output=True, text=True, timeout=BROWSER_LIMIT,
                              stdin=subprocess.DEVNULL)


@dataclass
class Png:
    width: int
    height: int
    pixels: list[bytes]  # rows of raw pixel bytes, unfiltered
    channels: int


def read_png(data: bytes) -> Png:
    """An 8-bit RGB or RGBA PNG's rows of pixels (the filters undone), as chromium writes them."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytes(stride)
    # Each filter undone by a loop of its own (a row of filter 0 is left as it is): one loop
    # testing the filter at every byte took 0.4 s of CPU per 1000x800 screenshot.
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:  # Sub: the byte to the left, already undone
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 255
        elif f == 2:  # Up: the byte above
            line = bytearray((x + b) & 255 for x, b in zip(line, prev))
        elif f == 3:  # Average of left and above
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + (a + prev[i]) // 2) & 255
        elif f == 4:  # Paeth
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = bytes(line)
        rows.append(prev)
    return Png(width, height, rows, channels)


def ink(png: Png) -> float:
    """The share of pixels that are not the top-left pixel's colour (the page's background)."""
    ch = png.channels
    bg = png.pixels[0][:ch]
    other = sum(1 for row in png.pixels for x in range(0, len(row), ch) if row[x:x + ch] != bg)
    return other / (png.width * png.height)


# ------------------------------------------------------------------ pages as chromium opens them

SIZE = (1000, 800)


def dom(page: Path, shot: Path | None = None, size: tuple[int, int] = SIZE) -> str:
    """The DOM chromium builds from the page's file; with `shot`, a screenshot of the page at
    `size` from the same run too, checked to be a PNG of that size with ink on it (the pages
    have no scripts, so the window's size changes nothing in the DOM). A chromium run costs
    over a second of CPU, and headless chromium opens one page per run, so a page both read
    and pictured is opened once."""
    pictured = () if shot is None else (f"--screenshot={shot}", f"--window-size={size[0]},{size[1]}")
    p = chromium("--dump-dom", *pictured, page.as_uri(), out=page.parent)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "<html" in p.stdout, p.stdout[:500]
    if shot is not None:
        assert shot.is_file(), p.stderr[-2000:]
        png = read_png(shot.read_bytes())
        assert (png.width, png.height) == size
        assert ink(png) > 0.02, f"{shot.name} is (nearly) blank"
    return p.stdout


def check_links(page: Path, html: str) -> int:
    """Every href/src of the page's DOM is an anchor it has or a file inside the site; returns how many."""
    got = read_page(html)
    root = page.parent.resolve()
    for link in got.links:
        parts = urlsplit(link)
        assert parts.scheme in ("", "file"), f"{page.name} links outside the site: {link}"
        if not parts.path:
            assert parts.fragment in got.ids, f"{page.name}: no #{parts.fragment} on the page"
            continue
        target = (page.parent / unquote(parts.path)).resolve() if parts.scheme == "" else Path(unquote(parts.path))
        assert target.is_file(), f"{page.name}: {link} is not a file of the site"
        assert target.is_relative_to(root), f"{page.name}: {link} leaves the site"
        if parts.fragment:
            assert parts.fragment in read_page(target.read_text()).ids
    return len(got.links)


