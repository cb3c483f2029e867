"""The play client's keys (issue 11, found 4 and 5): one key table makes the footer, the help
and the handling; no key has two meanings in one state; Ctrl-C asks; keys during a clear's
animation count; refusals and messages in a player's words.

Each test drives a real PlayClient (real signed game, real bots, its own driver task on
asyncio) with `handle_key`, as a keyboard would, and reads the screen as text.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Awaitable, Callable

from hypothesis import given, settings, strategies as st

from allegra_lan.log.identity import Identity
from allegra_lan.rules import Give, Place, apply, legal_moves, to_act, view
from allegra_lan.rules.effects import EndTriggered
from allegra_lan.tui.app import Pace, PlayClient
from allegra_lan.tui.keys import TABLE, bindings, check_table, help_entries, lookup
from allegra_lan.tui.play import PlayArgs, start_game
from allegra_lan.tui.screen import help_lines, plain
from allegra_lan.tui.words import Frame, describe_effects, refusal_words

ME = Identity.from_seed(b"test-tui-keys")


class Driven:
    """A PlayClient whose driver runs as a task; keys go straight to handle_key."""

    def __init__(self, client: PlayClient) -> None:
        self.client = client

    def screen(self, width: int = 80, height: int = 24) -> str:
        return "\n".join(line.rstrip() for line in plain(self.client.screen(width, height)).split("\n"))

    def footer(self) -> str:
        return "   ".join(self.screen().split("\n")[-2:])

    def message(self) -> str:
        return self.screen().split("\n")[-3]

    async def press(self, key: str) -> str:
        self.client.handle_key(key)
        for _ in range(3):
            await asyncio.sleep(0)
        await asyncio.wait_for(self.client.idle.wait(), 30)
        return self.screen()


def run(variant: str, players: int, seed: int, tmp: Path, body: Callable[[Driven], Awaitable[None]],
        pace: Pace | None = None) -> PlayClient:
    async def main() -> PlayClient:
        game, bots, writer, path = start_game(
            PlayArgs(variant=variant, players=players, seed=seed, name="ann"), ME, tmp)
        client = PlayClient(game, bots, 0, writer=writer, pace=pace or Pace(bot=0, knock=None),
                            replay_path=path)
        task = asyncio.ensure_future(client.run())
        await asyncio.wait_for(client.idle.wait(), 30)
        try:
            await body(Driven(client))
        finally:
            client.quit = True
            client._wake.set()
            await asyncio.wait_for(task, 30)
            client.close()
        return client

    return asyncio.run(main())


async def until_hint(c: PlayClient) -> None:
    """The hint the key asked for (worked out in a thread) is shown and is an offered move."""
    for _ in range(500):
        if c._thinking is None or c._thinking.done():
            break
        await asyncio.sleep(0.01)
    h = c.advice_now()
    assert h is not None and h.move in c.offered(), c.message
    assert c.ui_state().status == f"Hint: {h.text}"
    assert set(h.cells) <= c.ui_state().marked


def footer_items(d: Driven) -> list[tuple[str, str]]:
    return list(d.client.keys())


async def until(d: Driven, want: Callable[[], bool], limit: int = 3000) -> None:
    """Play on (by the footer, simply) until `want()` holds."""
    for _ in range(limit):
        if want():
            return
        keys = dict((does, key) for key, does in footer_items(d))
        if "next round" in keys:
            await d.press("enter")
        elif "pass" in keys:
            await d.press("n")
        elif "draw from deck" in keys:
            await d.press("d")
        elif "discard it" in keys or "discard the deck card" in keys:
            await d.press("x")
        elif any(k == "enter" for k, _ in footer_items(d)):
            await d.press("enter")
            if d.client.refused:
                await d.press("l")
                if d.client.pos[1] == 0:
                    await d.press("j")
        elif d.client.finished:
            raise AssertionError("the game ended first")
        else:
            raise AssertionError("nothing to press:\n" + d.screen())
    raise AssertionError("never got there:\n" + d.screen())


# ----------------------------------------------------------------- the table itself


def test_no_key_has_two_meanings_in_one_situation() -> None:
    assert check_table() == []
    for variant in ("grande", "allegra"):
        for situation in TABLE:
            names = [n for k in bindings(variant, situation) for n in k.names]
            assert len(names) == len(set(names)), (variant, situation, names)
    knock = bindings("allegra", "knock_window")
    assert [k.action for k in knock if "k" in k.names] == []  # k moves up; it never knocks


def test_each_variants_help_lists_its_own_keys_only() -> None:
    """ALLEGRA's help listed Grande's 1 and 2 (and Grande's swap); Grande's had no knock."""
    allegra = "\n".join(help_lines("allegra"))
    grande = "\n".join(help_lines("grande"))
    assert "1/2" not in allegra and "which card in hand" not in allegra and "swap" not in allegra
    assert "knock" in allegra and "knock" not in grande and "1/2" in grande
    assert "g then" not in allegra  # the give key is the knocker's number, as the footer says
    assert "seat number" in allegra
    # Every help line's key is a binding of the table, and every binding is in the help.
    for variant in ("grande", "allegra"):
        labels = {label for label, _ in help_entries(variant)}
        text = "\n".join(help_lines(variant))
        for label in labels:
            assert f"  {label} " in text, (variant, label)


# ----------------------------------------------------------------- footer = help = keys


def test_every_key_the_footer_shows_is_in_the_help_and_does_what_it_says(tmp_path: Path) -> None:
    """A whole 3-player game of each variant: at every step the footer's keys are written as
    the help writes them, and pressing one does what its words say."""
    for variant, seed in (("grande", 4), ("allegra", 2)):
        help_text = "\n".join(help_lines(variant))
        seen: set[str] = set()

        async def body(d: Driven) -> None:
            c = d.client
            for step in range(8000):
                if c.finished:
                    return
                items = footer_items(d)
                assert items, d.screen()
                for key, does in items:
                    if not key.isdigit():  # a give key is a seat's number, in the help as such
                        assert f"  {key} " in help_text or key == "any key", (variant, key, help_text)
                    seen.add(does)
                # Press the footer's items in turn (never quit), checking each one's words.
                pick = [(k, w) for k, w in items
                        if w not in ("quit", "help", "rules", "move", "cancel", "choose again")]
                if c.refused and step % 2:  # the cursor's card would not do: move on
                    await d.press("l" if step % 6 != 5 else "j")
                    continue
                hint_key = lookup(c._variant(), c.situation(), "a")
                if step % 5 == 0 and hint_key is not None and hint_key.action == "hint":
                    await d.press("a")  # the hint (help only, not the footer): an offered move
                    await until_hint(c)
                key, does = pick[(step // 2) % len(pick)]
                name = {"arrows/hjkl": "l", "esc": "escape", "1/2": "2"}.get(key, key)
                events = len(c.game.table.events)
                text = await d.press(name)
                new = c.game.table.events[events:]
                if does == "draw from deck":
                    assert new and new[0].kind == "draw_deck", (does, text)
                elif does == "take discard":
                    assert new and new[0].kind == "take_discard", (does, text)
                elif does.startswith("discard"):
                    assert new and new[0].kind == "discard", (does, text)
                elif does.startswith("give to "):
                    assert new and new[0].kind == "give" and new[0].body["to"] == int(key), text
                elif does == "knock":  # (a bot's next draw may open a new window before we look)
                    assert c.knocked or not c.knock_open or any(
                        m.startswith("you knocked") for m in c.moves)
                elif does in ("turn up", "place here", "place the given card", "peek at this card",
                              "peek at this row", "peek at this column", "replace this open card",
                              "swap with this", "put it here"):
                    assert new or c.refused, (does, text)  # the cursor's card may not do
                    if new:
                        kind = {"turn up": "turn_up", "place here": "place",
                                "place the given card": "place", "peek at this card": "peek_card",
                                "peek at this row": "peek_line", "peek at this column": "peek_line",
                                "replace this open card": "replace_open", "swap with this": "swap",
                                "put it here": "exchange"}[does]
                        assert new[0].kind == kind, (does, new[0].kind)
                elif does == "swap two cards":
                    assert c.swap_first is not None or c.refused
                elif does == "take this card":
                    assert c.take is not None or c.refused
                elif does == "next round":
                    assert c.overlay is None or c.finished
            raise AssertionError("the game did not end")

        client = run(variant, 3, seed, tmp_path / variant, body)
        assert client.finished
        assert {"draw from deck", "turn up", "next round"} <= seen, seen


def test_the_help_and_the_footer_write_keys_alike_on_screen(tmp_path: Path) -> None:
    """The footer wrote `arrows/hjkl`, the help `arrows or h j k l`; now one table writes
    both: every footer key of the table's screen is in the help screen."""
    async def body(d: Driven) -> None:
        footer = d.footer()
        text = await d.press("?")
        assert "Keys" in text
        await d.press("x")  # any key closes the help
        keys = [k for k, _ in d.client.keys()]
        await d.press("?")
        shown = d.screen()
        for k in keys:
            assert f"  {k} " in shown, (k, shown)
        assert "arrows/hjkl" in footer

    run("grande", 3, 5, tmp_path, body)


# ----------------------------------------------------------------- single findings


def test_k_never_knocks_y_does(tmp_path: Path) -> None:
    """A hjkl player's `k` in the knock window only moved... and knocked: now it does not."""
    async def body(d: Driven) -> None:
        await until(d, lambda: d.client.knock_open)
        assert " y  knock" in d.footer() and " k " not in d.footer()
        assert d.message() == "Tip: Knock (y) for this card: you'd place it and the giver takes one of yours."
        await d.press("k")
        assert d.client.knock_open and not d.client.knocked, d.screen()
        assert "knocked" not in d.message().lower()
        await d.press("y")
        assert any(m.startswith("you knocked for") for m in d.client.moves), d.client.moves

    run("allegra", 4, 1, tmp_path, body)


def test_ctrl_c_asks_like_q(tmp_path: Path) -> None:
    async def body(d: Driven) -> None:
        text = await d.press("c-c")
        assert not d.client.quit and "Quit this game? y quits" in text
        assert " y  quit" in d.footer()
        text = await d.press("n")  # any other key: go on playing
        assert not d.client.quit and "Quit this game?" not in text
        await d.press("c-c")
        d.client.handle_key("c-c")  # a second Ctrl-C quits
        assert d.client.quit

    run("grande", 2, 3, tmp_path, body)


def test_a_key_pressed_while_a_clear_is_shown_is_kept(tmp_path: Path) -> None:
    """The header already says it is your turn while an opponent's clear is drawn: `d` then
    ends the animation and draws (it was dropped with "wait: the table is showing...")."""
    async def body(d: Driven) -> None:
        c = d.client
        await until(d, lambda: any(k == "d" for k, _ in c.keys()))
        v = view(c.game.state, 0)
        c.frame = Frame(v.displays, frozenset(), "clear: 3 cards")  # as the driver shows one
        assert "clear: 3 cards" in d.screen()
        events = len(c.game.table.events)
        text = await d.press("d")
        assert c.frame is None
        assert c.game.table.events[events].kind == "draw_deck", text
        assert "wait" not in d.message().lower()

    run("grande", 3, 5, tmp_path, body)


def test_refusals_are_in_a_players_words(tmp_path: Path) -> None:
    async def body(d: Driven) -> None:
        text = await d.press("x")  # the round starts with turning up cards
        line = d.message()
        assert line == "First turn up a card to start the round.", text
        await d.press("enter")
        text = await d.press("enter")  # the same card again: it is up now
        line = d.message()
        assert line.startswith("Not this card: choose a closed card"), text
        for bad in ("seat 0", "is expected", "refused:", "Slot"):
            assert bad not in text

    run("grande", 3, 5, tmp_path, body)


def test_an_old_message_goes_when_the_table_moves_on(tmp_path: Path) -> None:
    """"you let it pass" stayed for turns; a message lasts while the table is where it was."""
    async def body(d: Driven) -> None:
        await until(d, lambda: d.client.knock_open)
        await d.press("n")
        await until(d, lambda: d.client._my_decision() is not None and not d.client.knock_open)
        assert "let it pass" not in d.message(), d.screen()

    run("allegra", 4, 1, tmp_path, body)


def test_the_rules_page_opens_scrolls_and_closes(tmp_path: Path) -> None:
    async def body(d: Driven) -> None:
        text = await d.press("r")
        assert "ALLEGRA Grande: THE RULES" in text and "more lines below" in text
        first = text.split("\n")[0]
        text = await d.press("down")
        assert text.split("\n")[0] != first
        for _ in range(200):
            text = await d.press("down")
        assert "end of the rules" in text and "Joker" in text and "doubled" in text
        text = await d.press("x")  # any other key: back to the table
        assert "to act: you" in text.split("\n")[0]

    run("grande", 3, 5, tmp_path, body)


def test_first_time_tips(tmp_path: Path) -> None:
    """A tip the first time a clear happens and when a round's ender is doubled (and why)."""
    tips: list[str] = []

    async def body(d: Driven) -> None:
        def note() -> None:
            line = d.message()
            if line.startswith("Tip: ") and line not in tips:
                tips.append(line)
        d.client.on_change = note
        await until(d, lambda: d.client.finished, limit=8000)

    client = run("grande", 4, 1, tmp_path, body)
    assert {"clear", "doubled", "action"} <= client.hints_given, client.hints_given
    assert any(t.startswith("Tip: A ") and "drawn: discard it (x)" in t for t in tips), tips
    assert any("cleared" in t for t in tips), tips
    assert any(re.search(r"ended the round on -?\d+, not the lowest \(-?\d+\): doubled to", t)
               for t in tips), tips
    assert all(len(t) <= 80 for t in tips)


# ----------------------------------------------------------------- words (found 3 and 5)


def _allegra_state(tmp: Path):  # type: ignore[no-untyped-def]
    game, _, _, _ = start_game(PlayArgs(variant="allegra", players=3, seed=11, name="ann"), ME, tmp)
    return game


def test_a_knock_exchange_says_the_card_came_from_your_area(tmp_path: Path) -> None:
    game = _allegra_state(tmp_path)
    s = game.state
    names = ("ann", "greedy 1", "greedy 2")
    for _ in range(400):  # play first-legal moves until seat 0 can be given a drawn card
        d = to_act(s)
        assert d is not None
        moves = legal_moves(s)
        give = [m for m in moves if isinstance(m, Give) and m.to == 0]
        if give and d.seat != 0:
            s = apply(s, give[0])
            place = [m for m in legal_moves(s) if isinstance(m, Place)][0]
            s = apply(s, place)
            ex = [m for m in legal_moves(s) if m.take.seat == 0]  # type: ignore[attr-defined]
            before = view(s, 0)
            after_s = apply(s, ex[0])
            lines = describe_effects(before, view(after_s, 0), after_s.effects, names)
            took = [ln for ln in lines if " took the " in ln]
            assert took and "from your row" in took[0], lines
            return
        s = apply(s, [m for m in moves if not isinstance(m, Give)][0])
    raise AssertionError("no give to seat 0")


def test_an_end_triggered_by_another_seats_move_says_so(tmp_path: Path) -> None:
    game = _allegra_state(tmp_path)
    names = ("ann", "greedy 1", "greedy 2")
    s = game.state
    v = view(s, 0)
    actor = v.active
    other = (actor + 1) % 3
    lines = describe_effects(v, view(s, other), [EndTriggered(other)], names)
    assert lines == [f"{names[actor]}'s move left you with no closed card: you ended the round;"
                     " last turns for the others"], lines
    me = view(s, actor)
    lines = describe_effects(me, me, [EndTriggered(actor)], names)
    assert lines == ["you have no closed card left: last turns for the others"], lines


# ----------------------------------------------------------------- any key, any words

_ALL_KEYS = sorted({n for keys in TABLE.values() for k in keys for n in k.names if n != "*"}
                   | {"g", "z", "K", "tab", "backspace", "f1", "", "\x00", "9", "-"})


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["grande", "allegra"]),
       st.lists(st.one_of(st.sampled_from(_ALL_KEYS), st.text(max_size=3)), max_size=40))
def test_any_keys_in_any_order_never_break_the_table(variant: str, keys: list[str]) -> None:
    """handle_key takes what a terminal sends: whatever comes, the client stays drawable, its
    footer comes from the table, and a refusal is one line."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        game, bots, writer, path = start_game(
            PlayArgs(variant=variant, players=3, seed=3, name="ann"), ME, Path(tmp))
        client = PlayClient(game, bots, 0, writer=writer, pace=Pace(bot=0, knock=None),
                            replay_path=path)
        for key in keys:
            client.handle_key(key)
            if client.quit:
                break
            text = plain(client.screen(80, 24))
            assert len(text.split("\n")) == 24
            labels = {k.label for k in bindings(variant, client.situation())}
            for label, _ in client.keys():
                assert label in labels or label.isdigit(), (label, client.situation())
            message, _ = client.message_now()
            assert "\n" not in message and len(message) < 400
        client.close()


_STATE: list[object] = []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_refusal_reads_as_one_sentence(reason: str) -> None:
    if not _STATE:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            _STATE.append(_allegra_state(Path(tmp)).state)
    words = refusal_words(reason, _STATE[0], 0, ("ann", "greedy 1", "greedy 2"))
    assert isinstance(words, str)
    assert "(R1" not in words and "seat 0 row" not in words


def test_a_doubled_ender_whose_end_another_seat_caused_is_told_why(tmp_path: Path) -> None:
    """ALLEGRA: another seat's move turned up your last closed card; the round's end said
    "you ended the round without the lowest sum" and no word of their move. The tip says it."""
    from allegra_lan.rules.effects import RoundEnded

    from allegra_lan.tui.words import first_time_hints

    from allegra_lan.bots.registry import make_bot

    game = _allegra_state(tmp_path)
    names = ("ann", "greedy 1", "greedy 2")
    bots = [make_bot("greedy", bytes([seat + 1])) for seat in range(3)]
    s = game.state
    for _ in range(3000):
        d = to_act(s)
        assert d is not None
        moves = [m for m in legal_moves(s) if not isinstance(m, Give)]
        before = s
        s = apply(s, bots[d.seat].choose(view(s, d.seat), moves))
        if any(isinstance(e, RoundEnded) for e in s.effects) and s.results[-1].doubled:
            r = s.results[-1]
            assert r.ender is not None
            other = (r.ender + 1) % 3
            tips = dict(first_time_hints(view(before, r.ender), view(s, r.ender), s.effects,
                                         names, ended_by=other))
            assert tips["doubled"] == (f"{names[other]} turned up your last closed card: you "
                                       f"ended the round, {r.raw[r.ender]} doubled to "
                                       f"{r.scores[r.ender]}."), tips
            own = dict(first_time_hints(view(before, r.ender), view(s, r.ender), s.effects, names))
            assert own["doubled"].startswith(f"You ended the round on {r.raw[r.ender]}, not the lowest")
            return
    raise AssertionError("no doubled round")
