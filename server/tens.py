"""The instant Explorer's tens of blocks (``ui.instant.ten_of_blocks``), kept per process.

The tens are built once per sentence, look and language and kept (the most recently used
:data:`KEPT`); a session is sent the ten of the block in focus and the tens on either side of it
that are built and fit in its message, so stepping across a ten's edge is a swap in the browser.
Every ten kept is also a file the app serves (:func:`ten_url`), so the browser fetches a ten it was
not sent without a rerun. From a session's first visit to a sentence, the other tens are built in
the background (nearest first), one build at a time in the whole server, each in a worker process
at the lowest priority (``server.lab_worker``): the class's reruns keep the server's Python.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import hmac
import json
import logging
import os
import secrets
import shutil
import tempfile
import threading
from collections import OrderedDict
from functools import partial
from pathlib import Path

from ui.controls import ExplorerState
from ui.instant import around, beside, packed_ten_of_blocks

from .lab_worker import OverTime, WorkerCrashed, in_worker

KEPT = 64  # tens kept, the most recently used (each also a file: about 6 MB on disk at most)
BUILD_SECONDS = 60.0  # a ten built in the background that takes longer is given up (it is built when asked for)
TENS_ROUTE = "/_stcore/bidi-components/blockstab.tens/"  # where the app serves the tens' files
_kept: OrderedDict[tuple, str] = OrderedDict()
_KEEPING = threading.Lock()  # held while _kept and the files change
_BUILDING = threading.Lock()  # held while the tens around a session's are built (build_around)
_NAMING = secrets.token_bytes(16)  # a ten's file name cannot be guessed from its sentence by another session


def built_ten(look: ExplorerState, lang: str, first: int) -> str | None:
    """The ten of blocks from ``first`` for a sentence and look (``ui.instant.sentence_and_look``),
    packed, if it is built."""
    with _KEEPING:
        if (look, lang, first) in _kept:
            _kept.move_to_end((look, lang, first))
        return _kept.get((look, lang, first))


def packed_ten(look: ExplorerState, lang: str, first: int) -> str:
    """The ten of blocks from ``first`` (:func:`built_ten`), built if it is not."""
    ten = built_ten(look, lang, first)
    if ten is None:
        ten = packed_ten_of_blocks(look, lang, first)
        keep(look, lang, first, ten)
    return ten


def keep(look: ExplorerState, lang: str, first: int, ten: str) -> None:
    """Keep a packed ten, and its file; the least recently used past :data:`KEPT` go, files too.
    Each sentence's index file lists the firsts of its tens kept (the browser reads it before it
    asks for a ten, so it never asks for one that is not there)."""
    folder = tens_folder()
    with _KEEPING:
        if not folder.is_dir():  # removed: the server is stopping (remove_folder)
            return
        _kept[look, lang, first] = ten
        _write(folder / ten_file(look, lang, first), ten)
        changed = {(look, lang)}
        while len(_kept) > KEPT:
            old, _ = _kept.popitem(last=False)
            (folder / ten_file(*old)).unlink(missing_ok=True)
            changed.add(old[:2])
        for sentence in changed:  # (a sentence with no ten kept has no index: the folder stays small)
            built = sorted(n for (*kept, n) in _kept if tuple(kept) == sentence)
            if built:
                _write(folder / index_file(*sentence), json.dumps(built))
            else:
                (folder / index_file(*sentence)).unlink(missing_ok=True)


def _write(path: Path, text: str) -> None:
    part = path.with_suffix(".part")
    part.write_text(text, encoding="ascii")
    os.replace(part, path)  # a fetch never reads half a file


@functools.cache
def tens_folder() -> Path:
    """The folder of this server's tens' files (made on first use, removed at exit)."""
    folder = Path(tempfile.mkdtemp(prefix="blockstab-tens-"))
    atexit.register(remove_folder, folder)
    return folder


def remove_folder(folder: Path) -> None:
    """Remove the tens' folder, never while a ten is written (a build ahead may end as the server stops)."""
    with _KEEPING:
        shutil.rmtree(folder, ignore_errors=True)


def sentence_name(look: ExplorerState, lang: str) -> str:
    """The name of a sentence and look's tens, keyed with this server's secret: only a session
    that has the sentence can know it."""
    return hmac.new(_NAMING, repr((look, lang)).encode(), hashlib.sha256).hexdigest()[:32]


def ten_file(look: ExplorerState, lang: str, first: int) -> str:
    """The file name of the ten from ``first`` (:func:`ten_url` without the route)."""
    return f"{sentence_name(look, lang)}-{first}.txt"


def index_file(look: ExplorerState, lang: str) -> str:
    """The file name of the JSON list of the firsts of a sentence's tens that are kept."""
    return f"{sentence_name(look, lang)}-built.json"


def ten_url(look: ExplorerState, lang: str) -> str:
    """Where the browser fetches this sentence's files: this, then ``built.json`` (the index,
    :func:`index_file`) or ``f"{n}.txt"``, the ten from block ``n``."""
    return f"{TENS_ROUTE}{sentence_name(look, lang)}-"


def tens_to_send(look: ExplorerState, lang: str, first: int, room: int) -> dict[int, str]:
    """By their first block: the ten from ``first`` (built if it is not) and the tens beside it
    that are built, while they fit in ``room`` characters."""
    tens = {first: packed_ten(look, lang, first)}
    for n in beside(first):
        ten = built_ten(look, lang, n)
        if ten is not None and sum(map(len, tens.values())) + len(ten) <= room:
            tens[n] = ten
    return tens


def build_in_worker(look: ExplorerState, lang: str, first: int) -> str:
    """:func:`packed_ten_of_blocks` in a worker process at the lowest priority (``server.lab_worker``)."""
    return in_worker(partial(ten_job, look, lang, first), BUILD_SECONDS, lambda fraction: None)


def ten_job(look: ExplorerState, lang: str, first: int, progress) -> str:
    """:func:`packed_ten_of_blocks` as a worker's job (``server.lab_worker.in_worker``: no progress)."""
    return packed_ten_of_blocks(look, lang, first)


def build_around(look: ExplorerState, lang: str, first: int) -> bool:
    """Build, in the background, the tens around ``first``'s that are not built (:func:`around`:
    the tens beside first, so a block in focus stepping out of its ten finds the next one sent, then
    the rest, so a jump anywhere is a fetch). One such build at a time in the whole server, and none
    while one runs: a session moving through blocks never queues work for the others. Whether it
    started."""
    if not _BUILDING.acquire(blocking=False):
        return False

    def build() -> None:
        try:
            for n in around(first):
                if built_ten(look, lang, n) is None:
                    keep(look, lang, n, build_in_worker(look, lang, n))
        except (WorkerCrashed, OverTime) as error:  # e.g. the server stopping ends its workers
            logging.getLogger(__name__).warning("building the tens of blocks ahead stopped: %r", error)
        except Exception:  # noqa: BLE001 - a ten not built ahead is built when it is asked for
            logging.getLogger(__name__).exception("building the tens of blocks ahead stopped")
        finally:
            _BUILDING.release()

    threading.Thread(target=build, name="blockstab-blocks-around", daemon=True).start()
    return True
