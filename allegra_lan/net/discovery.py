"""Finding tables on the home network: mDNS / DNS-SD with python-zeroconf, bound to one interface.

An open table advertises `_allegra._tcp.local.`: the address and TCP port its host
listens on, and TXT records that let `allegra games` show it without connecting
(protocol version, variant, table name, seats taken/total, table id, whether a PIN
is needed, the host key's fingerprint, whether spectators may watch). The ad changes
as seats fill and is withdrawn (goodbye packets, TTL 0) when the game starts, when the
program exits, on Ctrl-C and when the trio task that owns it is cancelled.

Everything is bound to the ONE interface address the caller names (`--interface
ADDR`; tests pass 127.0.0.1 or a test namespace's address). zeroconf is told to use
only that address, and, because its shared listening socket is a wildcard
`0.0.0.0:5353` socket, that socket is also pinned to the interface's device and
stops accepting groups joined elsewhere on the machine (Linux `SO_BINDTODEVICE`,
`IP_MULTICAST_ALL=0`): without that, a table advertised on another interface (or a
stranger's traffic on the real LAN) could reach a browser that was told to stay on
loopback. Ads whose address is outside the interface's network are refused too.

zeroconf runs its own asyncio loop in its own thread. Blocking calls into it
(start, register, update, goodbye, close) run in trio worker threads; browse
callbacks run in zeroconf's loop, resolve ads there (never in the trio thread) and
hand the outcome to trio with `TrioToken.run_sync_soon`, which queues in order and
never blocks zeroconf's loop on a busy or finished trio run.

Strangers write TXT records, so `TableAd.from_properties` trusts nothing: every
field is checked and a bad ad becomes an `AdRefused(service, reason)` event, never
an exception in the browser.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ipaddress
import math
import re
import secrets
import socket
import sys
import threading
import unicodedata
from collections import deque
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Callable, Coroutine, Mapping, TypeVar, Union

import ifaddr
import trio
from zeroconf import IPVersion, ServiceInfo, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo

from ..log.ceremony import MAX_NAME
from ..rules import RulesetError, Variant, ruleset_for

SERVICE_TYPE = "_allegra._tcp.local."

GAME_ID_MIN = 8
"""Bytes of the shortest table/game id an ad may carry (the log's game ids are 16)."""
GAME_ID_MAX = 32

RESOLVE_TIMEOUT = 3.0
"""Seconds a browser waits for an ad's SRV, TXT and A records before refusing it."""

_CALL_TIMEOUT = 5.0  # seconds for one blocking call into zeroconf's loop
_IP_MULTICAST_ALL = getattr(socket, "IP_MULTICAST_ALL", 49)  # Linux value; Python does not export it
_FINGERPRINT = re.compile(r"[A-Z2-7]{4}(?:-[A-Z2-7]{4}){3}")
_DIGITS = re.compile(r"[0-9]{1,5}")
_HEX = re.compile(r"(?:[0-9a-f]{2})+")
_LABEL_MAX = 63  # bytes of one DNS label: the service instance name

T = TypeVar("T")


class DiscoveryError(Exception):
    """Discovery cannot run as asked (no such interface address, zeroconf failed or timed out)."""


class AdError(ValueError):
    """An ad that cannot describe a table; the message names the field and the fault in one line."""


def _show(value: object) -> str:
    """A stranger's value, quoted and cut short, safe to print in a terminal."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise AdError("the table name must be text")
    if not name.strip() or len(name.encode("utf-8")) > MAX_NAME:
        raise AdError(f"the table name must be 1 to {MAX_NAME} bytes of UTF-8 and not blank")
    for ch in name:
        # Control, format (bidi overrides) and line/paragraph separators could rewrite
        # what a terminal shows: a table name from a stranger may contain none of them.
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            raise AdError(f"the table name contains the unprintable character U+{ord(ch):04X}")
    return name


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class TableAd:
    """What an open table tells the network about itself.

    `game_id` is the table's id (the game id once the genesis exists), `pin` says
    whether joining needs the table's PIN, `host` is the host key's fingerprint
    (four groups of four, e.g. `HSXE-DL7C-VDBV-BFWU`) so people can tell two tables of the same name apart,
    `address`/`port` are where the host accepts peers, `proto` the protocol
    version the host speaks. Constructing one checks every field, so an ad can
    never be advertised in a shape a browser would refuse.
    """

    name: str
    variant: Variant  # text given here (an ad read from the network) is checked, then made one
    seats_taken: int
    seats_total: int
    game_id: bytes
    pin: bool
    host: str
    address: str
    port: int
    proto: int
    spectators: bool = False

    def __post_init__(self) -> None:
        if not _is_int(self.proto) or not 1 <= self.proto <= 65535:
            raise AdError(f"the protocol version must be 1 to 65535, not {_show(self.proto)}")
        if not isinstance(self.variant, str):
            raise AdError("the variant must be text")
        try:
            ruleset = ruleset_for(self.variant)
        except RulesetError:
            raise AdError(f"unknown variant {_show(self.variant)}: allegra or grande") from None
        object.__setattr__(self, "variant", ruleset.variant)  # the border: checked text -> Variant
        _check_name(self.name)
        if not _is_int(self.seats_total):
            raise AdError("the number of seats must be a number")
        try:
            ruleset.check_players(self.seats_total)
        except RulesetError as e:
            raise AdError(f"seats: {e}") from None
        if not _is_int(self.seats_taken) or not 0 <= self.seats_taken <= self.seats_total:
            raise AdError(f"seats taken must be 0 to {self.seats_total}, not {_show(self.seats_taken)}")
        if not isinstance(self.game_id, bytes) or not GAME_ID_MIN <= len(self.game_id) <= GAME_ID_MAX:
            raise AdError(f"the table id must be {GAME_ID_MIN} to {GAME_ID_MAX} bytes")
        if not isinstance(self.pin, bool) or not isinstance(self.spectators, bool):
            raise AdError("pin and spectators must be yes/no")
        if not isinstance(self.host, str) or not _FINGERPRINT.fullmatch(self.host):
            raise AdError(f"the host fingerprint must look like ABCD-EFGH-IJKL-MNOP, not {_show(self.host)}")
        try:
            addr = ipaddress.IPv4Address(self.address)
        except (ipaddress.AddressValueError, ValueError, TypeError):
            raise AdError(f"the address must be an IPv4 address, not {_show(self.address)}") from None
        if addr.is_unspecified or addr.is_multicast:
            raise AdError(f"the address {self.address} is not a host's address")
        if not _is_int(self.port) or not 1 <= self.port <= 65535:
            raise AdError(f"the port must be 1 to 65535, not {_show(self.port)}")

    def to_properties(self) -> dict[bytes, bytes]:
        """The TXT records (keys of at most 9 letters, as RFC 6763 asks)."""
        return {
            b"proto": str(self.proto).encode(),
            b"variant": self.variant.encode(),
            b"name": self.name.encode("utf-8"),
            b"taken": str(self.seats_taken).encode(),
            b"seats": str(self.seats_total).encode(),
            b"game": self.game_id.hex().encode(),
            b"pin": b"1" if self.pin else b"0",
            b"host": self.host.encode(),
            b"spect": b"1" if self.spectators else b"0",
        }

    @classmethod
    def from_properties(cls, props: Mapping[bytes, bytes | None], address: str, port: int) -> "TableAd":
        """Read a stranger's TXT records; raises AdError with the reason if they are not a table ad.

        Unknown keys are ignored (a newer host may add some); numbers must be plain
        ASCII digits, flags exactly 0 or 1, the id lowercase hex.
        """
        def raw(key: str) -> bytes:
            value = props.get(key.encode())
            if value is None:
                why = "is missing" if key.encode() not in props else "has no value"
                raise AdError(f"TXT {key} {why}")
            return value

        def ascii_text(key: str) -> str:
            try:
                return raw(key).decode("ascii")
            except UnicodeDecodeError:
                raise AdError(f"TXT {key} is not ASCII") from None

        def number(key: str) -> int:
            text = ascii_text(key)
            if not _DIGITS.fullmatch(text):
                raise AdError(f"TXT {key} must be a number, not {_show(text)}")
            return int(text)

        def flag(key: str) -> bool:
            text = ascii_text(key)
            if text not in ("0", "1"):
                raise AdError(f"TXT {key} must be 0 or 1, not {_show(text)}")
            return text == "1"

        try:
            name = raw("name").decode("utf-8")
        except UnicodeDecodeError:
            raise AdError("TXT name is not UTF-8") from None
        game = ascii_text("game")
        if not _HEX.fullmatch(game):
            raise AdError(f"TXT game must be lowercase hex, not {_show(game)}")
        return cls(  # the variant as text: __post_init__ checks it, then makes it a Variant
            name=name, variant=ascii_text("variant"), seats_taken=number("taken"),  # type: ignore[arg-type]
            seats_total=number("seats"), game_id=bytes.fromhex(game), pin=flag("pin"),
            host=ascii_text("host"), address=address, port=port, proto=number("proto"),
            spectators=flag("spect"),
        )


@dataclass(frozen=True)
class TableSeen:
    """A table appeared; `service` is its unique mDNS instance name (TableGone names it again)."""

    service: str
    ad: TableAd


@dataclass(frozen=True)
class TableChanged:
    """A table's ad changed (seats filled or freed, ...)."""

    service: str
    ad: TableAd


@dataclass(frozen=True)
class TableGone:
    """A table withdrew its ad (game started, host quit) or its ad turned bad."""

    service: str


@dataclass(frozen=True)
class AdRefused:
    """Someone advertised `_allegra._tcp` with an ad we cannot use; `service` is theirs, untrusted."""

    service: str
    reason: str


BrowseEvent = Union[TableSeen, TableChanged, TableGone, AdRefused]


@dataclass(frozen=True)
class Interface:
    """The interface that owns an address: its device name and its IPv4 network."""

    address: str
    device: str
    network: ipaddress.IPv4Network


def find_interface(address: str) -> Interface:
    """The local interface holding `address`; a clear DiscoveryError if there is none."""
    try:
        ipaddress.IPv4Address(address)
    except (ipaddress.AddressValueError, ValueError):
        raise DiscoveryError(f"{address!r} is not an IPv4 address") from None
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str) and ip.ip == address:
                network = ipaddress.IPv4Network(f"{address}/{ip.network_prefix}", strict=False)
                return Interface(address, str(adapter.name), network)
    raise DiscoveryError(f"no network interface here has the address {address}")


def _confine(zc: Zeroconf, iface: Interface) -> None:
    """Pin zeroconf's wildcard listening socket to `iface` (see the module docstring).

    zeroconf binds the socket that hears the multicast group to 0.0.0.0:5353 and
    offers no option to restrict it, so we set the options on it once zeroconf has
    opened it. If zeroconf's internals ever change so that the socket cannot be
    found, discovery refuses to run rather than listen on every interface.
    """
    if not sys.platform.startswith("linux"):
        return  # BSD-style stacks deliver a group only to sockets that joined it on that interface
    readers = getattr(getattr(zc, "engine", None), "readers", None)
    wildcard = [t.sock for t in readers or () if getattr(t, "sock", None) is not None
                and t.sock.family == socket.AF_INET and t.sock.getsockname()[0] == "0.0.0.0"]
    if len(wildcard) != 1:
        raise DiscoveryError("cannot confine zeroconf to one interface (unexpected zeroconf internals)")
    sock = wildcard[0]
    sock.setsockopt(socket.IPPROTO_IP, _IP_MULTICAST_ALL, 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, iface.device.encode())


class _Mdns:
    """One zeroconf instance bound to one interface; every method blocks (call from a worker thread)."""

    def __init__(self, interface: str) -> None:
        self.iface = find_interface(interface)
        try:
            self.zc = Zeroconf(interfaces=[self.iface.address], ip_version=IPVersion.V4Only,
                               use_asyncio=False)
        except OSError as e:
            raise DiscoveryError(f"cannot start mDNS on {interface}: {e}") from None
        try:
            _confine(self.zc, self.iface)
        except BaseException:
            self.zc.close()
            raise

    def run(self, make: Callable[[], Coroutine[Any, Any, T]], timeout: float = _CALL_TIMEOUT) -> T:
        """Run a coroutine in zeroconf's loop and wait for it, at most `timeout` seconds."""
        loop = self.zc.loop
        if loop is None or not loop.is_running():
            raise DiscoveryError("mDNS is not running")
        future = asyncio.run_coroutine_threadsafe(make(), loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise DiscoveryError("mDNS did not finish in time") from None

    def close(self) -> None:
        self.zc.close()


def _instance_label(table_name: str, short_id: str) -> str:
    """A unique DNS-SD instance name: the table's name (cut to fit one label) and a random id.

    Dots would read as label separators and control characters have no business in
    a DNS name, so both become spaces.
    """
    clean = "".join(" " if ch == "." or unicodedata.category(ch)[0] == "C" else ch for ch in table_name)
    suffix = f" [{short_id}]"
    room = _LABEL_MAX - len(suffix.encode())
    encoded = clean.strip().encode("utf-8")[:room]
    head = encoded.decode("utf-8", errors="ignore").strip() or "table"
    return head + suffix


class Advertiser:
    """Advertises one table on one interface; withdraws it on withdraw(), on close and on exit of `async with`.

    The instance name is the table name plus a random id, so two tables with the
    same name never clash; the id is random enough that registration skips
    zeroconf's conflict probing (which would cost ~1.5 s before anyone sees the
    table).
    """

    def __init__(self, interface: str) -> None:
        self._interface = interface
        self._short_id = secrets.token_hex(4)
        self._mdns: _Mdns | None = None
        self._info: ServiceInfo | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def service(self) -> str | None:
        """The mDNS instance name while advertising (browsers name the table by it), else None."""
        info = self._info
        return info.name if info is not None else None

    def _service_info(self, ad: TableAd, mdns: _Mdns) -> ServiceInfo:
        if ipaddress.IPv4Address(ad.address) not in mdns.iface.network:
            raise DiscoveryError(f"the ad's address {ad.address} is not on the interface's network "
                                 f"{mdns.iface.network}")
        label = _instance_label(ad.name, self._short_id)
        return ServiceInfo(
            SERVICE_TYPE, f"{label}.{SERVICE_TYPE}", port=ad.port, properties=ad.to_properties(),
            server=f"allegra-{self._short_id}.local.", addresses=[socket.inet_aton(ad.address)],
        )

    # Blocking halves: run in a worker thread, serialized by the lock.

    def _start_blocking(self, ad: TableAd) -> str:
        with self._lock:
            if self._closed:
                raise DiscoveryError("this advertiser is closed")
            if self._info is not None:
                raise DiscoveryError("already advertising a table: use update()")
            if self._mdns is None:
                self._mdns = _Mdns(self._interface)
            mdns = self._mdns
            info = self._service_info(ad, mdns)
            self._info = info  # set first: if registration fails halfway, withdraw still says goodbye

            async def register() -> None:
                announced = await mdns.zc.async_register_service(info, cooperating_responders=True)
                await announced

            mdns.run(register)
            return info.name

    def _update_blocking(self, ad: TableAd) -> None:
        with self._lock:
            if self._info is None or self._mdns is None:
                raise DiscoveryError("not advertising a table: use start()")
            mdns = self._mdns
            info = self._service_info(ad, mdns)

            async def update() -> None:
                announced = await mdns.zc.async_update_service(info)
                await announced

            mdns.run(update)
            self._info = info

    def _withdraw_blocking(self) -> None:
        with self._lock:
            self._withdraw_locked()

    def _withdraw_locked(self) -> None:
        info, mdns = self._info, self._mdns
        self._info = None
        if info is None or mdns is None:
            return

        async def goodbye() -> None:
            if mdns.zc.registry.async_get_info_name(info.key) is None:
                return
            sent = await mdns.zc.async_unregister_service(info)
            await sent

        mdns.run(goodbye)

    def close(self) -> None:
        """Withdraw (goodbye packets) and stop zeroconf's thread; blocking, idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._withdraw_locked()
            finally:
                mdns, self._mdns = self._mdns, None
                if mdns is not None:
                    mdns.close()  # also says goodbye for anything still registered

    # The trio API.

    async def start(self, ad: TableAd) -> str:
        """Advertise `ad`; returns the instance name. Announced before this returns."""
        return await trio.to_thread.run_sync(self._start_blocking, ad)

    async def update(self, ad: TableAd) -> None:
        """Replace the advertised ad (seats filling); same instance name."""
        await trio.to_thread.run_sync(self._update_blocking, ad)

    async def withdraw(self) -> None:
        """Say goodbye (the game started); runs to the end even if the caller is cancelled."""
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self._withdraw_blocking)

    async def aclose(self) -> None:
        """Withdraw and stop zeroconf; shielded, so it also completes on Ctrl-C and cancellation."""
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self.close)

    async def __aenter__(self) -> "Advertiser":
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


Outcome = Union[TableAd, str, None]  # an ad, the reason it was refused, or gone


class _Watch:
    """The zeroconf-loop half of a Browser: all its methods run in zeroconf's event loop thread."""

    def __init__(self, mdns: _Mdns, post: Callable[[str, Outcome], None], resolve_timeout: float) -> None:
        self.mdns = mdns
        self.post = post
        self.timeout_ms = resolve_timeout * 1000
        self.browser: AsyncServiceBrowser | None = None
        self.active = False
        self.present: set[str] = set()
        self.dirty: set[str] = set()
        self.tasks: dict[str, asyncio.Task[None]] = {}

    async def start(self) -> None:
        self.active = True  # the browser may report cached services while it is being built
        self.browser = AsyncServiceBrowser(self.mdns.zc, SERVICE_TYPE, handlers=[self.on_change])

    async def stop(self) -> None:
        self.active = False
        if self.browser is not None:
            await self.browser.async_cancel()
            self.browser = None
        for task in list(self.tasks.values()):
            task.cancel()
        self.present.clear()

    def on_change(self, zeroconf: Zeroconf, service_type: str, name: str,
                  state_change: ServiceStateChange) -> None:
        if not self.active:
            return
        if state_change is ServiceStateChange.Removed:
            self.present.discard(name)
            self.dirty.discard(name)
            self.post(name, None)
            return
        self.present.add(name)
        if name in self.tasks:
            self.dirty.add(name)  # the running lookup reads the cache again before it reports
            return
        self.tasks[name] = asyncio.ensure_future(self.resolve(name))

    async def resolve(self, name: str) -> None:
        try:
            while name in self.present:
                self.dirty.discard(name)
                info = AsyncServiceInfo(SERVICE_TYPE, name)
                complete = await info.async_request(self.mdns.zc, self.timeout_ms)
                if name not in self.present:
                    return  # withdrawn meanwhile: its Removed was already posted
                if name in self.dirty:
                    continue
                self.post(name, self.judge(info, complete))
                return
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a stranger's records must never stop the browser
            self.post(name, f"unreadable ad ({type(e).__name__})")
        finally:
            self.tasks.pop(name, None)

    def judge(self, info: ServiceInfo, complete: bool) -> TableAd | str:
        if not complete:
            return f"no complete answer (address, port and TXT) within {self.timeout_ms / 1000:g} s"
        network = self.mdns.iface.network
        addresses = info.parsed_addresses(IPVersion.V4Only)
        ours = [a for a in addresses if ipaddress.IPv4Address(a) in network]
        if not ours:
            if not addresses:
                return "no IPv4 address"
            return f"its address {addresses[0]} is not on this interface's network {network}"
        if info.port is None:
            return "no port"
        try:
            return TableAd.from_properties(info.properties, ours[0], info.port)
        except AdError as e:
            return str(e)


class Browser:
    """Watches one interface for tables; iterate it (`async for event in browser`) inside trio.

    Events: TableSeen, TableChanged, TableGone and AdRefused (with the reason an ad
    was ignored). Updates for one service are coalesced while nobody reads: a
    reader gets each table's latest state, never a stale one. `tables` holds the
    tables seen so far and still there (by the events already read).
    """

    def __init__(self, interface: str, *, resolve_timeout: float = RESOLVE_TIMEOUT) -> None:
        if not resolve_timeout > 0 or not math.isfinite(resolve_timeout):
            raise ValueError("resolve_timeout must be a positive number of seconds")
        self._interface = interface
        self._resolve_timeout = resolve_timeout
        self._mdns: _Mdns | None = None
        self._watch: _Watch | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._pending: dict[str, Outcome] = {}
        self._ready: deque[BrowseEvent] = deque()
        self._known: dict[str, TableAd] = {}
        self._refused: dict[str, str] = {}
        self._wakeup = trio.Event()
        self._closed = False

    @property
    def tables(self) -> dict[str, TableAd]:
        return dict(self._known)

    async def start(self) -> None:
        """Start zeroconf (in its thread) and the browse; a no-op when already started."""
        if self._closed:
            raise DiscoveryError("this browser is closed")
        if self._mdns is not None:
            return
        self._token = trio.lowlevel.current_trio_token()
        try:
            self._mdns = await trio.to_thread.run_sync(_Mdns, self._interface)
            self._watch = _Watch(self._mdns, self._post, self._resolve_timeout)
            await trio.to_thread.run_sync(self._mdns.run, self._watch.start)
        except BaseException:
            await self.aclose()
            raise

    def _post(self, service: str, outcome: Outcome) -> None:
        """Called in zeroconf's thread: queue the outcome for trio without waiting for it."""
        token = self._token
        if token is None:
            return
        try:
            token.run_sync_soon(self._deliver, service, outcome)
        except trio.RunFinishedError:
            pass

    def _deliver(self, service: str, outcome: Outcome) -> None:
        """Runs in the trio thread (queued by _post, in order)."""
        if self._closed:
            return
        self._pending.pop(service, None)
        self._pending[service] = outcome
        self._wakeup.set()

    def _settle(self) -> None:
        """Turn pending outcomes into events against what the reader already knows."""
        while self._pending and not self._ready:
            service = next(iter(self._pending))
            outcome = self._pending.pop(service)
            if isinstance(outcome, TableAd):
                self._refused.pop(service, None)
                before = self._known.get(service)
                self._known[service] = outcome
                if before is None:
                    self._ready.append(TableSeen(service, outcome))
                elif before != outcome:
                    self._ready.append(TableChanged(service, outcome))
            elif isinstance(outcome, str):
                if self._known.pop(service, None) is not None:
                    self._ready.append(TableGone(service))
                if self._refused.get(service) != outcome:
                    self._refused[service] = outcome
                    self._ready.append(AdRefused(service, outcome))
            else:
                self._refused.pop(service, None)
                if self._known.pop(service, None) is not None:
                    self._ready.append(TableGone(service))

    def __aiter__(self) -> "Browser":
        return self

    async def __anext__(self) -> BrowseEvent:
        if self._mdns is None and not self._closed:
            raise DiscoveryError("start the browser first (async with Browser(...))")
        while True:
            if self._closed:
                raise StopAsyncIteration
            self._settle()
            if self._ready:
                return self._ready.popleft()
            self._wakeup = trio.Event()
            await self._wakeup.wait()

    def _close_blocking(self, mdns: _Mdns | None, watch: _Watch | None) -> None:
        if mdns is None:
            return
        try:
            if watch is not None:
                mdns.run(watch.stop)
        finally:
            mdns.close()

    async def aclose(self) -> None:
        """Stop browsing and zeroconf's thread; shielded so it completes on Ctrl-C and cancellation."""
        self._closed = True
        self._wakeup.set()
        mdns, watch = self._mdns, self._watch
        self._mdns = self._watch = None
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self._close_blocking, mdns, watch)

    async def __aenter__(self) -> "Browser":
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


def _table_order(ad: TableAd) -> tuple[str, str, bytes]:
    return (ad.name.casefold(), ad.host, ad.game_id)


async def list_tables(interface: str, wait: float, *,
                      until: Callable[[TableAd], bool] | None = None) -> list[TableAd]:
    """The tables seen on `interface` within `wait` seconds (for `allegra games`).

    With `until`, returns as soon as a table for which `until(ad)` is true has been
    seen (`allegra join TABLE` need not wait out the whole listening time).

    Give it 2 s or more: a table announced while we listen shows up at once, but one
    that was already there must answer our question, and when other browsers asked
    the same within the last second, mDNS suppresses our question and the answer is
    rate-limited (RFC 6762 sections 7.3 and 6), so the answer can take ~1.2 s.
    """
    if not wait > 0 or not math.isfinite(wait):
        raise ValueError("wait must be a positive number of seconds")
    async with Browser(interface) as browser:
        with trio.move_on_after(wait):
            async for event in browser:
                if until is not None and isinstance(event, (TableSeen, TableChanged)) and until(event.ad):
                    break
        return sorted(browser.tables.values(), key=_table_order)


__all__ = [
    "SERVICE_TYPE", "GAME_ID_MIN", "GAME_ID_MAX", "RESOLVE_TIMEOUT", "DiscoveryError", "AdError",
    "TableAd", "TableSeen", "TableChanged", "TableGone", "AdRefused", "BrowseEvent", "Interface",
    "find_interface", "Advertiser", "Browser", "list_tables",
]
