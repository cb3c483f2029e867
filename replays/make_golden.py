#!/usr/bin/env python3
"""Build the golden replays in replays/golden/ and their manifest, deterministically.

Why golden replays: a game *is* its log, and old logs must keep folding to the
same game under every later engine. These files were played once, signed and
written exactly as `allegra simulate --out` writes a game (simulated_setup +
LocalGame + bots.driver.play_game(..., record=game) + ReplayWriter), with a
fixed Date tag, so rebuilding them gives the same bytes. tests/test_golden.py
folds the committed files with today's engine and compares every result and
final state hash with the manifest: an engine change that alters an old game
fails there, loudly. Never regenerate to make that test pass without saying
in the commit (and replays/README.md) why old games changed.

    python replays/make_golden.py            write replays/golden/*.allegra and manifest.json
    python replays/make_golden.py --check    rebuild in a temporary directory and compare byte
                                             for byte with the committed files (exit 1 on a
                                             difference)
    python replays/make_golden.py --search actions|chain
                                             print the first seeds that give the feature (how
                                             the seeds below were found)

Most games are plain bot games (registry bots, as `allegra simulate` seats
them, so `allegra simulate --variant V --players N --seed S --bots B --games
G+1 --out DIR` plays the same game; since issue 13 it writes it as a log with
signed results, these files stay logs of the older version). Two features never
come from the package's bots with their default judgement:

* every Grande action card activated: the greedy bot keeps every -2 it draws
  (a -2 in the display is worth more to it than a line of peeks), so the
  actions game seats one greedy bot whose peek weight is raised
  (`greedy/peek_per_card=3.0`, the package's GreedyBot with other Weights);
  `--search actions` shows the seeds tried.
* a chain reaction that clears 8 or more cards after one move: the greedy
  bot's best in hundreds of games is 6 cards. That game is built from a
  ceremony seed by a forced line of real moves: two `cross` players (defined
  here) fill row 2 and column 3 of their 4x5 Grande displays with 5s and
  Jokers, leaving the crossing place for last, and put three equal cards in
  rows 1, 3 and 4 of column 1; the first move that then clears 8 or more
  cards is played, and both play as the greedy bot from there on. In the
  committed game, seat 0's 5 at row 2 column 3 clears row 2 (5 cards), the
  emptied row is removed (R27), which brings the three 3s of column 1
  together: a second clearing step of 3 cards. A `cross` player reads the
  whole state only to try each move on a copy first (to avoid clearing part
  of the cross too early); every move it makes is one the engine offers,
  and the file is an ordinary signed log that `allegra replay verify`
  accepts.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from allegra_lan.bots.base import Bot, seat_seed
from allegra_lan.bots.driver import play_game
from allegra_lan.bots.greedy import GreedyBot, Weights
from allegra_lan.local import LocalGame, Player, simulated_setup
from allegra_lan.tags import log_tags
from allegra_lan.log.replay import ReplayWriter, format_header
from allegra_lan.rules import (
    HOLE, JOKER, DrawFromDeck, Move, Place, Slot, State, TakeDiscard, apply, to_act,
)
from allegra_lan.rules.effects import Cleared, Discarded, Given
from allegra_lan.rules.moves import Discard, ReplaceOpen, Swap, TurnUp
from allegra_lan.rules.ruleset import ruleset_for
from allegra_lan.rules.view import SeatView
from allegra_lan.table import Table, fold

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
MANIFEST = HERE / "manifest.json"
DATE = "2025.01.31"  # fixed, so that a rebuild is byte-identical
ACTION_VALUES = (-2, 5, 13)
CHAIN_MIN = 8
KNOCK2_SEED = 1  # the first seed `--search knocks2` finds
SEALED_SEED = 3  # the first seed `--search sealed` finds


# ------------------------------------------------------------------ the games


@dataclass(frozen=True)
class Spec:
    """One golden game: what was played, from which ceremony, and what it must cover."""

    name: str  # the file is golden/<name>.allegra
    variant: str
    players: int
    seed: int  # the number given to simulated_setup (`allegra simulate --seed`)
    game: int  # the 0-based game index given to simulated_setup (`--games game+1`)
    bots: tuple[str, ...]  # one per seat: a registry name, `greedy/<weight>=<x>`, or `cross`
    features: tuple[str, ...] = ()  # knocks, actions, chain>=8, cut short
    made: str = "simulate"  # simulate | tuned bots | forced line | cut short
    note: str = ""
    cut_from: str | None = None  # a cut-short file is a prefix of this game's file
    rules: tuple[tuple[str, Any], ...] = ()  # ruleset fields other than today's defaults


SPECS: tuple[Spec, ...] = (
    Spec("allegra-2p", "allegra", 2, 1, 0, ("greedy", "random"),
         note="ALLEGRA's smallest table (no knocking with 2 players, R16)",
         rules=(("knock_min_players", 3),)),
    Spec("allegra-3p-knocks", "allegra", 3, 2, 0, ("greedy", "random", "greedy"), ("knocks",),
         note="knocks and cards given (R16) from the smallest table that knocks",
         rules=(("knock_min_players", 3),)),
    Spec("allegra-6p", "allegra", 6, 3, 1, ("greedy",) * 6, ("knocks",),
         note="ALLEGRA's largest table",
         rules=(("knock_min_players", 3),)),
    Spec("grande-2p", "grande", 2, 4, 0, ("greedy", "random"),
         note="Grande's smallest table (4x5 displays, R19)",
         rules=(("turn_up_after_13", True),)),
    Spec("grande-3p-actions", "grande", 3, 3, 0,
         ("greedy/peek_per_card=3.0", "greedy", "greedy"), ("actions",), made="tuned bots",
         note="every action card (-2, 5, 13) discarded from the deck and activated (R22-R24); "
              "seat 0 is the greedy bot with a raised peek weight (seeds from --search actions)",
         rules=(("turn_up_after_13", True),)),
    Spec("grande-4p", "grande", 4, 5, 0, ("greedy",) * 4, note="a four-player Grande table",
         rules=(("turn_up_after_13", True),)),
    Spec("grande-5p", "grande", 5, 6, 2, ("greedy",) * 5, note="Grande's largest table",
         rules=(("turn_up_after_13", True),)),
    Spec("grande-2p-chain", "grande", 2, 1, 0, ("cross", "cross"), ("chain>=8",), made="forced line",
         note="a chain reaction (R6, R27): one card clears a row of 5, the emptied row is removed "
              "and three 3s of column 1 meet and clear (8 cards, 2 steps); both seats are "
              "make_golden.py's cross players until then, greedy after",
         rules=(("turn_up_after_13", True),)),
    Spec("grande-4p-cut", "grande", 4, 5, 0, ("greedy",) * 4, ("cut short",), made="cut short",
         cut_from="grande-4p",
         note="grande-4p as a crash leaves it: the header written at the start (Result *) and the "
              "events up to two thirds of the game, the last line cut in the middle",
         rules=(("turn_up_after_13", True),)),
    # Made after issue 11 revised R16 and R24 (today's defaults; the files above keep the
    # rules they were played with, which their genesis records):
    Spec("allegra-2p-knocks", "allegra", 2, KNOCK2_SEED, 0, ("greedy", "greedy"), ("knocks",),
         note="revised R16: knocking with two players, the default since issue 11"),
    Spec("grande-3p-sealed", "grande", 3, SEALED_SEED, 0,
         ("greedy/peek_per_card=3.0", "greedy", "greedy"), ("actions", "sealed"), made="tuned bots",
         note="revised R24: after a 13's action the turn's other card is discarded and no card "
              "is turned up (seeds from --search sealed)"),
)


# ------------------------------------------------------------------ the bots


def _value(state: State, card: int) -> int:
    return state.source.value(state.round_no, card)


def _cleared_by(state: State, move: Move) -> int:
    """The cards `move` would clear now (tried on a copy: `apply` never changes `state`)."""
    return sum(len(e.cards) for e in apply(state, move).effects if isinstance(e, Cleared))


@dataclass
class CrossPlan:
    """What the cross players share: whether the chain has happened (then both play greedy)."""

    game: LocalGame
    value: int = 5  # the most common Grande value (16 cards, R18); Jokers match it too (R25)
    done: bool = False


class CrossPlayer(Bot):
    """Fills row 2 and column 3 of its 4x5 display with face-up 5s and Jokers, the crossing
    place last, so that the last card clears a row of 5 and a column of 4 in one step; and
    puts three equal other cards in rows 1, 3 and 4 of column 1, which the removal of the
    emptied row 2 (R27) brings together for a second clearing step.

    Every other card goes over a face-up card outside the cross (never over a closed one
    while an open one will do), so the round does not end before the cross is full. A move
    that would clear part of the cross early is never chosen: each candidate is tried on a
    copy of the state. The crossing card is placed once column 1 is ready, or after the
    deck has been reshuffled `patience` times in the round without it."""

    name = "cross"
    ROW, COL = 1, 2  # the cross: row 2 and column 3 (0-based here)
    CHAIN = ((0, 0), (2, 0), (3, 0))  # column 1 without the cross's row

    def __init__(self, seed: bytes, plan: CrossPlan, patience: int = 3) -> None:
        super().__init__(seed)
        self.plan = plan
        self.patience = patience
        self.greedy = GreedyBot(seed)

    def knocks(self, view: SeatView) -> bool:
        return False  # Grande has no knocking

    def _good(self, state: State, card: int) -> bool:
        return _value(state, card) in (self.plan.value, JOKER)

    def _up(self, state: State, at: Slot) -> int | None:
        """The value of the face-up card at `at`, None if closed or a hole."""
        card = state.grids[at.seat].at(at.row, at.col)
        return _value(state, card) if card != HOLE and card in state.up else None

    def _good_up(self, state: State, at: Slot) -> bool:
        return self._up(state, at) in (self.plan.value, JOKER)

    def choose(self, view: SeatView, legal: Sequence[Move]) -> Move:
        if self.plan.done or view.decision is None:
            return self.greedy.choose(view, legal)
        state = self.plan.game.state
        seat = view.decision.seat
        g = state.grids[seat]
        if (g.rows, g.cols) != (4, 5):
            return self.greedy.choose(view, legal)  # a collapsed display: the cross is gone
        final = Slot(seat, self.ROW, self.COL)
        cross = {Slot(seat, self.ROW, c) for c in range(g.cols)} | {Slot(seat, r, self.COL) for r in range(g.rows)}
        needed = sorted(t for t in cross - {final} if not self._good_up(state, t))
        chain = [Slot(seat, r, c) for r, c in self.CHAIN]
        ups = [v for v in (self._up(state, at) for at in chain) if v is not None and v not in (self.plan.value, JOKER)]
        x = min(set(ups), key=lambda v: (-ups.count(v), v)) if ups else None  # the column's value
        chain_ready = len(ups) == 3 and len(set(ups)) == 1
        go = chain_ready or state.reshuffles >= self.patience

        def rank(m: Move) -> float:
            """Higher is better; a move that clears part of the cross early ranks last."""
            cleared = _cleared_by(state, m) if isinstance(m, (Place, TurnUp)) else 0
            if cleared >= CHAIN_MIN:
                return 100.0 if go else -30.0
            if cleared:
                return -100.0
            if isinstance(m, DrawFromDeck):
                return 2.0
            if isinstance(m, TakeDiscard):
                top = state.discard[-1] if state.discard else None
                return 3.0 if top is not None and self._good(state, top) and needed else -1.0
            if isinstance(m, Swap):
                return -50.0
            if isinstance(m, Place):
                good = self._good(state, m.card)
                here = self._up(state, m.at)
                if good and m.at in needed:
                    return 20.0
                if m.at in cross and (m.at != final or good):
                    return -20.0  # never spoil a target, never put a good card at the crossing
                if m.at in chain and not good:
                    if here is not None and here == x:
                        return -15.0  # keep the column's cards
                    if x is None or _value(state, m.card) == x:
                        return 15.0
                return 10.0 if here is not None else -10.0  # over open cards: keep closed ones
            if isinstance(m, Discard):
                return 5.0 if _value(state, m.card) != 13 else 6.0  # 13 adds a closed card
            if isinstance(m, TurnUp):
                card = _value(state, g.at(m.at.row, m.at.col))
                if m.at in needed and card in (self.plan.value, JOKER):
                    return 8.0
                if m.at in chain and x is not None and card == x:
                    return 7.0
                return 1.0 if m.at not in cross else -5.0
            if isinstance(m, ReplaceOpen):
                return -5.0 if m.at in cross and self._good_up(state, m.at) else 1.0
            return 0.0

        ranks = [rank(m) for m in legal]
        best = max(range(len(legal)), key=lambda i: ranks[i])  # ties: the first offered
        if ranks[best] >= 100.0:
            self.plan.done = True
        return legal[best]


def _weights(text: str) -> Weights:
    """`peek_per_card=3.0,...` -> Weights with those fields changed."""
    kw: dict[str, float] = {}
    for part in text.split(","):
        key, _, number = part.partition("=")
        kw[key] = float(number)
    return Weights(**kw)  # type: ignore[arg-type]


def make_seats(spec: Spec, seed: bytes, game: LocalGame) -> list[Bot | str]:
    """The bots of a spec: registry names stay names (play_game seeds them as simulate does)."""
    plan = CrossPlan(game)
    out: list[Bot | str] = []
    for seat, name in enumerate(spec.bots):
        if name == "cross":
            out.append(CrossPlayer(seat_seed(seed, seat), plan))
        elif "/" in name:
            kind, _, weights = name.partition("/")
            assert kind == "greedy", name
            out.append(GreedyBot(seat_seed(seed, seat), _weights(weights)))
        else:
            out.append(name)
    return out


# ------------------------------------------------------------------ building


@dataclass
class Built:
    """A golden file's bytes and what the manifest says about it."""

    spec: Spec
    data: bytes
    events: list[bytes]
    base_tags: dict[str, str]
    entry: dict[str, Any] = field(default_factory=dict)


def _base_tags(spec: Spec) -> tuple[dict[str, str], str, list[str]]:
    """Free-text tags, the table name and the player names: as simulate's for simulate games."""
    if spec.made == "simulate":
        return ({"Event": f"allegra simulate --seed {spec.seed}, game {spec.game + 1}",
                 "Site": "allegra-lan", "Date": DATE, "Round": str(spec.game + 1)},
                f"simulate {spec.seed}", [f"{b}-{i}" for i, b in enumerate(spec.bots)])
    return ({"Event": f"allegra-lan golden replay {spec.name}", "Site": "allegra-lan", "Date": DATE,
             "Round": str(spec.game + 1)},
            f"golden {spec.name}", [f"{b.partition('/')[0]}-{i}" for i, b in enumerate(spec.bots)])


def play(spec: Spec, directory: Path) -> Built:
    """Play a spec's game through its signed log into directory/<name>.allegra."""
    ruleset = replace(ruleset_for(spec.variant), **dict(spec.rules))
    setup = simulated_setup(spec.seed, spec.game, spec.players)
    tags, table_name, names = _base_tags(spec)
    players = [Player(n, setup.identities[i]) for i, n in enumerate(names)]
    path = directory / f"{spec.name}.allegra"
    writer = ReplayWriter(path, tags, fsync=False)
    game = LocalGame(ruleset, players, game_id=setup.game_id, nonces=setup.nonces,
                     table_name=table_name, writer=writer)
    writer.tags.update(log_tags(game.table))
    play_game(ruleset, spec.players, setup.seed, make_seats(spec, setup.seed, game), record=game)
    writer.finish(log_tags(game.table))
    return Built(spec, path.read_bytes(), [e.signed for e in game.table.events], tags)


def cut_short(spec: Spec, source: Built, directory: Path) -> Built:
    """The source game's file as a crash two thirds of the way in would leave it."""
    events = source.events
    k = len(events) * 2 // 3
    table, fault = fold(events[:k])
    assert fault is None
    tags = {**source.base_tags, **log_tags(table)}
    lines = [base64.b64encode(e).decode("ascii") for e in events]
    text = format_header(tags) + "".join(line + "\n" for line in lines[:k]) + lines[k][:len(lines[k]) // 2]
    path = directory / f"{spec.name}.allegra"
    path.write_bytes(text.encode("utf-8"))
    return Built(spec, path.read_bytes(), events[:k], source.base_tags)


@dataclass
class Facts:
    """What a log's moves caused, read from the engine's effects after each event."""

    activated: dict[int, int] = field(default_factory=lambda: {v: 0 for v in ACTION_VALUES})
    gives: int = 0
    max_cleared: int = 0  # most cards cleared by one move (all its clearing steps)
    max_cleared_seq: int | None = None
    max_cleared_steps: int = 0  # the clearing steps of that move (2 or more: a chain reaction)
    sealed_discards: int = 0  # R24: discards after a 13's action in the same turn (no turn-up)


def facts(events: Sequence[bytes]) -> tuple[Facts, Any]:
    """Replay `events` through a Table one at a time and count what each move caused."""
    t = Table()
    f = Facts()
    for raw in events:
        before = t.state
        ev = t.append(raw)
        assert ev is not None
        if before is None or t.state is None:
            continue  # the setup: no move yet
        if before.sealed and ev.kind == "discard":
            assert to_act(t.state) is None or to_act(t.state).kind != "turn_up"
            f.sealed_discards += 1
        cleared = steps = 0
        for e in t.state.effects:
            if isinstance(e, Cleared):
                cleared += len(e.cards)
                steps = max(steps, e.step)
            elif isinstance(e, Discarded) and e.activated:
                value = before.known[e.card]
                assert value is not None
                f.activated[value] = f.activated.get(value, 0) + 1
            elif isinstance(e, Given):
                f.gives += 1
        if cleared > f.max_cleared:
            f.max_cleared, f.max_cleared_seq, f.max_cleared_steps = cleared, ev.seq, steps
    return f, t


def manifest_entry(b: Built) -> dict[str, Any]:
    f, t = facts(b.events)
    st = t.state
    over = st is not None and to_act(st) is None
    tags = log_tags(t)
    s = b.spec
    return {
        "file": f"golden/{s.name}.allegra",
        "variant": s.variant,
        "players": s.players,
        "bots": list(s.bots),
        "seed": s.seed,
        "game": s.game,
        "made": s.made,
        "cut_from": s.cut_from,
        "note": s.note,
        "finished": over,
        "result": tags["Result"],
        "winners": [int(w) for w in tags["Winners"].split()] if over else [],
        "totals": list(st.totals) if st is not None else [],
        "events": len(b.events),
        "state_hash": t.state_hash(),
        "features": list(s.features),
        "rules": dict(s.rules),
        "counts": {
            "activated": {str(v): n for v, n in f.activated.items()},
            "gives": f.gives,
            "max_cleared": f.max_cleared,
            "max_cleared_seq": f.max_cleared_seq,
            "max_cleared_steps": f.max_cleared_steps,
            **({"sealed_discards": f.sealed_discards} if "sealed" in s.features else {}),
        },
        "sha256": hashlib.sha256(b.data).hexdigest(),
    }


def check_features(entry: dict[str, Any]) -> list[str]:
    """Why a built game does not cover what its spec claims (empty: it does)."""
    c = entry["counts"]
    problems = []
    for feat in entry["features"]:
        if feat == "knocks" and c["gives"] < 1:
            problems.append("no card was given to a knocker")
        elif feat == "actions" and min(c["activated"].values()) < 1:
            problems.append(f"not every action card was activated: {c['activated']}")
        elif feat == "chain>=8" and (c["max_cleared"] < CHAIN_MIN or c["max_cleared_steps"] < 2):
            problems.append(f"no move cleared {CHAIN_MIN} or more cards in a chain reaction "
                            f"(at most {c['max_cleared']}, in {c['max_cleared_steps']} steps)")
        elif feat == "sealed" and c.get("sealed_discards", 0) < 1:
            problems.append("no card was discarded after a 13's action in the same turn")
        elif feat == "cut short" and entry["finished"]:
            problems.append("the cut-short game is finished")
    return problems


def build_all(directory: Path) -> tuple[list[Built], str]:
    """Every golden file written into directory/golden, and the manifest's text."""
    out = directory / "golden"
    out.mkdir(parents=True, exist_ok=True)
    built: dict[str, Built] = {}
    for spec in SPECS:
        if spec.cut_from is not None:
            built[spec.name] = cut_short(spec, built[spec.cut_from], out)
        else:
            built[spec.name] = play(spec, out)
    entries = []
    for b in built.values():
        entry = manifest_entry(b)
        problems = check_features(entry)
        if problems:
            raise SystemExit(f"make_golden: {b.spec.name}: {'; '.join(problems)}")
        entries.append(entry)
    text = json.dumps({"format": "allegra-golden/1", "date_tag": DATE, "replays": entries},
                      indent=2, ensure_ascii=False) + "\n"
    return list(built.values()), text


# ------------------------------------------------------------------ commands


def check() -> int:
    """Rebuild in a temporary directory; 0 if every byte matches the committed files."""
    with tempfile.TemporaryDirectory() as tmp:
        built, manifest = build_all(Path(tmp))
        problems = []
        for b in built:
            committed = GOLDEN / f"{b.spec.name}.allegra"
            if not committed.exists():
                problems.append(f"{committed} is missing")
            elif committed.read_bytes() != b.data:
                problems.append(f"{committed} differs from its rebuild")
        names = {f"{b.spec.name}.allegra" for b in built}
        extra = sorted(p.name for p in GOLDEN.glob("*.allegra") if p.name not in names) if GOLDEN.exists() else []
        problems += [f"{GOLDEN / n} is not made by make_golden.py" for n in extra]
        if not MANIFEST.exists():
            problems.append(f"{MANIFEST} is missing")
        elif MANIFEST.read_text(encoding="utf-8") != manifest:
            problems.append(f"{MANIFEST} differs from its rebuild")
    for p in problems:
        print(f"make_golden --check: {p}", file=sys.stderr)
    if not problems:
        print(f"make_golden --check: {len(built)} golden replays and the manifest rebuild byte for byte")
    return 1 if problems else 0


def write() -> int:
    built, manifest = build_all(HERE)
    MANIFEST.write_text(manifest, encoding="utf-8")
    for b in built:
        print(f"wrote golden/{b.spec.name}.allegra ({len(b.events)} events, {len(b.data)} bytes)")
    print(f"wrote {MANIFEST.name}")
    return 0


def search(feature: str, tries: int) -> int:
    """How the seeds of the tuned and forced games were found: the first seeds that work."""
    wanted = {"actions": "actions", "chain": "chain>=8", "knocks2": "knocks", "sealed": "sealed"}[feature]
    spec = next(s for s in SPECS if wanted in s.features
                and (feature != "knocks2" or (s.players == 2 and not s.rules)))
    found = 0
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(1, tries + 1):
            trial = replace(spec, seed=number, game=0)
            entry = manifest_entry(play(trial, Path(tmp)))
            ok = not check_features(entry)
            print(f"seed {number} game 0: {'yes' if ok else 'no '} {json.dumps(entry['counts'])}")
            found += ok
    return 0 if found else 1


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Build (or --check) the golden replays and their manifest.")
    p.add_argument("--check", action="store_true", help="rebuild in memory and compare byte for byte")
    p.add_argument("--search", choices=["actions", "chain", "knocks2", "sealed"],
                   help="try seeds for a feature")
    p.add_argument("--tries", type=int, default=10, help="seeds tried by --search (default: 10)")
    a = p.parse_args(argv)
    if a.check:
        return check()
    if a.search:
        return search(a.search, a.tries)
    return write()


if __name__ == "__main__":
    sys.exit(main())
