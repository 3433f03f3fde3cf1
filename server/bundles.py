"""The instant Explorer's bundles (``ui.bundle``), kept per process as the files the app serves.

A sentence's bundle is built part by part: the figures and the block range in focus when a session
opens it, the range in focus when a report-back moves there, and the other ranges in the background
(nearest first, one build at a time in the whole server, each in a worker process at the lowest
priority, ``server.lab_worker``). Each part built is written as a file, and the sentence's index
file is rewritten to list it: the browser reads the index and fetches only what it lists. The files
are named by a keyed hash whose key never leaves the process, so only a session that has the
sentence can name them. The most recently used :data:`BUNDLES_KEPT` bundles are kept.

With ``BLOCKSTAB_BUNDLE_CACHE`` set to a folder, the parts of the built-in examples' bundles (never a
user's own sentence) are also kept there, under names that change with the code: every process of the
machine (a cluster's replicas, a test run's servers) builds such a part once and reads it after.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import hashlib
import hmac
import logging
import os
import secrets
import shutil
import tempfile
import threading
from collections import OrderedDict
from functools import partial
from pathlib import Path

from blockstab.scenario import PRESETS
from ui.bundle import FIGURES, RANGE_FIRSTS, built_part, index, part_file, range_part
from ui.controls import ExplorerState

from .lab_worker import OverTime, WorkerCrashed, in_worker

BUNDLES_KEPT = 16  # bundles kept, the most recently used (the lesson's is about 1 MB on disk)
BUILD_SECONDS = 60.0  # a part built in the background that takes longer is given up (it is built when asked for)
ROUTE = "/api/bundles/"  # where the app serves the bundles' files (server.routes)
# Whether the Explorer draws ahead in idle time (ui/explorer/draw.js); "false" spares a slow computer the work,
# and a step then waits for its drawing.
DRAW_AHEAD = os.environ.get("BLOCKSTAB_DRAW_AHEAD", "true") != "false"
_built: OrderedDict[tuple[ExplorerState, str], set[str]] = OrderedDict()  # (look, lang) -> parts written
_KEEPING = threading.Lock()  # held while _built and the files change
_BUILDING = threading.Lock()  # held while a bundle's other ranges are built (build_around)
_AHEAD = threading.Lock()  # held while parts a live class will open are built (build_ahead)
_ENSURING: dict[tuple[ExplorerState, str, str], tuple[threading.Lock, int]] = {}  # part -> (its lock, threads at it)
_NAMING = secrets.token_bytes(16)  # a bundle's file names cannot be worked out from its sentence elsewhere
FOLDER_PREFIX = "blockstab-bundles-"  # a server's folder of bundles, in the system's temporary folder
ALIVE = ".alive"  # in it: the file its server holds locked while it lives
_ALIVE: list = []  # that file, kept open (its lock lasts while it is open)


def built(look: ExplorerState, lang: str) -> set[str]:
    """The names of the parts of a sentence's bundle that are written (marks it recently used)."""
    with _KEEPING:
        if (look, lang) in _built:
            _built.move_to_end((look, lang))
        return set(_built.get((look, lang), ()))


def ensure(look: ExplorerState, lang: str, *names: str) -> None:
    """Build, in this thread, the parts ``names`` of a sentence's bundle that are not written yet. A part
    another session's thread is building is waited for, not built again: a class whose pages open one
    view at once builds it once."""
    for name in names:
        _once(look, lang, name, partial(made, look, lang, name, shared_folder()))


def shared_part(look: ExplorerState, lang: str, name: str) -> str:
    """A part's file that every student of a live class reads (``server.class_files``): built in a worker
    process by the first to ask while the others wait, then read from this server's folder. The class waits
    for it, so it is built at the server's own priority: at the lowest, a busy machine starved it for minutes
    (the build ahead when a class starts stays at the lowest)."""
    while True:
        _once(look, lang, name, partial(build_in_worker, look, lang, name, 0))
        try:
            return (bundles_folder() / file_name(look, lang, name)).read_text(encoding="ascii")
        except FileNotFoundError:  # let go meanwhile (BUNDLES_KEPT): built again, unless the server is stopping
            if not bundles_folder().is_dir():
                raise


def _once(look: ExplorerState, lang: str, name: str, build) -> None:
    """``build()`` the part and keep it, unless it is written; by one thread at a time per part."""
    part = look, lang, name
    with _KEEPING:
        lock, waiting = _ENSURING.get(part, (threading.Lock(), 0))
        _ENSURING[part] = lock, waiting + 1
    try:
        with lock:
            if name not in built(look, lang):
                keep(look, lang, name, build())
    finally:
        with _KEEPING:
            lock, waiting = _ENSURING.pop(part)
            if waiting > 1:
                _ENSURING[part] = lock, waiting - 1


def part_text(look: ExplorerState, lang: str, name: str) -> str:
    """A part's file as the app serves it, built in a worker process first if it is not written."""
    if name in built(look, lang):
        try:
            return (bundles_folder() / file_name(look, lang, name)).read_text(encoding="ascii")
        except FileNotFoundError:  # let go meanwhile
            pass
    text = build_in_worker(look, lang, name)
    keep(look, lang, name, text)
    return text


def keep(look: ExplorerState, lang: str, name: str, text: str) -> None:
    """Write a part's file and list it in the bundle's index; the least recently used bundles past
    :data:`BUNDLES_KEPT` go, files and all."""
    folder = bundles_folder()
    with _KEEPING:
        if not folder.is_dir():  # removed: the server is stopping (remove_folder)
            return
        parts = _built.setdefault((look, lang), set())
        _built.move_to_end((look, lang))
        _write(folder / file_name(look, lang, name), text)
        parts.add(name)
        _write(folder / file_name(look, lang, "index"), part_file(index(sorted(parts))))
        while len(_built) > BUNDLES_KEPT:
            (old_look, old_lang), old_parts = _built.popitem(last=False)
            for old in (*old_parts, "index"):
                (folder / file_name(old_look, old_lang, old)).unlink(missing_ok=True)


def _write(path: Path, text: str) -> None:
    part = path.with_suffix(".part")
    part.write_text(text, encoding="ascii")
    os.replace(part, path)  # a fetch never reads half a file


@functools.cache
def bundles_folder() -> Path:
    """The folder of this server's bundles' files: made on first use, removed at exit, and marked alive
    by a lock the system lets go when the process ends however it ends (folders of processes ended
    without exiting, as by SIGKILL, are removed here)."""
    remove_abandoned(Path(tempfile.gettempdir()))
    folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
    locked = folder / ".locking"
    alive = open(locked, "w")  # noqa: SIM115 - open for the process's life: its lock is the mark
    fcntl.flock(alive, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.replace(locked, folder / ALIVE)  # named once locked: a sweep never finds it unlocked
    _ALIVE.append(alive)
    atexit.register(remove_folder, folder)
    return folder


def remove_abandoned(parent: Path) -> None:
    """Remove the bundles' folders in ``parent`` whose mark is not locked: their process has ended.
    A folder with no mark (being made, or from before the mark) is left."""
    for folder in parent.glob(f"{FOLDER_PREFIX}*"):
        try:
            with open(folder / ALIVE) as mark:
                fcntl.flock(mark, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(folder, ignore_errors=True)
        except (FileNotFoundError, NotADirectoryError, BlockingIOError):
            continue


def remove_folder(folder: Path) -> None:
    """Remove the bundles' folder, never while a part is written (a build ahead may end as the server stops)."""
    with _KEEPING:
        shutil.rmtree(folder, ignore_errors=True)


def sentence_name(look: ExplorerState, lang: str) -> str:
    """A bundle's name, keyed with this server's secret: only a session that has the sentence knows it."""
    return hmac.new(_NAMING, repr((look, lang)).encode(), hashlib.sha256).hexdigest()[:32]


def file_name(look: ExplorerState, lang: str, name: str) -> str:
    """The file of the part ``name`` (or ``"index"``): :func:`bundle_url` without the route, the name, ``.js``."""
    return f"{sentence_name(look, lang)}-{name}.js"


def bundle_url(look: ExplorerState, lang: str) -> str:
    """Where the browser reads a bundle: this, then a part's name (or ``index``) and ``.js``."""
    return f"{ROUTE}{sentence_name(look, lang)}-"


def by_distance(first: int) -> list[int]:
    """Every other block range's first block, the nearest to ``first`` first (the next one before the one before)."""
    return sorted((n for n in RANGE_FIRSTS if n != first), key=lambda n: (abs(n - first), n < first))


def build_in_worker(look: ExplorerState, lang: str, name: str, niceness: int = 19) -> str:
    """:func:`ui.bundle.built_part` in a worker process, at the lowest priority unless a class waits for it
    (``server.lab_worker``)."""
    return in_worker(partial(part_job, look, lang, name, shared_folder()), BUILD_SECONDS, lambda fraction: None,
                     niceness)


def part_job(look: ExplorerState, lang: str, name: str, folder: Path | None, progress) -> str:
    """:func:`made` as a worker's job (``server.lab_worker.in_worker``: no progress)."""
    return made(look, lang, name, folder)


def shared_folder() -> Path | None:
    """The machine's folder of built-in examples' parts (``BLOCKSTAB_BUNDLE_CACHE``), if it is set."""
    folder = os.environ.get("BLOCKSTAB_BUNDLE_CACHE")
    return Path(folder) if folder else None


def made(look: ExplorerState, lang: str, name: str, folder: Path | None) -> str:
    """:func:`ui.bundle.built_part`, through ``folder`` for a built-in example: the first process to ask
    builds the part while the others wait for it, then everyone reads it."""
    if folder is None or look.example not in PRESETS.values():
        return built_part(look, lang, name)
    path = folder / f"{code_version()}-{hashlib.sha256(repr((look, lang, name)).encode()).hexdigest()[:32]}.js"
    folder.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            _write(path, built_part(look, lang, name))
        return path.read_text(encoding="ascii")


@functools.cache
def code_version() -> str:
    """A digest of the code and texts a part is made from (the engine and ``ui/``): a shared part of
    another version is never read."""
    digest = hashlib.sha256()
    for package in ("blockstab", "ui"):
        root = Path(__file__).resolve().parents[1] / package
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json", ".csv")):
            digest.update(str(path.relative_to(root.parent)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def build_around(look: ExplorerState, lang: str, first: int) -> bool:
    """Build, in the background, the block ranges of a bundle that are not written, nearest to
    ``first``'s first (a block stepping out of its range finds the next one built, then a jump
    anywhere is a fetch). One such build at a time in the whole server, and none while one runs: a
    session moving through blocks never queues work for the others. Whether it started."""
    names = (FIGURES, *map(range_part, by_distance(first)))
    return in_background(_BUILDING, [(look, lang, name) for name in names], "a bundle's block ranges")


def build_ahead(parts: list[tuple[ExplorerState, str, str]]) -> bool:
    """Build, in the background, the bundle parts ``(look, lang, name)`` a live class is about to open,
    in order: one such build at a time in the whole server, beside :func:`build_around`'s. Whether it
    started."""
    return in_background(_AHEAD, parts, "the parts a class will open")


def in_background(lock: threading.Lock, parts: list[tuple[ExplorerState, str, str]], what: str) -> bool:
    """Build the ``parts`` not written, each in a worker, on a thread that holds ``lock`` meanwhile;
    whether it started (not while ``lock`` is held)."""
    if not lock.acquire(blocking=False):
        return False

    def build() -> None:
        try:
            for look, lang, name in parts:
                if name not in built(look, lang):
                    keep(look, lang, name, build_in_worker(look, lang, name))
        except (WorkerCrashed, OverTime) as error:  # e.g. the server stopping ends its workers
            logging.getLogger(__name__).warning("building %s ahead stopped: %r", what, error)
        except Exception:  # noqa: BLE001 - a part not built ahead is built when it is asked for
            logging.getLogger(__name__).exception("building %s ahead stopped", what)
        finally:
            lock.release()

    threading.Thread(target=build, name="blockstab-build-ahead", daemon=True).start()
    return True
