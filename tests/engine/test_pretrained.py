"""all-MiniLM-L6-v2 in the engine: the reference from sentence-transformers (within 1e-5, the engine
in float32), the checksum refusal and a missing package."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from blockstab import pretrained
from blockstab.pretrained import ModelUnavailable, intact_config, load_model, model_directory, sentence_embedding

REFERENCE = np.load(Path(__file__).with_name("data") / "minilm_reference.npz")
SENTENCES = [str(s) for s in REFERENCE["sentences"]]


@pytest.fixture(scope="module")
def model():
    return load_model()


def _arrays(params):
    if isinstance(params, np.ndarray):
        yield params
    elif isinstance(params, tuple):
        for p in params:
            yield from _arrays(p)
    elif dataclasses.is_dataclass(params):
        for field in dataclasses.fields(params):
            yield from _arrays(getattr(params, field.name))


def test_the_model_is_float32_end_to_end(model):
    """Weights as the file stores them (91 MB, not 182 MB as float64) and every hidden state float32."""
    weights = list(_arrays(model.embeddings)) + list(_arrays(model.stack))
    assert {w.dtype for w in weights} == {np.dtype(np.float32)}
    assert 22_000_000 < sum(w.size for w in weights) < 23_000_000  # 22.7 M parameters
    assert model.stream(SENTENCES[0], intact_config()).dtype == np.float32


@pytest.mark.parametrize("i", range(len(SENTENCES)))
def test_tokens_and_hidden_states_match_the_reference(model, i):
    """The float32 forward pass within 1e-5 of torch's float32 one on every element (3.0e-6 at worst,
    hidden states up to 9.7 in size; the float64 pass was 2.6e-6 off: the two float32 roundings differ)."""
    ids = model.token_ids(SENTENCES[i])
    np.testing.assert_array_equal(ids, REFERENCE[f"ids_{i}"])
    stream = model.stream(SENTENCES[i], intact_config())
    for layer in REFERENCE["layers"]:
        np.testing.assert_allclose(stream[layer], REFERENCE[f"hidden_{i}_{layer}"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(sentence_embedding(stream[-1]), REFERENCE["embeddings"][i], rtol=0, atol=1e-5)


def test_no_padding_and_truncation_at_256(model):
    assert len(model.token_ids("deploy")) == 3  # [CLS] deploy [SEP], not padded to 128
    assert len(model.token_ids("rollback " * 400)) == pretrained.MAX_TOKENS


def test_weights_that_are_not_the_official_file_are_refused(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    (tmp_path / "tokenizer.json").symlink_to(model_directory() / "tokenizer.json")
    with pytest.raises(ModelUnavailable) as refused:
        load_model(tmp_path)
    assert refused.value.reason == "checksum"


def test_the_official_digest_is_checked_not_assumed():
    with pytest.raises(ModelUnavailable, match="expected 0{64}") as refused:
        load_model(expected_sha256="0" * 64)
    assert refused.value.reason == "checksum"


def test_missing_files_or_package(tmp_path, monkeypatch):
    with pytest.raises(ModelUnavailable) as missing:
        load_model(tmp_path)
    assert missing.value.reason == "missing"
    monkeypatch.setattr(pretrained.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelUnavailable) as no_package:
        load_model()
    assert no_package.value.reason == "missing"


def test_the_package_is_read_not_run(model):
    import sys
    assert pretrained.PACKAGE not in sys.modules
