"""The terminal client on the home network: find a table, sit down, say ready, play.

One thread, two loops (DESIGN.md, "Client"): prompt_toolkit runs on asyncio
and the network (`net.session`, `net.node`) runs in trio as a guest on the
same loop (`trio.lowlevel.start_guest_run`). Because both run on one thread,
key handlers may call the node's synchronous methods directly (`play_move`,
`answer_knock`, `set_ready`); the node tells the client of every change
through `Node.watchers`, which only sets an asyncio event and asks for a
redraw, so a waiting client burns no CPU.

The table itself is `app.PlayClient` over a `NetTable`: the client folds its
own copy of the node's log (`mirror`), so it can describe every move as it
happened, and draws exactly what its seat may see.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import trio

from allegra_lan.log.identity import Identity, fingerprint, profile_name
from allegra_lan.names import name_of
from allegra_lan.text import one_line
from allegra_lan.rules import Give, IllegalMove, Move, Variant, apply, legal_moves, ruleset_for, to_act, view
from allegra_lan.rules.cards import NeedValues
from allegra_lan.rules.state import DecisionKind, Phase
from allegra_lan.table import TAKEOVER, Refused, Table

from ..net.discovery import Browser, DiscoveryError, TableAd, TableChanged, TableGone, TableSeen
from ..net.handshake import SAME_KEY_CODE, HandshakeError
from ..net.node import KNOCK_WINDOW, Node
from ..net.session import JoinError, ResumeError, SeatSpec, run_guest, run_host, run_resume
from .app import MOVES_KEPT, Pace, PlayClient
from .lobby_screen import Room, SeatRow, TableRow, browse_lines, room_lines
from ..netargs import resume_command
from .screen import Fragment, UiState, join_lines
from .words import describe_effects, refusal_words, takeover_words

NOTES_KEPT = 6
_REFUSALS = (JoinError, HandshakeError, OSError)  # what a join the table turned down raises
KNOCK_ANSWER = KNOCK_WINDOW - 0.5  # our window closes before the drawing player stops waiting


def _leaf(group: BaseExceptionGroup) -> BaseException:
    """The one real error inside trio's exception groups."""
    leaf: BaseException = group
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    return leaf


class NetTable:
    """What a PlayClient plays on: the client's own fold of the node's log, and moves
    that go to the node (signed by our seat's key there). In a fair-deal game the fold
    holds our seat's deal secret, as the node's table does, so it knows our peeks."""

    def __init__(self, node: Node, seat: int) -> None:
        self.node = node
        self.seat = seat
        self.secret = node.peer.deal_secret(seat)
        self.mirror = self.fresh()
        self.catch_up()

    def fresh(self) -> Table:
        """An empty fold that will know what our seat may know."""
        return Table(me=self.seat, secret=self.secret)

    @property
    def table(self) -> Table:
        return self.mirror

    @property
    def state(self) -> Any:
        return self.mirror.state

    @property
    def players(self) -> list[Any]:
        assert self.mirror.genesis is not None
        return list(self.mirror.genesis.seats)

    def catch_up(self, limit: int | None = None) -> list[Any]:
        """Fold the node's events we lack (a takeover that replaced events: fold anew)."""
        events = self.node.table.events
        m = self.mirror
        if m.seq and (len(events) < m.seq or events[m.seq - 1].id != m.head):
            self.mirror = m = self.fresh()
        new = events[m.seq:limit]
        for ev in new:
            m.append(ev.signed)
        return new

    def submit(self, move: Move) -> None:
        if self.seat not in self.node.players:
            raise Refused(None, "a bot plays this seat now: the others agreed while you were away",
                          fault="author")
        self.node.play_move(self.seat, move)


def recall_moves(table: Table, seat: int, names: Sequence[str],
                 secret: bytes | None = None) -> list[str]:
    """The "Last moves" lines of the moves `table` already holds, as `seat` saw them.

    The client describes a move as it folds it; the moves folded before the
    client existed (every move of a resumed game, or the first turn-ups that
    came in while the table opened) are told again here from the log itself,
    the same words as live, so the pane never starts empty mid-game. `secret`: our
    seat's deal secret in a fair-deal game (its peeks are told as live)."""
    again = Table(me=seat, secret=secret)
    lines: list[str] = []
    for ev in table.events:
        state = again.state
        before = view(state, seat) if state is not None else None
        again.append(ev.signed)
        if ev.kind == TAKEOVER:
            lines.append(takeover_words([s for s, _ in ev.body["seats"]], names))
        elif before is not None and again.state is not None and not (again.fair and again.state is state):
            after = view(again.state, seat)
            if after.effects:
                lines.extend(describe_effects(before, after, after.effects, names))
        del lines[:-MOVES_KEPT]
    return lines


class NetPlayClient(PlayClient):
    """PlayClient at a networked table: other seats are played by their peers; we follow."""

    def __init__(self, net: NetTable, pace: Pace) -> None:
        super().__init__(net, {}, net.seat, pace=pace)  # type: ignore[arg-type]
        self.net = net
        self.changed = asyncio.Event()
        self._answered: set[bytes] = set()  # draws we gave our knock answer for
        self.moves.extend(recall_moves(net.mirror, self.human, self.names, net.secret))

    def _offered_knockers(self) -> frozenset[int]:
        """The seats whose signed knock for this draw reached us (they come in as we wait)."""
        state = self.game.state
        if state.ruleset.variant is not Variant.ALLEGRA or state.phase is not Phase.PLAY:
            return frozenset()
        answers = self.net.node.knocks.get(self.net.mirror.head, {})
        gives = {m.to for m in legal_moves(state) if isinstance(m, Give)}
        return frozenset(s for s, k in answers.items() if k is not None and s in gives)

    def ui_state(self) -> UiState:
        """The PlayClient's, with the fair deal's words: "dealing..." in the header while
        the log waits for the seats' deal events (the cards appear as their shares open
        them), and one status line when the deal stopped the game."""
        ui = super().ui_state()
        t = self.net.mirror
        if t.stopped is not None:
            return replace(ui, status=one_line(f"The game stopped: {t.stopped}", 300))
        return replace(ui, dealing=True) if t.dealing else ui

    def _my_decision(self):  # type: ignore[no-untyped-def]
        """None while a fair deal deals (our move waits for its shares, or the next decision
        for its cards): no key offers a move the log would refuse meanwhile."""
        if self.net.mirror.dealing or self.net.node.table.dealing:
            return None
        return super()._my_decision()

    def _submit(self, move: Move) -> None:
        if isinstance(move, Give) and move not in self.offered():
            self._say(f"{name_of(self.names, move.to)} did not knock for this card", refused=True)
            return
        try:
            try:
                apply(self.game.state, move)  # refused here in the engine's words, said in a player's
            except NeedValues:
                pass  # a fair deal: the move shows a card not open yet; the table checks it first
            self.game.submit(move)
        except (IllegalMove, Refused) as e:
            reason = e.reason if isinstance(e, Refused) else str(e)
            self._say(refusal_words(reason, self.game.state, self.human, self.names), refused=True)
            return
        self.swap_first = None
        self.take = None
        self.hand_index = 0
        self._say("")
        self.idle.clear()
        self.follow()
        self._wake.set()

    def follow(self) -> None:
        """Show the events the node took since we last looked, one by one."""
        if self.net.mirror.state is None:
            self.net.catch_up()
            return
        while True:
            state = self.net.mirror.state
            before = view(state, self.human)
            new = self.net.catch_up(self.net.mirror.seq + 1)
            if not new:
                return
            if new[0].kind == TAKEOVER:
                self.moves.append(takeover_words([s for s, _ in new[0].body["seats"]], self.names))
                continue
            if self.net.mirror.fair and self.net.mirror.state is state:
                continue  # a deal event that applied nothing yet, or a move waiting for its shares
            self._after_move(before)

    def _needs_knock_answer(self) -> bool:
        """ALLEGRA R16: another seat just drew from the deck and we have not answered yet."""
        state = self.game.state
        if state is None or self.net.mirror.head != self.net.node.table.head:
            return False
        d = to_act(state)
        if d is None or d.seat == self.human or d.kind is not DecisionKind.PLAY:
            return False
        if not any(isinstance(m, Give) and m.to == self.human for m in legal_moves(state)):
            return False
        head = self.net.mirror.head
        return head not in self._answered and self.human not in self.net.node.knocks.get(head, {})

    async def run(self) -> None:
        """Follow the game to its end; open the knock window when it is ours to answer."""
        while not self.quit:
            self.follow()
            await self._show_frames()
            if self.overlay == "game" or to_act(self.game.state) is None \
                    or self.net.mirror.stopped is not None:
                self.overlay = "game"
                self.finished = True
                self._say("The game is over: q quits.")
                self.idle.set()
                self.on_change()
                return
            if self.overlay is None and self._needs_knock_answer():
                head = self.net.mirror.head
                self._answered.add(head)
                self.pace.knock = KNOCK_ANSWER
                knocked = await self._knock_window()
                if self.net.node.table.head == head:
                    self.net.node.answer_knock(self.human, knocked)
                continue
            self.changed.clear()
            self.idle.set()
            self.on_change()
            waits = [asyncio.ensure_future(self.changed.wait()), asyncio.ensure_future(self._wake.wait())]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            self._wake.clear()
            self.idle.clear()


_REPEATED = re.compile(r"^(.*) \(x(\d+)\)$")


def _base(note: str) -> str:
    """A note without its repeat count."""
    m = _REPEATED.match(note)
    return m.group(1) if m else note


def _times(note: str) -> int:
    m = _REPEATED.match(note)
    return int(m.group(2)) if m else 1


def same_key_words(e: BaseException) -> str | None:
    """One line for a handshake refused because both ends show one key (a second terminal of
    the same person, on the same data directory), or None for any other failure: the
    handshake's own words ("a reflected hello ...") tell a person nothing."""
    if not isinstance(e, (HandshakeError, JoinError)) or e.code != SAME_KEY_CODE:
        return None
    return "refused: your key already sits at this table; --profile NAME gives another"


@dataclass
class Want:
    """What the person asked for on the command line."""

    interface: str
    name: str
    games_dir: Path
    host: dict[str, Any] | None = None  # run_host's options when hosting
    table: str | None = None  # a table to join by name or id (None: let the person choose)
    seat: int | None = None
    pin: str | None = None
    resume: Path | None = None  # a game of ours to go on with (allegra resume FILE)


class NetClient:
    """The network client's screens and keys: tables, waiting room, then the table."""

    def __init__(self, identity: Identity, want: Want, pace: Pace | None = None) -> None:
        self.identity = identity
        self.want = want
        self.pace = pace or Pace(bot=0.4)
        self.phase = "browse" if want.host is None and want.resume is None else "room"
        self.tables: dict[str, TableAd] = {}
        self.selected = 0
        self.notes: deque[str] = deque(maxlen=NOTES_KEPT)
        self.message = ""
        self.refused = False
        self.node: Node | None = None
        self.play: NetPlayClient | None = None
        self.ready = False
        self.failed = False
        self.failure = ""  # why the network failed, or the last refused join: printed on leaving
        self.quit = False
        self.keys_handled = 0
        self.idle = asyncio.Event()
        self.on_change: Callable[[], None] = lambda: None
        self.on_quit: Callable[[], None] = lambda: None
        self._choice: TableAd | None = None
        self._auto = True  # join the table named on the command line as soon as it is seen
        self._chosen: trio.Event | None = None  # made inside trio, set by a key
        self._quitted = asyncio.Event()
        self._scope: trio.CancelScope | None = None
        self._trio_done = asyncio.Event()
        self._node_changed = asyncio.Event()

    # ------------------------------------------------------------ shown

    @property
    def finished(self) -> bool:
        return self.play is not None and self.play.finished

    def say(self, text: str) -> None:
        """A note from the network (who connected, who is missing, refused messages)."""
        if self.notes and _base(self.notes[-1]) == text:  # "waiting for players ..." once, counted
            seen = _times(self.notes[-1]) + 1
            self.notes[-1] = f"{text} (x{seen})"
        else:
            self.notes.append(text)
        if self.play is not None and not self.play.frame:
            self.play.message = self._named(text)
            self.play.refused = text.startswith("refused")
        self.on_change()

    def _named(self, text: str) -> str:
        """A note names peers by key fingerprint; a person knows them by the names they sat
        down with: each fingerprint whose key holds a seat becomes that seat's name. Done
        as the notes are drawn, so "connected to ..." (said before the peer sat down) reads
        as its name once it has one."""
        node = self.node
        if node is None or "-" not in text:
            return text
        names: dict[str, list[str]] = {}  # peer (owner key) -> the names of the seats it plays
        claims = node.lobby.claims if node.lobby is not None else {}
        for _, c in sorted(claims.items()):
            names.setdefault(fingerprint(c.owner), []).append(c.name)
        if node.table.genesis is not None:
            for s in node.table.genesis.seats:
                names.setdefault(fingerprint(s.key), []).append(s.name)
        for fp, who in names.items():
            if fp in text and fp != self.identity.fingerprint:
                text = text.replace(fp, " and ".join(dict.fromkeys(who)))
        return text

    def _rows(self) -> list[TableAd]:
        return sorted(self.tables.values(), key=lambda a: (a.name, a.host))

    def keys(self) -> list[tuple[str, str]]:
        if self.phase == "browse":
            out = [("up/down", "choose"), ("enter", "join")] if self.tables else []
            return out + [("q", "quit")]
        if self.phase == "room":
            node = self.node
            if node is None or node.lobby is None or node.table.genesis is not None:
                return [("q", "leave")]
            out = [("r", "not ready" if self.ready else "ready")]
            if node.lobby.host == node.me and node.lobby.free_seats():
                out.append(("b", "seat a greedy bot"))
            return out + [("q", "leave")]
        return [("q", "quit")]

    def screen(self, width: int, height: int) -> list[Fragment]:
        if self.play is not None and self.phase == "table":
            return self.play.screen(width, height)
        if self.phase == "browse":
            rows = [TableRow(a.name, a.variant.title, a.seats_taken, a.seats_total,
                             a.pin, a.host) for a in self._rows()]
            lines = browse_lines(rows, self.selected, self.want.interface, notes=[self._named(n) for n in self.notes],
                                 message=self.message, refused=self.refused, keys=self.keys(),
                                 width=width, height=height)
        else:
            lines = room_lines(self._room(), notes=[self._named(n) for n in self.notes], message=self.message,
                               refused=self.refused, keys=self.keys(), width=width, height=height)
        return join_lines(lines)

    def _room(self) -> Room:
        node = self.node
        lobby = node.lobby if node is not None else None
        if node is None or lobby is None:
            where = self._choice.name if self._choice is not None else (self.want.table or "")
            return Room(where, "", False, "", (), "connecting to the table ...")
        rows = []
        for s in range(lobby.seats):
            c = lobby.claims.get(s)
            if c is None:
                rows.append(SeatRow(s, None, "", False, False))
                continue
            mine = c.owner == node.me
            who = ("you" if c.bot is None else f"your bot ({c.bot})") if mine else \
                (f"bot ({c.bot}) of {fingerprint(c.owner)[:9]}" if c.bot else fingerprint(c.owner))
            rows.append(SeatRow(s, c.name, who, c.ready, mine or c.owner in node.links))
        t = node.table
        if t.genesis is None:
            free = len(lobby.free_seats())
            waiting = sum(1 for c in lobby.claims.values() if not c.ready)
            stage = (f"waiting for {free} more player(s)" if free else
                     f"waiting for {waiting} player(s) to say ready" if waiting else "starting ...")
            if not self.ready:
                stage += "; press r when you are ready"
        else:
            seat = t.next_author()
            stage = (f"the game starts: seed ceremony, {t.stage()} of seat {seat} "
                     "(every seat commits to a secret before any is shown)")
        variant = ruleset_for(str(lobby.ruleset.get("variant"))).title
        return Room(lobby.name, variant, lobby.pin, fingerprint(lobby.host), tuple(rows), stage)

    # ------------------------------------------------------------ keys

    def handle_key(self, key: str) -> None:
        self.keys_handled += 1
        try:
            if self.play is not None and self.phase == "table":
                self.play.handle_key(key)
                return
            self._key(key)
        finally:
            self.on_change()

    def _key(self, key: str) -> None:
        self.message, self.refused = "", False
        if key in ("q", "c-c"):
            self._quit()
            return
        if self.phase == "browse":
            rows = self._rows()
            if key in ("up", "k") and rows:
                self.selected = (self.selected - 1) % len(rows)
            elif key in ("down", "j") and rows:
                self.selected = (self.selected + 1) % len(rows)
            elif key in ("enter", " ") and rows:
                self._join(rows[min(self.selected, len(rows) - 1)])
            return
        node = self.node
        if self.phase != "room" or node is None or node.table.genesis is not None:
            return
        if key == "r":
            self.ready = not self.ready
            node.set_ready(self.ready)
        elif key == "b":
            seat = node.add_bot("greedy")
            if seat is None:
                self.message, self.refused = "only the host seats bots, in a free seat", True

    def _join(self, ad: TableAd) -> None:
        if ad.seats_taken >= ad.seats_total:
            self.message, self.refused = f"table {ad.name!r} is full", True
            return
        if ad.pin and self.want.pin is None:
            self.message, self.refused = (f"table {ad.name!r} needs a PIN: start again with "
                                          "--pin PIN"), True
            return
        self._choice = ad
        if self._chosen is not None:
            self._chosen.set()

    def _quit(self) -> None:
        self.quit = True
        self._quitted.set()
        if self._scope is not None:
            self._scope.cancel()
        if self.play is not None:
            self.play.quit = True
        self.on_quit()

    # ------------------------------------------------------------ the network (trio)

    def _watch(self) -> None:
        self._node_changed.set()
        if self.play is not None:
            self.play.changed.set()
        self.on_change()

    def _got_node(self, node: Node) -> None:
        self.node = node
        node.watchers.append(self._watch)
        self.phase = "room"
        self.on_change()

    async def _network(self) -> None:
        want = self.want
        if want.resume is not None:
            try:
                await run_resume(want.interface, want.resume, self.say, person=True,
                                 on_node=self._got_node)
            except ResumeError as e:
                raise JoinError(str(e)) from None
            return
        if want.host is not None:
            await run_host(self.identity, want.interface, seats=[SeatSpec(want.name, None)]
                           + [SeatSpec(f"{b} {i + 1}", b) for i, b in enumerate(want.host["bots"])],
                           pin=want.pin, games_dir=want.games_dir, say=self.say,
                           on_listening=self._got_node, variant=want.host["variant"],
                           players=want.host["players"], table_name=want.host["table"],
                           takeover=want.host["takeover"], spectators=want.host["spectators"],
                           options=want.host.get("options"),
                           deal=want.host.get("deal", "seeded"))  # the command always says
            return
        while True:  # a refused join goes back to the list, with the reason
            ad = await self._choose_table()
            self.phase = "room"
            try:
                await run_guest(self.identity, want.interface, address=(ad.address, ad.port),
                                table_id=ad.game_id, seats=[SeatSpec(want.name, None)], pin=want.pin,
                                games_dir=want.games_dir, say=self.say, want_seat=want.seat,
                                on_node=self._got_node)
                return
            except _REFUSALS as e:
                if not self._back_to_list(ad, e):
                    raise
            except BaseExceptionGroup as group:  # a nursery passed it on
                leaf = _leaf(group)
                if not isinstance(leaf, _REFUSALS) or not self._back_to_list(ad, leaf):
                    raise

    def _back_to_list(self, ad: TableAd, e: BaseException) -> bool:
        """After a join the table refused (before its game began): the list again, the reason
        on it. False if the game had begun: that is a failure of the game, not a refusal."""
        node = self.node
        if node is not None and node.table.genesis is not None:
            return False
        self.node, self._choice, self.ready = None, None, False
        self.phase = "browse"
        self.tables.clear()  # the browse starts anew and lists what is there now
        self.selected = 0
        self._auto = False  # a table named on the command line is not joined again by itself
        same = same_key_words(e)  # one line of 80 whatever the table's name
        self.failure = same or f"{ad.name!r} refused: {e}"
        self.message, self.refused = self.failure, True
        self.on_change()
        return True

    def _reason(self, e: BaseException) -> str:
        return same_key_words(e) or str(e)

    async def _choose_table(self) -> TableAd:
        """Browse until the person picks a table (or the one named on the command line)."""
        self._chosen = trio.Event()
        wanted = self.want.table if self._auto else None
        async with Browser(self.want.interface) as browser:
            async def listen() -> None:
                async for change in browser:
                    if isinstance(change, (TableSeen, TableChanged)):
                        self.tables[change.service] = change.ad
                        if wanted and (change.ad.name == wanted
                                       or change.ad.game_id.hex().startswith(wanted.lower())):
                            self._join(change.ad)
                    elif isinstance(change, TableGone):
                        self.tables.pop(change.service, None)
                    self.on_change()

            async with trio.open_nursery() as n:
                n.start_soon(listen)
                await self._chosen.wait()
                n.cancel_scope.cancel()
        assert self._choice is not None
        return self._choice

    async def _trio_main(self) -> None:
        with trio.CancelScope() as scope:
            self._scope = scope
            if self.quit:
                scope.cancel()
            try:
                await self._network()
            except (JoinError, HandshakeError, DiscoveryError, OSError) as e:
                self._failed(e)
            except BaseExceptionGroup as group:  # a nursery passed it on
                leaf = _leaf(group)
                if not isinstance(leaf, (JoinError, HandshakeError, DiscoveryError, OSError)):
                    raise
                self._failed(leaf)

    def _failed(self, e: BaseException) -> None:
        self.failed = True
        self.failure = self._reason(e)
        self.message, self.refused = self.failure, True  # shown until q
        if self.play is not None:
            self.play.message, self.play.refused = self.message, True
        self.on_change()

    async def run(self) -> None:
        """Drive the screens: start trio as a guest, hand over to the table when play begins."""
        loop = asyncio.get_running_loop()

        def done(outcome: Any) -> None:
            self._trio_done.set()
            error = getattr(outcome, "error", None)  # outcome.Error, or Value for a clean end
            if error is not None and not isinstance(error, trio.Cancelled):
                self.failed = True
                self.failure = f"the network stopped: {error!r}"[:200]
                self.message, self.refused = self.failure, True
            self.on_change()

        trio.lowlevel.start_guest_run(self._trio_main, run_sync_soon_threadsafe=loop.call_soon_threadsafe,
                                      done_callback=done, host_uses_signal_set_wakeup_fd=True)
        while not self.quit:
            node = self.node
            if self.play is None and node is not None and node.table.state is not None:
                seat = self._my_seat(node)
                if seat is not None:
                    self.play = NetPlayClient(NetTable(node, seat), self.pace)
                    self.play.on_change = self.on_change
                    self.play.on_quit = self._quit
                    self.phase = "table"
                    await self.play.run()
                    self.idle.set()
                    await self._trio_done.wait()
                    return
            self._node_changed.clear()
            self.idle.set()
            self.on_change()
            waits = [asyncio.ensure_future(self._node_changed.wait()),
                     asyncio.ensure_future(self._trio_done.wait())]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            if self._trio_done.is_set() and self.play is None:
                self.idle.set()
                self.on_change()
                await self._quitted.wait()  # the message says what failed; q leaves
                return
            self.idle.clear()

    @staticmethod
    def _my_seat(node: Node) -> int | None:
        """The person's seat: the one we play, or (a takeover gave it to a bot while we were
        away) the one we sat at, now followed from there."""
        seat = next((s for s, sp in node.players.items() if sp.bot is None), None)
        if seat is None and node.lobby is not None:
            seat = next((s for s, c in sorted(node.lobby.claims.items())
                         if c.owner == node.me and c.bot is None), None)
        return seat

    async def stopped(self) -> None:
        """Wait for the network to wind down (after a quit)."""
        await self._trio_done.wait()


def run_net_client(identity: Identity, want: Want, pace: Pace) -> int:
    """`allegra host` / `allegra join` without --bot: the full-screen client; 0 after a
    finished game or a quit, 1 if the network failed."""
    from .app import make_application

    client = NetClient(identity, want, pace)
    app = make_application(client)

    async def main() -> None:
        await app.run_async()
        if client._scope is not None:
            client._scope.cancel()
        await client.stopped()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    node = client.node
    if node is not None and node.writer is not None:
        print(f"replay: {node.writer.path}")
        state = node.table.state
        if state is None or not node.table.over:  # left before the end: how to come back
            print(f"to go on with this game: {resume_command(node.writer.path, want.interface, profile_name())}")
    if client.failed or (client.failure and client.play is None):
        print(client.failure or client.message, file=sys.stderr)
        return 1
    return 0


__all__ = ["NetTable", "NetPlayClient", "NetClient", "Want", "run_net_client"]
