"""Every limit the server keeps, in one table: what it bounds, per what, its default, and whether an operator
may set it (``BLOCKSTAB_<NAME>`` in the environment). Every route, the teacher's page, the Streamlit process's
fair share and HAProxy (``scripts/serve_cluster.sh``) read their limits here; README's table is this table
(``python -m server.policy`` prints it; a test compares them).

The rules are about seats, not addresses: a school's phones share one NAT address, so the per-address bounds
are sized for a whole class behind one (a class of :data:`STUDENTS_PER_CLASS` phones meets none of them), and
what stops vote stuffing is a class's seats, its lock, and the teacher's "remove the recent joins". Guessing a
code is bounded per address (an IPv6 address's /64) and across the whole server (a cluster's, through Redis);
``docs/live-class.md`` has the arithmetic that sizes those bounds and the code's length.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    name: str
    default: int | float
    per: str  # what it is counted for: the server, a class, an address, a session, a request
    bounds: str  # what it bounds, in a few words
    setting: bool = True  # an operator may set it as BLOCKSTAB_<name>


LIMITS = {limit.name: limit for limit in (
    Limit("CLASSES", 100, "server", "classes at once"),
    Limit("STUDENTS_PER_CLASS", 200, "class", "seats (phones that joined)"),
    Limit("STARTS_PER_HOUR", 10, "address", "classes started in an hour"),
    Limit("PASSPHRASE_TRIES_PER_HOUR", 10, "address", "wrong teacher's passphrases in an hour"),
    Limit("WRONG_CODES_PER_MINUTE", 30, "address", "requests naming a code or a seat that is none, a minute"),
    Limit("SERVER_WRONG_CODES_PER_MINUTE", 300, "server", "tries to join a code that is no live class, a minute"),
    Limit("REQUEST_BURST", 2000, "address", "requests to `/join`, `/study` and `/api/…` at once"),
    Limit("REQUESTS_PER_SECOND", 100.0, "address",
          "requests to `/join`, `/study` and `/api/…` a second, after the burst"),
    Limit("STREAMS_PER_ADDRESS", 400, "address", "class event streams open"),
    Limit("CONNECTIONS_PER_ADDRESS", 1000, "address", "connections open to HAProxy"),
    Limit("CONNECTION_RATE", 1000, "address", "new connections to HAProxy in 10 s"),
    Limit("BODY_BYTES", 1024, "request", "a class route's body (a join or an answer: a few dozen bytes)", False),
    Limit("RERUN_BURST", 8, "session", "Streamlit runs started at once", False),
    Limit("RERUNS_PER_SECOND", 4.0, "session", "Streamlit runs a second, after the burst", False),
    Limit("SHARED_RERUNS_PER_SECOND", 4.0, "server", "runs a second shared by the sessions past their own", False),
    Limit("MESSAGE_BURST", 60, "session", "WebSocket messages read at once", False),
    Limit("MESSAGES_PER_SECOND", 30.0, "session", "WebSocket messages read a second, after the burst", False),
)}


def read(environ: Mapping[str, str]) -> dict[str, int | float]:
    """Each limit's value: its setting in ``environ`` if it may be set and is, else its default. A setting
    that is not a positive number raises ``ValueError`` naming it."""
    values = {}
    for limit in LIMITS.values():
        raw = environ.get(f"BLOCKSTAB_{limit.name}", "").strip() if limit.setting else ""
        try:
            value = type(limit.default)(raw) if raw else limit.default
        except ValueError:
            value = 0
        if not value > 0:
            raise ValueError(f"BLOCKSTAB_{limit.name} must be a positive {type(limit.default).__name__}, "
                             f"not {raw!r}.")
        values[limit.name] = value
    return values


POLICY = read(os.environ)  # this process's limits


def table() -> str:
    """The limits as README's Markdown table."""
    rows = ["| setting | default | per | what it bounds |", "|---|---|---|---|"]
    rows += [f"| {f'`BLOCKSTAB_{x.name}`' if x.setting else f'{x.name} (fixed)'} | {x.default} | {x.per} | "
             f"{x.bounds} |" for x in LIMITS.values()]
    return "\n".join(rows)


def haproxy() -> str:
    """HAProxy's limits as shell assignments (``scripts/serve_cluster.sh`` exports them)."""
    return " ".join(f"BLOCKSTAB_{name}={POLICY[name]}" for name in ("CONNECTIONS_PER_ADDRESS", "CONNECTION_RATE"))


if __name__ == "__main__":
    print(haproxy() if sys.argv[1:] == ["--haproxy"] else table())
