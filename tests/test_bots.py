"""Bots: they see only views, always answer with an offered move, and greedy plays well.

Also the driver (`allegra_lan.bots.driver`): the ALLEGRA knock window (R16)
offers Give moves only to the seats that knocked, and its statistics come
from the engine's effects.
"""

from __future__ import annotations

import ast
import pathlib
from statistics import mean
from typing import Sequence

import pytest
from hypothesis import given, settings, strategies as st

from allegra_lan.bots import (
    Bot, BotError, GreedyBot, RandomBot, UnknownBot, bot_names, make_bot, play_game, seat_seed,
)
from allegra_lan.bots.driver import offered_moves
from allegra_lan.bots.greedy import Judge, Weights, _lines_near_run
from allegra_lan.bots.strong import strong_weights
from allegra_lan.rules import (
    AllegraRuleset, Discard, DrawFromDeck, Give, Move, PeekCard, Place, ReplaceOpen, SeatView, Slot, State,
    Swap, TakeDiscard, apply, legal_moves, new_game, ruleset_for, state_hash, to_act, view,
)
from allegra_lan.rules.effects import Discarded, Given
from allegra_lan.rules.position import build
from allegra_lan.rules.rng import seed_from_number
from helpers import greedy_play

GRANDE = ruleset_for("grande")
ALLEGRA = ruleset_for("allegra")
CLOSED = "? ? ? ?"
DECK = ["?"] * 12
BOTS_DIR = pathlib.Path(__file__).resolve().parents[1] / "allegra_lan" / "bots"


class Checked(Bot):
    """Wraps a bot and checks, at every call, that it gets a view (never the state) of its own
    seat, and answers with one of the moves it was offered."""

    def __init__(self, inner: Bot, seat: int) -> None:
        self.inner = inner
        self.seat = seat
        self.name = inner.name
        self.calls = 0
        self.knock_calls = 0

    def choose(self, view: SeatView, legal: Sequence[Move]) -> Move:
        assert isinstance(view, SeatView) and not isinstance(view, State)
        assert view.seat == self.seat and view.decision is not None and view.decision.seat == self.seat
        assert legal
        move = self.inner.choose(view, legal)
        assert move in legal, f"{self.name} chose {move!r}, not offered"
        self.calls += 1
        return move

    def knocks(self, view: SeatView) -> bool:
        assert isinstance(view, SeatView)
        assert view.seat == self.seat and view.decision is not None
        assert view.decision.kind == "play" and view.decision.seat != self.seat
        assert len(view.hand) == 1 and view.hand[0].from_deck
        self.knock_calls += 1
        answer = self.inner.knocks(view)
        assert isinstance(answer, bool)
        return answer


def checked_game(variant: str, players: int, names: Sequence[str], seed: bytes) -> tuple[State, list[Checked]]:
    bots = [Checked(make_bot(n, seat_seed(seed, i)), i) for i, n in enumerate(names)]
    state, _ = play_game(ruleset_for(variant), players, seed, bots)
    return state, bots


def ask(state: State, seat: int | None = None, bot: Bot | None = None) -> Move:
    """What a greedy bot (or `bot`) plays in a position, through that seat's view."""
    d = to_act(state)
    assert d is not None
    seat = d.seat if seat is None else seat
    bot = bot or make_bot("greedy", b"test" * 8)
    return bot.choose(view(state, seat), legal_moves(state))


# ------------------------------------------------------------------ registry


def test_registry_names_and_kinds() -> None:
    assert bot_names() == ["easy", "greedy", "hard", "normal", "random", "strong"]
    assert isinstance(make_bot("greedy", b"s"), GreedyBot)
    assert isinstance(make_bot("random", b"s"), RandomBot)


def test_unknown_bot_is_a_clear_error() -> None:
    with pytest.raises(UnknownBot, match=r"unknown bot 'clever': choose from easy, greedy, hard, normal, random, strong"):
        make_bot("clever", b"s")


def test_bots_use_no_state_engine_internals_or_python_random() -> None:
    """DESIGN property 6: a bot module may read views, moves and rulesets, never the State,
    the engine, the card source, or Python's `random` (which is not a protocol)."""
    forbidden = {
        "random", "allegra_lan.rules.state", "allegra_lan.rules.engine",
        "allegra_lan.rules.cards", "allegra_lan.rules.position",
    }
    for name in ("base.py", "random_bot.py", "greedy.py", "board.py", "registry.py", "strong.py"):
        tree = ast.parse((BOTS_DIR / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mods = [node.module or ""]
            else:
                continue
            for mod in mods:
                assert mod not in forbidden, f"{name} imports {mod}"
                assert not (isinstance(node, ast.ImportFrom) and mod == "allegra_lan.rules"
                            and any(a.name in ("State", "apply", "legal_moves") for a in node.names)), name


# ------------------------------------------------------------------ legal answers


@pytest.mark.parametrize(
    ("variant", "players"),
    [("grande", n) for n in range(2, 6)] + [("allegra", n) for n in range(2, 7)],
)
def test_bots_answer_offered_moves_from_views(variant: str, players: int) -> None:
    """Whole games, greedy and random seats mixed, two seeds each: every call is checked."""
    for g in range(2):
        seed = seed_from_number(90 + players, g)
        names = ["greedy" if (i + g) % 2 == 0 else "random" for i in range(players)]
        state, bots = checked_game(variant, players, names, seed)
        assert to_act(state) is None and len(state.results) == 3
        assert all(b.calls > 0 for b in bots)
        if variant == "grande" or players < ALLEGRA.knock_min_players:
            assert all(b.knock_calls == 0 for b in bots)


def test_random_bot_never_raises_over_many_seeds() -> None:
    for variant, players in (("grande", 5), ("allegra", 6), ("allegra", 3), ("grande", 2)):
        for g in range(4):
            state, _ = checked_game(variant, players, ["random"] * players, seed_from_number(7, g))
            assert to_act(state) is None


def test_games_are_reproducible_byte_for_byte() -> None:
    seed = seed_from_number(5, 0)
    names = ["greedy", "random", "greedy"]
    a, sa = play_game(ALLEGRA, 3, seed, names)
    b, sb = play_game(ALLEGRA, 3, seed, names)
    assert state_hash(a) == state_hash(b) and sa == sb
    c, _ = play_game(ALLEGRA, 3, seed_from_number(5, 1), names)
    assert state_hash(c) != state_hash(a)


def test_bot_streams_are_distinct_per_seat() -> None:
    seed = seed_from_number(1)
    assert len({seat_seed(seed, s) for s in range(6)}) == 6
    draws = [[RandomBot(seat_seed(seed, s)).rng.below(1000) for _ in range(5)] for s in range(2)]
    assert draws[0] != draws[1]


# ------------------------------------------------------------------ greedy beats random


@pytest.mark.parametrize("variant", ["grande", "allegra"])
def test_greedy_beats_random(variant: str) -> None:
    """20 three-player games, greedy in a seat that moves with the game number."""
    greedy_totals: list[int] = []
    random_totals: list[int] = []
    wins = 0
    for g in range(20):
        seat = g % 3
        names = ["random"] * 3
        names[seat] = "greedy"
        _, stats = play_game(ruleset_for(variant), 3, seed_from_number(11, g), names)
        greedy_totals.append(stats.totals[seat])
        random_totals.extend(t for i, t in enumerate(stats.totals) if i != seat)
        wins += seat in stats.winners
    assert wins >= 17, (wins, greedy_totals)
    assert mean(greedy_totals) < 0.5 * mean(random_totals), (mean(greedy_totals), mean(random_totals))


# ------------------------------------------------------------------ greedy judgement


def test_greedy_takes_a_low_discard_and_leaves_a_high_one() -> None:
    displays = [["9 ? ? ?", CLOSED, CLOSED, CLOSED], [CLOSED] * 4]
    assert ask(build(GRANDE, displays, discard=["-1"], deck=DECK)) == TakeDiscard()
    assert ask(build(GRANDE, displays, discard=["12"], deck=DECK)) == DrawFromDeck()


def test_greedy_completes_a_run() -> None:
    s = build(GRANDE, [["7 7 ? ?", "3 ? ? ?", CLOSED, CLOSED], [CLOSED] * 4], hand=[("7", True)], deck=DECK)
    move = ask(s)
    assert isinstance(move, Place) and move.at == Slot(0, 0, 2)


def test_greedy_completes_an_allegra_run_across_the_neighbours_column() -> None:
    # Seat 0's area row 0 is seat 1's rightmost column then seat 0's four columns (R13).
    s = build(ALLEGRA, [["? 8 8 ?", CLOSED, CLOSED], ["? ? ? 8", CLOSED, CLOSED], [CLOSED] * 3],
              hand=[("8", True)], deck=DECK)
    move = ask(s)
    assert isinstance(move, Place) and move.at in (Slot(0, 0, 0), Slot(0, 0, 3))


def test_greedy_uses_a_13_to_refresh_a_high_open_card() -> None:
    s = build(GRANDE, [["12 0 ? ?", CLOSED, CLOSED, CLOSED], [CLOSED] * 4], hand=[("13", True)], deck=DECK)
    move = ask(s)
    assert isinstance(move, Discard)
    s = apply(s, move)
    assert to_act(s).kind == "replace_open"  # type: ignore[union-attr]
    assert ask(s) == ReplaceOpen(Slot(0, 0, 0))


def test_greedy_dodges_a_13_that_would_hurt() -> None:
    """All open cards are low: activating the 13 would swap one for an unknown card. R21: the
    second card may replace the first, which is then discarded without its action."""
    me = ["0 -1 0 1", "1 0 -1 ?", "0 1 ? ?", "-1 0 1 ?"]
    s = build(GRANDE, [me, [CLOSED] * 4], hand=[("13", True), ("2", True)], deck=DECK)
    thirteen, two = (c for c, _ in s.hand)
    first = ask(s)
    assert first != Discard(thirteen)
    s = apply(s, first)
    if isinstance(first, Place) and first.card == thirteen:
        assert ask(s) == Place(two, first.at)
    s = apply(s, ask(s))
    assert not any(isinstance(e, Discarded) and e.activated for e in s.effects)


def test_greedy_swaps_a_joker_into_a_run() -> None:
    s = build(GRANDE, [["12 12 3 ?", "? ? ? J", CLOSED, CLOSED], [CLOSED] * 4], deck=DECK, discard=["8"])
    assert ask(s) == Swap(Slot(0, 0, 2), Slot(0, 1, 3))


def test_greedy_discards_a_5_to_peek_when_it_is_no_use() -> None:
    s = build(GRANDE, [["1 ? ? ?", CLOSED, CLOSED, "? ? ? 0"], [CLOSED] * 4], hand=[("5", True)], deck=DECK)
    move = ask(s)
    assert isinstance(move, Discard)
    s = apply(s, move)
    assert isinstance(ask(s), PeekCard)


def test_greedy_ends_the_round_when_ahead_only() -> None:
    """R9, R10: turning up the last closed card ends the round and doubles a trailing ender."""
    low = ["0 0 1 0", "0 1 0 0", "1 0 0 ?", "0 1 0 0"]
    high_opponent = ["12 12 11 12", "10 ? ? ?", CLOSED, CLOSED]
    s = build(GRANDE, [low, high_opponent], hand=[("0", True)], deck=DECK)
    assert ask(s) in (Place(s.hand[0][0], Slot(0, 2, 3)), Discard(s.hand[0][0]))
    high = ["9 9 10 8", "8 10 9 10", "9 8 10 ?", "10 9 8 9"]
    low_opponent = ["0 1 0 1", "1 0 1 0", "0 1 0 1", "1 0 1 ?"]
    s = build(GRANDE, [high, low_opponent], hand=[("0", True)], deck=DECK)
    move = ask(s)
    assert isinstance(move, Place) and move.at != Slot(0, 2, 3)


def test_greedy_decides_from_what_it_sees_only() -> None:
    """Two positions that differ only in closed cards' values give the same view and move."""
    rows = ["7 ? ? ?", "? 3 ? ?", CLOSED, CLOSED]
    a = build(GRANDE, [rows, [CLOSED] * 4], hand=[("6", True)], deck=DECK, filler=1)
    b = build(GRANDE, [rows, [CLOSED] * 4], hand=[("6", True)], deck=DECK, filler=12)
    assert view(a, 0) == view(b, 0)
    assert ask(a) == ask(b)


def test_greedy_knocks_for_a_low_card_only() -> None:
    area = [["? ? ? ?"] * 3, ["9 10 ? ?", CLOSED, CLOSED], [CLOSED] * 3]
    bot = make_bot("greedy", b"k" * 32)
    low = build(ALLEGRA, area, active=0, hand=[("0", True)], deck=DECK)
    high = build(ALLEGRA, area, active=0, hand=[("9", True)], deck=DECK)
    assert bot.knocks(view(low, 1)) is True
    assert bot.knocks(view(high, 1)) is False


def test_random_bot_knocks_about_half_the_time() -> None:
    s = build(ALLEGRA, [[CLOSED] * 3] * 3, active=0, hand=[("0", True)], deck=DECK)
    bot = make_bot("random", b"r" * 32)
    n = sum(bot.knocks(view(s, 1)) for _ in range(400))
    assert 150 < n < 250


# ------------------------------------------------------------------ the knock window


class Knocker(Bot):
    """Draws from the deck, knocks by a fixed rule, gives when it may, records what it saw."""

    name = "knocker"

    def __init__(self, seat: int, knock: bool) -> None:
        super().__init__(bytes([seat + 1]) * 8)
        self.seat = seat
        self.knock = knock
        self.offers: list[set[int]] = []  # per play decision with a deck card: Give targets offered
        self.knocked_in: list[int] = []  # turn numbers of the windows it was asked in

    def choose(self, view: SeatView, legal: Sequence[Move]) -> Move:
        if DrawFromDeck() in legal:
            return DrawFromDeck()
        if view.decision is not None and view.decision.kind == "play":
            gives = [m for m in legal if isinstance(m, Give)]
            self.offers.append({m.to for m in gives})
            if gives:
                return gives[0]
        return self.pick(legal)

    def knocks(self, view: SeatView) -> bool:
        self.knocked_in.append(view.turn)
        return self.knock


def test_give_is_offered_only_to_seats_that_knocked() -> None:
    bots = [Knocker(0, True), Knocker(1, False), Knocker(2, True), Knocker(3, False)]
    state, stats = play_game(ALLEGRA, 4, seed_from_number(3), bots)
    knockers = {0, 2}
    seen_gives = 0
    for bot in bots:
        for offer in bot.offers:
            assert offer <= knockers - {bot.seat}
            assert offer, "a knocker with cards in its area was not offered"
            seen_gives += 1
    assert stats.gives == seen_gives > 0
    assert stats.knock_windows == sum(len(b.offers) for b in bots)
    # Every window asks all other seats: each seat is asked in every window but its own.
    for bot in bots:
        assert len(bot.knocked_in) == stats.knock_windows - len(bot.offers)
    assert stats.knocks == sum(len(b.knocked_in) for b in bots if b.knock)


def test_no_knock_offers_no_give() -> None:
    bots = [Knocker(s, False) for s in range(3)]
    _, stats = play_game(ALLEGRA, 3, seed_from_number(4), bots)
    assert stats.knock_windows > 0 and stats.knocks == 0 and stats.gives == 0
    assert all(offer == set() for b in bots for offer in b.offers)


def test_no_knock_window_in_grande_or_with_two_players_under_the_option() -> None:
    """R16's option knock_min_players = 3 turns knocking off for two (Grande never knocks)."""
    for ruleset, players in ((GRANDE, 4), (AllegraRuleset(knock_min_players=3), 2)):
        bots = [Knocker(s, True) for s in range(players)]
        _, stats = play_game(ruleset, players, seed_from_number(6), bots)
        assert stats.knock_windows == 0 and all(not b.knocked_in for b in bots)


def test_two_players_knock_by_default() -> None:
    """Revised R16: with the default rules two players knock too."""
    bots = [Knocker(s, True) for s in range(2)]
    _, stats = play_game(ALLEGRA, 2, seed_from_number(6), bots)
    assert stats.knock_windows > 0 and stats.gives > 0


def test_a_give_to_a_seat_that_did_not_knock_is_refused() -> None:
    class Cheat(Knocker):
        def choose(self, view: SeatView, legal: Sequence[Move]) -> Move:
            if view.decision is not None and view.decision.kind == "play" and view.hand[0].from_deck:
                return Give((self.seat + 1) % view.players)
            return super().choose(view, legal)

    bots: list[Bot] = [Cheat(0, False), Knocker(1, False), Knocker(2, False)]
    with pytest.raises(BotError, match="not offered"):
        play_game(ALLEGRA, 3, seed_from_number(8), bots)


def test_offered_moves_filters_gives_only() -> None:
    s = new_game(ALLEGRA, 3, seed_from_number(2))
    bots = [Knocker(0, False), Knocker(1, True), Knocker(2, False)]
    while to_act(s) is not None and not any(isinstance(m, Give) for m in legal_moves(s)):
        d = to_act(s)
        assert d is not None
        legal = legal_moves(s)
        s = apply(s, DrawFromDeck() if DrawFromDeck() in legal else legal[0])
    legal = legal_moves(s)
    offered = offered_moves(s, bots)
    assert [m for m in legal if not isinstance(m, Give)] == [m for m in offered if not isinstance(m, Give)]
    assert {m.to for m in offered if isinstance(m, Give)} == {1} - {s.active}


# ------------------------------------------------------------------ statistics


def test_statistics_match_the_effects_and_results() -> None:
    seed = seed_from_number(12)
    names = ["greedy", "random", "greedy", "random"]
    state, stats = play_game(GRANDE, 4, seed, names)
    assert stats.turns == tuple(r.turns for r in state.results)
    assert stats.cleared == tuple(r.cleared for r in state.results)
    assert stats.totals == tuple(state.totals)
    assert set(stats.activated) == {-2, 5, 13}
    # Replay the same game move by move and count activations from the effects directly.
    bots = [make_bot(n, seat_seed(seed, i)) for i, n in enumerate(names)]
    s = new_game(GRANDE, 4, seed)
    counted = {-2: 0, 5: 0, 13: 0}
    chain = 0
    while (d := to_act(s)) is not None:
        move = bots[d.seat].choose(view(s, d.seat), legal_moves(s))
        before = s
        s = apply(s, move)
        for e in s.effects:
            if isinstance(e, Discarded) and e.activated:
                counted[before.known[e.card]] += 1  # type: ignore[index]
            chain = max(chain, getattr(e, "step", 0))
        assert not any(isinstance(e, Given) for e in s.effects)
    assert state_hash(s) == state_hash(state)
    assert counted == stats.activated and sum(counted.values()) > 0
    assert chain == stats.longest_chain >= 1


def test_wrong_number_of_bots_is_refused() -> None:
    with pytest.raises(ValueError, match="2 bots for 3 players"):
        play_game(GRANDE, 3, seed_from_number(1), ["random", "random"])


# ------------------------------------------------------------------ greedy's quick paths


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), grande=st.booleans(), players=st.integers(2, 5),
       moves=st.integers(0, 200), strong=st.booleans())
def test_greedy_s_quick_ratings_are_exactly_the_plain_ones(
        seed: int, grande: bool, players: int, moves: int, strong: bool) -> None:
    """The deck's gain and a turn-up rate every value at every cell, so greedy works out what
    does not depend on the value once (`face_up_values`, `discard_values`) and skips the
    Swaps no line can make a run of (`_lines_near_run`). Each must give exactly, to the last
    bit, what the plain one-change rating gives: a seed fixes every game, so a bot that
    decided otherwise by a rounding would replay differently."""
    rules = ruleset_for("grande" if grande else "allegra")
    state = greedy_play(new_game(rules, players, seed_from_number(seed)), moves, seed_from_number(seed, 1))
    d = to_act(state)
    if d is None:
        return
    weights = strong_weights(rules.variant, players) if strong else Weights()
    judge = Judge(view(state, d.seat), weights)
    base = judge.base
    values = sorted({v for v in rules.deck_values()})
    for pos in base.board.cards_mine():
        assert judge.face_up_values(base, pos, values) == [judge.set_value(base, pos, (u, True)) for u in values]
    assert judge.discard_values(base, values) == [judge.discard_value(base, u) for u in values]
    if not _lines_near_run(base):
        b = base.board
        for pa in b.cards_mine():
            for pb in b.cards_mine():
                if pa == pb:
                    continue
                ca, cb = b.cells[pa], b.cells[pb]
                b.cells[pa], b.cells[pb] = cb, ca
                assert not b.has_run(b.lines_at[pa] + b.lines_at[pb])
                b.cells[pa], b.cells[pb] = ca, cb
