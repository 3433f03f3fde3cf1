"""The Explorer's verdict says what its readouts show, for every combination of switches.

Each finding is checked against the engine's numbers by an independent computation here: the
verdict may only say "distinct", "merged", "kept its own direction", "runs away", "vanishes" or
"collapse" when the readouts agree.
"""

import itertools
import re

import numpy as np
import pytest

from blockstab.readouts import angle_degrees
from blockstab.scenario import PRESETS
from support.oracles import groups_of
from ui.controls import ExplorerState
from ui.examples import markdown_text, token_labels
from ui.numbers import readable
from ui.text import LANGUAGES, Text
from ui.verdicts import OWN_DIRECTION, RANGE_LIMIT, STEADY, VANISHED, verdict, verdict_findings
from ui.views import explore

COMBINATIONS = [
    ExplorerState(residual=residual, norm=norm, norm_kind=kind, placement=placement, depth=depth)
    for residual, norm, kind, placement, depth in itertools.product(
        (True, False), (True, False), ("rmsnorm", "layernorm"), ("post", "pre"), (1, 2, 24, 100))
    if norm or kind == "rmsnorm"  # the kind does not matter with normalization off
]
RAW_EXPONENT = re.compile(r"\d[eE][+-]?\d")


def pairwise(x: np.ndarray) -> np.ndarray:
    """Angles between every two tokens of one sentence, by a plain double loop."""
    n = len(x)
    return np.array([[angle_degrees(x[i], x[j]) for j in range(n)] for i in range(n)])


def check(finding, state, result) -> None:
    """Assert that one finding is true of the readouts."""
    stream = result.trace.stream
    size = result.readouts.action_norm
    ratio = size / size[0]
    v = finding.values
    n = stream.shape[2]
    if finding.key == "verdict.overflow":
        assert not np.all(np.isfinite(stream[v["lost"]])) and np.all(np.isfinite(stream[v["lost"] - 1]))
        assert np.any(ratio[v["block"]] >= RANGE_LIMIT)
    elif finding.key == "verdict.zero":
        assert np.all(stream[v["block"]:] == 0) and not np.all(stream[v["block"] - 1] == 0)
    elif finding.key == "verdict.vanished":
        assert np.any(ratio[v["block"]] <= VANISHED)
    elif finding.key in ("verdict.grew", "verdict.pre_stream"):
        assert np.any(ratio >= (STEADY if finding.key == "verdict.pre_stream" else RANGE_LIMIT))
        assert v["factor"] == readable(float(ratio[-1].max()))  # "up to": the larger of the sentences
        if finding.key == "verdict.pre_stream":
            assert state.placement == "pre" and state.norm and state.residual
            out = np.linalg.norm(result.trace.output[:, state.example.action], axis=-1)
            np.testing.assert_allclose(out, np.sqrt(2), rtol=1e-4)  # the final norm tidies the output
        else:
            assert np.any(ratio[v["block"]] >= RANGE_LIMIT) and not np.any(ratio[: v["block"]] >= RANGE_LIMIT)
    elif finding.key == "verdict.shrank":
        assert np.any(ratio[v["block"]] <= 1 / RANGE_LIMIT)
        assert v["factor"] == readable(float(ratio[-1].min()))  # "as small as": the smaller of the sentences
    elif finding.key == "verdict.growing":
        assert np.all(ratio < RANGE_LIMIT) and ratio[-1].max() >= STEADY
    elif finding.key == "verdict.shrinking":
        assert np.all(ratio > 1 / RANGE_LIMIT) and ratio[-1].min() <= 1 / STEADY
    elif finding.key in ("verdict.stable", "verdict.steady"):
        if state.norm and state.placement == "post":  # every block's output has the norm's size
            sizes = size[1:]
            np.testing.assert_allclose(sizes, sizes[0, 0], rtol=1e-3)
        else:
            assert np.all((ratio[-1] < STEADY) & (ratio[-1] > 1 / STEADY))
    elif finding.key == "verdict.collapse":
        for row in range(stream.shape[1]):
            for d in range(v["block"], stream.shape[0]):
                angles = pairwise(stream[d, row])
                assert np.nanmax(angles) < 2.0, (d, row)  # tolerance 1 deg, chained over 5 tokens at most
    elif finding.key == "verdict.distinct":
        row = _row(state, result, v["sentence"])
        angles = pairwise(stream[-1, row])[np.triu_indices(n, 1)]
        assert np.all(angles >= 1.0)
    elif finding.key in ("verdict.merged", "verdict.merged_one"):
        row = _row(state, result, v["sentence"])
        angles = pairwise(stream[-1, row])[np.triu_indices(n, 1)]
        assert np.any(angles < 1.0)
    elif finding.key == "verdict.action_kept":
        action = state.example.action
        for row in range(stream.shape[1]):
            others = [angle_degrees(stream[-1, row, action], stream[-1, row, j]) for j in range(n) if j != action]
            assert min(others) >= OWN_DIRECTION
    elif finding.key in ("verdict.action_merged", "verdict.action_close"):  # in the sentence, with the token named
        action, row = state.example.action, _row(state, result, v["sentence"])
        labels = [markdown_text(label) for label in token_labels(state.example, state.scenarios[row], Text("en"))]
        named = min(angle_degrees(stream[-1, row, action], stream[-1, row, j]) for j in range(n)
                    if j != action and labels[j] == v["token"])
        nearest = min(angle_degrees(stream[-1, r, action], stream[-1, r, j])
                      for r in range(stream.shape[1]) for j in range(n) if j != action)
        assert named == pytest.approx(nearest, abs=1e-9)  # the closest pair of all sentences
        if finding.key == "verdict.action_merged":
            assert nearest < 1.0
        else:
            assert 1.0 <= nearest < OWN_DIRECTION
    elif finding.key == "verdict.distinct_count":
        counts = [groups_of(stream[-1, row]) for row in range(stream.shape[1])]
        assert v["counts"] == " · ".join(map(str, counts)) and v["n"] == n
    elif finding.key == "verdict.sentences":
        assert len(state.scenarios) == 2
    elif finding.key == "verdict.layernorm_2d":
        assert state.norm_kind == "layernorm"
    else:
        raise AssertionError(f"untested finding {finding.key}")


def _row(state, result, sentence: str) -> int:
    from ui.examples import side_name
    names = [side_name(state.example, side, Text("en")) for side in state.scenarios]
    return names.index(sentence)


@pytest.mark.parametrize("state", COMBINATIONS, ids=lambda s: (
    f"res{int(s.residual)}-norm{int(s.norm)}-{s.norm_kind}-{s.placement}-d{s.depth}"))
def test_every_finding_agrees_with_the_readouts(state):
    result = explore(state)
    findings = verdict_findings(state, result, Text("en"))
    assert findings
    for finding in [*findings, *verdict_findings(state, result, Text("en"), compact=True)]:
        check(finding, state, result)
    for lang in LANGUAGES:
        text = verdict(state, result, Text(lang))
        assert not RAW_EXPONENT.search(text), text  # 1.3 × 10⁴⁰, never 1.3e+40
        assert "0×" not in text and "blocks:" not in text.replace("blocks: ", "")


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("view", [{}, {"residual": False}, {"norm": False}, {"placement": "pre", "depth": 100}])
def test_every_preset_gets_a_verdict_that_agrees_with_its_readouts(preset, view):
    state = ExplorerState(example=PRESETS[preset], **view)
    result = explore(state)
    for finding in verdict_findings(state, result, Text("en")):
        check(finding, state, result)


def test_residual_off_reads_as_collapse_and_both_off_as_a_vanished_signal():
    keys = [f.key for f in verdict_findings(ExplorerState(residual=False), explore(ExplorerState(residual=False)),
                                             Text("en"))]
    assert keys[0] == "verdict.collapse"
    both_off = ExplorerState(residual=False, norm=False)
    assert verdict_findings(both_off, explore(both_off), Text("en"))[0].key in ("verdict.zero", "verdict.vanished")


def test_the_collapse_verdict_is_per_sentence_because_the_two_sentences_stay_apart():
    """The verdict says every token *of a sentence* points the same way: across the two sentences
    they do not, so the plain "every token" would be false on the screen that shows both."""
    state = ExplorerState(residual=False)
    result = explore(state)
    assert verdict_findings(state, result, Text("en"))[0].key == "verdict.collapse"
    end = result.trace.stream[-1]
    assert angle_degrees(end[0, state.example.action], end[1, state.example.action]) > 90
    for lang in ("en", "zh"):
        assert Text(lang)("verdict.collapse", block=3, tolerance=1).count(
            {"en": "of a sentence", "zh": "每句话"}[lang]) == 1


def test_pre_ln_with_both_on_is_explained_not_alarmed():
    state = ExplorerState(placement="pre", depth=100)
    keys = [f.key for f in verdict_findings(state, explore(state), Text("en"))]
    assert keys[0] == "verdict.pre_stream" and "verdict.grew" not in keys


def test_one_block_is_singular():
    state = ExplorerState(depth=1)
    assert "1 blocks" not in verdict(state, explore(state), Text("en"))
