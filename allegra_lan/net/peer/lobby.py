"""A peer's part in the lobby: joining a table, the host's answers to sits and readies,
the lobby a guest takes from its host (a part of `Peer`: its methods run on a Peer)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...log.ceremony import Genesis
from ...log.identity import fingerprint
from ..actions import Dial, Done
from ..lobby import Claim, Lobby, LobbyError
from . import config

if TYPE_CHECKING:
    from .core import Peer


class Lobbying:
    """The lobby's messages and the join of a guest or a watcher."""

    def _wait_for_host(self: Peer) -> None:
        j = self.joining
        assert j is not None
        if j.dialled is None:
            j.dialled = self._now
            self._dialling[None] = self._now
            self._out.append(Dial(None, *j.host))
        if self._now >= j.dialled + config.HOST_TIMEOUT:
            self._fail_join(f"the host at {j.host[0]}:{j.host[1]} sent no lobby within "
                            f"{config.HOST_TIMEOUT:g} s")
        else:
            self._timer(j.dialled + config.HOST_TIMEOUT)

    def _fail_join(self: Peer, why: str) -> None:
        self.join_error = why
        self.stopped = why
        self.over = self.gone = True
        self._out.append(Done(why))

    def _join(self: Peer, lobby: Lobby) -> None:
        """The host's lobby came: ask for our seats (or, watching, check we may)."""
        j = self.joining
        assert j is not None
        j.requested = True
        if j.watch:
            if not lobby.spectators:
                self._fail_join("this table's host does not allow spectators")
            else:
                self._say("watching; every event is checked as it arrives")
            return
        free = lobby.free_seats()
        if j.want_seat is not None and j.want_seat not in free:
            self._fail_join(f"seat {j.want_seat} is not free (free: "
                            f"{', '.join(map(str, free)) or 'none'})")
            return
        if len(free) < len(j.claims):
            self._fail_join(f"the table has {len(free)} free seats, not {len(j.claims)}")
            return
        request = []
        for i, (spec, ident) in enumerate(j.claims):
            self.local[ident.public] = (ident, spec.bot)
            # The host gives the first free seat to a claim without a seat number.
            seat = j.want_seat if i == 0 else None
            request.append([seat, Claim(spec.name, ident.public, self.me, spec.bot,
                                        spec.bot is not None).to_msg()])
        address = self.address or ("0.0.0.0", 0)
        self._send(lobby.host, {"t": "sit", "claims": request, "address": list(address)})
        if all(spec.bot for spec, _ in j.claims):
            self._send(lobby.host, {"t": "ready", "ready": True})  # a person says so in the client
        self._say(f"joining {lobby.name!r} ({lobby.taken} of {lobby.seats} seats taken)")

    def _on_lobby_error(self: Peer, key: bytes, msg: dict[str, Any]) -> None:
        self._say(f"the host refused our request: {msg['reason'][:200]}")

    def _on_lobby(self: Peer, key: bytes, msg: dict[str, Any]) -> None:
        """The host's lobby (a guest's only source of seats and addresses). Once the game
        started, its seats are the log's: a lobby that changes them is refused."""
        who = fingerprint(key)
        try:
            lobby = Lobby.from_msg(msg)
        except LobbyError as e:
            self._blame(f"refused from {who}: {e}")
            return
        if lobby.table_id != self.table_id:
            self._blame(f"refused from {who}: a lobby of another table")
            return
        if lobby.host != key:
            self._blame(f"refused from {who}: a lobby whose host is another peer")
            return
        if self.table.genesis is not None and not _fits(lobby, self.lobby, self.table.genesis):
            self._blame(f"refused from {who}: a lobby that changes the seats after the start")
            return
        self.lobby = lobby
        seat0 = lobby.claims.get(0)
        self.replica.genesis_by = seat0.key if seat0 is not None else None
        self._hold_deal_secret()  # our seat, known from the lobby before the deal starts
        if self.joining is not None and not self.joining.requested:
            self._join(lobby)
        self._changed()

    def _on_request(self: Peer, key: bytes, msg: dict[str, Any]) -> None:
        """A guest's `sit` or `ready` (to us, the host). A sit is taken whole or not at
        all, and the guest is seated at the IP address its connection comes from."""
        lobby = self.lobby
        assert lobby is not None  # Sender.GUEST: we are the host
        if self.table.genesis is not None:
            if msg["t"] == "sit":
                self._send(key, {"t": "lobby_error", "reason": "the game has started: you may only watch"})
            return
        try:
            if msg["t"] == "sit":
                self._sit(lobby, key, msg)
            else:
                lobby.set_ready(key, msg["ready"])
        except LobbyError as e:
            self._send(key, {"t": "lobby_error", "reason": str(e)[:200]})
            self._say(f"lobby request from {fingerprint(key)} refused: {e}")
            return
        self._broadcast(lobby.to_msg())
        self._changed()

    def _sit(self: Peer, lobby: Lobby, key: bytes, msg: dict[str, Any]) -> None:
        link = self.links.get(key)
        if link is None or link.remote is None:
            raise LobbyError("the host cannot tell which address this peer connects from")
        before = dict(lobby.claims)
        try:
            for seat, c in msg["claims"]:
                claim = Claim.from_msg(c)
                if claim.owner != key:
                    raise LobbyError("a peer may only claim seats for itself")
                if seat is None:
                    free = lobby.free_seats()
                    if not free:
                        raise LobbyError("the table is full")
                    seat = free[0]
                lobby.sit(seat, claim)
        except LobbyError:
            lobby.claims = before
            raise
        lobby.addresses[key] = (link.remote[0], msg["address"][1])


def _seating(lobby: Lobby) -> tuple[Any, ...]:
    """What of a lobby the game's log fixes at the start: the table, the rules, the seats."""
    return (lobby.table_id, lobby.name, lobby.seats, lobby.host, lobby.spectators, lobby.takeover)


def _fits(lobby: Lobby, held: Lobby | None, genesis: Genesis) -> bool:
    """Whether a lobby that comes after the genesis may stand: its table is ours, its seats
    are the genesis's (name and key at every seat), and every claim we held is unchanged.
    A claim we did not hold yet may come: the genesis can reach a guest (relayed by another)
    before its host's last lobby, which names the last seat to sit (issue 10, finding B:
    such a guest refused that lobby, then every event of the seat it lacked)."""
    if held is not None and _seating(lobby) != _seating(held):
        return False
    if lobby.name != genesis.table or lobby.ruleset != genesis.ruleset \
            or len(genesis.seats) != lobby.seats or set(lobby.claims) != set(range(lobby.seats)):
        return False
    for seat, claim in lobby.claims.items():
        info = genesis.seats[seat]
        if (claim.name, claim.key) != (info.name, info.key):
            return False
        old = held.claims.get(seat) if held is not None else None
        if old is not None and (old.name, old.key, old.owner, old.bot) != \
                (claim.name, claim.key, claim.owner, claim.bot):
            return False
    return True
