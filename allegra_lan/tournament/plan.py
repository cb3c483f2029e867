"""Seat players at tables over rounds so that every two of them meet as evenly as possible.

Pure: names in, a `Plan` out; no files, no clock, nothing from the process
(no `hash()` of a string, no `random` module, whose algorithms may change
between Python versions). The only randomness is the project's own BLAKE2b
`Stream` keyed by the seed, so the same seed and inputs give the same plan on
every machine, which is what lets an organiser print the plan again, or a
player check it, from the seed alone.

What "fair" means here, in order:

1. Every player sits once in every round, at a table of a size the variant
   allows (the rulesets' player ranges: ALLEGRA 2-6, Grande 2-5), and the
   tables of a round are as equal in size as possible (7 players: a 4 and a
   3), their number chosen so that the mean size is nearest the preferred
   size (default 4).
2. Pairs meet as evenly as they can: the sum over all pairs of players of the
   square of how often they meet is as small as the search finds. The total
   number of meetings is fixed by the table sizes, so a smaller sum of
   squares is a more even spread (two pairs meeting once each beat one pair
   meeting twice). Between plans equal in that, the sum of the cubes decides,
   which prefers fewer pairs meeting often (13 players over 4 rounds: two
   plans have the same sum of squares, and only one has a pair meeting 3
   times).
3. Then seat positions are spread (seat 0 starts each round): the sum over
   players and seat numbers of the square of how often the player had that
   seat.

The search is a seeded local search over swaps of two players in one round,
with a bounded number of steps (a few restarts, then sweeps over every swap
until none improves or a bound is met), so it always ends, and for small
cases (6 players, 2 rounds, tables of 3) it reaches the optimum a brute force
finds (tests/test_tournament_plan.py checks that).
"""

from __future__ import annotations

from allegra_lan.blake import blake2b
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from allegra_lan.rules.rng import Stream
from allegra_lan.rules.ruleset import RulesetError, ruleset_for

MAX_PLAYERS = 128  # a club's tournament; the search's steps and memory grow with the square
MAX_ROUNDS = 30
MAX_SEED = (1 << 63) - 1
MAX_NAME = 64  # as a players file's names (tools/players.py)
DEFAULT_TABLE_SIZE = 4  # both games play well at four; the variant's whole range stays allowed
RESTARTS = 4
STEPS_PER_SEAT_ROUND = 150  # random-swap steps per restart: this many per player per round ...
MIN_STEPS, MAX_STEPS = 3_000, 60_000  # ... within these bounds
MAX_SWEEP_SWAPS = 400_000  # swaps the final sweeps may weigh, in all


class PlanError(ValueError):
    """Inputs no plan can be made from (one player, a table size the variant does not allow):
    one line saying what is wrong."""


@dataclass(frozen=True)
class PlanPlayer:
    """A player to seat: the name the plan shows, and the key fingerprints the organiser's
    players file gives for them (none for a plain list of names)."""

    name: str
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """Who sits where: `rounds[r][t]` is table t+1 of round r+1, its players' names in seat
    order (seat 0 first; seat 0 starts). `allowed` and `preferred` are the table size rules
    the plan was made under, kept so that a later check knows them."""

    variant: str
    seed: int
    allowed: tuple[int, ...]
    preferred: int
    players: tuple[PlanPlayer, ...]
    rounds: tuple[tuple[tuple[str, ...], ...], ...]

    @property
    def table_sizes(self) -> tuple[int, ...]:
        return tuple(len(t) for t in self.rounds[0]) if self.rounds else ()


@dataclass(frozen=True)
class Spread:
    """How evenly a plan spreads meetings: the fewest and most times any two players share a
    table, how many pairs never do, of how many; and the fewest and most times a player
    starts (has seat 0)."""

    pairs: int
    least: int
    most: int
    never: int
    starts_least: int
    starts_most: int


def allowed_sizes(variant: str) -> tuple[int, ...]:
    """The table sizes a variant's default ruleset can deal (its player range, each size
    checked by the ruleset itself, deck size included)."""
    rs = ruleset_for(variant)
    out = []
    for n in range(rs.min_players, rs.max_players + 1):
        try:
            rs.check_players(n)
        except RulesetError:
            continue
        out.append(n)
    return tuple(out)


def variant_title(variant: str) -> str:
    return ruleset_for(variant).title


def table_sizes(count: int, allowed: Sequence[int], preferred: int) -> tuple[int, ...]:
    """The sizes of one round's tables for `count` players: as equal as possible (larger
    tables first), as many tables as put the mean size nearest `preferred` (a tie goes to
    fewer, larger tables). PlanError if no split into allowed sizes exists."""
    sizes_ok = sorted(set(allowed))
    if not sizes_ok:
        raise PlanError("no table size is allowed")
    lo, hi = sizes_ok[0], sizes_ok[-1]
    if count < lo:
        who = "no players" if count == 0 else f"{count} player{'s' if count != 1 else ''}"
        raise PlanError(f"{who} cannot be seated: a table seats {lo} to {hi}")
    best: tuple[int, ...] | None = None
    best_gap: Fraction | None = None
    for tables in range(-(-count // hi), count // lo + 1):
        q, r = divmod(count, tables)
        sizes = (q + 1,) * r + (q,) * (tables - r)
        if any(s not in sizes_ok for s in sizes):
            continue
        gap = abs(Fraction(count, tables) - preferred)
        if best_gap is None or gap < best_gap:
            best, best_gap = sizes, gap
    if best is None:
        raise PlanError(f"{count} players cannot be split into tables of {', '.join(map(str, sizes_ok))}")
    return best


def check_players(players: Sequence[PlanPlayer]) -> None:
    """Names are what a plan's seats hold, so they must be unique, and the names a plan
    file may hold (so that every plan made can be read back)."""
    if len(players) > MAX_PLAYERS:
        raise PlanError(f"{len(players)} players are more than a plan takes ({MAX_PLAYERS})")
    seen: set[str] = set()
    for p in players:
        if not p.name or not p.name.strip():
            raise PlanError("a player's name is empty")
        if p.name != p.name.strip() or len(p.name) > MAX_NAME or not p.name.isprintable():
            raise PlanError(f"a player's name must be 1 to {MAX_NAME} printable characters "
                            f"without spaces around them, not {p.name[:MAX_NAME]!r}")
        if p.name in seen:
            raise PlanError(f"the name {p.name!r} is given twice; names must tell players apart")
        seen.add(p.name)


def make_plan(players: Sequence[PlanPlayer], rounds: int, variant: str, *, seed: int = 1,
              preferred: int | None = None) -> Plan:
    """The plan for these players over `rounds` rounds of `variant` ("allegra" or "grande")."""
    check_players(players)
    if not 1 <= rounds <= MAX_ROUNDS:
        raise PlanError(f"rounds must be 1 to {MAX_ROUNDS}, not {rounds}")
    if not 0 <= seed <= MAX_SEED:
        raise PlanError(f"the seed must be 0 to {MAX_SEED}, not {seed}")
    allowed = allowed_sizes(variant)
    want = DEFAULT_TABLE_SIZE if preferred is None else preferred
    if want not in allowed:
        raise PlanError(f"{variant_title(variant)} is played at tables of {allowed[0]} to "
                        f"{allowed[-1]}, not {want}")
    sizes = table_sizes(len(players), allowed, want)
    seats = _search(len(players), rounds, sizes, seed)
    names = [p.name for p in players]
    out_rounds = []
    for slots in seats:
        tables, at = [], 0
        for size in sizes:
            tables.append(tuple(names[i] for i in slots[at:at + size]))
            at += size
        out_rounds.append(tuple(tables))
    return Plan(variant=str(variant), seed=seed, allowed=allowed, preferred=want,
                players=tuple(players), rounds=tuple(out_rounds))


def meetings(plan: Plan) -> dict[tuple[str, str], int]:
    """How often each pair of players shares a table (every pair, in players' order)."""
    index = {p.name: i for i, p in enumerate(plan.players)}
    names = [p.name for p in plan.players]
    out = {(a, b): 0 for i, a in enumerate(names) for b in names[i + 1:]}
    for tables in plan.rounds:
        for table in tables:
            seated = sorted(table, key=index.__getitem__)
            for i, a in enumerate(seated):
                for b in seated[i + 1:]:
                    out[(a, b)] += 1
    return out


def seat_counts(plan: Plan) -> dict[str, list[int]]:
    """For each player, how often they had seat 0, seat 1, ... (up to the largest table)."""
    width = max(plan.table_sizes, default=0)
    out = {p.name: [0] * width for p in plan.players}
    for tables in plan.rounds:
        for table in tables:
            for seat, name in enumerate(table):
                out[name][seat] += 1
    return out


def pair_cost(plan: Plan) -> int:
    """The search's first measure: the sum of squares of the pairs' meeting counts."""
    return sum(c * c for c in meetings(plan).values())


def repeat_cost(plan: Plan) -> int:
    """The second, between plans of equal pair cost: the sum of the cubes of the counts."""
    return sum(c * c * c for c in meetings(plan).values())


def seat_cost(plan: Plan) -> int:
    """The third: the sum of squares of the players' counts at each seat number."""
    return sum(c * c for row in seat_counts(plan).values() for c in row)


def spread(plan: Plan) -> Spread:
    counts = list(meetings(plan).values())
    starts = [row[0] if row else 0 for row in seat_counts(plan).values()]
    return Spread(pairs=len(counts), least=min(counts, default=0), most=max(counts, default=0),
                  never=sum(1 for c in counts if c == 0), starts_least=min(starts, default=0),
                  starts_most=max(starts, default=0))


# --- the search -----------------------------------------------------------------------------


def _stream(seed: int, what: str) -> Stream:
    key = blake2b(f"allegra-lan/tournament-plan/{seed}".encode(), digest_size=32).digest()
    return Stream(key, f"allegra-lan/tournament-plan/{what}")


Cost = tuple[int, int, int]
ZERO: Cost = (0, 0, 0)


class _Seating:
    """Rounds of slots (slot -> player index), with the counts the costs are made of kept up
    to date swap by swap, so that weighing a swap costs a pass over two tables, not the plan.
    The cost is (sum of squares of pair meetings, sum of their cubes, seat cost), compared
    in that order."""

    def __init__(self, players: int, sizes: Sequence[int], slots: list[list[int]]) -> None:
        self.n = players
        self.slots = slots
        self.table_of: list[int] = []
        self.seat_of: list[int] = []
        self.bounds: list[tuple[int, int]] = []
        at = 0
        for t, size in enumerate(sizes):
            self.bounds.append((at, at + size))
            self.table_of += [t] * size
            self.seat_of += list(range(size))
            at += size
        width = max(sizes)
        self.meet = [[0] * players for _ in range(players)]
        self.pos = [[0] * width for _ in range(players)]
        for row in slots:
            for lo, hi in self.bounds:
                table = row[lo:hi]
                for k, a in enumerate(table):
                    self.pos[a][k] += 1
                    for b in table[k + 1:]:
                        self.meet[a][b] += 1
                        self.meet[b][a] += 1
        pairs = [c for i, r in enumerate(self.meet) for c in r[i + 1:]]
        self.cost: Cost = (sum(c * c for c in pairs), sum(c * c * c for c in pairs),
                           sum(c * c for r in self.pos for c in r))

    def delta(self, r: int, i: int, j: int) -> Cost:
        """How the costs change if the players in slots i and j of round r swap: in i's
        table pair (a, x) loses a meeting and (b, x) gains one, in j's the other way round;
        c -> c+1 adds 2c+1 to the squares and 3c^2+3c+1 to the cubes, c -> c-1 takes
        2c-1 and 3c^2-3c+1 away."""
        row = self.slots[r]
        a, b = row[i], row[j]
        ti, tj = self.table_of[i], self.table_of[j]
        dsq = dcube = 0
        if ti != tj:
            ma, mb = self.meet[a], self.meet[b]
            for (lo, hi), skip, down, up in ((self.bounds[ti], i, ma, mb), (self.bounds[tj], j, mb, ma)):
                for k in range(lo, hi):
                    if k != skip:
                        x = row[k]
                        cd, cu = down[x], up[x]
                        dsq += 2 * (cu - cd) + 2
                        dcube += 3 * (cu * cu - cd * cd) + 3 * (cu + cd)
        si, sj = self.seat_of[i], self.seat_of[j]
        ds = 0
        if si != sj:
            pa, pb = self.pos[a], self.pos[b]
            ds = 2 * (pa[sj] - pa[si]) + 2 * (pb[si] - pb[sj]) + 4
        return dsq, dcube, ds

    def swap(self, r: int, i: int, j: int, d: Cost) -> None:
        row = self.slots[r]
        a, b = row[i], row[j]
        ti, tj = self.table_of[i], self.table_of[j]
        if ti != tj:
            # In i's table a leaves and b joins; in j's table b leaves and a joins.
            for (lo, hi), skip, leaves, joins in ((self.bounds[ti], i, a, b), (self.bounds[tj], j, b, a)):
                ml, mj = self.meet[leaves], self.meet[joins]
                for k in range(lo, hi):
                    if k != skip:
                        x = row[k]
                        mx = self.meet[x]
                        ml[x] -= 1
                        mx[leaves] -= 1
                        mj[x] += 1
                        mx[joins] += 1
        si, sj = self.seat_of[i], self.seat_of[j]
        if si != sj:
            self.pos[a][si] -= 1
            self.pos[a][sj] += 1
            self.pos[b][sj] -= 1
            self.pos[b][si] += 1
        row[i], row[j] = b, a
        self.cost = (self.cost[0] + d[0], self.cost[1] + d[1], self.cost[2] + d[2])


def _steps(players: int, rounds: int) -> int:
    return max(MIN_STEPS, min(MAX_STEPS, STEPS_PER_SEAT_ROUND * players * rounds))


def _walk(seating: _Seating, rounds: int, steps: int, rng: Stream) -> None:
    """Random swaps, each kept if it makes the plan no worse (pairs, then seats):
    keeping equal ones lets the search cross the wide flat stretches of this problem."""
    n = seating.n
    for _ in range(steps):
        r = rng.below(rounds)
        i = rng.below(n)
        j = rng.below(n - 1)
        if j >= i:
            j += 1
        d = seating.delta(r, i, j)
        if d <= ZERO:
            seating.swap(r, i, j, d)


def _sweep(seating: _Seating, rounds: int) -> None:
    """Every swap of every round in turn, each kept if it makes the plan strictly better,
    until a sweep finds none (a local optimum: no one swap improves it) or the bound."""
    n = seating.n
    weighed = 0
    improved = True
    while improved and weighed < MAX_SWEEP_SWAPS:
        improved = False
        for r in range(rounds):
            for i in range(n):
                for j in range(i + 1, n):
                    d = seating.delta(r, i, j)
                    if d < ZERO:
                        seating.swap(r, i, j, d)
                        improved = True
            weighed += n * (n - 1) // 2
            if weighed >= MAX_SWEEP_SWAPS:
                break


def _search(players: int, rounds: int, sizes: Sequence[int], seed: int) -> list[list[int]]:
    """The best of a few seeded restarts (by cost; the earlier on a tie), swept at the end."""
    if players < 2:
        return [list(range(players)) for _ in range(rounds)]
    best: _Seating | None = None
    for restart in range(RESTARTS):
        rng = _stream(seed, f"restart/{restart}")
        slots = []
        for _ in range(rounds):
            row = list(range(players))
            rng.shuffle(row)
            slots.append(row)
        seating = _Seating(players, sizes, slots)
        _walk(seating, rounds, _steps(players, rounds), rng)
        if best is None or seating.cost < best.cost:
            best = seating
    assert best is not None
    _sweep(best, rounds)
    return best.slots


__all__ = [
    "Plan", "PlanPlayer", "PlanError", "Spread", "make_plan", "table_sizes", "allowed_sizes",
    "variant_title", "check_players", "meetings", "seat_counts", "pair_cost", "repeat_cost", "seat_cost",
    "spread",
    "MAX_PLAYERS", "MAX_ROUNDS", "MAX_SEED", "DEFAULT_TABLE_SIZE",
]
