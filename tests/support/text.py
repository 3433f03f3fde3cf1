"""Does a piece of text say a catalog message (its literal parts, with any values in its fields)?"""

import re
import string

from ui.text import catalog


def _pattern(lang: str, key: str) -> str:
    return "".join(re.escape(literal) + ("(.+?)" if field is not None else "")
                   for literal, field, _, _ in string.Formatter().parse(catalog(lang)[key]))


def says(text: str, lang: str, key: str) -> bool:
    """``text`` is the whole message ``key``."""
    return re.fullmatch(_pattern(lang, key), text.strip(), re.DOTALL) is not None


def opens_with(text: str, lang: str, key: str) -> bool:
    """``text`` begins with the message ``key`` (a verdict's headline, any values)."""
    return re.match(_pattern(lang, key), text.strip(), re.DOTALL) is not None
