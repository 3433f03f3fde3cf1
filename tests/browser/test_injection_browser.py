"""A crafted example on every page: its names show as typed, never as a link or an image, and the
browser fetches nothing but the app (issue #15, content injection)."""

import pytest

from blockstab.scenario import Scenario, Token, encode
from support.browser import PAGES, assert_healthy, open_app

pytestmark = pytest.mark.browser
# Every way Markdown turns text into a link or an image: inline image and link, bare URL, www., e-mail.
CRAFTED = Scenario(
    axes=("www.axis.invalid", "axis@mail.invalid"),
    tokens=(Token("![x](http://img.invalid/a.png)", 1.0, 0.2), Token("[l](http://link.invalid)", -0.3, 0.8),
            Token("http://bare.invalid/x", 0.4, -0.6), Token("www.act.invalid", 0.5, 1.2)),
    context_slot=3,
    contexts=(Token("![c](http://img.invalid/b.png)", -0.4, 1.3), Token("ctx@mail.invalid", 1.4, -0.4)),
    action=4,
)
USER_LINKS = """() => [...document.querySelectorAll('img, a')]
  .map(e => [e.tagName, e.getAttribute('src') || e.getAttribute('href') || '', e.textContent, e.alt || ''])
  .filter(([, url, text, alt]) => (url + text + alt).includes('invalid'))"""
SHOWN_TEXT = "() => document.body.innerText.replaceAll('\\u2060', '')"
PATHS = ["/" if default else f"/{url}" for _, url, default in PAGES] + ["/?projector=true"]


def test_a_crafted_example_is_plain_text_on_every_page(page, app_url):
    elsewhere = []
    page.on("request", lambda r: None if r.url.startswith((app_url, "data:", "blob:")) else elsewhere.append(r.url))
    for path in PATHS:
        open_app(page, f"{app_url}{path}{'&' if '?' in path else '?'}lang=en&sc={encode(CRAFTED)}", charts=False)
        assert_healthy(page)
        assert page.evaluate(USER_LINKS) == [], path
        if path.startswith("/?") or path == "/":  # the sentence picker and the caption name the contexts as typed
            shown = page.evaluate(SHOWN_TEXT)
            assert "![c](http://img.invalid/b.png)" in shown and "ctx@mail.invalid" in shown, path
    # projector mode: the sentence picker waits in the closed sidebar, its options named as typed
    options = page.locator("[data-testid=stSidebar] .st-key-scenario").text_content()
    assert "ctx@mail.invalid" in options.replace("\u2060", ""), options
    assert page.evaluate(USER_LINKS) == []
    assert elsewhere == []
