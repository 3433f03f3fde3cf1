"""Real model: switch the residual connections or the LayerNorms off inside a trained Transformer
(all-MiniLM-L6-v2) and watch its tokens and its meaning."""

from functools import partial

import streamlit as st

from blockstab.ablations import INCIDENT, PARAPHRASE, UNRELATED
from blockstab.pretrained import ModelUnavailable
from server.caches import real_comparison, real_figures, trained_model
from ui.examples import literal, markdown_text
from ui.real_views import (
    comparison_csv,
    layer_rows,
    layers_description,
    meaning_description,
    projection_description,
    verdict_text,
)
from ui.text import Text
from ui.views.tables import markdown_table
from widgets.chrome import chart, language, on_phone
from widgets.controls import real_controls

t = Text(language())
projector = st.session_state.get("projector_on", False)

st.title(t("real.title"))
if not projector:
    st.caption(t("real.intro"))
model = trained_model()
if isinstance(model, ModelUnavailable):
    st.error(t(f"real.unavailable.{model.reason}", detail=literal(model.detail, limit=300)),
             icon=":material/block:")
    st.stop()

sentence, ablation = real_controls(t)
comparison = real_comparison(sentence, ablation)
layers, meaning, projection = real_figures(sentence, ablation, t.lang, projector, on_phone())
verdict = partial(st.info, verdict_text(comparison, t), icon=":material/insights:")
# On a desktop the verdict follows the first chart, so that a laptop's first screen holds the chart (issue #50);
# in projector mode and on a phone (its panels one under another, a long way down) it leads.
desktop = not projector and not on_phone()
if not desktop:
    verdict()
chart(layers, t, "real_layers", layers_description(comparison, t))
if desktop:
    verdict()
st.caption(t("real.tokens", count=len(comparison.tokens)) + " " + markdown_text(" ".join(comparison.tokens)))
chart(meaning, t, "real_meaning", meaning_description(comparison, t))
st.caption(t("real.meaning_note", incident=markdown_text(INCIDENT), paraphrase=markdown_text(PARAPHRASE),
             unrelated=markdown_text(UNRELATED)))
chart(projection, t, "real_projection", projection_description(comparison, t))
st.caption(t("real.projection_note"))
st.caption(t("real.norm_off_note"))
st.caption(t("real.out_of_distribution"))
st.caption(t("real.table_note"))
st.markdown(markdown_table(layer_rows(comparison, t)))
st.download_button(t("real.download"), comparison_csv(comparison), file_name="blockstab-real-model.csv",
                   mime="text/csv", key="real_csv", on_click="ignore", icon=":material/download:")
