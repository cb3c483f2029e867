"""Private networks for tests: Linux network namespaces joined by a bridge, made and removed by the test.

The machine's own interfaces are never touched: every namespace, veth pair and
bridge is created inside namespaces of the test's own (the veth pairs are born in
the bridge namespace and their far ends moved straight into the host namespaces),
and `bridged_lan` deletes every namespace it made on the way out, which also
destroys their interfaces. Programs run inside a namespace with
`ip netns exec NAME ...` (see `Host.exec`).

    with bridged_lan(3, "disc") as lan:
        a, b, c = lan.hosts
        subprocess.run(a.exec(sys.executable, "-c", "..."))
        lan.set_link(b, up=False)   # unplug b's cable at the bridge

Needs root (or CAP_SYS_ADMIN) and `ip`; `netns_unavailable()` says why not when it
cannot run, for `pytest.skip`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

SUBNET = "10.213.0"
"""The bridged LAN's /24 (inside the test's namespaces only, so it cannot clash with the machine's)."""


class NetnsError(RuntimeError):
    """An `ip` command failed while building or changing a test network."""


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    if done.returncode != 0:
        raise NetnsError(f"ip {' '.join(args)}: {done.stderr.strip() or done.returncode}")


def netns_unavailable() -> str | None:
    """None if this machine lets us make network namespaces, else the reason it does not."""
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    probe = f"alg-probe-{uuid.uuid4().hex[:8]}"
    done = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=10)
    if done.returncode != 0:
        return f"the kernel refused `ip netns add`: {done.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=10)
    return None


@dataclass(frozen=True)
class Host:
    """One namespace on the bridged LAN: its name, its address and its interface's name inside it."""

    netns: str
    address: str
    device: str
    bridge_port: str  # the veth end plugged into the bridge (in the bridge namespace)

    def exec(self, *argv: str) -> list[str]:
        """The argv that runs `argv` inside this namespace."""
        return ["ip", "netns", "exec", self.netns, *argv]


@dataclass
class Lan:
    """A bridge in a namespace of its own, with one host namespace per port."""

    bridge_netns: str
    hosts: list[Host] = field(default_factory=list)
    made: list[str] = field(default_factory=list)  # every namespace made, for teardown

    def set_link(self, host: Host, up: bool) -> None:
        """Plug or unplug `host`'s cable at the bridge (its own interface stays up)."""
        _ip("-n", self.bridge_netns, "link", "set", host.bridge_port, "up" if up else "down")


@contextmanager
def bridged_lan(hosts: int, tag: str) -> Iterator[Lan]:
    """`hosts` namespaces on one bridge, addresses SUBNET.1, .2, ...; all removed on exit, whatever happens."""
    if not 1 <= hosts <= 200:
        raise ValueError("1 to 200 hosts")
    stem = f"alg-{tag[:8]}-{os.getpid()}-{uuid.uuid4().hex[:4]}"
    lan = Lan(bridge_netns=f"{stem}-br")
    try:
        _ip("netns", "add", lan.bridge_netns)
        lan.made.append(lan.bridge_netns)
        _ip("-n", lan.bridge_netns, "link", "set", "lo", "up")
        # Snooping off: mDNS uses 224.0.0.251, which every port must get without IGMP joins.
        _ip("-n", lan.bridge_netns, "link", "add", "br0", "type", "bridge", "stp_state", "0",
            "mcast_snooping", "0")
        _ip("-n", lan.bridge_netns, "link", "set", "br0", "up")
        for i in range(hosts):
            host = Host(netns=f"{stem}-h{i}", address=f"{SUBNET}.{i + 1}", device="eth0",
                        bridge_port=f"port{i}")
            _ip("netns", "add", host.netns)
            lan.made.append(host.netns)
            _ip("-n", host.netns, "link", "set", "lo", "up")
            _ip("-n", lan.bridge_netns, "link", "add", host.bridge_port, "type", "veth",
                "peer", "name", host.device, "netns", host.netns)
            _ip("-n", lan.bridge_netns, "link", "set", host.bridge_port, "master", "br0")
            _ip("-n", lan.bridge_netns, "link", "set", host.bridge_port, "up")
            _ip("-n", host.netns, "addr", "add", f"{host.address}/24", "dev", host.device)
            _ip("-n", host.netns, "link", "set", host.device, "up")
            lan.hosts.append(host)
        yield lan
    finally:
        for name in reversed(lan.made):
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)
