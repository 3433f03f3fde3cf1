"""Screenshots of chosen app views, for a person to look at (not a test): one PNG per view, size
and language, in test-artifacts/screens/.

    .venv/bin/python -m scripts.screenshots                     # the default set
    .venv/bin/python -m scripts.screenshots "/?residual=false" --sizes 1280x720 --langs zh
    .venv/bin/python -m scripts.screenshots /case /lab --sizes projector 390x844 --full-page

"projector" is 1280x720 in projector mode; a width under 600 px is opened as a phone (its User-Agent).

Starts the app as scripts/start.sh does, drives Debian's Chromium, waits for every chart.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from benchmarks.local_server import CHROMIUM, CHROMIUM_ARGS, PHONE_USER_AGENT, streamlit_server

ROOT = Path(__file__).resolve().parents[1]


VIEWS = ("/", "/?residual=false", "/?norm=false", "/?residual=false&norm=false", "/?placement=pre&depth=100")
SIZES = ("projector", "1280x720", "1024x768", "390x844")
SETTLED = """() => document.querySelector('[data-testid=stApp]')
    ?.getAttribute('data-test-script-state') === 'notRunning'
  && !document.querySelector('[data-testid=stSkeleton]')
  && [...document.querySelectorAll('.js-plotly-plot')].every(gd => gd._fullData && gd.querySelector('.main-svg'))"""
# The page scrolls inside Streamlit's main box, so a "full page" is the viewport grown to that box's height.
CONTENT_HEIGHT = "() => document.querySelector('[data-testid=stMain]').scrollHeight"


def file_name(view: str, size: str, lang: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", view.lower()).strip("-") or "explorer"
    return f"{slug}-{size}-{lang}.png"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("views", nargs="*", default=VIEWS)
    parser.add_argument("--sizes", nargs="+", default=SIZES)
    parser.add_argument("--langs", nargs="+", default=("en", "zh"))
    parser.add_argument("--full-page", action="store_true")
    args = parser.parse_args()
    out = ROOT / "test-artifacts" / "screens"
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with streamlit_server("app.py", out / "server.log", ROOT) as (base, _server), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for size in args.sizes:
            projector = size == "projector"
            width, height = (1280, 720) if projector else (int(v) for v in size.split("x"))
            for lang in args.langs:
                page = browser.new_page(viewport={"width": width, "height": height}, locale=lang,
                                        user_agent=PHONE_USER_AGENT if width < 600 else None)
                for view in args.views:
                    joiner = "&" if "?" in view else "?"
                    page.set_viewport_size({"width": width, "height": height})
                    page.goto(f"{base}{view}{joiner}lang={lang}{'&projector=true' if projector else ''}")
                    page.wait_for_function(SETTLED, timeout=60_000)
                    page.wait_for_timeout(600)
                    if args.full_page:
                        page.set_viewport_size({"width": width, "height": max(height, page.evaluate(CONTENT_HEIGHT))})
                        page.wait_for_timeout(800)
                    path = out / file_name(view, size, lang)
                    page.screenshot(path=str(path))
                    print(path.relative_to(ROOT))
                page.close()
        browser.close()


if __name__ == "__main__":
    main()
