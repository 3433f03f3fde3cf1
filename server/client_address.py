"""Which computer a request came from, for the per-address limits: the one rule that a page's session
(``widgets.live_class.client_address``) and the app's own HTTP routes (``server.address_limits``,
``server.class_routes``) all follow, through :func:`address_of`.

A value the client sends itself is never believed. What is trusted is set where the app is deployed
(:func:`trust_from`):

* ``BLOCKSTAB_CLIENT_ADDRESS_HEADER`` (e.g. ``Fly-Client-IP``, ``CF-Connecting-IP``): a platform's proxy sets
  this header to the client's address, replacing any the client sent; only it is read (its last value);
* ``BLOCKSTAB_TRUSTED_HOPS=N`` (or ``BLOCKSTAB_BEHIND_PROXY``, which is ``N=1``, as ``scripts/serve_cluster.sh``
  sets it for HAProxy): N proxies each append to X-Forwarded-For, so the client is the N-th entry from the
  right (of all the request's X-Forwarded-For headers, in order); the entries left of it may be forged;
* neither: the connection's peer address, X-Forwarded-For and every named header ignored.

A trusted value that is missing or no IP address falls back to the peer address, never to another entry.

What the limits count and the class store keeps is never the address itself but its :func:`pseudonym`: a keyed
hash of its network (an IPv6 address's /64, since one computer may hold all of it), under a key made at each
start or set for a cluster's replicas alike (``BLOCKSTAB_ADDRESS_KEY``).
(Uvicorn already takes a peer on 127.0.0.1 or ::1 for a proxy and puts the X-Forwarded-For it sent in the
peer's place: only a process on the server's own machine can name itself that way.)
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import os
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

UNKNOWN = "unknown"  # no address: AppTest's stand-in session, an ASGI scope without a client
FORWARDED_FOR = "X-Forwarded-For"
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP field name (RFC 9110's token)


@dataclass(frozen=True)
class Trust:
    """What this deployment's proxies vouch for: a ``header`` holding the client's address, or the number of
    proxies (``hops``) that append to X-Forwarded-For; neither (the default): nothing, the peer counts."""

    header: str | None = None
    hops: int = 0


def trust_from(environ: Mapping[str, str]) -> Trust:
    """The :class:`Trust` the settings in ``environ`` name; a bad value raises ``ValueError`` saying which."""
    header = environ.get("BLOCKSTAB_CLIENT_ADDRESS_HEADER", "").strip()
    hops = environ.get("BLOCKSTAB_TRUSTED_HOPS", "").strip()
    if header and not HEADER_NAME.fullmatch(header):
        raise ValueError(f"BLOCKSTAB_CLIENT_ADDRESS_HEADER must be a header's name, like Fly-Client-IP, "
                         f"not {header!r}.")
    if header.lower() == FORWARDED_FOR.lower():
        raise ValueError("BLOCKSTAB_CLIENT_ADDRESS_HEADER cannot be X-Forwarded-For (a client can write its first "
                         "entries): set BLOCKSTAB_TRUSTED_HOPS to the number of proxies that append to it instead.")
    if hops and not (hops.isdigit() and int(hops) >= 1):
        raise ValueError(f"BLOCKSTAB_TRUSTED_HOPS must be a whole number of proxies, 1 or more, not {hops!r}.")
    if header and hops:
        raise ValueError("Set BLOCKSTAB_CLIENT_ADDRESS_HEADER or BLOCKSTAB_TRUSTED_HOPS, not both: the client's "
                         "address comes from one of them.")
    if header:
        return Trust(header=header)
    return Trust(hops=int(hops) if hops else int(bool(environ.get("BLOCKSTAB_BEHIND_PROXY"))))


@functools.cache
def trusted() -> Trust:
    """This process's :class:`Trust`, from its environment (``python -m server`` checks it at start)."""
    return trust_from(os.environ)


def ip(value: str) -> str | None:
    """``value`` as an IP address (its usual spelling), or ``None`` if it is none."""
    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        return None


def address_of(peer: object, values: Callable[[str], Sequence[str]], trust: Trust) -> str:
    """The client's address by ``trust``: ``values(name)`` gives the request's values of a header, in order, and
    ``peer`` is the connection's address (:data:`UNKNOWN` if it is none)."""
    if trust.header:
        named = values(trust.header)
        vouched = named[-1] if named else ""
    elif trust.hops:
        entries = [entry for value in values(FORWARDED_FOR) for entry in value.split(",")]
        vouched = entries[-trust.hops] if len(entries) >= trust.hops else ""
    else:
        vouched = ""
    return ip(vouched) or (peer if isinstance(peer, str) and peer else UNKNOWN)


def network(address: str) -> str:
    """What counts as one computer: an IPv6 address's /64, else the address as it is."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 6:
        if parsed.ipv4_mapped:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


def shared_key_missing(environ: Mapping[str, str]) -> str | None:
    """Why this process may not start with ``environ``: a shared store without the shared key (each replica
    would count a computer under a hash of its own, and its wrong codes apart); ``None`` if it may."""
    if environ.get("BLOCKSTAB_CLASS_STORE") and len(environ.get("BLOCKSTAB_ADDRESS_KEY", "")) < 32:
        return ("BLOCKSTAB_CLASS_STORE names a store that several processes share: set BLOCKSTAB_ADDRESS_KEY too, "
                "the same 32 characters or more for every one of them (e.g. openssl rand -hex 32; "
                "scripts/serve_cluster.sh makes one).")
    return None


@functools.cache
def address_key() -> bytes:
    """This process's key for :func:`pseudonym`: ``BLOCKSTAB_ADDRESS_KEY`` (a cluster's replicas share it), else
    32 random bytes made at start."""
    return os.environ.get("BLOCKSTAB_ADDRESS_KEY", "").encode() or secrets.token_bytes(32)


def pseudonym(address: str) -> str:
    """``address``'s network under this process's key (HMAC-SHA-256, 128 bits in hex): the same computer
    reads alike while the key lasts, and the address cannot be read back from it."""
    return hmac.new(address_key(), network(address).encode(), hashlib.sha256).hexdigest()[:32]


def client(peer: object, values: Callable[[str], Sequence[str]], trust: Trust) -> str:
    """The client by ``trust`` (:func:`address_of`), as the limits count it: its :func:`pseudonym`."""
    return pseudonym(address_of(peer, values, trust))
