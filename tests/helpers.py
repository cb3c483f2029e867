"""Helpers the test modules share without touching the network (tests/conftest.py's
directory is on sys.path, so any test module imports them; no test module imports another).

- Rulings: effects counted over several moves, filler displays, and one deterministic
  player that brings rounds to their end without any strategy.
- Signed games in one process: a LocalGame of derived keys, random play, and the signed
  takeover of seats with the remaining seats' consent.
- The terminal client by keys: an 80x24 dummy output, and a player that presses what the
  footer offers (any object with press/footer/screen and client.refused will do).

Network helpers (peers, `allegra` subprocesses) are in tests/net_helpers.py.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, TypeVar

from prompt_toolkit.data_structures import Size
from prompt_toolkit.output import DummyOutput

from allegra_lan.local import LocalGame, Player, derived
from allegra_lan.log.envelope import sign_event
from allegra_lan.log.identity import Identity
from allegra_lan.log.takeover import sign_consent
from allegra_lan.rules import (
    Discard, DrawFromDeck, Give, IllegalMove, Move, State, apply, legal_moves, ruleset_for,
    ruleset_from_dict, to_act,
)
from allegra_lan.rules.effects import Cleared, Effect
from allegra_lan.rules.rng import Stream
from allegra_lan.table import Table

T = TypeVar("T")


def closed_display(rows: int = 4, cols: int = 4) -> list[str]:
    """A display of closed filler cards, for the seats a test does not look at."""
    return [" ".join(["?"] * cols) for _ in range(rows)]


def of_type(effects: Sequence[Effect], kind: type[T]) -> list[T]:
    return [e for e in effects if isinstance(e, kind)]


def cleared_cards(effects: Sequence[Effect]) -> int:
    return sum(len(e.cards) for e in of_type(effects, Cleared))


def clear_steps(effects: Sequence[Effect]) -> int:
    """Clearing steps as RULINGS.md counts them: distinct `step` numbers of the clears."""
    return len({e.step for e in of_type(effects, Cleared)})


def illegal(state: State, move: Move) -> str:
    """The refusal message of a move the test expects to be illegal."""
    try:
        apply(state, move)
    except IllegalMove as err:
        return str(err)
    raise AssertionError(f"{move!r} was accepted in phase {state.phase.name}")


@dataclass
class Played:
    """A state reached by several moves, with every effect on the way (apply keeps only the last)."""

    state: State
    effects: list[Effect] = field(default_factory=list)
    decisions: list[tuple[int, str]] = field(default_factory=list)


def play(state: State, moves: Sequence[Move]) -> Played:
    out = Played(state)
    for move in moves:
        d = to_act(out.state)
        assert d is not None, "the game is over"
        out.decisions.append((d.seat, d.kind))
        out.state = apply(out.state, move)
        out.effects.extend(out.state.effects)
    return out


def quick_move(state: State) -> Move:
    """Draw from the deck and discard at once (so a closed card turns up every time):
    rounds end in a few turns. Never gives to a knocker; a discard-pile card is placed."""
    moves = legal_moves(state)
    for m in moves:
        if isinstance(m, DrawFromDeck):
            return m
    for m in moves:
        if isinstance(m, Discard):
            return m
    return next(m for m in moves if not isinstance(m, Give))


def greedy_play(state: State, moves: int, seed: bytes) -> State:
    """`moves` moves of greedy play from `state`, Gives offered as the driver offers them
    (fewer if the game ends first)."""
    from allegra_lan.bots.driver import make_bots, offered_moves
    from allegra_lan.rules import view

    bots = make_bots(["greedy"] * state.players, seed)
    for _ in range(moves):
        d = to_act(state)
        if d is None:
            break
        state = apply(state, bots[d.seat].choose(view(state, d.seat), offered_moves(state, bots)))
    return state


def play_until(state: State, done: Callable[[Played], bool], limit: int = 20_000,
               chooser: Callable[[State], Move] = quick_move) -> Played:
    """Apply `chooser`'s moves until `done` says so (checked after every move)."""
    out = Played(state)
    for _ in range(limit):
        if done(out):
            return out
        d = to_act(out.state)
        assert d is not None, "the game ended before the awaited moment"
        out.decisions.append((d.seat, d.kind))
        out.state = apply(out.state, chooser(out.state))
        out.effects.extend(out.state.effects)
    raise AssertionError("the awaited moment never came")


# ---------------------------------------------------------------- signed games in one process


def players(n: int, tag: int = 0) -> list[Player]:
    """`n` players with keys derived from (tag, seat): the same keys in every run."""
    return [Player(f"p{i}", Identity.from_seed(derived("test-key", tag, i))) for i in range(n)]


def local(variant: str = "grande", n: int = 3) -> LocalGame:
    """A signed game of `n` derived players in one process, its game id and nonces fixed."""
    return LocalGame(ruleset_for(variant), players(n), game_id=derived("game", variant, n)[:16],
                     nonces=[derived("nonce", i) for i in range(n)])


def play_random(g: LocalGame, moves: int, seed: bytes = b"r" * 32) -> None:
    """Up to `moves` legal moves chosen by a seeded stream (fewer if the game ends)."""
    rng = Stream(seed, "test")
    for _ in range(moves):
        if to_act(g.state) is None:
            return
        lm = legal_moves(g.state)
        g.submit(lm[rng.below(len(lm))])


class TestClock:
    """A clock for signed logs that moves 1 s on each reading (ms since the epoch), from a
    fixed start, so the logs are the same every run."""

    __test__ = False  # not a test class, whatever pytest's name rules say

    def __init__(self, start: int = 1_800_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        self.now += 1000
        return self.now


def fair_game(variant: str = "allegra", n: int = 2, *, rounds: int = 1, cheat: Any = None,
              tag: str = "fair") -> LocalGame:
    """A fair-deal game (issue 12) of `n` greedy bots, one table per seat, played until it
    ends or halts (a cheat of deal/cheats.py may break or withhold its deal)."""
    from allegra_lan.bots.driver import play_game

    rs = ruleset_from_dict({**ruleset_for(variant).to_dict(), "rounds": rounds})
    g = LocalGame(rs, players(n), game_id=derived(tag, variant, n)[:16],
                  nonces=[derived(f"{tag}-nonce", i) for i in range(n)], clock=TestClock(),
                  deal="fair", cheat=cheat)
    assert g.table.seed is not None
    play_game(rs, n, g.table.seed, ["greedy"] * n, record=g)
    return g


def new_key(tag: str) -> Identity:
    """A bot's key derived from `tag`."""
    return Identity.from_seed(derived("takeover-key", tag))


def takeover(g: LocalGame, table: Table, taken: list[int], *, author: int | None = None,
             signers: list[int] | None = None, keys: list[Identity] | None = None) -> bytes:
    """The signed takeover of `taken` at `table`'s next seq, consented by `signers`."""
    keys = keys or [new_key(f"bot{s}") for s in taken]
    seats = [(s, k.public) for s, k in zip(taken, keys)]
    stay = [s for s in range(table.players) if s not in taken]
    signers = stay if signers is None else signers
    game = table.game
    assert game is not None
    signs = [[s, sign_consent(g.players[s].identity.key, game, table.seq, table.head, seats)]
             for s in signers]
    author = stay[0] if author is None else author
    return sign_event(g.players[author].identity.key, game=game, seq=table.seq, prev=table.head,
                      kind="takeover", body={"seats": [[s, k] for s, k in seats], "signs": signs}).signed


# ---------------------------------------------------------------- the terminal client by keys


class Screen24(DummyOutput):
    """A dummy terminal of 80x24 (DummyOutput alone says 80x40)."""

    def get_size(self) -> Size:
        return Size(rows=24, columns=80)



@dataclass
class KeySession:
    """The play client under a real prompt_toolkit Application, pressed like a keyboard:
    each press waits until the client handled the key and is idle, then reads the screen
    (80x24) and keeps it in `screens`."""

    client: Any  # tui.app.PlayClient (imported by the tests that make one)
    inp: Any
    screens: list[str] = field(default_factory=list)
    pressed: str | None = field(default=None, repr=False)  # the screen the last press read, while current

    def screen(self) -> str:
        """What the Application draws now, as text (its control's formatted text at 80x24)."""
        from allegra_lan.tui.screen import plain

        return "\n".join(line.rstrip() for line in plain(self.client.screen(80, 24)).split("\n"))

    def footer(self) -> str:
        """The screen's last two lines. Right after a press, the screen that press read is
        the screen now, and is not drawn again: the client changes only in the event loop's
        callbacks and tasks, and `press` drops it at the loop's next turn (a player reads
        the footer before every key, just after the last key's screen: drawing that screen
        again was a third of the CPU of a game played by keys)."""
        text = self.pressed if self.pressed is not None else self.screen()
        return "   ".join(text.split("\n")[-2:])

    async def press(self, key: str) -> str:
        import asyncio

        n = self.client.keys_handled
        self.pressed = None
        self.inp.send_text(key)
        while self.client.keys_handled <= n:
            await asyncio.sleep(0.001)
        await asyncio.wait_for(self.client.idle.wait(), 30)
        text = self.screen()
        self.screens.append(text)
        # Current until the loop runs anything else: this task was running when the callback
        # was queued, so it can only be woken after it, and so can whatever changes the client.
        self.pressed = text
        asyncio.get_running_loop().call_soon(self._forget, text)
        return text

    def _forget(self, text: str) -> None:
        if self.pressed is text:
            self.pressed = None


class Refusing(Protocol):
    @property
    def refused(self) -> object: ...


class Keyed(Protocol):
    """What choose and press_offered drive: the local play session of test_tui_play and the
    networked person of test_tui_net both have this shape."""

    @property
    def client(self) -> Refusing: ...

    async def press(self, key: str) -> str: ...

    def screen(self) -> str: ...

    def footer(self) -> str: ...


async def choose(s: Keyed) -> None:
    """Enter on the cursor's card; when refused, walk the cursor over the display until
    a choice is taken (right along a row, then down a row)."""
    for step in range(40):
        await s.press("\r")
        if not s.client.refused:
            return
        await s.press("j" if step % 5 == 4 else "l")
    raise AssertionError("no card here can be chosen:\n" + s.screen())


def footer_key(footer: str, label: str) -> str | None:
    """The key the footer shows for `label` (` y  knock` -> "y"; `enter` -> "\r"), or None."""
    m = re.search(r"(?:^| )(\S+)  " + re.escape(label) + r"(?:  |$)", footer)
    if m is None:
        return None
    return {"enter": "\r", "esc": "\x1b", "space": " "}.get(m.group(1), m.group(1))


async def press_offered(s: Keyed, knock: str = "n") -> str | None:
    """Press what the footer offers: knock or pass, give, draw from the deck, discard, peek,
    turn up, place; when a choice is refused, move the cursor and try again. Returns what it
    did ("knock", "give", ...), or None when the footer offers nothing to do. `knock`: "k"
    (or "y") knocks when the knock window is open, anything else lets it pass; the keys
    pressed are the ones the footer shows."""
    f = s.footer()
    if footer_key(f, "knock") is not None:
        key = footer_key(f, "knock") if knock in ("k", "y") else footer_key(f, "pass")
        assert key is not None, f
        await s.press(key)
        return "knock"
    if "give to" in f:
        await s.press(f.split(" give to")[0].split()[-1])
        return "give"
    if "next round" in f:
        await s.press("\r")
        return "next round"
    if "draw from deck" in f:
        await s.press("d")
        return "draw"
    if "discard it" in f:
        await s.press("x")
        return "discard"
    if "peek at this row" in f or "peek at this column" in f:
        # Through the cursor: a row, else a column, else move on and try again.
        for line in ("row", "column"):
            key = footer_key(f, f"peek at this {line}")
            if key is not None:
                await s.press(key)
                if not s.client.refused:
                    return "peek"
        await s.press("j")
        await s.press("l")
        return "move"
    if "enter" in f:
        await choose(s)
        return "choose"
    return None
