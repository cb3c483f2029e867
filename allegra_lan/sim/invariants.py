"""What must hold after every simulated run, each checked on its own, from plain data.

The checkers take logs (lists of signed events) and facts about the run, not
the world, so each can be fed by hand: a test gives `check_logs` two
different logs and sees the failure a broken run would print.

  no_raise   no honest peer raised (tracebacks come with the seed)
  logs       the honest peers hold byte-identical logs, or every one of them the
             same fork proof (a fork only where a forking adversary struck)
  bounded    each honest peer's pending state stayed under its caps (sampled)
  finished   a game whose honest peers stayed (no absence for good, no start given
             up while others played on) ended, and one with such an absence ended
             too when the table allows takeovers
  takeover   each takeover event carries a valid consent of every seat that stays,
             checked here with log/takeover.py alone (not through Table)
  verify     `allegra replay verify`'s checker passes each distinct honest log
  run        the run ended within its step and virtual-time bounds (no livelock)
  notes      every note for the person is one line
  results    where a forged-result adversary struck, every honest peer holds the same
             signed result as the proof, by the forger's seat, and stopped naming that seat
             and both state hashes; elsewhere no peer holds such a proof
  deal       in a fair-deal game, where a dishonest dealer cheated, every honest peer that
             reached the end of the deal names that seat and no other, all alike, and one
             that withheld its secret is the seat the others wait for; where none cheated,
             no honest peer finds a fault in the deal
"""

from __future__ import annotations

import base64
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ..log.ceremony import read_genesis
from ..log.envelope import EventError, decode_event
from ..log.replay import format_header
from ..log.takeover import ConsentError, check_consent, read_seats
from ..tags import log_tags
from ..table import TAKEOVER, Table
from ..tools.verify import verify_file

INVARIANTS = ("no_raise", "logs", "bounded", "finished", "takeover", "verify", "run", "notes",
              "results", "deal")

__all__ = ["INVARIANTS", "Verdicts", "check_logs", "check_takeovers", "check_verify",
           "check_finished", "check_prefix", "check_disagreements", "check_deal"]


@dataclass
class Verdicts:
    checks: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def add(self, kind: str, problems: Iterable[str]) -> None:
        self.checks[kind] += 1
        self.failures.extend(f"{kind}: {p}" for p in problems)


def _pair(fork: tuple[bytes, bytes]) -> frozenset[bytes]:
    return frozenset(fork)


def check_disagreements(proofs: dict[str, bytes | None], stops: dict[str, str | None], *,
                        forger_seat: int | None) -> list[str]:
    """A seat signed a result with a wrong state hash (`forger_seat`): every peer named holds
    that one signed result as its proof, by that seat, and stopped with a reason naming the
    seat and two different hashes. With no forger, no peer holds a proof (an honest engine
    never disagrees with another)."""
    held = {name: p for name, p in proofs.items() if p is not None}
    if forger_seat is None:
        return [f"{name} holds a disagreement proof with no forged result" for name in sorted(held)]
    out: list[str] = []
    missing = sorted(set(proofs) - set(held))
    if missing:
        out.append(f"{', '.join(missing)} hold no disagreement proof while a seat forged a result")
    if len(set(held.values())) > 1:
        out.append(f"different disagreement proofs: {len(set(held.values()))} distinct events")
    for name, proof in sorted(held.items()):
        try:
            ev = decode_event(proof)
        except EventError as e:
            out.append(f"{name}'s disagreement proof is not an event: {e}")
            continue
        if ev.kind != "result":
            out.append(f"{name}'s disagreement proof is a {ev.kind}, not a result")
        stop = stops.get(name) or ""
        hashes = [w.rstrip(",;") for w in stop.split() if len(w.rstrip(",;")) == 32]
        if not stop.startswith(f"result: seat {forger_seat} ") or len(set(hashes)) != 2:
            out.append(f"{name} stopped with {stop!r}, not naming seat {forger_seat} and both hashes")
    return out


def check_logs(logs: dict[str, Sequence[bytes]], forks: dict[str, tuple[bytes, bytes] | None],
               *, fork_allowed: bool) -> list[str]:
    """Every peer named in `logs` holds the same bytes, or every one the same fork proof."""
    held = {name: f for name, f in forks.items() if f is not None}
    if held:
        out = []
        if not fork_allowed:
            out.append(f"a fork proof at {', '.join(sorted(held))} with no forking adversary")
        pairs = {_pair(f) for f in held.values()}
        if len(pairs) > 1:
            out.append(f"different fork proofs: {len(pairs)} distinct pairs")
        missing = sorted(set(logs) - set(held))
        if missing:
            out.append(f"{', '.join(missing)} hold no fork proof while {', '.join(sorted(held))} do")
        return out
    names = sorted(logs)
    if not names:
        return []
    first = names[0]
    out = []
    for name in names[1:]:
        a, b = logs[first], logs[name]
        if list(a) != list(b):
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            out.append(f"{first} and {name} differ at seq {at} ({len(a)} and {len(b)} events)")
    return out


def promised_to_an_adversary(seq: int, promises: Mapping[int, Any], adversaries: frozenset[bytes]) -> bool:
    """Whether a peer whose log ends before `seq` (its next seq) is held there by a consent it
    gave to an adversary's takeover (seeds 605120 and 607606 of the long run: the
    `withholding/moves` adversary proposed to take an absent seat over, got every consent,
    wrote the takeover and showed it to nobody). The consenting peer keeps its promise while
    the proposer stays (net/takeover.py `Promise`: releasing it while the takeover may be
    written could split the log), so when the seat's own player comes back it refuses that
    seat's move at `seq`, and its log stays a prefix of the player's. Against a proposer that
    is present and lies, the takeover keeps safety and gives up liveness, as any withholding
    adversary's table does; such a peer is judged by its log's prefix (`check_prefix`)."""
    promise = promises.get(seq)
    return promise is not None and getattr(promise, "proposer", None) in adversaries


def check_prefix(name: str, log: Sequence[bytes], full: Sequence[bytes],
                 twins: frozenset[bytes] = frozenset(),
                 forgers: frozenset[bytes] = frozenset()) -> list[str]:
    """A peer that left for good agrees with the final log as far as both go, or parts from
    it where a takeover stands in either log (the side without it wrote its own seats' events
    alone: a majority that took a seat over may itself be gone since), or where it holds one
    of the `twins` of the fork the others proved (seed 211497: it came back after they had
    stopped for the fork, holding the other twin), or where the two logs hold two events of
    one seq signed by one key of `forgers`, the adversaries' seat keys (seed 510335: a forker
    showed it one twin and the others the other, and it was gone before anyone could compare;
    the others may never hold a proof, the forker keeping each side on its own branch). It
    may hold more events than the others: its last ones may never have left its machine."""
    for i, ev in enumerate(log[:len(full)]):  # more events than the others: never sent, or lost
        if ev != full[i]:
            if ev in twins or _equivocated(ev, full[i], forgers):
                return []
            for raw in (full[i], ev):  # a takeover on either side: the other went on alone
                try:
                    if decode_event(raw).kind == TAKEOVER:
                        return []
                except EventError:
                    pass
            return [f"{name}'s log parts from the final one at seq {i}"]
    return []


def _equivocated(a: bytes, b: bytes, forgers: frozenset[bytes]) -> bool:
    """`a` and `b` are two events of one seq signed by one adversary's key."""
    try:
        ea, eb = decode_event(a), decode_event(b)
    except EventError:
        return False
    return ea.seq == eb.seq and ea.author == eb.author and ea.author in forgers


def check_takeovers(log: Sequence[bytes]) -> tuple[int, list[str]]:
    """(takeovers seen, problems): each takeover's `signs` are exactly the seats that stay,
    in order, each a valid consent by that seat's key at that point of the log."""
    keys: list[bytes] = []
    seen = 0
    out: list[str] = []
    for raw in log:
        try:
            ev = decode_event(raw)
        except EventError as e:
            return seen, [f"an event does not decode: {e}"]
        if ev.seq == 0:
            keys = [s.key for s in read_genesis(ev.body).seats]
            continue
        if ev.kind != TAKEOVER:
            continue
        seen += 1
        try:
            seats = read_seats(ev.body.get("seats"), len(keys))
        except ConsentError as e:
            out.append(f"takeover at seq {ev.seq}: {e}")
            continue
        taken = {s for s, _ in seats}
        stay = [s for s in range(len(keys)) if s not in taken]
        signs = ev.body.get("signs")
        if not isinstance(signs, list) or [x[0] if isinstance(x, list) and x else None
                                           for x in signs] != stay:
            out.append(f"takeover at seq {ev.seq}: consents are not exactly seats {stay}")
            continue
        for seat, sig in signs:
            try:
                check_consent(sig, key=keys[seat], game=ev.game, seq=ev.seq, prev=ev.prev,
                              seats=seats)
            except ConsentError as e:
                out.append(f"takeover at seq {ev.seq}: seat {seat}: {e}")
        if ev.author not in [keys[s] for s in stay]:
            out.append(f"takeover at seq {ev.seq}: written by a key of no seat that stays")
        for s, k in seats:
            keys[s] = k
    return seen, out


def check_verify(table: Table, cheater: int | None = None) -> list[str]:
    """Write the log as the trio shell would (the header its tags fix) and run the
    `replay verify` checker on the file. Where a dishonest dealer (seat `cheater`) cheated
    in a fair deal, the file may fail, but only on its deal and naming that seat."""
    tags = {"Event": "allegra-lan game", "Site": "allegra-lan", "Date": "2026.01.01",
            **log_tags(table)}
    text = format_header(tags) + "".join(base64.b64encode(e.signed).decode("ascii") + "\n"
                                         for e in table.events)
    fd, path = tempfile.mkstemp(prefix="allegra-sim-", suffix=".allegra")  # removed below
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        v = verify_file(path)
    finally:
        os.unlink(path)
    if not v.ok:
        if cheater is not None and v.where == "deal" and f"seat {cheater} (" in v.reason \
                and not any(f"seat {s} (" in v.reason for s in range(table.players) if s != cheater):
            return []
        return [f"replay verify: {v.where} {v.seq}: {v.reason}"]
    return []


@dataclass(frozen=True)
class Outcome:
    """How one honest peer ended: done (Done action), why it stopped early, and its log."""

    name: str
    done: bool
    stopped: str | None
    over: bool  # its table holds a finished game
    seq: int


def check_finished(outcomes: Sequence[Outcome], *, must_finish: bool, fork: bool,
                   setup_disturbed: bool, ended: str, disagreement: bool = False,
                   dealer: bool = False) -> list[str]:
    """The liveness rule (see the module doc); `must_finish` is decided by the caller from
    the faults that happened. `dealer`: a dishonest dealer cheated, so a game stopped for
    its broken deal stopped as it must."""
    out: list[str] = []
    for o in outcomes:
        if o.stopped is not None:
            legit = ((fork and o.stopped == "fork") or (setup_disturbed and o.stopped != "fork")
                     or (disagreement and o.stopped.startswith("result: "))
                     or (dealer and o.stopped != "fork" and not o.stopped.startswith("result: ")))
            if not legit:
                out.append(f"{o.name} stopped early: {o.stopped}")
        elif must_finish and not (o.done and o.over):
            out.append(f"{o.name} did not finish (seq {o.seq}; the run ended: {ended})")
    return out


def check_deal(tables: Mapping[str, Table], cheater: int | None) -> list[str]:
    """The fair deal's verdict on every honest peer's table (`tables`, by name; seeded games
    have no ledger and are passed over). `cheater`: the seat of a dishonest dealer that
    cheated, or None. A peer whose deal reached its end (every secret in: the game over, or
    stopped by a broken deal) judges by its game-end verdict; one still waiting for the
    cheater's secret is right to wait; one still playing may have found nothing yet, but
    never a fault of an honest seat."""
    out: list[str] = []
    verdicts: dict[str, frozenset[int]] = {}
    for name, t in sorted(tables.items()):
        ledger = t.ledger
        if ledger is None:
            continue
        if t.stuck is not None and cheater is None:
            out.append(f"{name} cannot go on with no dishonest dealer: {t.stuck}")
        ended = len(ledger.secrets) == t.players
        named = frozenset(f.seat for f in (ledger.verdict() if ended else ledger.faults))
        if cheater is None:
            if named or ledger.broken is not None:
                out.append(f"{name} finds a fault in an honest deal: {ledger.broken or sorted(named)}")
            continue
        if named - {cheater}:
            out.append(f"{name} blames seat(s) {sorted(named - {cheater})} for seat {cheater}'s cheat")
        if ended:
            verdicts[name] = named
            if cheater not in named:
                out.append(f"{name} ended the deal without naming seat {cheater}, which cheated")
    if len(set(verdicts.values())) > 1:
        out.append("the honest peers' deal verdicts differ: "
                   + "; ".join(f"{n}: {sorted(v)}" for n, v in sorted(verdicts.items())))
    return out

