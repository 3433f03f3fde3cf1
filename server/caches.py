"""What each server process computes once for every session: engine runs, the Explorer's figures
and take-home folders, the trained model and the Real model page's runs and figures (bounded
Streamlit caches)."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st
from threadpoolctl import threadpool_limits

from blockstab.ablations import Ablation, Comparison, LayerReadouts, compare, layer_readouts
from blockstab.block import StackConfig
from blockstab.pretrained import ModelUnavailable, TrainedModel, load_model
from ui.bundle import sentence_and_look
from ui.controls import ExplorerState
from ui.real_views import layers_figure, meaning_figure, projection_figure
from ui.take_home import take_home_files, zipped
from ui.text import Text
from ui.views import FIGURES, explore, figure_state
from ui.views.describe import DESCRIPTIONS
from ui.views.tables import stage_csv

from .bundles import part_text

# Bounded caches shared by every page and session. Engine results are read-only arrays; figures
# are only read by st.plotly_chart (never changed once cached). Building a figure (Plotly's
# validation) costs far more than the engine, so a class clicking through the same views pays for
# each figure once.
explore_cached = st.cache_resource(max_entries=256, show_spinner=False)(explore)


def figure_cached(name: str, state: ExplorerState, lang: str):
    """The view ``name`` of ``state`` in language ``lang``, built once for all the states that show
    the same figure (a depth change keeps the block view; a block or stage change, the others)."""
    return _built_figure(name, figure_state(name, state), lang)


@st.cache_resource(max_entries=96, show_spinner=False)
def _built_figure(name: str, state: ExplorerState, lang: str):
    return kept_as_built(FIGURES[name](state, explore_cached(state), Text(lang)))


def kept_as_built(figure: go.Figure) -> go.Figure:
    """``figure``, which is never changed again, with its dict made once: ``st.plotly_chart`` asks for
    ``to_dict()`` on every run that draws it: a deep copy and base64 of every array."""
    built = figure.to_dict()
    figure.to_dict = lambda: built  # (a Plotly figure lets its own attributes be set)
    return figure


def description(name: str, state: ExplorerState, lang: str) -> str:
    """The view ``name`` of ``state`` in words (``ui.views.describe``), from the same run it draws."""
    shown = figure_state(name, state)
    return DESCRIPTIONS[name](shown, explore_cached(shown), Text(lang))


def explored_csv(state: ExplorerState) -> str:
    """:func:`~ui.views.tables.stage_csv` of ``state``'s run (a download button calls it when
    clicked, on a thread of its own)."""
    return stage_csv(state, explore_cached(state))


def one_blas_thread() -> None:
    """BLAS on one thread where the Real model page computes: two threads were ten times slower on
    a loaded 2-core machine (the Depth lab's worker processes pin their own, ``server.lab_worker``).
    OpenBLAS has one thread count for the whole process, so it is set and never restored (a session
    restoring its old count would unpin another's run). threadpoolctl lets one live Python thread
    set it and ignores the others, and a session's script thread ends with its run, so the count is
    set at every computation (0.3 ms), not once per process: the first thread to compute takes
    control and pins it (tests/app/test_real_page.py reads the count inside the computation)."""
    threadpool_limits(limits=1, user_api="blas")


@st.cache_resource(show_spinner=False)
def trained_model() -> TrainedModel | ModelUnavailable:
    """all-MiniLM-L6-v2, read and checked once per process (or why it cannot be used)."""
    one_blas_thread()
    try:
        return load_model()
    except ModelUnavailable as unavailable:
        return unavailable


# A sentence run keeps 7 layers of 384 float32 per token: 0.18 MB for the default sentence, at most
# ~0.65 MB (200 characters). A sentence has about 60 views and 120 runs; the caches hold one's.
@st.cache_resource(max_entries=160, show_spinner=False)
def _sentence_run(text: str, cfg: StackConfig) -> LayerReadouts:
    one_blas_thread()
    return layer_readouts(trained_model().stream(text, cfg))


@st.cache_resource(max_entries=96, show_spinner=False)
def real_comparison(sentence: str, ablation: Ablation) -> Comparison:
    one_blas_thread()  # the projection's SVD (LAPACK) runs here, besides the forward passes
    return compare(trained_model(), sentence, ablation, _sentence_run)


@st.cache_resource(max_entries=96, show_spinner=False)
def real_figures(sentence: str, ablation: Ablation, lang: str, projector: bool, phone: bool) -> tuple:
    """The page's three figures, built once for a class (about 2 ms: they skip Plotly's validation)."""
    c, t = real_comparison(sentence, ablation), Text(lang)
    return tuple(map(kept_as_built, (layers_figure(c, t, projector, phone), meaning_figure(c, t, projector),
                                     projection_figure(c, t, projector, phone))))


@st.cache_resource(max_entries=8, show_spinner=False)
def take_home_zip(state: ExplorerState, lang: str) -> bytes:
    """The take-home Explorer (``ui.take_home``) opening on ``state``'s view, zipped: its bundle's
    parts are the app's own files (``server.bundles``; one not built yet is built in a worker)."""
    look = sentence_and_look(state)
    return zipped(take_home_files(state, lang, lambda name: part_text(look, lang, name)), "blockstab-explorer")
