"""The full-screen client on the network, headless: host a table or find one, say ready, play.

The Application runs for real on asyncio (prompt_toolkit pipe input, an 80x24 dummy
output) with trio as a guest on the same loop; the other peer is a real `allegra`
subprocess with a bot; everything binds to 127.0.0.1 and zeroconf too. The test
presses keys as a person would and reads the screen text.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest
from prompt_toolkit.input import create_pipe_input

from allegra_lan.log.identity import Identity
from allegra_lan.tui.app import Pace, make_application
from allegra_lan.tui.net_client import NetClient, Want
from allegra_lan.tui.screen import plain

from helpers import Screen24, choose, press_offered
from net_helpers import kinds_in, start_allegra, unique_table

LOOPBACK = "127.0.0.1"


class BotPeer:
    """A real `allegra join TABLE --bot NAME` process with a home of its own; killed at the
    end of its `with` block if it is still running."""

    def __init__(self, home: Path, table: str, bot: str) -> None:
        self.home, self.table, self.bot = home, table, bot
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.proc = start_allegra(self.home, "join", self.table, "--interface", LOOPBACK,
                                  "--bot", self.bot)

    def finishes(self) -> None:
        """It exits 0 (it held the whole game when it left)."""
        assert self.proc is not None
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err[-2000:]

    def replay(self) -> Path:
        (path,) = sorted((self.home / "data" / "allegra-lan" / "games").glob("*.allegra"))
        return path

    def __enter__(self) -> "BotPeer":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def hosting(games: Path, name: str, table: str, *, variant: str, players: int,
            takeover: int = 0, rounds: int = 1, deal: str = "seeded") -> Want:
    return Want(LOOPBACK, name, games, host={"variant": variant, "players": players, "bots": [],
                                             "table": table, "takeover": takeover, "spectators": False,
                                             "options": {"rounds": rounds}, "deal": deal})


def same_log(games: Path, peer: BotPeer) -> Path:
    """Our one replay and the bot peer's are the same bytes; returns ours."""
    (mine,) = sorted(games.glob("*.allegra"))
    assert mine.read_bytes() == peer.replay().read_bytes()
    return mine


async def open_table(p: "Person", client: NetClient) -> None:
    await p.until("the table to open", lambda: client.node is not None and client.node.port > 0)


async def start_game(p: "Person", client: NetClient) -> None:
    """Say ready, and wait for the table."""
    await p.press("r")
    await p.until("the game to start", lambda: client.phase == "table")


class Person:
    """Keys in through the pipe, the screen out as text; waits as a player would."""

    def __init__(self, client: NetClient, inp: Any) -> None:
        self.client = client
        self.inp = inp
        self.screens: list[str] = []
        self.knock_windows = 0  # ALLEGRA: times the knock window opened for us
        self.gave = 0  # times we gave a drawn card to a knocker

    # the shape helpers.choose expects
    @property
    def refused_now(self) -> bool:
        p = self.client.play
        return bool(p.refused) if p is not None else self.client.refused

    def screen(self) -> str:
        return "\n".join(line.rstrip() for line in plain(self.client.screen(80, 24)).split("\n"))

    def footer(self) -> str:
        return "   ".join(self.screen().split("\n")[-2:])

    async def until(self, what: str, ok: Callable[[], bool], limit: float = 30.0,
                    every: float = 0.02) -> None:
        deadline = time.monotonic() + limit
        while not ok():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen:\n{self.screen()}")
            await asyncio.sleep(every)

    async def press(self, key: str) -> str:
        """Send one key and return the screen once the client handled it and settled.

        Waits on the client's own signals (its key count, then its idle event) rather than
        polling on a coarse period: a whole game is hundreds of keys, and a 20 ms poll per
        key was most of these tests' time."""
        n = self.client.keys_handled
        self.inp.send_text(key)
        await self.until(f"key {key!r} to be handled", lambda: self.client.keys_handled > n, 10,
                         every=0.001)
        idle = self.client.play.idle if self.client.play is not None else self.client.idle
        try:
            await asyncio.wait_for(idle.wait(), 30)
        except asyncio.TimeoutError:
            raise AssertionError(f"the client did not settle after {key!r}; the screen:\n"
                                 f"{self.screen()}") from None
        text = self.screen()
        self.screens.append(text)
        return text


class Keys:
    """The shape helpers.press_offered and choose drive (helpers.Keyed): press, footer, screen, and
    client.refused (the table's refusal once play began)."""

    def __init__(self, person: Person) -> None:
        self.person = person

    @property
    def client(self) -> Any:
        outer = self

        class _C:
            @property
            def refused(self) -> bool:
                return outer.person.refused_now
        return _C()

    async def press(self, key: str) -> str:
        return await self.person.press(key)

    def screen(self) -> str:
        return self.person.screen()

    def footer(self) -> str:
        return self.person.footer()


async def play_to_the_end(p: Person, limit: float = 120.0, knock: str = "n") -> None:
    """Press what the footer offers when it is our turn; otherwise wait for the others."""
    deadline = time.monotonic() + limit
    keys = Keys(p)
    while not p.client.finished:
        if time.monotonic() > deadline:
            raise AssertionError("the game did not end:\n" + p.screen())
        did = await press_offered(keys, knock)  # type: ignore[arg-type]
        if did is None:
            await asyncio.sleep(0.02)  # the others' turn
        elif did == "knock":
            p.knock_windows += 1
        elif did == "give":
            p.gave += 1


async def with_client(client: NetClient, body: Callable[[Person], Awaitable[None]]) -> None:
    with create_pipe_input() as inp:
        app = make_application(client, input=inp, output=Screen24())
        task = asyncio.ensure_future(app.run_async())
        person = Person(client, inp)
        try:
            await body(person)
        finally:
            if not task.done():
                inp.send_text("\x03\x03")  # Ctrl-C, and again to confirm: leaves cleanly
            await asyncio.wait_for(task, 30)
            await asyncio.wait_for(client.stopped(), 30)


@pytest.mark.parametrize("deal", ["seeded", "fair"])
def test_a_person_hosts_in_the_client_a_bot_joins_and_they_play_a_whole_game(tmp_path: Path,
                                                                             deal: str) -> None:
    """With the fair deal (issue 12) the header says "dealing..." while the seats' peers
    deal, the person is asked for moves only, and both logs end the same."""
    table = unique_table("tuinet")
    games = tmp_path / "host"
    client = NetClient(Identity.from_seed(b"tui-net-host" * 3),
                       hosting(games, "ann", table, variant="grande", players=2, deal=deal),
                       Pace(bot=0, knock=None))
    dealing: list[str] = []

    with BotPeer(tmp_path / "guest", table, "greedy") as guest:
        async def body(p: Person) -> None:
            await open_table(p, client)
            room = p.screen()
            assert f"Table {table}" in room and "seat 1  (free)" in room
            assert "waiting for 1 more player(s)" in room and " r  ready" in p.footer()
            guest.start()
            await p.until("the bot to sit down", lambda: "bot (greedy)" in p.screen())
            assert "press r when you are ready" in p.screen()
            # The notes name the guest as it sat down, not by its key's fingerprint.
            await p.until("the guest named in the notes", lambda: "connected to greedy" in p.screen())
            async def watch() -> None:
                while True:
                    header = p.screen().split("\n")[0]
                    if "dealing..." in header:
                        dealing.append(header)
                    await asyncio.sleep(0.002)

            watcher = asyncio.ensure_future(watch())
            await start_game(p, client)
            assert "ALLEGRA Grande" in p.screen().split("\n")[0]
            await play_to_the_end(p)
            watcher.cancel()
            assert "Game over" in p.screen() or "wins" in p.screen() or "share the win" in p.screen()
            # Stay until the other peer holds the whole log, as a player would (the session ends).
            await asyncio.wait_for(client._trio_done.wait(), 30)

        asyncio.run(with_client(client, body))
        assert not client.failed, client.message
        guest.finishes()
        mine = same_log(games, guest)
    r = subprocess.run([sys.executable, "-m", "allegra_lan", "replay", "verify", str(mine)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert bool(dealing) is (deal == "fair"), dealing[:3]
    assert ("deal_shares" in kinds_in(mine)) is (deal == "fair")


def test_a_person_finds_a_table_in_the_client_joins_and_plays(tmp_path: Path) -> None:
    table = unique_table("tuifind")
    host = start_allegra(tmp_path / "hosthome", "host", "--interface", LOOPBACK, "--bot", "greedy",
                         "--players", "2", "--variant", "allegra", "--table", table, "--rounds", "1")
    want = Want(LOOPBACK, "bea", tmp_path / "me")
    client = NetClient(Identity.from_seed(b"tui-net-guest" * 2), want, Pace(bot=0, knock=None))

    async def body(p: Person) -> None:
        await p.until("the table to be listed", lambda: table in p.screen())
        listing = p.screen()
        assert "tables open now" in listing and " 1/2 " in listing
        rows = [line for line in listing.split("\n") if line[:1] in (">", " ") and " 1/2 " in line]
        for _ in range(len(rows)):
            if table in next(line for line in p.screen().split("\n") if line.startswith(">")):
                break
            await p.press("j")
        await p.press("\r")
        await p.until("a seat at the table", lambda: "you" in p.screen() and "not ready" in p.screen())
        await p.press("r")
        await p.until("the game to start", lambda: client.phase == "table")
        text = p.screen()
        assert "ALLEGRA" in text.split("\n")[0] and "bea (you)" in text
        # A key out of turn is refused with the reason; one in turn is taken.
        # The host deals fair (its default): "dealing..." until the cards are dealt, and our
        # turn-up shows once the seats' shares open the card.
        await p.until("our turn to turn up", lambda: "turn up" in p.footer(), 60)
        await p.press("\r")
        await p.until("our move in Last moves", lambda: "your row 1 col 1: turned up" in p.screen(), 60)
        await p.press("q")
        await p.press("y")

    try:
        asyncio.run(with_client(client, body))
        assert client.quit and not client.failed
    finally:
        if host.poll() is None:
            os.killpg(host.pid, signal.SIGKILL)
            host.wait(timeout=10)


def test_the_host_seats_a_bot_quits_mid_game_and_resumes_in_the_client(tmp_path: Path) -> None:
    """`b` seats one of the host's bots; a bot peer takes the last seat; after a few moves
    the person quits, and `allegra resume` in the client (its NetClient) goes on to the end."""
    table = unique_table("tuiresume")
    ident = Identity.from_seed(b"tui-net-resume" * 2)
    games = tmp_path / "host"
    client = NetClient(ident, hosting(games, "cy", table, variant="grande", players=3),
                       Pace(bot=0, knock=None))

    with BotPeer(tmp_path / "guest", table, "random") as guest:
        async def first(p: Person) -> None:
            await open_table(p, client)
            assert " b  seat a greedy bot" in p.footer()
            room = await p.press("b")
            assert "seat 1  greedy 1" in room and "your bot (greedy)" in room
            guest.start()
            await p.until("the bot peer to sit down", lambda: "bot (random)" in p.screen())
            assert " b  seat" not in p.footer()  # the table is full
            await start_game(p, client)
            for _ in range(3):  # our first decisions: turn up cards, by keys
                await p.until("our turn", lambda: "turn up" in p.footer() or "draw from deck" in p.footer())
                if "turn up" not in p.footer():
                    break
                await choose(Keys(p))  # type: ignore[arg-type]
            await p.press("q")
            await p.press("y")

        asyncio.run(with_client(client, first))
        assert client.quit and client.node is not None and client.node.writer is not None
        held = client.node.table.seq
        again = NetClient(ident, Want(LOOPBACK, "cy", games, resume=client.node.writer.path),
                          Pace(bot=0, knock=None))

        async def second(p: Person) -> None:
            await p.until("the table again", lambda: again.phase == "table", 60)
            assert "cy (you)" in p.screen()
            # "Last moves" is filled from the log: our turn-ups of before the quit are there.
            assert again.play is not None
            assert any(line.startswith("your row ") and "turned up" in line for line in again.play.moves), \
                list(again.play.moves)
            # ...and drawn: the screen's "Last moves" shows the newest of them (the host's bot
            # may have moved on before the first screen, pushing our turn-ups off it; a loaded
            # clean-clone run saw that).
            await p.until("the moves of the log drawn", lambda: any(
                line[:20] in p.screen().partition("Last moves")[2]
                for line in list(again.play.moves)[-3:]), 30)  # type: ignore[union-attr]
            await play_to_the_end(p)
            await asyncio.wait_for(again._trio_done.wait(), 30)

        asyncio.run(with_client(again, second))
        assert not again.failed, again.message
        assert again.node is not None and again.node.table.seq > held
        guest.finishes()
        same_log(games, guest)


def test_a_note_said_again_and_again_is_kept_once_with_a_count(tmp_path: Path) -> None:
    """The waiting room said "waiting for players: 1 of 2 seats taken" four times in a row."""
    client = NetClient(Identity.from_seed(b"tui-net-notes" * 3), Want(LOOPBACK, "gil", tmp_path))
    for _ in range(4):
        client.say("waiting for players: 1 of 2 seats taken, 0 ready")
    client.say("2 of 2 seats taken")
    client.say("waiting for players: 1 of 2 seats taken, 0 ready")
    assert list(client.notes) == ["waiting for players: 1 of 2 seats taken, 0 ready (x4)",
                                  "2 of 2 seats taken", "waiting for players: 1 of 2 seats taken, 0 ready"]


def test_without_bot_and_without_a_terminal_the_commands_say_so(tmp_path: Path) -> None:
    for args in (["host", "--interface", LOOPBACK], ["join", "--interface", LOOPBACK]):
        p = start_allegra(tmp_path, *args)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 2, (args, err)
        assert err.strip().count("\n") == 0 and "needs a terminal to play" in err, err


def test_allegra_knocks_at_a_networked_table_in_the_client(tmp_path: Path) -> None:
    """Three seats of ALLEGRA: the person, the host's own bot (b) and a bot peer. The
    knock window opens for the person after the others' deck draws (k knocks), and the
    person gives a drawn card to a bot that knocked; the game ends, logs identical.

    A network game's deal comes from fresh nonces, so whether a bot knocks on the person's
    draw in 3 rounds depends on the cards (one loaded run in many had no such knock): a
    game without one is played again, at most three in all."""
    for attempt in range(3):
        p = _knock_game(tmp_path / f"game{attempt}")
        assert p.knock_windows > 0, "the knock window never opened for the person"
        assert any("you knocked" in s for s in p.screens)
        if p.gave > 0:
            break
    assert p.gave > 0, "in three games the person never had a knocker to give a drawn card to"


def _knock_game(tmp_path: Path) -> Person:
    table = unique_table("tuiknock")
    games = tmp_path / "host"
    client = NetClient(Identity.from_seed(b"tui-net-knock" * 2),
                       hosting(games, "dee", table, variant="allegra", players=3, rounds=3),
                       Pace(bot=0, knock=None))  # 3 rounds: enough deck draws for a knock to give to
    seen: list[Person] = []

    with BotPeer(tmp_path / "guest", table, "greedy") as guest:
        async def body(p: Person) -> None:
            seen.append(p)
            await open_table(p, client)
            await p.press("b")
            guest.start()
            await p.until("the bot peer to sit down", lambda: "bot (greedy) of" in p.screen())
            await start_game(p, client)
            await play_to_the_end(p, limit=240, knock="k")
            await asyncio.wait_for(client._trio_done.wait(), 30)

        asyncio.run(with_client(client, body))
        assert not client.failed, client.message
        guest.finishes()
        same_log(games, guest)
    return seen[0]


def test_a_person_away_too_long_is_replaced_by_a_bot_and_follows_on_resume(tmp_path: Path) -> None:
    """The person leaves mid-game; the two other seats (bot peers, more than half the table)
    let a bot take the person's seat after the host's 1 s; `resume` in the client follows
    the game from that seat to its end, and says so; all three logs end identical."""
    table = unique_table("tuiaway")
    ident = Identity.from_seed(b"tui-net-away" * 3)
    games = tmp_path / "host"
    client = NetClient(ident, hosting(games, "eve", table, variant="grande", players=3, takeover=1),
                       Pace(bot=0, knock=None))

    with BotPeer(tmp_path / "guest1", table, "greedy") as guest, \
            BotPeer(tmp_path / "guest2", table, "greedy") as other:
        async def first(p: Person) -> None:
            await open_table(p, client)
            guest.start()
            await p.until("a bot peer to sit down", lambda: "bot (greedy)" in p.screen())
            other.start()
            await p.until("both bot peers to sit down", lambda: p.screen().count("bot (greedy)") >= 2)
            await start_game(p, client)
            await p.until("our turn", lambda: "turn up" in p.footer())
            await p.press("q")
            await p.press("y")

        asyncio.run(with_client(client, first))
        assert client.node is not None and client.node.writer is not None
        deadline = time.monotonic() + 30
        while not (guest.home / "data").exists() or "takeover" not in kinds_in(guest.replay()):
            assert time.monotonic() < deadline, "the bot peers never took the seat over"
            time.sleep(0.1)
        again = NetClient(ident, Want(LOOPBACK, "eve", games, resume=client.node.writer.path),
                          Pace(bot=0, knock=None))

        async def second(p: Person) -> None:
            await p.until("the table again", lambda: again.phase == "table", 60)
            await p.until("the game's end", lambda: again.finished, 120)
            text = "\n".join(p.screens + [p.screen()]) + " ".join(again.notes)
            assert "is played by a bot" in text or "let a bot play for" in text
            await asyncio.wait_for(again._trio_done.wait(), 30)

        asyncio.run(with_client(again, second))
        guest.finishes()
        other.finishes()
        same_log(games, guest)
        same_log(games, other)


def test_a_wrong_pin_in_the_client_says_why_and_leaves_cleanly(tmp_path: Path) -> None:
    table = unique_table("tuipin")
    host = start_allegra(tmp_path / "hosthome", "host", "--interface", LOOPBACK, "--bot", "greedy",
                         "--players", "2", "--table", table, "--pin", "1234")
    client = NetClient(Identity.from_seed(b"tui-net-pin" * 3),
                       Want(LOOPBACK, "fay", tmp_path / "me", table=table, pin="9999"),
                       Pace(bot=0, knock=None))

    async def body(p: Person) -> None:
        await p.until("the join to be refused", lambda: bool(client.failure))
        # A refused join goes back to the list, the reason on it (not a room stuck on it).
        await p.until("the list again", lambda: "tables open now" in p.screen() and table in p.screen())
        text = p.screen()
        assert client.phase == "browse" and f"'{table}' refused: " in text and "PIN" in text, text
        assert client.node is None and not client.failed
        await p.press("q")

    try:
        asyncio.run(with_client(client, body))
        assert client.quit and client.play is None and "PIN" in client.failure
    finally:
        if host.poll() is None:
            os.killpg(host.pid, signal.SIGKILL)
            host.wait(timeout=10)
