"""Language catalogs: one JSON file per language in ``locales/``; every key exists in each."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh")
LANG_TAGS = {"en": "en", "zh": "zh-Hans"}  # a page's <html lang>
PLOTLY_WORDS = (  # Plotly.js's words on its toolbar and in its notices, in the catalogs
    "plotly.download", "plotly.zoom", "plotly.pan", "plotly.zoom_in", "plotly.zoom_out", "plotly.autoscale",
    "plotly.reset_axes", "plotly.box_select", "plotly.lasso_select", "plotly.orbit", "plotly.turntable",
    "plotly.reset_camera", "plotly.reset_camera_last", "plotly.hover_closest", "plotly.hover_compare",
    "plotly.spikelines", "plotly.toggle_hover", "plotly.double_click", "plotly.snapshot", "plotly.snapshot_done",
    "plotly.snapshot_failed", "plotly.fullscreen", "plotly.close_fullscreen",  # (the last two: Streamlit's button,
    # which Plotly leaves as it is: the page script words it from this dictionary)
)
LOCALES = Path(__file__).with_name("locales")


@cache
def catalog(lang: str) -> dict[str, str]:
    return json.loads((LOCALES / f"{lang}.json").read_text(encoding="utf-8"))


def language_for_locale(locale: str | None) -> str:
    """``zh`` for any Chinese browser locale, else ``en``."""
    return "zh" if (locale or "").lower().startswith("zh") else "en"


class Text:
    """``t("key", name=value)`` looks a string up in one language's catalog and fills it in."""

    def __init__(self, lang: str):
        self.lang = lang if lang in LANGUAGES else "en"
        self._strings = catalog(self.lang)

    def __call__(self, key: str, /, **values) -> str:
        return self._strings[key].format(**values) if values else self._strings[key]

    def sentences(self, parts) -> str:
        """Sentences in a row: Chinese ones (ending in "。") follow each other without a space."""
        return ("" if self.lang == "zh" else " ").join(parts)


def fragment_lang(text: str, lang: str) -> str:
    """The language tag of ``text`` where it is an English fragment on a ``lang`` page (a name such as
    "LayerNorm" among Chinese words: Latin letters, no Chinese), for a screen reader's voice; else ""."""
    if lang == "en" or not re.search(r"[A-Za-z]", text) or re.search(r"[\u3400-\u9fff]", text):
        return ""
    return LANG_TAGS["en"]


def plotly_locale(t: Text) -> dict:
    """Plotly.js config wording its toolbar in ``t``'s language, from the catalogs' ``plotly.`` keys
    (Plotly's English words to ours; English needs none)."""
    if t.lang == "en":
        return {}
    words = {catalog("en")[key]: t(key) for key in PLOTLY_WORDS}
    return {"locale": LANG_TAGS[t.lang], "locales": {LANG_TAGS[t.lang]: {"dictionary": words}}}
