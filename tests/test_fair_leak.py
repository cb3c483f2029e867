"""Issue 12's "Done when": the leak script (tests/leak.py, which reads only the file), run on a
fair-deal game's replay at every seq, learns nothing the rules had not shown: alone, with
one seat's secret (that seat's own peer), and with every coalition of all but one seat
pooling their secrets before the end. On a seeded game the same script reads every card of
the deck from the file, which is the finding the fair deal answers."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest

from allegra_lan.local import LocalGame, seat_tags
from allegra_lan.log.replay import write_replay
from allegra_lan.rules import ruleset_for, ruleset_from_dict, to_act
from allegra_lan.rules.ruleset import JOKER
from allegra_lan.table import Table
from allegra_lan.tags import log_tags

from helpers import TestClock, derived, fair_game, players, quick_move
from leak import Claims, Leak, leak_file, read_events


def saved(g: LocalGame, path: Path) -> Path:
    write_replay(path, {**log_tags(g.table), **seat_tags(g.players)}, [e.signed for e in g.table.events])
    return path


def shown(tables: list[Table], deck: int) -> Claims:
    """What the rules showed the seats of `tables` by now: every value opened for everyone
    and each seat's own peeks, for the cards of each round's deck."""
    out: Claims = {}
    for t in tables:
        source = t.state.source  # type: ignore[union-attr]
        for r in range(t.state.round_no + 1):  # type: ignore[union-attr]
            for card in range(deck):
                v = source.known(r, card)
                if v is not None:
                    out[(r, card)] = "J" if v == JOKER else v
    return out


def requested(spectator: Table, members: tuple[int, ...], truth: Claims) -> Claims:
    """What the log's moves have shown the seats `members` so far, opened or still waiting
    for shares: every card a move revealed to all, and the peeks of the members. Once a
    move is in the log its cards are shown; the shares only carry them, one seat after
    another, so a coalition holding the last shares opens such a card a few seqs before
    the engine does, and that is no leak."""
    out: Claims = {}
    for b in spectator.ledger.batches if spectator.ledger is not None else ():
        for r in b.requests:
            if (r.round_no, r.card) in truth and (r.to is None or r.to in members):
                out[(r.round_no, r.card)] = truth[(r.round_no, r.card)]
    return out


def coalitions(n: int) -> list[tuple[int, ...]]:
    """Nobody's secret (a spectator), each seat alone (its own peer), all but one seat."""
    return [()] + [(s,) for s in range(n)] + list(combinations(range(n), n - 1))


@pytest.mark.parametrize("variant, n, rounds", [("grande", 3, 2), ("allegra", 3, 1)])
def test_the_leak_script_learns_only_what_the_rules_showed(tmp_path: Path, variant: str, n: int,
                                                           rounds: int) -> None:
    g = fair_game(variant, n, rounds=rounds, tag=f"leak-{variant}")
    secrets = {s: g.seat_tables[s].secret for s in range(n)}
    deck = len(ruleset_for(variant).deck_values())
    events = [e.signed for e in g.table.events]
    end = next(i for i, e in enumerate(g.table.events) if e.kind == "deal_secret")
    groups = coalitions(n)
    leaks = {c: Leak({s: secrets[s] for s in c}) for c in groups}  # type: ignore[misc]
    tables = {s: Table(me=s, secret=secrets[s]) for s in range(n)}
    spectator = Table()
    path = saved(g, tmp_path / "fair.allegra")
    envelopes = read_events(path)
    assert len(envelopes) == len(events)
    # Every value any seat ever saw, from the engines at the end (for the requests' values).
    truth = shown(g.seat_tables, deck)
    checked = peeked = early = 0
    for k in range(end):  # every seq before the first secret is published
        spectator.append(events[k])
        for t in tables.values():
            t.append(events[k])
        for c in groups:
            leaks[c].feed(envelopes[k])
        if spectator.state is None:
            continue
        public = shown([spectator], deck)
        for c in groups:
            known = shown([tables[s] for s in c] or [spectator], deck)  # what the engines learned
            allowed = {**known, **requested(spectator, c, truth)}  # what the moves showed
            claims = leaks[c].claims
            assert known.items() <= claims.items(), (k, c, set(known) - set(claims))
            assert claims.items() <= allowed.items(), (k, c, set(claims) - set(allowed))
            checked += 1
            peeked += len(known) - len(public)
            early += len(claims) - len(known)
    assert checked > 100 * len(groups) // 2
    if variant == "grande":
        assert peeked > 0  # some coalition did see a peek, and only that coalition learned it
    assert early > 0  # the coalitions holding the last shares of a batch did open its cards first
    # The same script, on the file cut at a seq, tells the same as fed event by event.
    mid = end // 2
    assert leak_file(path, mid, {0: secrets[0]}) == _fed(envelopes[:mid], {0: secrets[0]})
    # And it is a real attack: with the secrets the file publishes at the end, it opens
    # every card of every round's deck, drawn or not.
    everything = leak_file(path)
    assert len(everything) == rounds * deck


def _fed(envelopes: list[dict], secrets: dict[int, bytes]) -> Claims:
    leak = Leak(secrets)
    for env in envelopes:
        leak.feed(env)
    return leak.claims


def test_on_a_seeded_game_the_script_reads_every_closed_card(tmp_path: Path) -> None:
    """The finding: from a seeded game's file, just past the ceremony, every card of every
    round's deck, and every one right (the engine, which knows the seed, agrees)."""
    rs = ruleset_from_dict({**ruleset_for("allegra").to_dict(), "rounds": 2})
    g = LocalGame(rs, players(3), game_id=derived("leak-seeded")[:16],
                  nonces=[derived("leak-seeded-nonce", i) for i in range(3)], clock=TestClock())
    for _ in range(30):
        g.submit(quick_move(g.state))
    assert to_act(g.state) is not None
    path = saved(g, tmp_path / "seeded.allegra")
    claims = leak_file(path, upto=10)  # genesis, 3 accepts, 3 commits, 3 reveals
    source = g.state.source
    assert len(claims) == 2 * len(rs.deck_values())
    assert all(v == ("J" if source.value(r, c) == JOKER else source.value(r, c))  # type: ignore[union-attr]
               for (r, c), v in claims.items())
    closed = [c for c in range(len(rs.deck_values())) if g.state.known[c] is None]
    assert len(closed) > 60 and all((0, c) in claims for c in closed)
