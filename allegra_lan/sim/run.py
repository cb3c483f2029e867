"""One seed, run and judged: `run_seed(seed, options)` -> `Result` (plain data for a pool)."""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..net.peer.core import UNCONFIRMED
from ..net.takeover import fair_block
from ..table import CEREMONY_STAGES, TAKEOVER
from .invariants import (
    Outcome, Verdicts, check_deal, check_disagreements, check_finished, check_logs, check_prefix,
    check_takeovers, check_verify, promised_to_an_adversary,
)
from .scenario import Options, Scenario, scenario
from .world import SETUP_STAGES, STEP_CAP, VIRTUAL_CAP, World

__all__ = ["Result", "run_seed", "judge", "replay_command"]


@dataclass
class Result:
    seed: int
    ok: bool
    failures: list[str] = field(default_factory=list)
    events: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    checks: Counter[str] = field(default_factory=Counter)
    wall: float = 0.0
    steps: int = 0
    virtual: float = 0.0
    frames: int = 0
    cpu: float = 0.0  # CPU seconds inside the peers' calls
    peers: int = 0
    ended: str = ""
    outcome: str = ""  # finished, stopped, stalled
    spread: list[float] = field(default_factory=list)  # per event: last persist - first (s)
    trace: list[str] = field(default_factory=list)
    describe: str = ""
    # What happened, for the summary and for telling findings apart: takeovers in the honest
    # logs, honest peers that refused their host's lobby after the start, peers left alone,
    # fork proofs held, events a power cut took.
    facts: Counter[str] = field(default_factory=Counter)


SETUP_GAVE_UP = tuple(f"did not send its {stage}" for stage in CEREMONY_STAGES)


def replay_command(seed: int, options: Options) -> str:
    return " ".join(["python -m allegra_lan.sim", "--seed", str(seed), *options.args()])


def judge(w: World) -> Verdicts:
    """Every invariant over a finished World."""
    rec, sc = w.rec, w.sc
    v = Verdicts()
    v.add("no_raise", rec.errors)
    v.add("notes", rec.notes_multiline)
    v.add("bounded", rec.over_cap)
    # Left alone (back after every other peer had left): judged by its log's prefix, unless
    # it still got to the end or to the fork proof the others hold; one that stopped on its
    # own after (its ceremony stalled with nobody there) is as alone as one still waiting.
    stranded = [n for n in w.honest_nodes() if n.stranded
                and (not n.done or n.stopped not in (None, "fork"))]
    # A peer whose ceremony timed out gave the start up and left (net/peer/core.py
    # `_note_pause`); the others may still have got every setup event in time and play on,
    # and later give its seats to bots. It is judged as a peer that left: its log is a prefix
    # of the final one (finding H: an agreed abort would need an event in the log; for now
    # the peer that gives up is the one that leaves, docs/simulation.md), and its seats are
    # absent from the play (seed 516150: with no takeovers, the others wait for it for ever).
    gave_up = [n for n in w.nodes if n.done and (n.stopped or "").endswith(SETUP_GAVE_UP)]
    played_on = any(o.peer is not None and o.peer.table.stage() not in SETUP_STAGES
                    for o in w.honest_nodes() if o not in gave_up)
    left = gave_up if played_on else []
    stranded += [n for n in left if n.honest and not n.gone and n not in stranded]
    # A peer that finished cut off from a majority that never confirmed its end says so and
    # stops (net/peer/core.py `_doubt_the_end`): the majority may have taken its seats over and
    # finished another ending (seed 102136), so it too is judged by its log's prefix.
    stranded += [n for n in w.honest_nodes() if n not in stranded and n.done
                 and (n.stopped or "").startswith(UNCONFIRMED)]
    # A peer that keeps its consent to a lying adversary's takeover refuses the seat's own
    # move at that seq (invariants.promised_to_an_adversary): judged by its log's prefix.
    adversaries = frozenset(n.key for n in w.nodes if not n.honest)
    held = [n for n in w.honest_nodes() if n not in stranded and n.peer is not None
            and promised_to_an_adversary(n.peer.table.seq, n.peer.promises, adversaries)]
    stranded += held
    honest = [n for n in w.honest_nodes() if n not in stranded]
    logs = {f"node {n.index}": n.disk.events if n.peer is None else [e.signed for e in n.peer.table.events]
            for n in honest}
    forks = {}
    for n in honest:
        proof = n.disk.fork
        if proof is None and n.peer is not None and n.peer.replica.fork is not None:
            f = n.peer.replica.fork
            proof = (f.first.signed, f.second.signed)
        forks[f"node {n.index}"] = proof
    if not rec.errors:
        v.add("logs", check_logs(logs, forks, fork_allowed=rec.fork_struck))
        proofs: dict[str, bytes | None] = {}
        for n in honest:
            proof = n.disk.disagreement
            if proof is None and n.peer is not None and n.peer.replica.disagreement is not None:
                proof = n.peer.replica.disagreement.event.signed
            proofs[f"node {n.index}"] = proof
        v.add("results", check_disagreements(proofs, {f"node {n.index}": n.stopped for n in honest},
                                             forger_seat=rec.result_struck))
    final = max(logs.values(), key=len) if logs else []
    forgers = frozenset(sp.identity.public for n in w.nodes if not n.honest and n.peer is not None
                        for sp in n.peer.players.values())
    for n in w.nodes:
        if n.honest and n.gone and logs:
            v.add("logs", check_prefix(f"node {n.index} (gone)", n.disk.events, final,
                                       forgers=forgers))
    twins = frozenset(b for proof in forks.values() if proof is not None for b in proof)
    for n in stranded:
        if logs:
            own = [e.signed for e in n.peer.table.events] if n.peer is not None else n.disk.events
            v.add("logs", check_prefix(f"node {n.index} (left alone)", own, final, twins, forgers))
    seen, problems = check_takeovers(final)
    if seen:
        v.add("takeover", problems)
    cheater = next((a.seat for a in _attacks(w) if a.kind == "dealer" and a.struck), None)
    checked: set[bytes] = set()
    for n in honest:
        if n.peer is None or not n.peer.table.events or rec.errors:
            continue
        head = n.peer.table.head
        if head not in checked:
            checked.add(head)
            v.add("verify", check_verify(n.peer.table, cheater))
    fair = {f"node {n.index}": n.peer.table for n in honest
            if n.peer is not None and n.peer.table.ledger is not None}
    if fair and not rec.errors:  # a seeded game has no deal to judge (its summary is unchanged)
        v.add("deal", check_deal(fair, cheater))
    absent_nodes = rec.absent_nodes | {n.index for n in left}
    absent = rec.absent_in_play or rec.absent_in_setup or bool(left)
    moves_withheld = any(a.kind == "withholding" and getattr(a, "variant", "") == "moves"
                         and getattr(a, "on", False) for a in _attacks(w))
    # A takeover needs the seats that stay to be more than half of the table (net/takeover.py
    # seats_to_take): with fewer, the game waits for the absent player, as it must.
    # The seats they run at the end count (a takeover may have given them more).
    # (The seats of a peer that gave the start up count as they stand at the end: the
    # others may have taken them over.)
    absent_seats = rec.absent_seats
    for n in honest:
        if n.peer is not None and n.peer.lobby is not None:
            gone_keys = {w.nodes[i].key for i in absent_nodes}
            absent_seats = max(absent_seats, sum(1 for k in n.peer.runners().values()
                                                 if k in gone_keys))
    quorum = 2 * (sc.players - absent_seats) > sc.players
    # The fair deal lets a bot take only a lone missing seat whose escrow is in the log
    # (net/takeover.py fair_block): a seat away before that, or two at once, lock the deck,
    # and the game waits for its player; a dealer that withholds its secret stalls the end.
    gone_keys = {w.nodes[i].key for i in absent_nodes}
    fair_locked = any(
        n.peer is not None and n.peer.lobby is not None and fair_block(
            n.peer.table, [s for s, k in n.peer.runners().items() if k in gone_keys]) is not None
        for n in honest)
    dealer = any(a.kind == "dealer" and a.struck for a in _attacks(w))
    secret_withheld = any(a.kind == "dealer" and a.variant == "secret" and a.struck for a in _attacks(w))
    must_finish = (not rec.fork_struck and rec.result_struck is None and not moves_withheld
                   and not secret_withheld and not (absent and fair_locked)
                   and (not absent or (sc.takeover > 0 and quorum and not rec.absent_in_setup)))
    outcomes = []
    for n in honest:
        p = n.peer
        over = p is not None and p.table.over
        outcomes.append(Outcome(f"node {n.index}", n.done, n.stopped, over,
                                p.table.seq if p is not None else len(n.disk.events)))
    if not rec.errors:
        v.add("finished", check_finished(outcomes, must_finish=must_finish, fork=rec.fork_struck,
                                         disagreement=rec.result_struck is not None, dealer=dealer,
                                         setup_disturbed=rec.setup_disturbed or rec.absent_in_setup,
                                         ended=rec.ended))
    run_problems = []
    if rec.ended == "step cap":
        run_problems.append(f"more than {STEP_CAP} inputs: a livelock?")
    if rec.ended == "time cap" and must_finish:
        run_problems.append(f"more than {VIRTUAL_CAP:g} virtual seconds")
    v.add("run", run_problems)
    return v


def _attacks(w: World) -> list:
    return [n.attack for n in w.nodes if n.attack is not None]


def run_seed(seed: int, options: Options = Options(), *, verbose: bool = False,
             rules: dict[str, Any] | None = None) -> Result:
    """One seeded game; `rules`: ruleset fields other than the defaults (Scenario.rules)."""
    sc: Scenario = scenario(seed, options)
    if rules:
        sc = dataclasses.replace(sc, rules=tuple(sorted(rules.items())))
    t0 = time.perf_counter()
    w = World(sc, verbose=verbose, cpu=options.cpu)
    rec = w.run()
    v = judge(w)
    wall = time.perf_counter() - t0
    honest = w.honest_nodes()
    events = max((n.peer.table.seq for n in honest if n.peer is not None), default=0)
    outcome = "stalled"
    if honest and all(n.done for n in honest):
        outcome = "stopped" if any(n.stopped for n in honest) else "finished"
    facts: Counter[str] = Counter()
    adversaries = frozenset(n.key for n in w.nodes if not n.honest)
    for n in w.nodes:
        if n.peer is None:
            continue
        # a seated adversary's Peer is the real one, honest until it strikes
        facts["stale lobby"] += any("a lobby that changes the seats after the start" in f
                                    for f in n.peer.faults)
        if not n.honest:
            continue
        facts["takeover"] += sum(1 for e in n.peer.table.events if e.kind == TAKEOVER)
        facts["fork proof"] += n.peer.replica.fork is not None
        facts["stranded"] += n.stranded
        facts["lost to a power cut"] += n.disk.lost
        facts["held by a promise to an adversary"] += promised_to_an_adversary(
            n.peer.table.seq, n.peer.promises, adversaries)
    spread = []
    for times in rec.events_at.values():
        if len(times) > 1:
            spread.append(max(times) - min(times))
    return Result(seed=seed, ok=not v.failures, failures=v.failures, events=events,
                  faults=Counter(rec.faults), checks=v.checks, wall=wall, steps=w.steps,
                  virtual=w.clock.now - sc.start, frames=w.net.frames,
                  cpu=sum(n.cpu for n in w.nodes), ended=rec.ended, outcome=outcome,
                  peers=len(sc.nodes), spread=spread, trace=rec.trace if verbose else [],
                  describe=sc.describe() if verbose or v.failures else "", facts=+facts)
