"""Language catalogs: one JSON file per language in ``locales/``; every key exists in each."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh")
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
