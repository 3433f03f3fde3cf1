"""The README's tables say what the app does: every link parameter with the values its control
takes, and every page at the path the router gives it (or the app's own routes: a class's student page)."""

import re

from blockstab.scenario import PRESETS
from server.routes import ROUTES
from support import ROOT
from ui.controls import APP_CONTROLS, CLASS_CONTROLS, CONTROLS, LAB_CONTROLS, PAGE_CONTROLS, REAL_CONTROLS

README = (ROOT / "README.md").read_text(encoding="utf-8")


def table(heading: str) -> dict[str, str]:
    """The README's table under ``## heading``: first cell -> the rest of the row."""
    section = README.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| ")]
    return {first.strip(): "|".join(rest).strip() for first, *rest in rows[1:]}


def named(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_the_link_table_names_every_parameter_with_the_values_it_takes():
    rows = table("Link parameters")
    documented = {key for cell in rows for key in named(cell)}
    listed = {c.key for c in (*CONTROLS, *APP_CONTROLS, *PAGE_CONTROLS, *CLASS_CONTROLS)} | {"sc"}
    assert listed <= documented and documented - listed == {"lab_…", "real_…"}
    assert all(c.key.startswith(("lab_", "real_")) for c in (*LAB_CONTROLS, *REAL_CONTROLS))
    for cell, values in rows.items():
        keys = [key for key in named(cell) if key in listed]
        for control in (c for c in (*CONTROLS, *APP_CONTROLS, *PAGE_CONTROLS) if c.key in keys):
            if control.kind == "toggle":
                assert named(values) == ["true", "false"], control.key
            elif control.kind == "int":
                assert f"{control.low}–{control.high}" in values, control.key
            elif control.kind == "choice" and control.key != "focus":  # a stage: too many to list
                assert set(control.options) <= set(named(values)), control.key
    assert set(PRESETS) <= set(named(rows["`sc`"]))


def test_the_pages_table_gives_each_page_the_routers_path():
    router = (ROOT / "app.py").read_text(encoding="utf-8")
    paths = {f"/{path}" for path in re.findall(r'url_path="(\w+)"', router)} - {"/start", "/explore"} | {"/"}
    own = {route.path for route in ROUTES if not route.path.startswith("/api/")}  # the app's own pages
    assert own == {"/join", "/study"}
    assert {named(cells)[0] for cells in table("Pages").values()} == paths | own
