"""The files of a live class's student page (``ui.student_page``) and of the lesson's for one person
(``ui.study_page``), made once per process and kept: their scripts and style, Plotly.js for a phone, each tour
step's file per language and look, the questions' and the exercises' per language, the Explorer's texts, and the
Explorer's bundles of the lesson's sentence (built in a worker process,
``server.bundles.shared_part``). Their path carries :func:`server.bundles.code_version`, so every replica
of one code serves the same files under the same names and a browser keeps each for good; the lesson is
no one's own, so its bundles are named by what they are, not by a server's secret."""

from __future__ import annotations

import functools
import json
import re
import threading
from pathlib import Path

from ui.bundle import FIGURES, PARTS, index, part_file, range_part, sentence_and_look
from ui.controls import BY_KEY
from ui.lessons import TOUR
from ui.student_page import LOOKS, explorer_file, look_state, plotly_script, questions_file, script, style, tour_file
from ui.study_page import MODULES as STUDY_MODULES
from ui.study_page import exercises_file
from ui.text import LANGUAGES, Text

from . import bundles
from .bundles import code_version, shared_part

ROUTE = "/api/class-files/"
_word = "|".join
FILE = re.compile(
    rf"(?P<script>student\.js)|(?P<study>study\.js)|(?P<style>student\.css)|(?P<plotly>plotly-basic\.min\.js)"
    rf"|tour-(?P<step>\d)-(?P<tour_lang>{_word(LANGUAGES)})-(?P<tour_look>{_word(LOOKS)})\.json"
    rf"|questions-(?P<questions_lang>{_word(LANGUAGES)})\.json|exercises-(?P<exercises_lang>{_word(LANGUAGES)})\.json"
    rf"|explorer-(?P<explorer_lang>{_word(LANGUAGES)})-(?P<mode>free|follow)\.json"
    rf"|bundle/(?P<look>{_word(LOOKS)})-(?P<side>{_word(BY_KEY['scenario'].options)})-(?P<lang>{_word(LANGUAGES)})/"
    rf"(?P<part>index|{_word(PARTS)})\.js")
MEDIA = {".js": "text/javascript", ".css": "text/css", ".json": "application/json"}


def prefix() -> str:
    """Where this code's files are: the route, then the code's version."""
    return f"{ROUTE}{code_version()}/"


def class_file(name: str) -> tuple[bytes, str] | None:
    """A file's bytes and media type, made on first asking; ``None`` for a name that is no file."""
    found = FILE.fullmatch(name)
    if found is None or (found["step"] and int(found["step"]) >= len(TOUR)):
        return None
    return _made(name), MEDIA[Path(name).suffix]


@functools.cache
def _made(name: str) -> bytes:
    found = FILE.fullmatch(name)
    if found["script"]:
        return script().encode()
    if found["study"]:
        return script(STUDY_MODULES).encode()
    if found["style"]:
        return style().encode()
    if found["plotly"]:
        return plotly_script()
    if found["step"]:
        return _json(tour_file(int(found["step"]), Text(found["tour_lang"]), found["tour_look"]))
    if found["questions_lang"]:
        return _json(questions_file(Text(found["questions_lang"])))
    if found["exercises_lang"]:
        return _json(exercises_file(Text(found["exercises_lang"])))
    if found["explorer_lang"]:
        return _json(explorer_file(Text(found["explorer_lang"]), found["mode"] == "free"))
    if found["part"] == "index":  # every part is there: one not built yet is built when it is asked for
        return part_file(index(list(PARTS))).encode("ascii")
    return shared_part(bundle_look(found["look"], found["side"]), found["lang"], found["part"]).encode("ascii")


def _json(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def bundle_look(look: str, side: str):
    """The sentence and look of a class's Explorer bundle: the lesson's, on a phone or a computer."""
    return sentence_and_look(look_state(look, scenario=side))


_started: set[str] = set()
_starting = threading.Lock()


def build_ahead_for(lang: str) -> None:
    """When a class starts, in the background: the Explorer's parts its pages open a view on first (the
    figures and the first blocks, on a phone and a computer, in the class's language, then in the other: a
    student may read it), so that the class's first "show me" finds them built; once per process."""
    with _starting:
        if _started:
            return
        _started.add(lang)
    langs = sorted(LANGUAGES, key=lambda each: each != lang)
    parts = [(bundle_look(look, "both"), each, name) for each in langs for look in LOOKS
             for name in (FIGURES, range_part(1))]
    if not bundles.build_ahead(parts):
        with _starting:  # another build ahead runs: the next class start tries again
            _started.clear()
