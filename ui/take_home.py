"""The take-home Explorer: one folder, ``index.html``, the sentence's bundle (``ui.bundle``) and the
partial Plotly.js a class's phones load (``ui/vendor/``; the bundle's figures are all scatter traces), that
runs the instant Explorer (``ui/explorer/``) from ``file://`` or any static file host, offline, with no
server and no request outside the folder.

    .venv/bin/python -m ui.take_home --out DIR [--sc lesson|triage|support|v1.…] [--scenario …] [--lang en|zh]
                                     [--projector]
"""

from __future__ import annotations

import argparse
import html
import io
import json
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from blockstab.scenario import Scenario, decode

from .bundle import PARTS, built_part, index, part_file, sentence_and_look
from .controls import CONTROLS, ExplorerState
from .examples import plain_text, sentence_caption
from .instant import STYLE, explorer_script, mount_data
from .student_page import plotly_script
from .text import LANG_TAGS, Text

PLOTLY = "plotly-basic.min.js"  # the file's name, as the class's page names it
MODULE_EXPORT = "export default function instantExplorer("  # the component's module export (ui/explorer/main.js)
PAGE_CSS = """
body { margin: 0; font-family: "Source Sans Pro", "Noto Sans", "Noto Sans CJK SC", sans-serif; color: #31333f;
       background: #fff; line-height: 1.5; }
main { max-width: 1200px; margin: 0 auto; padding: 1rem 1.5rem 2rem; }
h1 { font-size: 1.75rem; margin: 0.5rem 0; }
.caption, .made { color: #555867; font-size: 0.9rem; }
"""




def take_home_files(state: ExplorerState, lang: str, part: Callable[[str], str]) -> dict[str, bytes]:
    """The folder's files by relative path, opening on ``state``'s view; ``part(name)`` gives each
    part of the sentence's bundle as its file (built, or read from the app's)."""
    t = Text(lang)
    controls = [c for c in CONTROLS if c.instant]
    data = mount_data(controls, {c.key: getattr(state, c.key) for c in controls}, t, state.projector,
                      bundle="bundle/", plotly=PLOTLY, phone=state.phone)
    source = explorer_script()
    if source.count(MODULE_EXPORT) != 1:
        raise RuntimeError("ui/explorer/main.js must export instantExplorer once")
    files = {f"bundle/{name}.js": part(name).encode("ascii") for name in PARTS}
    files["bundle/index.js"] = part_file(index(list(PARTS))).encode("ascii")  # every part is in the folder
    files["explorer.js"] = source.replace(MODULE_EXPORT, "window.instantExplorer = function instantExplorer(").encode()
    files["explorer.css"] = (PAGE_CSS + STYLE.read_text(encoding="utf-8")).encode()
    files[PLOTLY] = plotly_script()
    files["index.html"] = page(t, plain_text(sentence_caption(state.example, t)), data).encode()
    return files


def page(t: Text, caption: str, data: dict) -> str:
    """The folder's ``index.html``: the Explorer mounted on ``data``; every text escaped."""
    embedded = json.dumps(data, allow_nan=False, ensure_ascii=False).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="{LANG_TAGS[t.lang]}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(t("take_home.title"))}</title>
<link rel="stylesheet" href="explorer.css">
<script src="explorer.js"></script>
</head>
<body>
<main>
<h1>{html.escape(t("explorer.title"))}</h1>
<p class="caption">{html.escape(caption)}</p>
<div id="explorer"></div>
<p class="made">{html.escape(t("take_home.note"))}</p>
</main>
<script type="application/json" id="explorer-data">{embedded}</script>
<script>
instantExplorer({{ data: new TextEncoder().encode(document.getElementById("explorer-data").textContent),
                   parentElement: document.getElementById("explorer"), setStateValue: () => {{}} }});
</script>
</body>
</html>
"""


def write_folder(files: dict[str, bytes], out: Path) -> None:
    """Write the folder's files under ``out`` (made if missing)."""
    for name, content in files.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def zipped(files: dict[str, bytes], folder: str) -> bytes:
    """The folder's files as a ``.zip`` whose entries are under ``folder/``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in sorted(files.items()):
            archive.writestr(f"{folder}/{name}", content)
    return buffer.getvalue()


def _example(text: str) -> Scenario:
    decoded = decode(text)
    if not isinstance(decoded, Scenario):
        raise argparse.ArgumentTypeError(f"not an example the app can use: {decoded[0].code}")
    return decoded


def main(argv: list[str] | None = None) -> int:
    """Write the take-home Explorer's folder, its bundle built here."""
    parser = argparse.ArgumentParser(prog="python -m ui.take_home", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the folder to write (made if missing)")
    parser.add_argument("--sc", type=_example, default="lesson", help="a preset's name or a link's sc=")
    parser.add_argument("--scenario", choices=("both", "confirmed", "not_confirmed"), default="both")
    parser.add_argument("--lang", choices=("en", "zh"), default="en")
    parser.add_argument("--projector", action="store_true", help="projector mode: large type, no chart toolbar")
    args = parser.parse_args(argv)
    state = ExplorerState(scenario=args.scenario, example=args.sc, projector=args.projector)
    look = sentence_and_look(state)
    with np.errstate(all="ignore"):
        files = take_home_files(state, args.lang, lambda name: built_part(look, args.lang, name))
    write_folder(files, args.out)
    print(f"wrote {len(files)} files to {args.out}: open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
