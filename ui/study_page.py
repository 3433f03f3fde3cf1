"""The lesson for one person, light on a phone (``/study``, issue #61): the guided tour, the Explorer and the
exercises on a page of the app's own, not Streamlit's (``server.study_routes``), which its script
(``ui/student/lesson.js``, ``study.js``) draws from a live class's student page's files (``ui.student_page``:
the tour's steps, the Explorer's texts and bundles) and the exercises' file made here. Everything the page
reads is a file made once and kept: a phone costs the server no computation. Pure: no Streamlit, no server."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from urllib.parse import urlencode

from .controls import BY_KEY, CONTROLS, ExplorerState, explorer_query
from .examples import ignored_settings
from .instant import control_spec
from .lessons import QUESTIONS, TOUR, lesson_facts
from .student_page import LOOKS, document, rendered
from .text import LANGUAGES, Text

ROUTE = "/study"
MODULES = ("shown", "lesson", "study")  # ui/student/, after the Explorer's modules (the page draws with them)
VIEW = tuple(control.key for control in CONTROLS)  # the Explorer's view in the link: the sentences, the switches
OPENED = ("part", "step", *VIEW)  # what a link opens (with ``lang``)
PARTS = BY_KEY["part"].options
# The page's own words, as HTML (Markdown rendered; ``{name}`` placeholders the page fills with text).
WORDS = ("tour.indicator", "tour.previous", "tour.next", "study.steps", "join.your_answer", "study.reveal",
         "ex.show_me", "ex.score", "ex.score_value", "describe.show")


@dataclass(frozen=True)
class Opened:
    """What a link opens: the part shown, the tour's step (1-based, as ``/walk``'s) and the Explorer's view; the
    link's (parameter, value) pairs the page cannot use, at their defaults, in ``ignored``."""

    part: str
    step: int
    view: dict
    ignored: tuple[tuple[str, str], ...] = ()


def view_of(state: ExplorerState) -> dict:
    """The Explorer's ``state`` as the page's view: its sentences and switches."""
    return {key: getattr(state, key) for key in VIEW}


def opened(query: Mapping[str, str]) -> Opened:
    """A link's query read as the app reads its own (``ui.controls``): an unknown parameter, or a value its
    control does not take, is ignored and named."""
    read = {key: BY_KEY[key].parse(raw) if key in ("lang", *OPENED) else None for key, raw in query.items()}
    value = {key: BY_KEY[key].default if read.get(key) is None else read[key] for key in OPENED}
    return Opened(value["part"], value["step"], {key: value[key] for key in VIEW},
                  tuple((key, query[key]) for key, parsed in read.items() if parsed is None))


def query(shown: Opened, lang: str, **change) -> str:
    """The query of the link that opens ``shown`` (with ``change``: another part, say) in ``lang``, every
    setting at its default left out (the page's script writes the same: ``lesson.js`` query)."""
    values = {"part": shown.part, "step": shown.step, **shown.view, **change}
    return "?" + urlencode({"lang": lang, **explorer_query(values)})


def address(shown: Opened, lang: str) -> str:
    """The page's path and query that open ``shown`` in ``lang`` (the app's pages link a phone to it)."""
    return ROUTE + query(shown, lang)


@cache
def words(lang: str) -> dict[str, str]:
    t = Text(lang)
    return {key: rendered(t(key)) for key in WORDS}


def part_link(shown: Opened, t: Text, part: str) -> str:
    """The link to ``part`` of the lesson (the page's script shows it in place), marked when it is shown."""
    current = ' aria-current="page"' if part == shown.part else ""
    return (f'<a href="{html.escape(query(shown, t.lang, part=part))}" data-part="{part}"{current}>'
            f'{html.escape(t(f"study.{part}"))}</a>')


def page(t: Text, shown: Opened, phone: bool, files: str) -> str:
    """The page: its title, a link to the other language, the parts' links, a notice naming the link's settings
    it cannot use (text, never markup), and its data (in one JSON element: where its files are, what it opens,
    each setting's default as its link writes it, its words); its script draws the part."""
    look = LOOKS[0] if phone else LOOKS[1]
    other = next(lang for lang in LANGUAGES if lang != t.lang)
    data = {"lang": t.lang, "other_lang": other, "look": look, "files": files, "part": shown.part,
            "step": shown.step, "steps": len(TOUR), "view": shown.view,
            "defaults": {key: BY_KEY[key].format(BY_KEY[key].default) for key in OPENED},
            "sentences": control_spec(BY_KEY["scenario"], t), "words": words(t.lang)}
    embedded = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    notice = ignored_settings(t, list(shown.ignored))
    said = f'<p class="problem" role="alert">{rendered(notice)}</p>\n' if notice else ""
    parts = "\n".join(part_link(shown, t, part) for part in PARTS)
    ahead = "" if shown.part == "exercises" else f"""<link rel="preload" href="{files}plotly-basic.min.js" as="script">
"""
    body = f'{said}<nav class="parts" aria-label="{html.escape(t("study.parts"))}">\n{parts}\n</nav>'
    return document(t, t("study.title"), files, "study.js", query(shown, other), body, "study-data", embedded,
                    preload=ahead)


def exercises_file(t: Text) -> list[dict]:
    """The lesson's exercises as one person does them: each exercise's title, introduction and rule of thumb
    (said once every question of it is revealed), and its questions: the prompt, the choices, the right one,
    what is said of a right and of a wrong choice, the explanation, and the Explorer's view "show me" opens."""
    def question(q) -> dict:
        answer = t(q.choice_key(q.answer))
        return {"id": q.id, "prompt": rendered(t(f"ex.{q.id}.prompt"), False),
                "choices": [[choice, t(q.choice_key(choice))] for choice in q.choices], "answer": q.answer,
                "right": t("ex.right", answer=answer), "wrong": t("ex.wrong", answer=answer),
                "explain": rendered(t(f"ex.{q.id}.explain", **lesson_facts()), False),
                "show_me": {control.key: q.show_me.get(control.key, control.default) for control in CONTROLS}}

    return [{"title": t(f"ex.{n}.title"), "intro": rendered(t(f"ex.{n}.intro")), "rule": rendered(t(f"ex.{n}.rule")),
             "questions": [question(q) for q in QUESTIONS if q.exercise == n]} for n in (1, 2)]
