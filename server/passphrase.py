"""The teacher's passphrase where the server is hosted (``BLOCKSTAB_TEACHER_PASSPHRASE``): without it anyone
who reaches the server may start a class (a laptop on a classroom's LAN); with it, ``/class`` asks for it
before "Start a class". Compared in constant time, as SHA-256 digests (equal lengths); never logged, never
in a URL (the page's field is a password field, sent over the page's WebSocket)."""

from __future__ import annotations

import hashlib
import hmac
import os


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def required() -> bool:
    """Whether starting a class needs the passphrase."""
    return bool(os.environ.get("BLOCKSTAB_TEACHER_PASSPHRASE", ""))


def matches(given: str) -> bool:
    """Whether ``given`` is the passphrase (always, when none is set)."""
    setting = os.environ.get("BLOCKSTAB_TEACHER_PASSPHRASE", "")
    return not setting or hmac.compare_digest(_digest(given), _digest(setting))
