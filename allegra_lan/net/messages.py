"""Every message a node handles: its fields' schema and who may send it, in one table.

A frame is only known to be canonical msgpack with a string `t`; what its
other fields hold is whatever the peer chose. `Node.dispatch` looks the type
up here, checks that the sender may send it at all (before reading anything
inside it: a stranger's knock is refused unread), then checks the whole
message against its schema, and only then calls the handler, which may index
fields without a second look. A message that fails is refused by name:
"a malformed knock message: field k: must be bytes of 65 to 200, not an
array". PROTOCOL.md ("Messages") lists this table; `describe_all` writes it.

The handshake's messages (hello, proof, ok, refuse) are read by
net/handshake.py before a link exists, and never reach a node's dispatch.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..log.envelope import MAX_EVENT, SIG_LEN
from ..log.knock import MAX_KNOCK
from ..log.schema import (
    EVENT_ID, KEY, SEAT, SEQ, Array, Bytes, Map, Maybe, OneOf, SchemaError, Spec, Text,
    Tuple,
)
from .lobby import LOBBY, READY, SIT

MAX_BATCH = 64  # events per `events` message (net/sync.py sends at most this many)
MAX_REASON = 1024  # bytes of a reason a peer gives (honest peers send at most 200 characters)
MAX_FAULT = 32  # bytes of a refusal's class ("illegal", "fork", ...)
MAX_TAKEN = 15  # seats a takeover may take (one of at most 16 must stay)
MAX_LINKS = 64  # keys in a `links` message (16 seated peers and 16 watchers fit twice)


class Sender(Enum):
    """Who may send a message type to this node."""

    ANYONE = "any linked peer"
    SEATED = "a peer that holds a seat"
    HOST = "the table's host"
    GUEST = "a peer, to the host"


class MessageError(ValueError):
    """A message that is not one of the protocol's, or not of its type's form."""


@dataclass(frozen=True)
class MessageType:
    name: str
    schema: Map
    sender: Sender
    about: str

    def check(self, msg: Any) -> None:
        """MessageError naming the field unless `msg` has this type's form."""
        try:
            self.schema.check(msg)
        except SchemaError as e:
            raise MessageError(f"a malformed {self.name} message: {e}") from None


def _msg(name: str, sender: Sender, about: str, fields: dict[str, Spec] | None = None,
         schema: Map | None = None) -> MessageType:
    return MessageType(name, schema or Map({"t": OneOf((name,)), **(fields or {})}), sender, about)


def _reason() -> Text:
    return Text(MAX_REASON)


EVENT = Bytes(SIG_LEN + 1, MAX_EVENT)
CONSENT = Bytes(64)

MESSAGES: dict[str, MessageType] = {m.name: m for m in (
    _msg("have", Sender.ANYONE, "how many events the sender holds, and the id of its last",
         {"seq": SEQ, "head": EVENT_ID}),
    _msg("events", Sender.SEATED, "signed events in order from seq `from`",
         {"from": SEQ, "items": Array(EVENT, MAX_BATCH)}),
    _msg("refused", Sender.SEATED, "why the sender did not take an event we sent",
         {"seq": Maybe(SEQ), "reason": _reason(), "fault": Text(MAX_FAULT)}),
    _msg("links", Sender.ANYONE, "the keys of the peers the sender is linked to now",
         {"peers": Array(KEY, MAX_LINKS)}),
    _msg("lobby", Sender.HOST, "the host's lobby, on every change", schema=LOBBY),
    _msg("sit", Sender.GUEST, "a peer asks for seats (nil: the first free one)", schema=SIT),
    _msg("ready", Sender.GUEST, "a peer's seats are (not) ready", schema=READY),
    _msg("lobby_error", Sender.HOST, "why the host refused a request", {"reason": _reason()}),
    _msg("knock", Sender.SEATED, "seat `seat`'s signed knock or pass for the draw `draw`",
         {"seat": SEAT, "draw": EVENT_ID, "k": Bytes(SIG_LEN + 1, MAX_KNOCK)}),
    _msg("ping", Sender.ANYONE, "keeps a quiet link alive"),
    _msg("takeover_ask", Sender.SEATED, "the proposer's takeover at its next seq",
         {"seq": SEQ, "prev": EVENT_ID, "seats": Array(Tuple((SEAT, KEY)), MAX_TAKEN, lo=1)}),
    _msg("takeover_yes", Sender.SEATED, "the consents of the seats the sender runs that stay "
         "(fair deal: and its seat's escrow pieces of the taken seat, [holder, dealer, piece])",
         schema=Map({"t": OneOf(("takeover_yes",)), "seq": SEQ,
                     "signs": Array(Tuple((SEAT, CONSENT)), MAX_TAKEN + 1),
                     "pieces": Array(Tuple((SEAT, SEAT, Bytes(32))), MAX_TAKEN + 1)},
                    optional=frozenset({"pieces"}))),
    _msg("takeover_no", Sender.SEATED, "why the sender cannot consent",
         {"seq": SEQ, "reason": _reason()}),
    _msg("takeover_off", Sender.SEATED, "the proposer calls its takeover off", {"seq": SEQ}),
    _msg("disagree", Sender.SEATED, "a seat's signed result our engine refuses: every peer stops",
         {"event": EVENT}),
    _msg("fork", Sender.SEATED, "two events one seat's key signed for one seq: every peer stops",
         {"first": EVENT, "second": EVENT}),
)}


def message_type(msg: Any) -> MessageType:
    """The type of a message (a map with a string `t`, as framing guarantees); MessageError
    if the protocol has no such type."""
    t = msg.get("t") if type(msg) is dict else None
    found = MESSAGES.get(t) if type(t) is str else None
    if found is None:
        raise MessageError(f"unknown message {t!r:.30}")
    return found


def check_message(msg: Any) -> MessageType:
    """`message_type` and its schema check in one (for callers with no sender to judge)."""
    mt = message_type(msg)
    mt.check(msg)
    return mt


def describe_all() -> str:
    """The message table of PROTOCOL.md, from the schemas themselves."""
    rows = ["| t | sender | fields | what |", "|---|---|---|---|"]
    for m in MESSAGES.values():
        fields = ", ".join(f"`{k}`: {v.describe()}" for k, v in m.schema.fields.items() if k != "t")
        rows.append(f"| `{m.name}` | {m.sender.value} | {fields or '-'} | {m.about} |")
    return "\n".join(rows)


__all__ = ["MESSAGES", "MessageType", "MessageError", "Sender", "message_type", "check_message",
           "describe_all", "MAX_REASON", "MAX_LINKS"]
