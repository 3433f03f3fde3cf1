"""The Explorer's pure figure functions and the URL check, without a Streamlit server.

Figures are read in-process (``fig.data[i].x`` is a tuple or a NumPy array), so these tests assert
on the numbers that the pages draw, in both languages.
"""

import csv
import io
import re
import string
import unicodedata

import numpy as np
import plotly.io as pio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blockstab.block import STAGES
from blockstab.lesson import ACTION_TOKEN, COURSE_TABLE, SCENARIOS
from blockstab.readouts import distinct_tokens
from blockstab.scenario import Scenario
from support.figures import contrast
from support.oracles import words
from ui.controls import APP_CONTROLS, BY_KEY, CONTROLS, STAGE_FOCUS, ExplorerState, check_query
from ui.numbers import fixed, vector_text
from ui.text import LANGUAGES, Text, catalog
from ui.views import FIGURES, explore, figure_state
from ui.views.block import block_figure
from ui.views.depth import GROUP_JOINERS, PANEL_TITLE_WIDTH, depth_bottom, depth_figure, readouts_figure
from ui.views.depth import PHONE_PLANE as DEPTH_PHONE_PLANE
from ui.views.geometry import geometry_2d_figure, geometry_3d_figure
from ui.views.labels import plane_frame
from ui.views.style import OTHER_TOKENS, style, text_colour, wrap
from ui.views.tables import course_table_matches, stage_csv, stage_rows

LANGS = pytest.mark.parametrize("lang", LANGUAGES)


def template_regex(lang: str, key: str) -> re.Pattern:
    """A regex for a catalog string with every ``{placeholder}`` matching any text."""
    parts = []
    for literal, field, _spec, _conv in string.Formatter().parse(catalog(lang)[key]):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append("(.+?)")
    return re.compile("".join(parts), re.DOTALL)


def says(text: str, lang: str, key: str) -> bool:
    """Is ``text`` the catalog message ``key`` (with any values filled in)?"""
    return template_regex(lang, key).fullmatch(text) is not None


def points(trace) -> np.ndarray:
    return np.column_stack([np.asarray(trace.x, dtype=float), np.asarray(trace.y, dtype=float)])


def all_xy(fig) -> list[np.ndarray]:
    return [points(tr) for tr in fig.data]


def figures_equal(a, b) -> bool:
    xa, xb = all_xy(a), all_xy(b)
    return len(xa) == len(xb) and all(p.shape == q.shape and np.allclose(p, q) for p, q in zip(xa, xb, strict=True))


@pytest.fixture(scope="module")
def default():
    state = ExplorerState()
    return state, explore(state)


# --- block figure --------------------------------------------------------------------------------


@LANGS
def test_default_block_figure_ends_at_the_course_table(default, lang):
    state, result = default
    t = Text(lang)
    fig = block_figure(state, result, t)
    stage = t("stage.attention_residual")
    for scenario in SCENARIOS:
        sums = [tr for tr in fig.data if tr.legendgroup == scenario and tr.name.endswith(stage)]
        assert len(sums) == 1, [tr.name for tr in fig.data]
        end = np.round(points(sums[0])[-1], 3).tolist()
        assert end == list(COURSE_TABLE[scenario])
    assert course_table_matches(result, state)
    # The x + F(x) arrow is drawn from the origin, the branch F(x) tip-to-tail from x.
    assert fig.layout.title.text == wrap(t("fig.block.title", block=1, stage=stage))


@LANGS
def test_default_block_figure_draws_the_rmsnorm_circle(default, lang):
    state, result = default
    t = Text(lang)
    fig = block_figure(state, result, t)
    circle = [tr for tr in fig.data if tr.name == t("legend.rms_target")]
    assert len(circle) == 1
    np.testing.assert_allclose(np.hypot(*points(circle[0]).T), np.sqrt(2), rtol=1e-9)


@LANGS
def test_residual_off_changes_the_block_and_reports_collapse(default, lang):
    t = Text(lang)
    state, result = default
    off = ExplorerState(residual=False)
    off_result = explore(off)
    assert not figures_equal(block_figure(state, result, t), block_figure(off, off_result, t))
    assert not course_table_matches(off_result, off)


@LANGS
def test_norm_off_draws_no_normalization_target(lang):
    t = Text(lang)
    state = ExplorerState(norm=False)
    assert state.norm_used == "none"
    assert not any(tr.name in (t("legend.rms_target"), t("legend.ln_target"))
                   for tr in block_figure(state, explore(state), t).data)


@LANGS
@pytest.mark.parametrize("scenario", ["confirmed", "not_confirmed"])
def test_one_sentence_draws_only_its_arrows(lang, scenario):
    t = Text(lang)
    state = ExplorerState(scenario=scenario)
    result = explore(state)
    groups = {tr.legendgroup for tr in block_figure(state, result, t).data if tr.legendgroup}
    assert groups == {scenario}
    assert course_table_matches(result, state)


@LANGS
def test_layernorm_block_figure_shows_its_two_target_points(lang):
    t = Text(lang)
    state = ExplorerState(norm_kind="layernorm")
    fig = block_figure(state, explore(state), t)
    targets = [tr for tr in fig.data if tr.name == t("legend.ln_target")]
    assert len(targets) == 1
    got = {tuple(np.round(p, 9)) for p in points(targets[0])}
    assert got == {(1.0, -1.0), (-1.0, 1.0)}
    assert not any(tr.name == t("legend.rms_target") for tr in fig.data)


@pytest.mark.parametrize("focus", STAGE_FOCUS)
@pytest.mark.parametrize("placement", ["post", "pre"])
def test_block_figure_stops_at_the_focused_stage(focus, placement):
    t = Text("en")
    state = ExplorerState(focus=focus, placement=placement)
    result = explore(state)
    fig = block_figure(state, result, t)
    stages = STAGES[placement]
    drawn = stages[: stages.index(focus) + 1]
    arrows = [tr for tr in fig.data if tr.legendgroup == "confirmed"]
    assert [tr.name for tr in arrows] == [f"{t('scenario.confirmed')} · {t('stage.' + s)}" for s in drawn]
    # The focused arrow ends at that stage's value of the action token; a branch F(x) is drawn
    # tip-to-tail from the kept input, so it ends where the residual sum x + F(x) is.
    target = {"attention": "attention_residual", "feed_forward": "ffn_residual"}.get(focus, focus)
    np.testing.assert_allclose(points(arrows[-1])[-1], result.trace.stage(target)[0, 0, ACTION_TOKEN], rtol=1e-12)
    assert [tr.showlegend for tr in arrows] == [False] * (len(drawn) - 1) + [True]


def test_block_beyond_depth_shows_the_last_block():
    state = ExplorerState(depth=3, block=50)
    result = explore(state)
    assert state.shown_block == 3
    fig = block_figure(state, result, Text("en"))
    en = Text("en")
    assert fig.layout.title.text == wrap(en("fig.block.title", block=3, stage=en("stage." + state.focus)))
    arrow = next(tr for tr in fig.data if tr.legendgroup == "confirmed" and tr.showlegend)
    np.testing.assert_allclose(points(arrow)[-1], result.trace.stage(state.focus)[2, 0, ACTION_TOKEN])


# --- across depth ----------------------------------------------------------------------------------


@LANGS
@pytest.mark.parametrize("state", [
    ExplorerState(),
    ExplorerState(depth=1),
    ExplorerState(depth=7, scenario="not_confirmed"),
    ExplorerState(residual=False, depth=5),
    ExplorerState(placement="pre", norm_kind="layernorm", depth=12),
], ids=["default", "depth1", "one-sentence", "no-residual", "pre-layernorm"])
def test_depth_figure_has_a_frame_and_a_step_per_block(lang, state):
    t = Text(lang)
    result = explore(state)
    stream = result.trace.stream
    fig = depth_figure(state, result, t)
    depth = state.depth
    assert stream.shape[0] == depth + 1
    assert len(fig.frames) == depth + 1
    steps = fig.layout.sliders[0].steps
    assert len(steps) == depth + 1
    assert [list(s.args[0]) for s in steps] == [[f.name] for f in fig.frames]
    assert fig.layout.sliders[0].active == depth
    for d, frame in enumerate(fig.frames):
        assert frame.name == str(d)
        # A frame carries only positions and labels; ``frame.traces`` names the figure traces they
        # move, which keep the names and style: per scenario every token, then the action's ring.
        assert len(frame.traces) == len(frame.data) == 2 * len(state.scenarios)
        moved = {fig.data[index].name: [] for index in frame.traces}
        for index, tr in zip(frame.traces, frame.data, strict=True):
            moved[fig.data[index].name].append(tr)
        assert set(moved) == {t("legend.now"), t("legend.other_tokens")}
        for row in range(len(state.scenarios)):  # every block's real values, exactly
            np.testing.assert_array_equal(points(moved[t("legend.now")][row]), stream[d, row, ACTION_TOKEN][None, :])
            tokens, ring = moved[t("legend.other_tokens")][row], moved[t("legend.now")][row]
            np.testing.assert_array_equal(points(tokens), stream[d, row])
            # every token is named once, a lone action token beside its ring: merged tokens share one
            # label, the others print nothing. A label the second sentence shares with the first
            # on the same spot is written once, by the first, in the shared tokens' colour.
            # (an unlabelled point's text is a blank, never empty: Plotly would drop its node for good)
            assert all(tokens["text"]) and all(ring["text"])
            labels = [label for label in [*tokens["text"], *ring["text"]] if label.strip()]
            if row:  # (on the same spot: within a pixel of a plot a few hundred pixels high)
                near = 0.01 * fig.layout.yaxis.range[1]
                first = (moved[t("legend.other_tokens")][0], moved[t("legend.now")][0])
                for mine, theirs in zip((tokens, ring), first, strict=True):
                    for i, label in enumerate(theirs["text"]):
                        if label.strip() and theirs["textfont"]["color"][i] == text_colour(OTHER_TOKENS):
                            assert not mine["text"][i].strip()
                            assert np.allclose(points(mine)[i], points(theirs)[i], atol=near)
                            labels.append(label)
            parts = [part for label in labels for part in re.split("|".join(GROUP_JOINERS), label)]
            assert sorted(parts) == sorted(tokens["hovertext"])
            assert len(labels) == distinct_tokens(stream[d, row])
    # The figure itself starts at the last block, and each path is the full stream.
    last = [tr for tr in fig.data if tr.name == t("legend.now")]
    for row, marker in enumerate(last):
        np.testing.assert_array_equal(points(marker), stream[depth, row, ACTION_TOKEN][None, :])
    paths = [tr for tr in fig.data if len(tr.x) == depth + 1]
    for row, path in enumerate(paths[: len(state.scenarios)]):
        np.testing.assert_array_equal(points(path), stream[:, row, ACTION_TOKEN])
    assert fig.layout.title.text == wrap(t("fig.depth.title", depth=depth))


# --- readouts --------------------------------------------------------------------------------------


READOUT_PANELS = ("norm", "nearest", "distinct", "cosine", "angle", "smallest")


@LANGS
@pytest.mark.parametrize("state", [
    ExplorerState(), ExplorerState(residual=False), ExplorerState(norm=False),
    ExplorerState(residual=False, norm=False), ExplorerState(norm=False, depth=100),
    ExplorerState(scenario="confirmed", depth=3), ExplorerState(placement="pre", depth=100),
], ids=["default", "nores", "nonorm", "both-off", "overflow", "one", "pre"])
def test_readouts_figure_draws_every_panel_with_readable_axes(lang, state):
    t = Text(lang)
    result = explore(state)
    r = result.readouts
    fig = readouts_figure(state, result, t)
    titles = [a.text for a in fig.layout.annotations]
    for panel in READOUT_PANELS:
        assert wrap(t("fig.readouts." + panel, n=5), PANEL_TITLE_WIDTH) in titles
    for axis in ("yaxis", "yaxis6"):  # size and smallest angle: log axes ticking whole powers of ten
        assert fig.layout[axis].type == "log"
        assert fig.layout[axis].exponentformat == "power" and fig.layout[axis].dtick >= 1
        low, high = fig.layout[axis].range
        assert high - low >= 1  # at least one decade: never "10, 5, 2, 1, 5, 2"
    assert tuple(fig.layout.yaxis4.range) == (-1.05, 1.05)
    by_axis = {}
    for tr in fig.data:
        assert len(tr.x) == state.depth + 1
        by_axis.setdefault(tr.yaxis, []).append(tr)
    for axis in ("y", "y2", "y3", "y4", "y6"):  # no empty panel, whatever broke
        drawn = [v for tr in by_axis[axis] for v in tr.y if v is not None and np.isfinite(v)]
        assert drawn, axis
    for axis in ("y", "y6"):
        assert all(v > 0 for tr in by_axis[axis] for v in tr.y if v is not None)
    for row, tr in enumerate(tr for tr in by_axis["y3"]):
        np.testing.assert_array_equal(np.asarray(tr.y, dtype=float), r.distinct_tokens[:, row])
    angle = [tr for tr in fig.data if tr.name == t("legend.angle")]
    assert len(angle) == (1 if len(state.scenarios) == 2 else 0)
    assert (t("fig.readouts.angle_needs_two") in titles) == (len(state.scenarios) == 1)
    floored = np.any(r.action_norm < 1e-15 * r.action_norm[0].min()) or np.any(r.smallest_pairwise_angle < 1e-9)
    note = t("fig.readouts.floor", size="10⁻¹⁵", angle="10⁻⁹")
    notes = words("".join(titles))
    assert (words(note) in notes) == bool(floored)
    undefined = np.any(np.isnan(r.action_cosine_to_input))
    assert (words(t("fig.readouts.undefined", block=0))[-30:] in notes) == bool(undefined)
    # only the bottom row names its x axis: a top-row title would run into the panel titles below
    assert [fig.layout[f"xaxis{i}"].title.text for i in ("", 2, 3, 4)] == [None] * 4
    assert [fig.layout[f"xaxis{i}"].title.text for i in (5, 6)] == [t("legend.block")] * 2


# --- table and CSV ---------------------------------------------------------------------------------


@LANGS
@pytest.mark.parametrize("placement", ["post", "pre"])
def test_stage_rows_list_every_stage_of_the_shown_block(lang, placement):
    t = Text(lang)
    state = ExplorerState(placement=placement, block=2, depth=4)
    result = explore(state)
    rows = stage_rows(state, result, t)
    assert [r[t("table.stage")] for r in rows] == [t("stage." + s) for s in STAGES[placement]]
    for i, row in enumerate(rows):
        for b, scenario in enumerate(state.scenarios):
            v = result.trace.values[1, i, b, ACTION_TOKEN]
            assert row[t("scenario." + scenario)] == f"[{v[0]:.3f}, {v[1]:.3f}]"
            assert float(row[t("table.length") + " · " + t("scenario." + scenario)]) == pytest.approx(
                np.hypot(*v), abs=5e-4)


@LANGS
def test_a_vector_that_blew_up_has_its_length_written_as_its_coordinates_are(lang):
    """Without normalization the vectors reach 10⁷⁸ by block 41: its length is written with a power
    of ten like its coordinates, not as an 80-digit number no projector can show."""
    t = Text(lang)
    state = ExplorerState(norm=False, depth=41, block=41)
    result = explore(state)
    rows = stage_rows(state, result, t)
    lengths = [row[t("table.length") + " · " + t("scenario." + s)] for row in rows for s in state.scenarios]
    values = result.trace.values[40, :, :, ACTION_TOKEN]
    assert np.hypot(values[..., 0], values[..., 1]).min() > 1e40  # the case this test is about
    assert lengths == [fixed(float(np.hypot(*values[i, b]))) for i in range(len(rows)) for b in range(2)]
    assert all(" × 10" in length and len(length) <= 12 for length in lengths)



@LANGS
@pytest.mark.parametrize("state", [ExplorerState(), ExplorerState(norm=False, depth=41, block=41),
                                   ExplorerState(norm=False, depth=100, block=100)],
                         ids=["default", "blown_up", "overflow"])
def test_a_hover_writes_every_vector_as_the_table_does(lang, state):
    """Plotly's ``.3f`` writes 10⁷⁸ out in 79 digits: a trace hovers its points by that format only
    while every coordinate is under 10⁴, and otherwise shows each point as ``vector_text`` writes
    it, the block view's arrows and the depth view's paths alike."""
    t = Text(lang)
    result = explore(state)
    for fig in (block_figure(state, result, t), depth_figure(state, result, t)):
        for trace in fig.data:
            template = trace.hovertemplate or ""
            points = np.column_stack([np.asarray(trace.x, dtype=float), np.asarray(trace.y, dtype=float)]) \
                if trace.x is not None else np.zeros((0, 2))
            if "%{x:.3f}" in template:
                assert np.all(np.abs(points) < 1e4)
            elif "%{customdata}" in template:
                assert list(trace.customdata) == [vector_text(p) for p in points]
            elif "%{customdata[1]}" in template:  # the depth view's path: (block, vector) per block
                assert [list(c) for c in trace.customdata] == [[i, vector_text(p)] for i, p in enumerate(points)]
    path = result.trace.stream[:, :, state.example.action]
    shown = [c[1] for trace in depth_figure(state, result, t).data if trace.customdata is not None
             for c in trace.customdata]
    assert len(shown) == path.shape[0] * path.shape[1]
    assert any(" × 10" in c or "∞" in c for c in shown) == bool(np.nanmax(np.abs(path)) >= 1e4)

@pytest.mark.parametrize("state", [ExplorerState(), ExplorerState(scenario="confirmed", depth=3),
                                   ExplorerState(placement="pre", depth=1), ExplorerState(norm=False, depth=100)],
                         ids=["default", "one", "pre", "overflow"])
def test_stage_csv_has_every_stage_of_every_block(state):
    result = explore(state)
    text = stage_csv(state, result)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["scenario", "block", "stage", "symptom_cause", "recovery_state"]
    body = rows[1:]
    assert len(body) == len(state.scenarios) * state.depth * 7
    stages = STAGES[state.placement]
    for n, (scenario, block, stage, x, y) in enumerate(body):
        b, rest = divmod(n, state.depth * 7)
        assert scenario == state.scenarios[b]
        assert int(block) == rest // 7 + 1
        assert stage == stages[rest % 7]
        expected = result.trace.values[int(block) - 1, rest % 7, b, ACTION_TOKEN]
        np.testing.assert_array_equal([float(x), float(y)], expected)  # full precision, NaN-aware


# --- geometry page ---------------------------------------------------------------------------------


@LANGS
def test_geometry_2d_figure_computes_both_normalizations(lang):
    t = Text(lang)
    fig = geometry_2d_figure(ExplorerState(), t)
    outputs = [tr for tr in fig.data if tr.name == t("geometry.outputs")]
    inputs = [tr for tr in fig.data if tr.name == t("geometry.inputs")]
    assert len(outputs) == 2 and len(inputs) == 2
    rms, ln = (points(tr) for tr in outputs)
    np.testing.assert_allclose(np.hypot(*rms.T), np.sqrt(2), rtol=1e-3)  # eps = 1e-5 inside the root
    x = points(inputs[0])
    # RMSNorm keeps the direction of each input.
    np.testing.assert_allclose(rms / np.hypot(*rms.T)[:, None], x / np.hypot(*x.T)[:, None], atol=1e-9)
    # LayerNorm in 2-D: only the line through (1, -1) survives, and only its sign (up to eps).
    np.testing.assert_allclose(ln[:, 0], -ln[:, 1], atol=1e-12)
    assert np.all(np.abs(np.abs(ln[:, 0]) - 1) < 0.05)
    assert {tuple(np.sign(p)) for p in ln} == {(1.0, -1.0), (-1.0, 1.0)}
    titles = [a.text for a in fig.layout.annotations]
    assert t("geometry.rms_panel") in titles and t("geometry.ln_panel") in titles
    assert fig.layout.title.text == wrap(t("geometry.title_2d"))


@LANGS
def test_geometry_3d_figure_is_a_circle_of_radius_sqrt3(lang):
    t = Text(lang)
    fig = geometry_3d_figure(ExplorerState(projector=True), t)
    (tr,) = fig.data
    radius = np.hypot(*points(tr).T)
    np.testing.assert_allclose(radius, np.sqrt(3), rtol=1e-2)  # eps = 1e-5 pulls near-constant inputs in
    assert np.median(radius) == pytest.approx(np.sqrt(3), rel=1e-4)
    assert fig.layout.xaxis.title.text == t("geometry.plane_u")
    assert fig.layout.font.size > geometry_3d_figure(ExplorerState(), t).layout.font.size


# --- the URL check ---------------------------------------------------------------------------------

def _example(control) -> str:
    """A valid, non-default URL value for any control in the table."""
    if control.kind == "toggle":
        return "FALSE" if control.default else "true"
    if control.kind == "choice":
        return next(o for o in reversed(control.options) if o != control.default)
    if control.kind == "int":
        return str(control.high)
    if control.kind == "keys":
        return ",".join(control.options[:2])
    if control.kind == "example":
        return "triage"
    if control.kind == "steps":
        return str(control.options[-1])
    if control.kind == "text":
        return "回滚 🚀 deploy"
    if control.kind == "pattern":
        return {"class": "AC3479XY", "me": "A-b_" * 4, "key": "x9_-" * 8}[control.key]
    raise AssertionError(f"a new kind of control, {control.kind!r}: add it to _example and _oracle")


VALID = {key: _example(control) for key, control in BY_KEY.items()}


def test_every_control_has_a_valid_example():
    assert set(VALID) == set(BY_KEY) >= {c.key for c in (*CONTROLS, *APP_CONTROLS)}
    assert all(BY_KEY[k].parse(v) is not None for k, v in VALID.items())


def test_check_query_accepts_a_valid_url():
    assert check_query(VALID) == []
    assert check_query({}) == []
    assert check_query({"depth": "1", "lang": "en"}) == []


@pytest.mark.parametrize("key,value", [
    ("zzz", "1"), ("Depth", "10"), ("", ""),
    ("depth", "0"), ("depth", "abc"), ("depth", "101"), ("depth", "-5"), ("depth", "2.5"), ("depth", ""),
    ("block", "0"), ("residual", "maybe"), ("residual", "1"), ("norm", ""),
    ("lang", "fr"), ("lang", "ZH"), ("scenario", "Both"), ("focus", "input"), ("placement", "middle"),
    ("sc", ""), ("sc", "Triage"), ("sc", "v1."), ("sc", "v2.W10"), ("sc", "v1.W10"),
])
def test_check_query_flags_what_the_app_cannot_use(key, value):
    query = {**VALID, key: value}
    assert check_query(query) == [(key, value)]


def test_check_query_keeps_url_order_and_reports_every_problem():
    query = {"depth": "0", "lang": "en", "zzz": "1", "residual": "maybe"}
    assert check_query(query) == [("depth", "0"), ("zzz", "1"), ("residual", "maybe")]


def _oracle(key: str, raw: str) -> bool:
    """An independent statement of what each kind of control accepts."""
    control = BY_KEY.get(key)
    if control is None:
        return False
    if control.kind == "toggle":
        return raw.lower() in ("true", "false")  # Streamlit's binding refuses surrounding spaces
    if control.kind == "choice":
        return raw in control.options
    if control.kind == "keys":
        keys = [k for k in raw.split(",") if k]
        return bool(keys) and all(k in control.options for k in keys)
    if control.kind == "example":  # these strategies' strings are far shorter than any v1 payload
        return raw in ("lesson", "triage", "support")
    if control.kind == "text":  # a sentence: not blank, at most 200 characters, nothing invisible but a ZWJ
        return bool(raw.strip()) and len(raw) <= 200 and all(
            ch == "\u200d" or unicodedata.category(ch)[0] not in "CZ" or unicodedata.category(ch) == "Zs"
            for ch in raw)
    if control.kind == "pattern":  # a live class's code (no look-alikes), a student's token, a teacher's key
        alphabet = "ACDEFGHJKMNPRTWXY34679" if key == "class" else string.ascii_letters + string.digits + "-_"
        return len(raw) == {"class": 6, "me": 16, "key": 32}[key] and all(ch in alphabet for ch in raw)
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 6):  # plain digits: "1e1", "2.9", "+7", "٣" refused
        return False
    number = int(raw)
    return number in control.options if control.kind == "steps" else control.low <= number <= control.high


SOME_VALUES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["true", "false", "True", " FALSE ", "0", "1", "24", "100", "101", "-1", "1e2", "both", "zh",
                     "en", "pre", "post", "layernorm", "rmsnorm", "ffn_norm", "attention", "nan", "٣", "triage",
                     "v1.W10", "lesson", "v2.", "support"]),
    st.integers(-200, 200).map(str),
)
SOME_KEYS = st.one_of(st.sampled_from(sorted(BY_KEY)), st.text(max_size=8))


@settings(max_examples=300, deadline=None)
@given(query=st.dictionaries(SOME_KEYS, SOME_VALUES, max_size=12))
def test_check_query_never_raises_and_flags_exactly_the_invalid_pairs(query):
    flagged = check_query(query)
    expected = [(k, v) for k, v in query.items() if k not in BY_KEY or BY_KEY[k].parse(v) is None]
    assert flagged == expected
    assert {k for k, _ in flagged} == {k for k, v in query.items() if not _oracle(k, v)}
    for key, value in query.items():
        if (key, value) not in flagged:
            parsed = BY_KEY[key].parse(value)
            control = BY_KEY[key]
            if control.kind == "int":
                assert control.low <= parsed <= control.high
            elif control.kind == "choice":
                assert parsed in control.options
            elif control.kind == "keys":
                assert set(parsed) <= set(control.options)
            elif control.kind == "example":
                assert isinstance(parsed, Scenario)
            elif control.kind == "steps":
                assert parsed in control.options
            elif control.kind == "text":
                assert parsed == value
            else:
                assert isinstance(parsed, bool)


@pytest.mark.parametrize("state", [ExplorerState(depth=100), ExplorerState(norm=False, depth=100)],
                         ids=["depth100", "overflowing"])
def test_depth_figure_ships_as_strict_json_with_its_template(state):
    """The depth figure skips Plotly's validation, so check what st.plotly_chart will send: strict JSON
    (no NaN / Infinity, even when the stack overflows), the full plotly_white template (not its name),
    and a frame of real values for every block."""
    import json

    import plotly.io
    import plotly.tools

    result = explore(state)
    fig = depth_figure(state, result, Text("en"))
    spec = plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True),
                             validate=False)

    def strict(constant):
        raise ValueError(f"not strict JSON: {constant}")

    shipped = json.loads(spec, parse_constant=strict)
    assert shipped["layout"]["template"]["layout"]["plot_bgcolor"] == "white"
    assert [f["name"] for f in shipped["frames"]] == [str(d) for d in range(state.depth + 1)]
    stream = result.trace.stream
    for d, frame in enumerate(shipped["frames"]):
        now = frame["data"][1]
        drawn = np.array([now["x"][0], now["y"][0]], dtype=float)
        np.testing.assert_array_equal(drawn, np.where(np.isfinite(stream[d, 0, ACTION_TOKEN]),
                                                      stream[d, 0, ACTION_TOKEN], np.nan))


def test_markdown_table_keeps_every_cell_and_escapes_markdown():
    from ui.views.tables import markdown_table

    rows = [{"a|b": "[1.026, 1.978]", "c": "x\\y"}, {"a|b": "p|q", "c": "![img](http://x)"}]
    # Every ASCII punctuation mark is escaped: Markdown shows the cell as typed, never a link or image.
    assert markdown_table(rows).splitlines() == [
        "| a\\|b | c |", "|---|---|", "| \\[1\\.026\\, 1\\.978\\] | x\\\\y |",
        "| p\\|q | \\!\\[img\\]\\(http\u2060\\:\\/\\/x\\) |"]  # a word joiner: no bare link


# --- what each view reads (the figure cache's key) -------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(depth=st.integers(1, 30), block=st.integers(1, 30), focus=st.sampled_from(STAGE_FOCUS),
       residual=st.booleans(), norm=st.booleans(), placement=st.sampled_from(["post", "pre"]),
       scenario=st.sampled_from(["both", "confirmed", "not_confirmed"]))
def test_each_view_is_the_same_figure_for_its_reduced_state(depth, block, focus, residual, norm, placement,
                                                            scenario):
    """The figure cache keys a view on figure_state(): that must never change what is drawn."""
    t = Text("en")
    state = ExplorerState(depth=depth, block=block, focus=focus, residual=residual, norm=norm,
                          placement=placement, scenario=scenario)
    for name, view in FIGURES.items():
        reduced = figure_state(name, state)
        assert pio.to_json(view(reduced, explore(reduced), t)) == pio.to_json(view(state, explore(state), t)), name


def test_a_depth_change_keeps_the_block_view_and_a_block_change_the_others():
    at_24, at_30 = ExplorerState(depth=24), ExplorerState(depth=30)
    assert figure_state("block", at_24) == figure_state("block", at_30)
    assert figure_state("depth", at_24) != figure_state("depth", at_30)
    block_3 = ExplorerState(block=3, focus="ffn_norm")
    assert figure_state("depth", block_3) == figure_state("depth", ExplorerState())
    assert figure_state("readouts", block_3) == figure_state("readouts", ExplorerState())
    assert figure_state("block", block_3) != figure_state("block", ExplorerState())
    with pytest.raises(ValueError):
        figure_state("nope", ExplorerState())


# --- labels follow the switches --------------------------------------------------------------------


@LANGS
@pytest.mark.parametrize("placement", ["post", "pre"])
def test_stage_names_say_what_the_switches_left(lang, placement):
    t = Text(lang)
    for residual, norm in ((True, True), (False, True), (True, False), (False, False)):
        state = ExplorerState(residual=residual, norm=norm, placement=placement, depth=2, focus="ffn_residual")
        result = explore(state)
        names = [r[t("table.stage")] for r in stage_rows(state, result, t)]
        legend = {tr.name.split(" · ")[-1] for tr in block_figure(state, result, t).data if tr.legendgroup}
        for stage in ("attention_residual", "ffn_residual"):
            assert (t(f"stage.{stage}.no_residual") in names) == (not residual)
            assert (t(f"stage.{stage}") in names) == residual
        assert (t("stage.ffn_residual.no_residual") in legend) == (not residual)
        for stage in ("attention_norm", "ffn_norm"):
            assert (t(f"stage.{stage}.off") in names) == (not norm)
        if not norm:  # an "unchanged" stage really is a copy of the one before it
            for before, after in (("attention_residual", "attention_norm"), ("ffn_residual", "ffn_norm")) \
                    if placement == "post" else (("input", "attention_norm"), ("attention_residual", "ffn_norm")):
                np.testing.assert_array_equal(result.trace.stage(before), result.trace.stage(after))
        title = block_figure(replace_focus(state, "attention_residual"), result, t).layout.title.text
        assert (words(t("stage.attention_residual.no_residual")) in words(title)) == (not residual)


def replace_focus(state, focus):
    from dataclasses import replace
    return replace(state, focus=focus)


@LANGS
@pytest.mark.parametrize("view", [{}, {"scenario": "confirmed"}, {"block": 3}, {"placement": "pre"}])
def test_feed_forward_view_says_what_the_memory_wrote(lang, view):
    t = Text(lang)
    state = ExplorerState(focus="feed_forward", depth=4, **view)
    result = explore(state)
    note = next(a.text for a in block_figure(state, result, t).layout.annotations if a.xref == "paper")
    memory = result.trace.stage("feed_forward")[state.shown_block - 1, :, ACTION_TOKEN]
    opening = t("fig.block.memory_silent", sentence="@").split("@")[0]  # each sentence's first words
    lines = [opening + words for words in note.replace("<br>", " ").split(opening)[1:]]
    assert len(lines) == len(state.scenarios)
    for line, written in zip(lines, memory, strict=True):
        if np.allclose(written, 0):
            assert "G(h) = 0" in line
        else:  # the written vector points along the stored direction named (or between those named)
            angle = np.degrees(np.arctan2(written[1], written[0]))
            named = [float(a) for a in re.findall(r"(-?\d+)°", line)]
            assert named and min(named) - 0.6 <= angle <= max(named) + 0.6, (angle, line)


@pytest.mark.parametrize("focus", ["attention", "feed_forward"])
def test_a_branch_is_labelled_with_its_own_value_not_the_sum(focus):
    """Tour step 2 is "up to attention F(x)": its label is F(x), though the arrow, drawn from the
    tip of x, ends at x + F(x)."""
    state = ExplorerState(focus=focus, depth=1)
    result = explore(state)
    labels = {a.text for a in block_figure(state, result, Text("en")).layout.annotations if a.xref != "paper"}
    branch = result.trace.stage(focus)[0, :, ACTION_TOKEN]
    for row in range(2):
        assert f"[{branch[row, 0]:.3f}, {branch[row, 1]:.3f}]" in labels


def test_a_value_label_is_on_opaque_white_so_no_line_shows_through_its_number():
    """RMSNorm's dashed circle ran through "1.040": through a see-through box its dot read as a comma."""
    state = ExplorerState(focus="ffn_norm", depth=1)
    notes = [a for a in block_figure(state, explore(state), Text("en")).layout.annotations if a.xref != "paper"]
    assert notes and all(a.bgcolor == "white" for a in notes)


# --- contrast ----------------------------------------------------------------------------------


def text_colours(spec: dict) -> list[tuple[str, str | None]]:
    """(where, colour) of every piece of text a Plotly figure draws, None where it sets none."""
    layout = spec["layout"]
    found = [("title", layout.get("title", {}).get("font", {}).get("color")),
             ("legend", layout.get("legend", {}).get("font", {}).get("color"))]
    for name, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", name):
            found += [(f"{name} ticks", axis.get("tickfont", {}).get("color")),
                      (f"{name} title", axis.get("title", {}).get("font", {}).get("color"))]
    found += [(f"annotation {a.get('text', '')[:20]}", a.get("font", {}).get("color"))
              for a in layout.get("annotations", [])]
    found += [("slider", s.get("font", {}).get("color")) for s in layout.get("sliders", [])]
    for trace in spec["data"]:
        if "text" in trace.get("mode", ""):
            colour = trace.get("textfont", {}).get("color")
            found += [(f"text of {trace.get('name')}", c) for c in (colour if isinstance(colour, list) else [colour])]
    for frame in spec.get("frames", []):  # a frame's labels may bring colours of their own
        found += [(f"frame {frame['name']} text", c) for trace in frame["data"]
                  for c in trace.get("textfont", {}).get("color", [])]
        bar = trace.get("marker", {}).get("colorbar")
        if trace.get("marker", {}).get("showscale") and bar:
            found += [("colorbar title", bar.get("title", {}).get("font", {}).get("color")),
                      ("colorbar ticks", bar.get("tickfont", {}).get("color"))]
    return found


@pytest.mark.parametrize("name", sorted(FIGURES))
@pytest.mark.parametrize("view", [{}, {"residual": False, "norm": False}, {"focus": "feed_forward"}])
def test_chart_text_meets_wcag_aa_in_projector_mode(name, view):
    """Projectors wash out grey: every chart text is set explicitly (Streamlit's chart theme would
    draw ticks and axis titles in a 3.7:1 grey) and reaches 4.5:1 on white."""
    state = ExplorerState(projector=True, **view)
    spec = FIGURES[name](state, explore(state), Text("en")).to_plotly_json()
    for where, colour in text_colours(spec):
        assert colour is not None, where
        assert contrast(colour) >= 4.5, (where, colour)


def test_the_contrast_helper_knows_the_failing_grey():
    assert contrast("#808495") < 4.5 < contrast("#262730")
    assert round(contrast("#000000"), 1) == 21.0


def test_geometry_and_lab_chart_text_meets_wcag_aa_in_projector_mode():
    from blockstab.lab import LabSetup, depth_curves
    from ui.lab_views import curves_figure

    state = ExplorerState(projector=True)
    t = Text("zh")
    curves = {"this": depth_curves(LabSetup(d_model=16, tokens=8, heads=2, depth=3))}
    for fig in (geometry_2d_figure(state, t), geometry_3d_figure(state, t), curves_figure(curves, t, projector=True)):
        for where, colour in text_colours(fig.to_plotly_json()):
            assert colour is not None and contrast(colour) >= 4.5, (where, colour)


@LANGS
@pytest.mark.parametrize("view", [{}, {"norm": False}, {"placement": "pre", "depth": 100}])
def test_depth_view_says_when_the_picture_has_settled(lang, view):
    t = Text(lang)
    state = ExplorerState(**view)
    result = explore(state)
    notes = [a.text for a in depth_figure(state, result, t).layout.annotations]
    stream = result.trace.stream
    heading = np.degrees(np.arctan2(stream[..., 1], stream[..., 0]))
    turned = [np.nanmax(np.abs((heading[d + 1] - heading[d] + 180) % 360 - 180)) for d in range(state.depth)]
    size = np.hypot(stream[..., 0], stream[..., 1])
    grew = [np.nanmax(np.abs(size[d + 1] / size[d] - 1)) for d in range(state.depth)]  # a 0.1 deg turn moves 0.17 %
    moving = [d for d, (a, g) in enumerate(zip(turned, grew, strict=True)) if a >= 0.1 or g >= 0.0017]
    settled = moving[-1] + 1 if moving else 0
    assert (t("fig.depth.settled", block=settled) in "<br>".join(notes)) == (settled < state.depth)
    assert len(notes) <= 1  # one note block, under the title
    if view.get("placement") == "pre":  # the stream grows block after block: the picture never settles
        action = size[:, :, state.example.action]
        assert settled == state.depth and action[-1].min() > 5 * action[9].max()  # (it said: settled by block 9)


@LANGS
@pytest.mark.parametrize("view", [{}, {"norm": False}, {"norm": False, "depth": 80}, {"norm": False, "depth": 100}])
def test_depth_view_says_which_blocks_it_cannot_draw(lang, view):
    """Without normalization the stream overflows from block 80 on: the plane cannot draw those
    blocks (at the slider's last block it shows no token at all), so its note says which."""
    t = Text(lang)
    state = ExplorerState(**view)
    fig = depth_figure(state, explore(state), t)
    note = "<br>".join(a.text for a in fig.layout.annotations)
    paths = np.stack([np.column_stack([tr.x, tr.y]) for tr in fig.data[:len(state.scenarios)]], axis=1)
    finite = np.isfinite(paths.astype(float)).all(axis=(1, 2))
    keys = ("fig.depth.not_drawn", "fig.depth.not_drawn_one")
    said = [(first, key) for first in range(state.depth + 1) for key in keys
            if t(key, first=first, last=state.depth) in note]
    if finite.all():
        assert said == []
    else:
        first = int(np.argmin(finite))
        assert not finite[first:].any() and finite[:first].all()
        assert said == [(first, "fig.depth.not_drawn" if first < state.depth else "fig.depth.not_drawn_one")]
    assert bool(said) == (state.depth >= 80 and not state.norm)  # these views: the overflowing ones


@LANGS
@pytest.mark.parametrize("view", [{}, {"norm": False}, {"norm": False, "depth": 100},
                                  {"placement": "pre", "depth": 100}, {"norm": False, "projector": True},
                                  {"norm": False, "phone": True}])
def test_depth_view_says_when_its_early_blocks_share_one_spot(lang, view):
    """Without normalization the last block sets the plane's scale and every earlier block is drawn
    on the centre: the figure says which blocks share one spot, and that is true of its own data at
    the scale it is drawn (the narrowest plot the app draws it in)."""
    t = Text(lang)
    state = ExplorerState(**view)
    s = style(state)
    fig = depth_figure(state, explore(state), t)
    note = "<br>".join(a.text for a in fig.layout.annotations)
    scale = plane_frame(state, fig.layout.yaxis.range[1], fig.layout.margin.t, depth_bottom(s["font"])[1],
                        DEPTH_PHONE_PLANE, height=fig.layout.height)[0]
    paths = np.stack([np.column_stack([tr.x, tr.y]) for tr in fig.data[:len(state.scenarios)]], axis=1)
    moved = np.hypot(*(paths - paths[0]).transpose(2, 0, 1)) * scale  # px from its block 0, per sentence
    sizes = np.hypot(*paths.transpose(2, 0, 1))
    spot = s["marker"] * 0.6  # a path marker's width
    claimed = [last for last in range(2, state.depth + 1) if t("fig.depth.crowded", last=last) in note]
    if claimed:
        last = claimed[0]
        assert np.all(moved[:last + 1] <= spot) and not np.all(moved[last + 1] <= spot)
        assert np.nanmax(sizes) > 10 * sizes[:last + 1].max()
    else:
        shared = np.cumprod(np.all(moved <= spot, axis=1))  # blocks 0, 1, ... on one spot
        assert shared.sum() < 3 or np.nanmax(sizes) <= 10 * sizes[:int(shared.sum())].max()
    assert bool(claimed) == (not state.norm)  # these views: exactly the runaway ones
