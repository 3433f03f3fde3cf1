"""The instant Explorer's block views, sent ten blocks at a time (issue #16).

For ten blocks of every stabiliser setting, a ten holds the block view's cut for each stage (its
frame is in the payload, ``ui.instant``), each block's numbers table and whether it matches the
course's table. The tens are built once per sentence, look and language and kept (the most
recently used :data:`KEPT`); a session is sent the ten of the block in focus and the tens on either
side of it that are built and fit in its message, so stepping across a ten's edge is a swap in the
browser. The tens beside are built in the background, one build at a time in the whole server.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace

from .controls import MAX_EXPLORER_DEPTH, STAGE_FOCUS, ExplorerState
from .instant import SETTINGS, packed, setting_key
from .text import Text
from .views import explore
from .views.block import block_cut
from .views.tables import columns_and_rows, course_table_matches, stage_rows

BLOCKS_SENT = 10  # blocks in a ten (40-90 ms to build each block's views, 0.37 MB of JSON)
KEPT = 64  # tens kept, the most recently used
_kept: OrderedDict[tuple, str] = OrderedDict()
_KEEPING = threading.Lock()  # held while _kept changes
_BUILDING = threading.Lock()  # held while the tens beside a session's are built (build_beside)


def blocks_sent(block: int) -> int:
    """The first block of ``block``'s ten (1-10, 11-20, ...)."""
    return (block - 1) // BLOCKS_SENT * BLOCKS_SENT + 1


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
        ten = packed(ten_of_blocks(look, Text(lang), first))
        with _KEEPING:
            _kept[look, lang, first] = ten
            while len(_kept) > KEPT:
                _kept.popitem(last=False)
    return ten


def ten_of_blocks(look: ExplorerState, t: Text, first: int) -> dict:
    """For the blocks ``first`` to ``first + BLOCKS_SENT - 1`` (at most the Explorer's deepest) of
    every setting (``look``'s own setting, depth, block and stage are not read): the block view's
    cut for each stage, the block's numbers table and whether it matches the course's table."""
    blocks = range(first, min(first + BLOCKS_SENT, MAX_EXPLORER_DEPTH + 1))
    settings = {}
    for setting in SETTINGS:
        deep = replace(look, **setting, depth=blocks[-1])  # its first blocks are every shallower stack's
        result = explore(deep)
        settings[setting_key(deep)] = {
            "blocks": [{"stages": {focus: block_cut(replace(deep, block=block, focus=focus), result, t)
                                   for focus in STAGE_FOCUS},
                        "numbers": columns_and_rows(stage_rows(replace(deep, block=block), result, t)),
                        "course_match": block == 1 and course_table_matches(result, deep)} for block in blocks]}
    return {"first": first, "numbers_titles": [t("explorer.numbers", block=block) for block in blocks],
            "settings": settings}


def beside(first: int) -> list[int]:
    """The tens on either side of ``first``'s that exist, the next one first."""
    return [n for n in (first + BLOCKS_SENT, first - BLOCKS_SENT) if 1 <= n <= MAX_EXPLORER_DEPTH]


def tens_to_send(look: ExplorerState, lang: str, first: int, room: int) -> dict[int, str]:
    """By their first block: the ten from ``first`` (built if it is not) and the tens beside it
    that are built, while they fit in ``room`` characters."""
    tens = {first: packed_ten(look, lang, first)}
    for n in beside(first):
        ten = built_ten(look, lang, n)
        if ten is not None and sum(map(len, tens.values())) + len(ten) <= room:
            tens[n] = ten
    return tens


def build_beside(look: ExplorerState, lang: str, first: int) -> bool:
    """Build the tens on either side of ``first``'s in the background (a block in focus stepping
    out of its ten then finds the next one sent). One such build at a time in the whole server, and
    none while one runs: a session stepping through blocks never queues work for the others.
    Whether it started."""
    if not _BUILDING.acquire(blocking=False):
        return False

    def build() -> None:
        try:
            for n in beside(first):
                packed_ten(look, lang, n)
        finally:
            _BUILDING.release()

    threading.Thread(target=build, name="blockstab-blocks-beside", daemon=True).start()
    return True
