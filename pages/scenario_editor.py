"""Your own example: edit the sentence in a table, watch it run, share it as a link or a file.

The table's starting rows (``editor_base``) change only when a preset or a file is loaded, so
the editor keeps every edit, valid or not. A valid table becomes the session's example (and the
link's ``sc``); an invalid one is refused with its problems while the last valid example stays
in the preview.
"""

import urllib.parse
from dataclasses import replace

import pandas as pd
import streamlit as st

from blockstab.scenario import MAX_FILE_BYTES, MAX_ROWS, PRESETS, ROLES, Scenario, encode, from_json, parse, to_json
from server.caches import description, figure_cached
from ui.controls import ExplorerState
from ui.examples import (
    EXAMPLE_NAMES,
    blank,
    canonical,
    localized,
    problems_text,
    table_rows,
)
from ui.text import Text
from widgets.chrome import active_example, chart, language, use_example
from widgets.controls import open_in_explorer

t = Text(language())
projector = st.session_state.get("projector_on", False)
example = active_example()  # the last valid example: what the preview shows
COLUMNS = ("label", "x", "y", "role")
MAX_TABLE_ROWS = 2 * MAX_ROWS  # a longer table is refused whole; up to here each problem is named


def load(chosen: Scenario) -> None:
    """Start the table and the axis names afresh from ``chosen`` (a new editor key drops old edits)."""
    written = localized(chosen, t)
    st.session_state["editor_base"] = table_rows(written)
    st.session_state["editor_axis_1"], st.session_state["editor_axis_2"] = written.axes
    st.session_state["editor_lang"] = t.lang
    st.session_state["editor_generation"] = st.session_state.get("editor_generation", -1) + 1


def load_preset() -> None:
    choice = st.session_state.get("editor_preset") or "lesson"
    chosen = blank(t) if choice == "blank" else PRESETS[choice]
    load(chosen)
    use_example(chosen)


def import_file() -> None:
    uploaded = st.session_state.get("editor_upload")
    st.session_state["editor_import_problems"] = []
    if uploaded is None:
        return
    result = from_json(uploaded.getvalue())  # the size is checked before the content is parsed
    if isinstance(result, Scenario):
        load(result)
        use_example(canonical(result))
    else:
        st.session_state["editor_import_problems"] = result


def table(base: pd.DataFrame, key: str) -> pd.DataFrame:
    """The editable table: text cells for numbers, so any typed text reaches the checks."""
    return st.data_editor(
        base, key=key, num_rows="dynamic", width="stretch", hide_index=False,
        column_config={
            "label": st.column_config.TextColumn(t("column.label"), help=t("editor.help.label")),
            "x": st.column_config.TextColumn(t("column.x"), help=t("editor.help.number")),
            "y": st.column_config.TextColumn(t("column.y"), help=t("editor.help.number")),
            "role": st.column_config.SelectboxColumn(t("column.role"), options=ROLES, default="plain",
                                                     format_func=lambda role: t("role." + role)),
        },
    )


def pending_edits(key: str) -> bool:
    edits = st.session_state.get(key) or {}
    return any(edits.get(part) for part in ("edited_rows", "added_rows", "deleted_rows"))


def rows_after_edit(key: str, rows: int) -> int:
    """How long the pending edit would make the table: read before Streamlit applies the edit,
    which costs server time for every added row (a scripted client can send 100,000)."""
    added = (st.session_state.get(key) or {}).get("added_rows")
    return rows + (len(added) if isinstance(added, list) else 0)


def base_frame() -> pd.DataFrame:
    """The table's starting rows, numbered from 1 as the messages name them."""
    base = pd.DataFrame(st.session_state["editor_base"], columns=COLUMNS, dtype=object)
    base.index = range(1, len(base) + 1)
    return base


def restart_table(message: str) -> tuple[pd.DataFrame, str]:
    """Start the table afresh (a new key: the old edits are never applied) from the example in
    use, and say why; returns its rows and key."""
    st.session_state["editor_generation"] = st.session_state.get("editor_generation", 0) + 1
    st.session_state["editor_base"] = table_rows(localized(example, t))
    st.error(message, icon=":material/block:")
    return base_frame(), f"editor_table_{st.session_state['editor_generation']}"


table_key = f"editor_table_{st.session_state.get('editor_generation', 0)}"
if "editor_base" not in st.session_state or (
        st.session_state.get("editor_lang") != t.lang and example.preset and not pending_edits(table_key)):
    load(example)  # a preset's words follow the language until the table is edited
    table_key = f"editor_table_{st.session_state['editor_generation']}"

if "editor_preset" not in st.session_state and example.preset:
    st.session_state["editor_preset"] = example.preset  # the picker names the preset in use
st.title(t("editor.title"))
st.markdown(t("editor.intro"))

pick, go = st.columns([3, 1], vertical_alignment="bottom")
pick.selectbox(t("editor.start_from"), (*EXAMPLE_NAMES, "blank"), key="editor_preset",
               format_func=lambda name: t(f"example.{name}.name"))
go.button(t("editor.load"), key="editor_load", on_click=load_preset, icon=":material/restart_alt:",
          width="stretch")
across, up = st.columns(2)
axes = [across.text_input(t("editor.axis_1"), key="editor_axis_1"),
        up.text_input(t("editor.axis_2"), key="editor_axis_2")]
base = base_frame()
if (rows := rows_after_edit(table_key, len(base))) > MAX_TABLE_ROWS:
    base, table_key = restart_table(t("editor.table_too_long", count=rows, limit=MAX_TABLE_ROWS))
try:
    edited = table(base, table_key)
except (IndexError, KeyError, TypeError, ValueError):  # an edit state no browser sends (rows that
    # do not exist): Streamlit cannot apply it, so this table starts afresh and says so.
    edited = table(*restart_table(t("editor.table_reset")))
st.caption(t("editor.roles"))
parsed = parse(axes, edited.to_dict("records"))
if isinstance(parsed, list):  # name rows by the numbers the table shows (kept after deletions)
    shown = [int(n) if pd.api.types.is_integer(n) else None for n in edited.index]
    parsed = [replace(p, row=shown[p.row - 1] or p.row) if p.row and p.field != "axis" else p for p in parsed]
if isinstance(parsed, Scenario):
    parsed = canonical(parsed)
    if parsed != example:
        use_example(parsed)
        example = parsed
    st.success(t("editor.in_use"), icon=":material/check_circle:")
else:
    st.error(t("editor.refused") + "\n\n" + problems_text(parsed, t), icon=":material/block:")

state = ExplorerState(example=example, projector=projector)
# The table has the page's width (its columns fit a 1024 px screen); the sentence and its first
# block side by side below it (one under the other where two would be too narrow: APP_CSS), then
# the whole stack.
with st.container(key="figure_pair"):
    tokens, block = st.columns(2)
    for name, where in (("tokens", tokens), ("block", block)):
        chart(figure_cached(name, state, t.lang), t, f"editor_{name}", description(name, state, t.lang), where)
chart(figure_cached("depth", state, t.lang), t, "editor_depth", description("depth", state, t.lang))

st.header(t("editor.share"))
use, download = st.columns(2)
if use.button(t("editor.use"), key="editor_use", icon=":material/science:", type="primary"):
    open_in_explorer({})
download.download_button(t("editor.download"), to_json(localized(example, t)), key="editor_download",
                         file_name="blockstab-example.json", mime="application/json", on_click="ignore",
                         icon=":material/download:")
query = {"sc": encode(example), "lang": t.lang}
here = urllib.parse.urlsplit(st.context.url or "")
root = f"{here.scheme}://{here.netloc}/" if here.scheme in ("http", "https") and here.netloc else ""
st.caption(t("editor.link"))
st.code(root + "?" + urllib.parse.urlencode(query), language=None, wrap_lines=True)
st.file_uploader(t("editor.upload_limited", limit=MAX_FILE_BYTES // 1024), type=["json"], key="editor_upload",
                 on_change=import_file, max_upload_size=1, help=t("editor.upload_help", limit=MAX_FILE_BYTES // 1024))
if st.session_state.get("editor_import_problems"):
    st.error(t("editor.import_refused") + "\n\n" + problems_text(st.session_state["editor_import_problems"], t),
             icon=":material/block:")
