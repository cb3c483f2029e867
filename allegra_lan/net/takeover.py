"""The agreement that lets bots play the seats of a peer that does not come back.

Pure rules (no sockets, no clock): who runs which seat, which seats may be
taken, who proposes, and whether this peer may consent. `Node` moves the
messages and keeps the time:

  takeover_ask {t, seq, prev, seats}  the proposer: "let these new keys play these seats"
  takeover_yes {t, seq, signs[, pieces]}  a peer's consents, one per seat it runs that stays,
                                      and (fair deal) its seat's escrow pieces of the taken seat
  takeover_no  {t, seq, reason}       a peer that cannot consent, and why
  takeover_off {t, seq}               the proposer calls it off: consents are released

A peer that consents promises not to take the taken seats' own events at
that seq (`Replica.barred`) until the takeover lands or is called off, so
the seat's late move and the takeover can never both be taken: if any peer
already holds the move, it says no, and the move stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection

from ..log.identity import Identity
from ..log.takeover import ConsentError, read_seats
from ..table import Stage, Table

# A takeover stands where a missing seat must write: a move, its owed result of a round, or
# a fair-deal event it owes (a seat that never signs or shares stops the game as a seat that
# never moves does).
TAKEOVER_STAGES = (Stage.PLAY, Stage.RESULT, Stage.DEAL)
from .lobby import Lobby

ASK_AGAIN = 2.0  # seconds between the proposer's repeated asks (a peer may have been catching up)
GIVE_UP = 15.0  # seconds after which an unfinished agreement is called off (tried again later)
RELEASE_AFTER = 2 * GIVE_UP  # seconds a consent outlives its proposer's last word (see `Promise`)


@dataclass
class Proposal:
    """Our own ask: the new keys (private halves kept here) and the consents gathered."""

    seq: int
    prev: bytes
    seats: list[tuple[int, bytes]]
    idents: dict[int, Identity]
    stay: list[int]
    started: float
    asked: float
    signs: dict[int, bytes] = field(default_factory=dict)
    # Fair deal: the holders whose escrow piece of the taken seat must come with their
    # consent (the seats that stay, but those a takeover released before: anyone opens
    # theirs), and the pieces gathered, holder -> piece, each checked on arrival.
    holders: frozenset[int] = frozenset()
    pieces: dict[int, bytes] = field(default_factory=dict)

    def complete(self) -> bool:
        return all(s in self.signs for s in self.stay) and self.holders <= set(self.pieces)

    def ask(self) -> dict[str, Any]:
        return {"t": "takeover_ask", "seq": self.seq, "prev": self.prev,
                "seats": [[s, k] for s, k in self.seats]}

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"seats": [[s, k] for s, k in self.seats],
                                "signs": [[s, self.signs[s]] for s in self.stay]}
        if self.holders:
            (dealer,) = (s for s, _ in self.seats)
            body["release"] = [[h, dealer, self.pieces[h]] for h in sorted(self.pieces)]
        return body


@dataclass(frozen=True)
class Promise:
    """A consent we gave: to whom, for which seq and seats.

    The proposer may have gathered every consent and written the takeover, so we keep the
    promise while it may still come: through a restart (it fsyncs the takeover before it
    sends it), a stall or a partition. A proposer gone for good would hold the game for
    ever (simulator seed 106420: it wrote the takeover and lost power before the frame left;
    the taken seat's peer came back, and its moves were refused for good), so a promise
    whose proposer has been away RELEASE_AFTER since its last word is released. What that
    costs: a proposer that comes back later still with an undelivered takeover finds the
    table gone on without it (its log parts from theirs, and it says so)."""

    proposer: bytes
    seq: int
    prev: bytes
    seats: tuple[tuple[int, bytes], ...]


def runners(lobby: Lobby, table: Table) -> dict[int, bytes]:
    """seat -> the peer (node key) that writes its events now: the lobby's owner of the
    seat whose player plays it (itself, or the author of the takeover that gave it a bot)."""
    if not table.played_by:
        return {s: c.owner for s, c in lobby.claims.items()}
    return {s: lobby.claims[p].owner for s, p in enumerate(table.played_by) if p in lobby.claims}


def seats_to_take(table: Table, run: dict[int, bytes], present: Collection[bytes]) -> list[int]:
    """The seats whose peers are not `present`, if the seat that must act now is one of them
    (a takeover stands only where a taken seat must act, see Table) and the seats that stay
    are more than half of the table; else none.

    More than half, because "away" cannot tell a peer that crashed from one behind a network
    split: with any smaller quorum, both sides of a split could each take the other's seats
    and play two different games on (the simulator found it: issue 10, finding A). With a
    strict majority at most one side can. So a 2-seat table never hands a seat to a bot (it
    waits for the player, who may `resume`), a 3-seat table can give one seat away, a 4-seat
    table one, 5 or 6 seats two. A peer cut off from everyone whose own seats were already
    given away sees every seat missing: it has no one to agree with."""
    if table.state is None or table.stage() not in TAKEOVER_STAGES:
        return []
    due = table.next_author()  # the seat to decide, or to sign its result of the round
    missing = sorted(s for s, owner in run.items() if owner not in present)
    if 2 * (table.players - len(missing)) <= table.players:
        return []
    if fair_block(table, missing) is not None:
        return []
    return missing if due is not None and due in missing else []


def fair_block(table: Table, missing: Collection[int]) -> str | None:
    """Why the fair deal lets no bot take these seats, or None. A taken seat's secret comes
    back only with an escrow piece from every other seat (Table._released): so only a lone
    missing seat, and only one whose escrow is in the log (a seat that left before it
    published its escrow locks the deck: its key is in every card, its secret nowhere)."""
    ledger = table.ledger
    if ledger is None:
        return None
    if len(missing) > 1:
        return "under the fair deal only one missing seat at a time can be given to a bot"
    if any(s not in ledger.escrow and s not in ledger.adopted for s in missing):
        return ("its escrow never reached the table, so its secret cannot come back under the "
                "fair deal")
    return None


def proposer(players: int, taken: Collection[int], run: dict[int, bytes]) -> bytes | None:
    """The peer that runs the first seat that stays: one proposer, so no two asks compete.
    None when no seat stays, or the first that stays has no known runner: then nobody may
    propose (an ask that names every seat is refused, never a crash)."""
    stay = [s for s in range(players) if s not in taken]
    return run.get(stay[0]) if stay else None


def parse_ask(msg: dict[str, Any], players: int) -> tuple[int, bytes, list[tuple[int, bytes]]]:
    """seq, prev and seats of a takeover_ask; ConsentError if malformed."""
    seq, prev = msg.get("seq"), msg.get("prev")
    if type(seq) is not int or not isinstance(prev, bytes) or len(prev) != 32:
        raise ConsentError("a malformed takeover ask")
    return seq, prev, read_seats(msg.get("seats"), players)


def why_not(table: Table, run: dict[int, bytes], present: Collection[bytes],
            seq: int, prev: bytes, seats: list[tuple[int, bytes]]) -> str | None:
    """Why this peer cannot consent to that takeover now, or None if it can."""
    if seq < table.seq:
        return f"this peer already holds seq {seq}"
    if prev != table.head:
        return "this peer's log differs before that seq"
    taken = {s for s, _ in seats}
    here = [s for s in sorted(taken) if run.get(s) in present]
    if here:
        return f"seat {here[0]}'s player is still connected to this peer"
    if set(seats_to_take(table, run, present)) != taken:
        return "this peer misses other seats, or the seat to act is not among them"
    return None


__all__ = ["TAKEOVER_STAGES", "Proposal", "Promise", "runners", "seats_to_take", "fair_block", "proposer", "parse_ask", "why_not",
           "ASK_AGAIN", "GIVE_UP", "RELEASE_AFTER"]
