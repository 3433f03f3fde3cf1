"""Which computer a request came from, for the per-address limits: the one rule that a page's session
(``widgets.live_class.client_address``) and the app's own HTTP routes (``server.address_limits``) both follow.

Behind a proxy (``BLOCKSTAB_BEHIND_PROXY``, set where only the proxy reaches the app, as
``scripts/serve_cluster.sh`` sets it for HAProxy), it is the address the proxy appended to X-Forwarded-For:
the last entry of the last header (HAProxy adds a header after any the client sent, so the first, or any
other, may be forged); else the connection's peer address. (Uvicorn already takes a peer on 127.0.0.1 or ::1
for a proxy and puts the X-Forwarded-For it sent in the peer's place: only a process on the server's own
machine can name itself that way.)
"""

from __future__ import annotations

import os
from collections.abc import Sequence

UNKNOWN = "unknown"  # no address: AppTest's stand-in session, an ASGI scope without a client


def behind_proxy() -> bool:
    """Whether only a proxy reaches this process (``BLOCKSTAB_BEHIND_PROXY``)."""
    return bool(os.environ.get("BLOCKSTAB_BEHIND_PROXY"))


def address_of(peer: object, forwarded_for: Sequence[str], proxied: bool) -> str:
    """The client's address: with ``proxied``, the last entry of the last of ``forwarded_for`` (the request's
    X-Forwarded-For headers, in order), if any; else ``peer`` (the connection's address), or
    :data:`UNKNOWN` if that is no address."""
    if proxied and forwarded_for and (last := forwarded_for[-1].rsplit(",", 1)[-1].strip()):
        return last
    return peer if isinstance(peer, str) and peer else UNKNOWN
