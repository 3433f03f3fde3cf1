"""The Real model page in Streamlit's AppTest: both languages, its controls from the URL and by hand,
hostile sentences, a missing or tampered model (the rest of the app unaffected)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from blockstab import pretrained
from blockstab.ablations import INCIDENT, Ablation, compare
from blockstab.pretrained import MAX_CHARS, load_model, sentence_problem
from server import caches
from support.pages import APP, charts, same_data, says, tables, url_warnings
from ui.real_views import findings, layers_figure, meaning_figure, projection_figure
from ui.text import LANGUAGES, Text

REAL = "pages/real_model.py"


def open_real(lang: str = "en", **query) -> AppTest:
    """The app opened with ``query``, then switched to the Real model page (as a visitor does)."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update({"lang": lang, **{k: str(v) for k, v in query.items()}})
    at.run()
    at.switch_page(REAL).run()
    assert not at.exception, [e.value for e in at.exception][:1]
    return at


@pytest.fixture(scope="module")
def model():
    return load_model()


def verdict(at: AppTest) -> list[str]:
    return [line.removeprefix("- ") for line in at.info[0].value.splitlines()]


def expected_verdict(model, ablation: Ablation, lang: str, sentence: str = INCIDENT) -> list[str]:
    t = Text(lang)
    return [t(key, **fields) for key, fields in findings(compare(model, sentence, ablation))]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_default_page_in_both_languages(model, lang):
    at = open_real(lang)
    t = Text(lang)
    assert at.title[0].value == t("real.title")
    assert verdict(at) == expected_verdict(model, Ablation(), lang)
    drawn, c = charts(at), compare(model, INCIDENT, Ablation())
    for key, figure in (("real_layers", layers_figure), ("real_projection", projection_figure)):
        assert same_data(drawn[key], figure(c, t)), key
    bars = [list(trace["x"]) for trace in drawn["real_meaning"]["data"]]
    assert bars == [list(trace.x) for trace in meaning_figure(c, t).data]
    assert len(tables(at)[0]) == 7
    captions = [c.value for c in at.caption]
    assert t("real.out_of_distribution") in captions and t("real.norm_off_note") in captions


@pytest.mark.parametrize(("query", "ablation"), [
    ({"real_residual": "all"}, Ablation(residual="all")),
    ({"real_norm": "one", "real_layer": 5, "real_norm_off": "gain_bias"}, Ablation(norm="one", layer=5,
                                                                                   norm_off="gain_bias")),
])
def test_a_link_restores_the_switches(model, query, ablation):
    at = open_real("zh", **query)
    assert verdict(at) == expected_verdict(model, ablation, "zh")
    assert at.radio(key="real_residual").value == ablation.residual


def test_switching_the_residual_off_by_hand_reports_collapse(model):
    at = open_real("en")
    at.radio(key="real_residual").set_value("all").run()
    assert says(verdict(at)[0], "en", "real.verdict.collapse")
    assert verdict(at) == expected_verdict(model, Ablation(residual="all"), "en")
    assert at.query_params["real_residual"] == "all"


@pytest.mark.parametrize("sentence", ["回滚已确认，错误消失了 🚀👩‍💻",
                                      "**bold** [a link](http://example.com) <b>x</b> `code`"])
def test_cjk_emoji_and_markup_are_run_as_plain_text(model, sentence):
    at = open_real("en")
    at.text_input(key="real_text").set_value(sentence).run()
    assert not at.warning
    assert verdict(at) == expected_verdict(model, Ablation(), "en", sentence)
    tokens = next(c.value for c in at.caption if c.value.startswith(Text("en")("real.tokens", count="")[:10]))
    assert "[a link](" not in tokens and "**bold**" not in tokens  # escaped: shown, never formatted


def test_a_long_sentence_is_cut_at_the_limit_by_the_server(model):
    """The box takes at most MAX_CHARS; a client sending more is cut by Streamlit's own check."""
    at = open_real("en")
    at.text_input(key="real_text").set_value("rollback " * 1000).run()
    assert len(at.text_input(key="real_text").value) == MAX_CHARS and not at.warning
    assert verdict(at) == expected_verdict(model, Ablation(), "en", ("rollback " * 1000)[:MAX_CHARS])


@pytest.mark.parametrize(("sentence", "reason"), [
    ("deploy\x00failed", "character"), ("roll\u202eback", "character"), ("line\nbreak", "character"),
    ("   ", "empty"),
])
def test_a_sentence_the_page_cannot_run_is_named_and_the_last_one_kept(model, sentence, reason):
    at = open_real("en")
    at.text_input(key="real_text").set_value("The deploy went fine.").run()
    at.text_input(key="real_text").set_value(sentence).run()
    assert sentence_problem(sentence)[0] == reason
    assert says(at.warning[0].value, "en", f"real.problem.{reason}")
    assert verdict(at) == expected_verdict(model, Ablation(), "en", "The deploy went fine.")


@pytest.mark.parametrize("bad", ["a\x07b", "x" * (MAX_CHARS + 1)])
def test_a_bad_sentence_in_a_link_is_ignored_with_a_notice(model, bad):
    assert sentence_problem(bad)
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update({"lang": "en", "real_text": bad})
    at.run()
    assert url_warnings(at)
    at.switch_page(REAL).run()
    assert at.text_input(key="real_text").value == INCIDENT


@pytest.fixture
def unavailable(monkeypatch):
    """``unavailable(load)``: the page's model loader replaced for one test; the cache cleared around it."""
    def use(load):
        monkeypatch.setattr(caches, "load_model", load)
        caches.trained_model.clear()
    yield use
    caches.trained_model.clear()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_missing_package_gives_a_clear_message_and_the_rest_works(unavailable, monkeypatch, lang):
    monkeypatch.setattr(pretrained.importlib.util, "find_spec", lambda name: None)
    unavailable(load_model)
    at = open_real(lang)
    assert says(at.error[0].value, lang, "real.unavailable.missing")
    assert not at.get("plotly_chart")
    at.switch_page("pages/explorer.py").run()
    assert not at.exception and len(at.get("bidi_component")) == 1  # the Explorer draws in the browser


def test_weights_that_are_not_the_official_file_are_refused_on_the_page(unavailable):
    unavailable(functools.partial(load_model, expected_sha256="0" * 64))
    at = open_real("zh")
    assert says(at.error[0].value, "zh", "real.unavailable.checksum")
    assert pretrained.WEIGHTS_SHA256 in at.error[0].value  # the digest actually found is named


def test_projector_mode_hides_the_intro(model):
    at = open_real("en", projector="true")
    assert Text("en")("real.intro") not in [c.value for c in at.caption]
    assert verdict(at) == expected_verdict(model, Ablation(), "en")


# Run in a fresh process, as a server runs the page: threadpoolctl lets one live Python thread set
# OpenBLAS's process-wide count and ignores the others, and the page runs in a script thread. The
# model is loaded (and BLAS pinned) by a session thread that has ended, then other code in another
# passing thread sets two threads; then the page computes. Records the count inside every forward
# pass and the projection's SVD.
BLAS_PROBE = """
import json, threading
from streamlit.testing.v1 import AppTest
from threadpoolctl import threadpool_info, threadpool_limits
from blockstab import ablations
from blockstab.pretrained import TrainedModel
from server import caches

def threads():
    return sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})

seen, stream, axes = [], TrainedModel.stream, ablations.projection_axes

def watched_stream(self, text, cfg):
    seen.append(["forward", threading.current_thread().name, threads()])
    return stream(self, text, cfg)

def watched_axes(hidden):
    seen.append(["svd", threading.current_thread().name, threads()])
    return axes(hidden)

def in_a_passing_thread(work):
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()

in_a_passing_thread(caches.trained_model)
in_a_passing_thread(lambda: threadpool_limits(limits=2, user_api="blas"))
TrainedModel.stream, ablations.projection_axes = watched_stream, watched_axes
before = threads()
at = AppTest.from_file("app.py", default_timeout=120)
at.query_params.update({"lang": "en", "real_residual": "all", "real_norm": "one", "real_layer": "3"})
at.run()
at.switch_page("pages/real_model.py").run()
print(json.dumps({"before": before, "seen": seen, "errors": [str(e.value) for e in at.exception]}))
"""


def test_the_page_computes_on_one_blas_thread():
    """The count read inside the computation, not a call checked: one BLAS thread in every pass, though
    other code set two after the model was loaded."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", BLAS_PROBE], cwd=APP.parent, env=env, capture_output=True,
                          text=True, timeout=300, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert not found["errors"], found["errors"]
    assert found["before"] == [2], "the probe could not set two BLAS threads: nothing would show a missing pin"
    # six passes (the sentence is the meaning test's first: one intact and one ablated run serve both), one SVD
    assert sorted(step for step, _, _ in found["seen"]) == ["forward"] * 6 + ["svd"]
    assert all(thread != "MainThread" for _, thread, _ in found["seen"])  # a script thread, as in a server
    assert all(threads == [1] for _, _, threads in found["seen"]), found
