"""Where students' phones reach this app: the address it listens on, and this machine's LAN address,
read from its own network interfaces (no request leaves the machine)."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import psutil

ALL_INTERFACES = ("", "0.0.0.0", "::")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def lan_address() -> str | None:
    """This machine's IPv4 address on its LAN: an interface that is up, private addresses first
    (a school's network), never loopback or link-local; ``None`` if it has none."""
    up = {name for name, stats in psutil.net_if_stats().items() if stats.isup}
    found = [ipaddress.ip_address(a.address) for name, addresses in psutil.net_if_addrs().items() if name in up
             for a in addresses if a.family == socket.AF_INET]
    usable = [a for a in found if not (a.is_loopback or a.is_link_local or a.is_unspecified)]
    return str(min(usable, key=lambda a: (not a.is_private, a))) if usable else None


def students_address(listening_on: str, port: int, browser_address: str) -> tuple[str, bool]:
    """The app's address for students' phones (``scheme://host:port``), and whether phones can reach it.
    ``listening_on`` is the server's address setting and ``browser_address`` the address the teacher's
    browser used: loopback-only, phones cannot reach it (the link still works in this machine's tabs). The
    scheme is always the browser's: a teacher who reached the app over HTTPS gives phones an ``https://`` link."""
    if is_loopback(listening_on):
        return browser_address, False
    browser = urlsplit(browser_address)
    if browser.hostname and not is_loopback(browser.hostname):
        return browser_address, True
    lan = lan_address() if listening_on in ALL_INTERFACES else listening_on
    return (f"{browser.scheme or 'http'}://{lan}:{port}", True) if lan else (browser_address, False)
