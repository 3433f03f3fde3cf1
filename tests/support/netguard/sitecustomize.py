"""A socket guard for tests: imported at start-up by any Python whose PYTHONPATH holds this folder.

When ``BLOCKSTAB_NET_LOG`` names a file, every attempt to look up a host name other than
localhost, or to connect a socket anywhere but the loopback interface or a Unix socket, is
appended there as one JSON line and refused with ``OSError`` (nothing leaves the machine, so a
test needs no network to see an attempt). Loopback traffic is untouched.
"""

import ipaddress
import json
import os
import socket

LOG = os.environ.get("BLOCKSTAB_NET_LOG")
LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}


def _loopback(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host is None or str(host).lower() in LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(str(host).split("%")[0])
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _ip_literal(host) -> bool:
    try:
        ipaddress.ip_address(str(host.decode() if isinstance(host, bytes) else host).split("%")[0])
    except ValueError:
        return False
    return True


def _record(kind: str, destination) -> None:
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps({"kind": kind, "destination": repr(destination), "pid": os.getpid()}) + "\n")


def _arm() -> None:
    connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def outside(sock, address) -> bool:
        return sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0])

    def guarded_connect(self, address):
        if outside(self, address):
            _record("connect", address)
            raise OSError(f"blocked by the test's socket guard: {address!r}")
        return connect(self, address)

    def guarded_connect_ex(self, address):
        if outside(self, address):
            _record("connect_ex", address)
            return 111  # ECONNREFUSED
        return connect_ex(self, address)

    def guarded_getaddrinfo(host, *args, **kwargs):
        if not _loopback(host) and not _ip_literal(host):  # a literal needs no lookup; connect() decides
            _record("getaddrinfo", host)
            raise socket.gaierror(socket.EAI_NONAME, "blocked by the test's socket guard")
        return getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex = guarded_connect, guarded_connect_ex
    socket.getaddrinfo = guarded_getaddrinfo
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps({"kind": "armed", "pid": os.getpid()}) + "\n")


if LOG:
    _arm()
