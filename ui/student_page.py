"""A live class's student page (issue #48): not a Streamlit session but a small page of the app's own
(``server.class_routes``), its script (``ui/student/``) and the files it reads, each made here from the
same views, lessons and catalogs as the app's pages. Per language and look (a phone's or a computer's):
a tour step's title, text, figure and the figure in words; the questions (never their answers: those
come with the reveal); the Explorer's texts. Per class and version: what the reveal shows. Pure: no
Streamlit, no server."""

from __future__ import annotations

import html
import json
from functools import cache
from pathlib import Path

import plotly.io
from markdown_it import MarkdownIt

from .class_views import answer_name, answers_description, answers_figure, choice_names, own_answer
from .controls import INSTANT, ExplorerState
from .instant import EXPLORER, STYLE, joined, mount_data
from .instant import MODULES as EXPLORER_MODULES
from .lessons import ASKABLE, TOUR, lesson_facts
from .live_class import LiveClass, right_answer
from .text import LANG_TAGS, LANGUAGES, Text, plotly_locale
from .views import FIGURES, explore, figure_state
from .views.describe import DESCRIPTIONS

STUDENT = Path(__file__).with_name("student")
PLOTLY_BASIC = Path(__file__).with_name("vendor") / "plotly-basic.min.js"
# V8's explicit compile hint (Chromium 136 on): every function of the file compiled on a background thread as it
# streams in, not one at a time on the main thread as Plotly's set-up calls them. On a phone's CPU (4x slower)
# loading and first drawing blocked the page 1.1 s, with it 0.4 s. Other browsers read a comment.
COMPILE_HINT = b"//# allFunctionsCalledOnLoad\n"
MODULES = ("shown", "machine", "page")  # ui/student/, after the Explorer's modules (the page draws with its functions)
LOOKS = ("phone", "computer")
# The page's own words, as HTML (Markdown rendered; ``{name}`` placeholders the page fills with text).
WORDS = ("join.send", "join.title", "join.in_class", "join.your_answer", "join.open", "join.closed", "join.you_chose",
         "join.explore_freely", "join.joining", "join.reconnecting", "join.language", "join.look_up",
         "join.seconds_left", "join.time_up", "join.round_two", "join.your_first", "class.not_seated",
         "describe.show", "lang.en", "lang.zh")
_markdown = MarkdownIt("commonmark", {"html": False})


def rendered(markdown: str, inline: bool = True) -> str:
    """Our catalog's Markdown as HTML (raw HTML in it is escaped, never passed on)."""
    return _markdown.renderInline(markdown) if inline else _markdown.render(markdown).strip()


def phone_look(user_agent: str) -> bool:
    """Whether a browser is a phone's: every phone browser's User-Agent says "Mobi" (the app's rule too)."""
    return "Mobi" in user_agent


def words(t: Text) -> dict[str, str]:
    return {key: rendered(t(key)) for key in WORDS}


def page(t: Text, code: str | None, phone: bool, files: str, api: str, problem: str | None = None) -> str:
    """The page: the class's code and, once its script has joined, what the class shows; with no code
    (or a bad one: ``problem``, a catalog key) a form to type it. Every text escaped; the page's data (its
    words in both languages, where its files and the class's routes are, the tour's length) in one JSON element."""
    data = {"code": code, "lang": t.lang, "look": LOOKS[0] if phone else LOOKS[1], "files": files, "api": api,
            "steps": len(TOUR), "words": {lang: words(Text(lang)) for lang in LANGUAGES}, "tags": LANG_TAGS}
    embedded = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    other = next(lang for lang in LANGUAGES if lang != t.lang)
    form = "" if code else f"""
<form class="join-code" method="get" action="/join">
<label for="class-code">{html.escape(t("join.code"))}</label>
<input id="class-code" name="class" maxlength="12" autocomplete="off" autocapitalize="characters" required
       aria-describedby="class-code-help">
<input type="hidden" name="lang" value="{t.lang}">
<button type="submit">{html.escape(t("join.join"))}</button>
<p id="class-code-help" class="help">{html.escape(t("join.code_help"))}</p>
</form>"""
    said = f'<p class="problem" role="alert">{html.escape(t(problem))}</p>' if problem else ""
    joining = f'<p class="in-class">{rendered(t("join.in_class", code=code))}</p>' if code else ""
    return document(t, t("join.title"), files, "student.js", f"?lang={other}", f"{said}{joining}{form}", "student-data",
                    embedded)


def document(t: Text, title: str, files: str, script: str, other_link: str, body: str, data_id: str,
             embedded: str, preload: str = "") -> str:
    """A student's page (a class's, or the lesson's for one person): its language, title, style and ``script``
    (``preload``: what it links ahead), a header with the title and the link to the other language (``other_link``),
    ``body``, the live region, the activity's place and the page's data (``embedded`` JSON, as ``data_id``)."""
    other = next(lang for lang in LANGUAGES if lang != t.lang)
    return f"""<!doctype html>
<html lang="{LANG_TAGS[t.lang]}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} · BlockStab</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{files}student.css">
<script src="{files}{script}" defer></script>
{preload}</head>
<body>
<main>
<header>
<h1>{html.escape(title)}</h1>
<div class="languages" role="group" aria-label="{html.escape(t("join.language"))}">
<a href="{html.escape(other_link)}" lang="{LANG_TAGS[other]}" data-lang="{other}">{html.escape(t(f"lang.{other}"))}</a>
</div>
</header>
{body}
<p id="announced" class="visually-hidden" role="status" aria-live="polite"></p>
<div id="activity"></div>
</main>
<script type="application/json" id="{data_id}">{embedded}</script>
</body>
</html>
"""


def look_state(look: str, **view) -> ExplorerState:
    return ExplorerState(**view, phone=look == LOOKS[0])


def figure_file(name: str, state: ExplorerState, t: Text) -> dict:
    """A view as the page draws it: Plotly's JSON (its typed arrays as Plotly.js reads them), its
    description, and the chart's config in the page's language."""
    reduced = figure_state(name, state)
    result = explore(reduced)
    figure = FIGURES[name](reduced, result, t)
    return {"figure": json.loads(plotly.io.to_json(figure)), "description": DESCRIPTIONS[name](reduced, result, t),
            "config": {"displaylogo": False, "responsive": True, **plotly_locale(t)}}


def tour_file(number: int, t: Text, look: str) -> dict:
    """Tour step ``number`` (0-based): its title, its text and its figure."""
    step = TOUR[number]
    return {"title": t(f"tour.{step.id}.title"), "body": rendered(t(f"tour.{step.id}.body", **lesson_facts()), False),
            **figure_file(step.figure, step.state(phone=look == LOOKS[0]), t)}


def questions_file(t: Text) -> list[dict]:
    """Every question (quick poll, numeric prediction) as a student reads it, its choices in its order or its
    number's bounds and unit: never its answer."""
    return [{"title": t(f"ex.{q.exercise}.title"), "prompt": rendered(t(f"ex.{q.id}.prompt"), False),
             "choices": [[choice, t(q.choice_key(choice))] for choice in q.choices],
             **({"number": {"low": q.number.low, "high": q.number.high,
                            "label": t("join.number_label", unit=t(q.number.unit), low=q.number.low,
                                       high=q.number.high)}} if q.number else {})} for q in ASKABLE]


def explorer_file(t: Text, free: bool) -> dict:
    """The Explorer's data in a class (``ui.instant.mount_data``) but for what the class sets: its view, the
    lead and the bundle. Read-only while following; the student's own controls when ``free``."""
    return mount_data(list(INSTANT) if free else [], {}, t, False, bundle="", plotly="")


def reveal_file(c: LiveClass, t: Text) -> dict:
    """What the reveal shows every student alike: the class's answers (its chart and the chart in words), the
    right answer and why (a poll has neither)."""
    question = ASKABLE[c.question]
    figure = answers_figure(c, t)
    return {"figure": json.loads(plotly.io.to_json(figure)), "description": answers_description(c, t),
            "config": {"displaylogo": False, "responsive": True, **plotly_locale(t)},
            "answer": question.answer, "names": choice_names(c, t),
            "explain": rendered(t(f"ex.{question.id}.explain", **lesson_facts(), value=c.value), False)
            if question.explained else ""}


def verdict(c: LiveClass, me: str, t: Text) -> dict:
    """A seat's own outcome once revealed: ``right``, ``wrong`` or ``not_counted`` (it did not answer), or
    ``poll`` (none is right), and what the page says of it; for a number, ``own``: its mark on the dot plot."""
    question, mine, right = ASKABLE[c.question], c.answers.get(me), right_answer(c)
    if right is None:
        return {"kind": "poll", "said": t("join.poll_answered" if mine else "join.poll_not_answered")}
    answer = answer_name(question, right, t)
    if mine is None:
        return {"kind": "not_counted", "said": t("join.not_counted", answer=answer)}
    kind = "right" if mine == right else "wrong"
    own = {"own": own_answer(mine, t)} if question.number else {}
    return {"kind": kind, "said": t(f"ex.{kind}", answer=answer), **own}


def plotly_script() -> bytes:
    """Plotly.js for a phone (``ui/vendor/``) as the page loads it: V8's compile hint, then the published file."""
    return COMPILE_HINT + PLOTLY_BASIC.read_bytes()


@cache
def script(modules: tuple[str, ...] = MODULES) -> str:
    """A student's page's one script: the Explorer's modules (it draws with their functions), then its own
    (``modules`` of ``ui/student/``: the live class's page's, or the lesson's, ``ui.study_page``)."""
    return joined([*(EXPLORER / f"{name}.js" for name in EXPLORER_MODULES),
                   *(STUDENT / f"{name}.js" for name in modules)], module=False)


@cache
def style() -> str:
    """The page's style: the Explorer's, then its own."""
    return STYLE.read_text(encoding="utf-8") + (STUDENT / "student.css").read_text(encoding="utf-8")
