"""Screenshots of chosen app views, for a person to look at (not a test): one PNG per view, size
and language, in test-artifacts/screens/; or the README's pictures, made again.

    .venv/bin/python -m scripts.screenshots                     # the default set
    .venv/bin/python -m scripts.screenshots "/?residual=false" --sizes 1280x720 --langs zh
    .venv/bin/python -m scripts.screenshots /case /lab --sizes projector 390x844 --full-page
    .venv/bin/python -m scripts.screenshots --readme            # docs/explorer.png and docs/live-class.png

"projector" is 1280x720 in projector mode; a width under 600 px is opened as a phone (its User-Agent).

Starts the app as scripts/start.sh does (for the README's pictures, as ``--lan`` starts it: a live class's
join link then names this computer's LAN address), drives Debian's Chromium, waits for every chart.
"""

from __future__ import annotations

import argparse
import re
from io import BytesIO
from pathlib import Path
from urllib.parse import urlsplit

from PIL import Image

from testbed.local_server import CHROMIUM, CHROMIUM_ARGS, PHONE_USER_AGENT, streamlit_server
from ui.text import Text

ROOT = Path(__file__).resolve().parents[1]


VIEWS = ("/", "/?residual=false", "/?norm=false", "/?residual=false&norm=false", "/?placement=pre&depth=100")
SIZES = ("projector", "1280x720", "1024x768", "390x844")
SETTLED = """() => document.querySelector('[data-testid=stApp]')
    ?.getAttribute('data-test-script-state') === 'notRunning'
  && !document.querySelector('[data-testid=stSkeleton]')
  && [...document.querySelectorAll('.js-plotly-plot')].every(gd => gd._fullData && gd.querySelector('.main-svg'))"""
# The page scrolls inside Streamlit's main box, so a "full page" is the viewport grown to that box's height.
CONTENT_HEIGHT = "() => document.querySelector('[data-testid=stMain]').scrollHeight"
# An Explorer on the page (the first: the teacher's, or a student's in a class) has drawn the residual switched off.
RESIDUAL_OFF_DRAWN = """() => { const e = document.querySelector('.instant-explorer');
  return !!e?.dataset.drawn && JSON.parse(e.dataset.drawn).residual === false; }"""
# The page scrolled until the Explorer's top is just under Streamlit's header (its button to open the sidebar).
UNDER_THE_HEADER = """() => { const header = document.querySelector('[data-testid=stHeader]').getBoundingClientRect();
  const top = document.querySelector('.instant-explorer').getBoundingClientRect().top;
  document.querySelector('[data-testid=stMain]').scrollBy(0, top - header.bottom); }"""
EXPLORER_PICTURE = ROOT / "docs" / "explorer.png"
CLASS_PICTURE = ROOT / "docs" / "live-class.png"
GROUND, MARGIN = (236, 238, 242), 32  # the live class picture's background and the room round each screen


def file_name(view: str, size: str, lang: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", view.lower()).strip("-") or "explorer"
    return f"{slug}-{size}-{lang}.png"


def opened(page, url: str) -> None:
    """``url`` open in ``page`` once its script is done and every chart drawn (the Explorer's: once it drew
    a view, as its component mounts after the script is done)."""
    page.goto(url)
    if urlsplit(url).path in ("/", "/explore"):
        page.wait_for_selector(".instant-explorer[data-drawn]", timeout=60_000)
    page.wait_for_function(SETTLED, timeout=60_000)
    page.wait_for_timeout(600)


def explorer_picture(browser, base: str) -> None:
    """The README's first picture: the Explorer as a student opens it on a school laptop (1366x768), the
    sidebar open (its link to join a live class, every page)."""
    page = browser.new_page(viewport={"width": 1366, "height": 768}, locale="en-US")
    opened(page, f"{base}/?lang=en")
    page.screenshot(path=str(EXPLORER_PICTURE))
    page.close()


def class_picture(browser, base: str) -> None:
    """The README's live class: the projector (1280x720, projector mode) beside a student's phone. The
    teacher starts a class, a phone joins by its code, the teacher shows the Explorer and switches the
    residual connection off; the phone follows. The projector is seen scrolled to the Explorer."""
    t = Text("en")
    projector = browser.new_page(viewport={"width": 1280, "height": 720}, locale="en-US")
    opened(projector, f"{base}/class?lang=en&projector=true")
    projector.get_by_role("button", name=t("class.start")).click()
    code = projector.locator(".st-key-class_code strong").inner_text()
    phone = browser.new_context(viewport={"width": 390, "height": 844}, user_agent=PHONE_USER_AGENT, is_mobile=True,
                                locale="en-US").new_page()
    phone.goto(f"{base}/join?class={code}&lang=en")
    projector.get_by_text(t("class.one_student")).wait_for()
    projector.get_by_role("button", name=t("class.activity.explorer"), exact=True).click()
    projector.wait_for_selector(".instant-explorer[data-drawn]", timeout=60_000)
    projector.get_by_role("switch", name=t("control.residual")).click()
    for page in (projector, phone):
        page.wait_for_function(RESIDUAL_OFF_DRAWN, timeout=60_000)
    projector.wait_for_function(SETTLED, timeout=60_000)  # (the run the teacher's switch made, done)
    projector.evaluate(UNDER_THE_HEADER)
    projector.wait_for_timeout(600)
    side_by_side(*(Image.open(BytesIO(page.screenshot())) for page in (projector, phone))).save(CLASS_PICTURE)
    phone.context.close()
    projector.close()


def side_by_side(projector: Image.Image, phone: Image.Image) -> Image.Image:
    """The projector's screen beside the phone's on a light ground, their middles level."""
    height = max(projector.height, phone.height) + 2 * MARGIN
    picture = Image.new("RGB", (projector.width + phone.width + 3 * MARGIN, height), GROUND)
    picture.paste(projector, (MARGIN, (height - projector.height) // 2))
    picture.paste(phone, (projector.width + 2 * MARGIN, (height - phone.height) // 2))
    return picture


def views(browser, base: str, args) -> None:
    """One PNG per view, size and language in test-artifacts/screens/."""
    out = ROOT / "test-artifacts" / "screens"
    for size in args.sizes:
        projector = size == "projector"
        width, height = (1280, 720) if projector else (int(v) for v in size.split("x"))
        for lang in args.langs:
            page = browser.new_page(viewport={"width": width, "height": height}, locale=lang,
                                    user_agent=PHONE_USER_AGENT if width < 600 else None)
            for view in args.views:
                joiner = "&" if "?" in view else "?"
                page.set_viewport_size({"width": width, "height": height})
                opened(page, f"{base}{view}{joiner}lang={lang}{'&projector=true' if projector else ''}")
                if args.full_page:
                    page.set_viewport_size({"width": width, "height": max(height, page.evaluate(CONTENT_HEIGHT))})
                    page.wait_for_timeout(800)
                path = out / file_name(view, size, lang)
                page.screenshot(path=str(path))
                print(path.relative_to(ROOT))
            page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("views", nargs="*", default=VIEWS)
    parser.add_argument("--sizes", nargs="+", default=SIZES)
    parser.add_argument("--langs", nargs="+", default=("en", "zh"))
    parser.add_argument("--full-page", action="store_true")
    parser.add_argument("--readme", action="store_true", help="the README's pictures, in docs/")
    args = parser.parse_args()
    out = ROOT / "test-artifacts" / "screens"
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    lan = ("--lan",) if args.readme else ()
    with streamlit_server("app.py", out / "server.log", ROOT, extra=lan) as (base, _server), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        if args.readme:
            explorer_picture(browser, base)
            class_picture(browser, base)
            print(EXPLORER_PICTURE.relative_to(ROOT), CLASS_PICTURE.relative_to(ROOT))
        else:
            views(browser, base, args)
        browser.close()


if __name__ == "__main__":
    main()
