"""The instant Explorer in the browser (``ui/explorer/``) as the app and the take-home folder mount
it: its script and style, and its data (its controls and texts, the view it opens on, and where it
reads its bundle, ``ui.bundle``, and Plotly.js). Never a figure: those are in the bundle's files."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

from .controls import MAX_EXPLORER_DEPTH, Control
from .text import Text, fragment_lang, plotly_locale

EXPLORER = Path(__file__).parent / "explorer"
MODULES = ("select", "controls", "store", "draw", "main")  # each after the modules it imports
STYLE = EXPLORER / "explorer.css"
PLOT_CONFIG = {"displaylogo": False, "showSendToCloud": False, "responsive": True,
               "toImageButtonOptions": {"format": "png", "scale": 2}}


def mount_data(controls: list[Control] | tuple[Control, ...], view: dict, t: Text, projector: bool, bundle: str,
               plotly: str, why_href: str | None = None, lead: int | None = None, ahead: bool = True,
               phone: bool = False) -> dict:
    """The component's data: ``controls`` drawn in the browser, opened on ``view``, reading the bundle
    at ``bundle`` (a prefix: then a part's name and ``.js``) and Plotly.js at ``plotly``; on a desktop
    (neither ``projector`` nor ``phone``) the verdict's detail is behind a disclosure. ``why_href``
    links LayerNorm's 2-D note to the geometry page (none in the take-home folder). ``lead``: a view the
    server leads (a live class's), taken by a mounted Explorer each time ``lead`` changes. ``ahead``: in
    idle time the browser draws the views a student most likely asks for next."""
    return {
        "bundle": bundle,
        "plotly": plotly,
        "controls": [control_spec(c, t) for c in controls],
        "texts": {"controls": t("explorer.controls"), "block_controls": t("explorer.block_controls"),
                  # projector mode: a line in the verdict's box, so the figures stay on the screen
                  "layernorm_2d": t("explorer.layernorm_2d_short") if projector else t("explorer.layernorm_2d"),
                  "why_link": t("explorer.why_link") if why_href else None, "why_href": why_href,
                  "rmsnorm_note": t("explorer.rmsnorm_note"), "course_match": t("explorer.course_match"),
                  "verdict_more": t("explorer.verdict_more"),  # (the disclosure of the verdict's detail)
                  # the charts in words ("waiting": while a block range is on its way)
                  "skip": t("keys.skip"), "describe": t("describe.show"), "waiting": t("describe.waiting"),
                  # after a change, in the live region: "{control}: {value}. {headline}"
                  "changed": t("describe.changed"), "on": t("describe.on"), "off": t("describe.off"),
                  # by depth: a stack shallower than the block in focus shows its last block
                  "block_clamped": [t("explorer.block_clamped", depth=n) for n in range(1, MAX_EXPLORER_DEPTH + 1)]},
        "projector": projector,
        "phone": phone,
        "config": {**PLOT_CONFIG, **plotly_locale(t)},  # (its toolbar in the page's language)
        "controls_for": f"{t.lang}-{projector}-{phone}-{','.join(c.key for c in controls)}",  # redrawn on a change
        "view": view,
        "lead": lead,
        "ahead": ahead,
    }


def geometry_link(lang: str) -> str:
    """The geometry page in the app, in ``lang``."""
    return "/geometry?" + urlencode({"lang": lang})


def control_spec(control: Control, t: Text) -> dict:
    """A control as the browser draws it: its key, kind, catalog label and help, whether it goes
    under the block view, and its range or options (each with its catalog name, and that name's language
    tag where it is an English fragment on a Chinese page)."""
    spec = {"key": control.key, "kind": control.kind, "label": t(f"control.{control.key}"),
            "help": t(f"help.{control.key}"), "under_block": control.under_block}
    if control.kind == "choice":
        names = [t(f"option.{control.key}.{option}") for option in control.options]
        spec["options"] = [[option, name, fragment_lang(name, t.lang)] for option, name in zip(control.options, names,
                                                                                             strict=True)]
    if control.kind == "int":
        spec |= {"low": control.low, "high": control.high}
    return spec


def explorer_script() -> str:
    """The browser side's modules as one script (a component takes one, and a page opened from
    ``file://`` cannot import modules), the one default export (``instantExplorer``, in ``main.js``) kept."""
    return joined([EXPLORER / f"{name}.js" for name in MODULES], module=True)


def joined(modules: list[Path], module: bool) -> str:
    """Browser modules as one script, in order (each after the ones it imports), their imports of each
    other dropped: a component's module keeps its default export, a page's plain script keeps none and is
    strict, as a module is."""
    script = ('' if module else '"use strict";\n') + "\n".join(path.read_text(encoding="utf-8") for path in modules)
    script = re.sub(r'^import \{[^}]*\} from "\.\.?/[\w/]+\.js";\n', "", script, flags=re.M)
    exported = "" if module else "(default )?"
    return re.sub(rf"^export {exported}(?=(async )?function |const )", "", script, flags=re.M)
