"""The two sentences tell apart without relying on colour vision: their colours stay far apart under
each common colour-vision deficiency (Machado et al. 2009's simulation, at full severity, as
colour-science implements it), and every view also draws them in different marker shapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

with warnings.catch_warnings():  # (colour-science says what it cannot do without SciPy and Matplotlib)
    warnings.simplefilter("ignore")
    import colour
    from colour.blindness import matrix_cvd_Machado2009

from ui.controls import ExplorerState
from ui.text import Text
from ui.views import FIGURES, explore
from ui.views.style import SCENARIO_COLOURS, SCENARIO_SYMBOLS

CLEARLY_APART = 20.0  # CIEDE2000; 2.3 is a just-noticeable difference


def seen_with(deficiency: str | None, hex_colour: str) -> np.ndarray:
    """``hex_colour`` in CIELAB, as a viewer with ``deficiency`` (or normal vision) sees it on screen."""
    srgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    if deficiency:
        with warnings.catch_warnings():  # (colour-science notes that tritanomaly's model is an approximation)
            warnings.simplefilter("ignore")
            matrix = matrix_cvd_Machado2009(deficiency, 1.0)
        srgb = colour.models.eotf_inverse_sRGB(np.clip(matrix @ colour.models.eotf_sRGB(srgb), 0, 1))
    return colour.XYZ_to_Lab(colour.sRGB_to_XYZ(srgb))


@pytest.mark.parametrize("deficiency", [None, "Protanomaly", "Deuteranomaly", "Tritanomaly"])
def test_the_sentences_colours_stay_clearly_apart(deficiency):
    a, b = (seen_with(deficiency, SCENARIO_COLOURS[s]) for s in ("confirmed", "not_confirmed"))
    assert colour.delta_E(a, b, method="CIE 2000") >= CLEARLY_APART


def test_a_grey_pair_is_not_apart_so_the_measure_can_fail():
    assert colour.delta_E(seen_with("Deuteranomaly", "#D55E00"), seen_with("Deuteranomaly", "#C06010"),
                          method="CIE 2000") < CLEARLY_APART


@pytest.mark.parametrize("name", ["block", "depth", "readouts"])
def test_each_view_draws_the_two_sentences_in_different_shapes(name):
    state = ExplorerState()
    fig = FIGURES[name](state, explore(state), Text("en"))
    symbols = {}
    for trace in fig.data:
        colour_of = trace.marker.color if isinstance(trace.marker.color, str) else trace.line.color
        for sentence, hex_colour in SCENARIO_COLOURS.items():
            if colour_of == hex_colour and trace.marker.symbol is not None:
                symbols.setdefault(sentence, set()).add(trace.marker.symbol.removesuffix("-open"))
    assert symbols == {s: {SCENARIO_SYMBOLS[s]} for s in SCENARIO_COLOURS}
