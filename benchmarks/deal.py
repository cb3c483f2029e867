"""Fair deal speed (issue 12), every figure beside its baseline measured in the same run.

    python benchmarks/deal.py [--games 2] [--seed 1]

(a) The cryptography alone: libsodium's operations per second through PyNaCl (a scalar
    product by any point, by the base point, a point addition, a point check, hashing
    to the curve), in tight loops. These are the baseline of (b).
(b) One round's deal of a 160-card Grande deck, for 2 and 5 seats, in one process, as the
    peers do it: each seat in turn makes its shuffle pass, and every other peer checks it
    on arrival. Given: the time of one pass made and one pass checked, the critical path
    of a round's deal on a LAN with a CPU per peer (n passes made, each checked by the
    next seat before it makes its own: n x (make + check)), and the share of it that is
    the cryptography (each libsodium call counted in a profiled run, times its cost from
    (a)); the rest is Python. The deal on 127.0.0.1 with one process per peer, waiting
    included, is in benchmarks/net.py's output once network games deal fairly.
(c) A whole game between greedy bots, 4 seats, Grande, in one process through the signed
    log (`LocalGame`): the fair deal (one table per seat, each checking every event, as 4
    peers would, plus the public one) over the seeded deal, same seeds.
(d) `replay verify` of those games' files: fair over seeded, per game and per move (the
    fair file re-checks every pass and share from the published secrets).
(e) On 127.0.0.1, one process per peer (benchmarks/net.py's peers, `random` bots, pace
    0.02 s, one round, `--network`): the deal of a round (from the event before the
    first shuffle pass, as the host holds it, to the last pass accepted by every peer) for
    5 peers (Grande, 160 cards) and 2 peers, against the critical path of (b) (the rest
    is waiting: the wire, the wake-ups, the peers sharing 2 CPUs); one public reveal (a
    move whose card opens by shares: from its author's append to the batch's last share
    accepted by every peer) over the propagation of an ordinary move in a seeded game of
    the same table; and the whole game, fair over seeded.
"""

from __future__ import annotations

import argparse
import cProfile
import sys
import pstats
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

import nacl.bindings as nb

from allegra_lan.bots.driver import play_game
from allegra_lan.deal.cards import CardPoints, Pile
from allegra_lan.deal.derive import game_secret
from allegra_lan.deal.keys import joint_key, seat_keys
from allegra_lan.deal.passes import check_shuffle, initial, shuffle_pass
from allegra_lan.local import LocalGame, Player, seat_tags, simulated_setup
from allegra_lan.log.replay import write_replay
from allegra_lan.rules import ruleset_for
from allegra_lan.tags import log_tags
from allegra_lan.tools.verify import verify_file

GAME = bytes(range(16))
CARDS = 160


def per_second(fn: Callable[[], object], seconds: float = 0.3) -> float:
    """Calls of `fn` per second, best of three runs of at least `seconds` each."""
    best = 0.0
    for _ in range(3):
        n, t0 = 0, time.perf_counter()
        while (dt := time.perf_counter() - t0) < seconds:
            for _ in range(50):
                fn()
            n += 50
        best = max(best, n / dt)
    return best


def crypto_costs() -> dict[str, float]:
    """Seconds per call of each libsodium operation the deal uses (PyNaCl's binding name)."""
    k = (123456789).to_bytes(32, "little")
    p = nb.crypto_scalarmult_ed25519_base_noclamp(k)
    q = nb.crypto_core_ed25519_from_uniform(bytes(32))
    u = bytes(range(32))
    ops = {
        "crypto_scalarmult_ed25519_noclamp": lambda: nb.crypto_scalarmult_ed25519_noclamp(k, p),
        "crypto_scalarmult_ed25519_base_noclamp": lambda: nb.crypto_scalarmult_ed25519_base_noclamp(k),
        "crypto_core_ed25519_add": lambda: nb.crypto_core_ed25519_add(p, q),
        "crypto_core_ed25519_sub": lambda: nb.crypto_core_ed25519_sub(p, q),
        "crypto_core_ed25519_is_valid_point": lambda: nb.crypto_core_ed25519_is_valid_point(p),
        "crypto_core_ed25519_from_uniform": lambda: nb.crypto_core_ed25519_from_uniform(u),
    }
    return {name: 1.0 / per_second(fn) for name, fn in ops.items()}


def crypto_seconds(profile: cProfile.Profile, costs: dict[str, float]) -> float:
    """The cryptography in a profiled run: each libsodium call counted, times its cost."""
    stats = pstats.Stats(profile)
    total = 0.0
    for (_, _, name), row in stats.stats.items():  # type: ignore[attr-defined]
        if name in costs:
            total += row[1] * costs[name]  # row[1]: primitive calls
    return total


def deal_round(seats: int, costs: dict[str, float]) -> dict[str, float]:
    secrets = [game_secret(bytes([s + 1] * 32), GAME, s) for s in range(seats)]
    keys = [seat_keys(s, GAME, i) for i, s in enumerate(secrets)]
    joint = joint_key([k.deal_key for k in keys])
    pile = Pile(GAME, 0, 0, CARDS)

    def one_deal() -> tuple[float, float]:
        made = checked = 0.0
        current = initial(CardPoints.of(pile), joint)
        for seat, secret in enumerate(secrets):
            t0 = time.perf_counter()
            p = shuffle_pass(secret, pile, seat, joint, current)
            t1 = time.perf_counter()
            assert check_shuffle(pile, p) is None
            made += t1 - t0
            checked += time.perf_counter() - t1
            current = p.cards
        return made / seats, checked / seats

    runs = [one_deal() for _ in range(3)]
    make = min(r[0] for r in runs)
    check = min(r[1] for r in runs)
    profile = cProfile.Profile()
    profile.enable()
    one_deal()
    profile.disable()
    crypto = crypto_seconds(profile, costs) / seats  # per seat: one pass made and checked once
    return {"make": make, "check": check, "path": seats * (make + check),
            "one_cpu": seats * (make + (seats - 1) * check), "crypto_share": crypto / (make + check)}


def whole_game(out: Path, seed: int, g: int, deal: str) -> tuple[float, int, Path]:
    rs = ruleset_for("grande")
    setup = simulated_setup(seed, g, 4)
    players = [Player(f"greedy-{i}", setup.identities[i]) for i in range(4)]
    t0 = time.perf_counter()
    game = LocalGame(rs, players, game_id=setup.game_id, nonces=setup.nonces, clock=lambda: 1_800_000_000_000,
                     deal=deal)
    _, stats = play_game(rs, 4, setup.seed, ["greedy"] * 4, record=game)
    seconds = time.perf_counter() - t0
    path = out / f"{deal}-{g}.allegra"
    write_replay(path, {**log_tags(game.table), **seat_tags(players)}, [e.signed for e in game.table.events])
    return seconds, stats.moves, path


def verify_seconds(path: Path) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        v = verify_file(path)
        best = min(best, time.perf_counter() - t0)
        assert v.ok and v.finished, v.reason
    return best


def network(players: int, variant: str, games: int) -> dict[str, float]:
    """(e): fair and seeded games of one table over 127.0.0.1 (benchmarks/net.py's peers)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from net import play_one_game  # noqa: E402 (the propagation benchmark's peer processes)

    deals: list[float] = []
    reveals: list[float] = []
    moves: list[float] = []
    seconds = {"fair": 0.0, "seeded": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        for g in range(games):
            for deal in ("seeded", "fair"):
                r = play_one_game(Path(tmp) / f"{deal}-{g}", variant, players, 0.02, deal, rounds=1)
                seconds[deal] += r.seconds
                recs = r.records
                kinds = recs[0].kinds
                last = max(kinds)
                if deal == "seeded":
                    for q, kind in kinds.items():
                        author = next((x for x in recs if q in x.published), None)
                        if kind not in SETUP and author is not None:
                            moves.append((max(x.accepted[q] for x in recs) - author.published[q]) / 1e3)
                    continue
                shuffles = [q for q in sorted(kinds) if kinds[q] == "deal_shuffle"]
                start = recs[0].accepted[shuffles[0] - 1]
                deals.append((max(x.accepted[shuffles[-1]] for x in recs) - start) / 1e9)
                for q in sorted(kinds):
                    if kinds[q] in SETUP or kinds[q].startswith("deal_") or q + 1 > last \
                            or kinds.get(q + 1) != "deal_shares":
                        continue
                    end = q + 1
                    while kinds.get(end + 1) == "deal_shares":
                        end += 1
                    author = next((x for x in recs if q in x.published), None)
                    if author is not None:
                        reveals.append((max(x.accepted[end] for x in recs) - author.published[q]) / 1e3)
    return {"deal": statistics.median(deals), "reveal": statistics.median(reveals),
            "move": statistics.median(moves), "fair_s": seconds["fair"] / games,
            "seeded_s": seconds["seeded"] / games}


SETUP = frozenset({"genesis", "accept", "commit", "reveal", "result"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2, help="games of each deal for (c), (d) and (e)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--network", action="store_true", help="also (e), over 127.0.0.1 (a minute or two)")
    a = ap.parse_args()

    costs = crypto_costs()
    print("(a) libsodium alone (PyNaCl), calls per second:")
    for name, cost in costs.items():
        print(f"    {name:42s} {1 / cost:10.0f}")

    print(f"(b) one round's deal, {CARDS} cards, in one process (best of 3):")
    paths: dict[int, float] = {}
    for seats in (2, 5):
        r = deal_round(seats, costs)
        paths[seats] = r["path"]
        target = 0.5 if seats == 2 else 2.0
        print(f"    {seats} seats: a pass made {r['make'] * 1000:6.1f} ms, checked {r['check'] * 1000:6.1f} ms;"
              f" critical path (a CPU per peer) {r['path']:5.3f} s (target < {target} s on 127.0.0.1),"
              f" all on one CPU {r['one_cpu']:5.3f} s")
        print(f"      libsodium's calls (their cost from (a), PyNaCl's binding included) make"
              f" {r['crypto_share'] * 100:3.0f}% of a pass made and checked; the rest is Python"
              f"{' (over 100%: the loops of (a) ran slower than the calls in place)' if r['crypto_share'] > 1 else ''}")

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        rows = {"seeded": [], "fair": []}  # type: dict[str, list[tuple[float, int, float]]]
        for g in range(a.games):
            for deal in ("seeded", "fair"):
                seconds, moves, path = whole_game(out, a.seed, g, deal)
                rows[deal].append((seconds, moves, verify_seconds(path)))
    s, f = rows["seeded"], rows["fair"]

    def mean(rows: list[tuple[float, int, float]], i: int) -> float:
        return statistics.mean(r[i] for r in rows)

    def per_move(rows: list[tuple[float, int, float]], i: int) -> float:
        return sum(r[i] for r in rows) / sum(r[1] for r in rows)

    print(f"(c) whole 4-seat Grande games between greedy bots, one process, {a.games} of each, same seeds:")
    print(f"    seeded {mean(s, 0):6.2f} s a game ({mean(s, 1):.0f} moves), fair {mean(f, 0):6.2f} s"
          f" ({mean(f, 1):.0f} moves): fair/seeded {mean(f, 0) / mean(s, 0):5.1f}x a game,"
          f" {per_move(f, 0) / per_move(s, 0):5.1f}x a move")
    print("(d) replay verify of those files (best of 3 each):")
    print(f"    seeded {mean(s, 2):6.3f} s a game, fair {mean(f, 2):6.3f} s: fair/seeded"
          f" {mean(f, 2) / mean(s, 2):5.1f}x a game, {per_move(f, 2) / per_move(s, 2):5.1f}x a move")
    if not a.network:
        return
    print(f"(e) on 127.0.0.1, one process per peer, random bots, pace 0.02 s, one round, {a.games} games of each deal:")
    for players, variant, target in ((5, "grande", 2.0), (2, "grande", 0.5)):
        n = network(players, variant, a.games)
        print(f"    {players} peers: a round's deal {n['deal']:5.3f} s (target < {target} s), of it the"
              f" critical path of (b) {paths[players]:5.3f} s ({paths[players] / n['deal'] * 100:3.0f}%),"
              f" waiting the rest")
        print(f"      a public reveal {n['reveal'] / 1000:6.1f} ms from the move to its value on every peer,"
              f" an ordinary move {n['move'] / 1000:5.1f} ms: {n['reveal'] / n['move']:4.1f}x (medians)")
        print(f"      a whole one-round game {n['fair_s']:5.1f} s fair, {n['seeded_s']:5.1f} s seeded:"
              f" {n['fair_s'] / n['seeded_s']:4.1f}x")


if __name__ == "__main__":
    main()
