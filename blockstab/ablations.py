"""Switching the stabilisers off inside the trained model, and what that does, layer by layer.

An :class:`Ablation` drops the residual connection or the LayerNorm in every block or in one, the
LayerNorm replaced either by the identity or by its gain and bias alone (the normalisation taken
out). :func:`compare` runs a sentence through the intact and the ablated model and measures, at
the embedding output and after each block: token collapse (mean pairwise cosine), size (RMS) and
each token's cosine to its own input; then how far the sentence embedding moved; a 2-D picture of
the tokens on axes fitted on the intact model; and a meaning test on fixed sentences: does the
model still find :data:`INCIDENT` closer to its paraphrase than to an unrelated sentence?
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .pretrained import DEPTH, TrainedModel, intact_config, sentence_embedding
from .readouts import cosine, mean_pairwise_cosine, rms

SCOPES = ("on", "all", "one")  # a stabiliser on everywhere, off in every block, off in one block
NORM_OFF = {"identity": "none", "gain_bias": "affine"}  # what "LayerNorm off" leaves: the page's name -> engine's
# The meaning test (English, as the model). Not "rollback confirmed" against "not confirmed": the
# intact model already finds those 0.98 alike, so an ablation lowering that would look like a gain.
INCIDENT = "Checkout errors started right after the deploy, so we rolled it back."
PARAPHRASE = "Right after we deployed, checkout began failing, so we reverted the release."
UNRELATED = "My grandmother grows tomatoes in her garden every summer."


@dataclass(frozen=True)
class Ablation:
    """Which stabilisers are off: each ``on``, off in ``all`` blocks or in ``one`` (block ``layer``);
    ``norm_off`` names what a LayerNorm switched off leaves (:data:`NORM_OFF`)."""

    residual: str = "on"
    norm: str = "on"
    layer: int = 1  # the block (1 to 6) a scope of "one" switches
    norm_off: str = "identity"

    def __post_init__(self):
        if self.residual not in SCOPES or self.norm not in SCOPES or self.norm_off not in NORM_OFF:
            raise ValueError(f"not an ablation: {self}")
        if not (isinstance(self.layer, int) and 1 <= self.layer <= DEPTH):
            raise ValueError(f"layer must be 1 to {DEPTH}, got {self.layer!r}")

    def blocks(self, scope: str) -> frozenset[int]:
        """The 0-based blocks a scope switches off."""
        return {"on": frozenset(), "all": frozenset(range(DEPTH)), "one": frozenset({self.layer - 1})}[scope]

    @property
    def canonical(self) -> Ablation:
        """The same switches with what they ignore at its default (the block, unless a scope is
        "one"; the meaning of "LayerNorm off", while it is on): one view, one cache entry."""
        one = "one" in (self.residual, self.norm)
        return replace(self, layer=self.layer if one else 1,
                       norm_off=self.norm_off if self.norm != "on" else "identity")

    @property
    def intact(self) -> bool:
        return self.residual == "on" and self.norm == "on"

    @property
    def config(self):
        return intact_config(residual_off=self.blocks(self.residual), norm_off=self.blocks(self.norm),
                             norm_off_kind=NORM_OFF[self.norm_off])


@dataclass(frozen=True)
class LayerReadouts:
    """One sentence through one model; index 0 is the embedding output, index l block l's output.

    ``stream`` ``(7, tokens, 384)``, float32 as the forward pass gives it; the rest float64, computed
    from it: ``pairwise_cosine``, ``rms`` (mean over tokens) and ``cosine_to_input`` (each token's
    cosine to itself at index 0, mean over tokens) ``(7,)``; ``embedding`` ``(384,)``, the
    unit-length sentence embedding.
    """

    stream: np.ndarray
    pairwise_cosine: np.ndarray
    rms: np.ndarray
    cosine_to_input: np.ndarray
    embedding: np.ndarray


def layer_readouts(stream: np.ndarray) -> LayerReadouts:
    wide = np.asarray(stream, dtype=np.float64)
    return LayerReadouts(stream, mean_pairwise_cosine(wide), rms(wide).mean(axis=-1),
                         cosine(wide, wide[:1]).mean(axis=-1), sentence_embedding(wide[-1]))


def projection_axes(stream: np.ndarray) -> np.ndarray:
    """Per layer, the two directions ``(7, 2, 384)`` along which the unit-length tokens spread most
    (principal axes), each signed so that its largest component is positive."""
    stream = np.asarray(stream, dtype=np.float64)
    unit = stream / np.linalg.norm(stream, axis=-1, keepdims=True)
    _, _, vt = np.linalg.svd(unit - unit.mean(axis=-2, keepdims=True), full_matrices=False)
    axes = vt[:, :2]
    largest = np.take_along_axis(axes, np.abs(axes).argmax(axis=-1)[..., None], axis=-1)
    return axes * np.sign(largest)


def project(stream: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Unit-length tokens on each layer's two axes ``(7, tokens, 2)``: inside the unit disk, so one
    fixed range shows every ablation, collapse included (tokens that point alike land together)."""
    stream = np.asarray(stream, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        unit = stream / np.linalg.norm(stream, axis=-1, keepdims=True)
    return unit @ np.swapaxes(axes, -1, -2)


@dataclass(frozen=True)
class Comparison:
    """The sentence intact and ablated, and what the ablation did to meaning.

    ``embedding_cosine``: the sentence's ablated vs intact embedding. ``paraphrase`` and
    ``unrelated``: the similarity (cosine of embeddings) of :data:`INCIDENT` to :data:`PARAPHRASE`
    and to :data:`UNRELATED`, all three run through the ablated model; ``intact_*`` the same
    through the intact model. ``*_points``: :func:`project` on the intact model's axes.
    """

    ablation: Ablation
    tokens: tuple[str, ...]
    intact: LayerReadouts
    ablated: LayerReadouts
    embedding_cosine: float
    paraphrase: float
    unrelated: float
    intact_paraphrase: float
    intact_unrelated: float
    intact_points: np.ndarray
    ablated_points: np.ndarray


def compare(model: TrainedModel, sentence: str, ablation: Ablation, run=None) -> Comparison:
    """Everything :class:`Comparison` holds: at most eight forward passes (three when nothing is off).
    ``run(text, config)`` gives a sentence's :class:`LayerReadouts`; by default each is computed here
    once (a page passes a cache shared between views: the intact runs are the same for every ablation)."""
    if run is None:
        runs = {}

        def run(text: str, cfg) -> LayerReadouts:
            if (text, cfg) not in runs:
                runs[text, cfg] = layer_readouts(model.stream(text, cfg))
            return runs[text, cfg]

    def meaning_test(cfg) -> tuple[float, float]:
        anchor = run(INCIDENT, cfg).embedding
        return float(anchor @ run(PARAPHRASE, cfg).embedding), float(anchor @ run(UNRELATED, cfg).embedding)

    intact_cfg, cfg = intact_config(), ablation.config
    intact, ablated = run(sentence, intact_cfg), run(sentence, cfg)
    axes = projection_axes(intact.stream)
    return Comparison(ablation, tuple(model.tokens(sentence)), intact, ablated,
                      float(ablated.embedding @ intact.embedding), *meaning_test(cfg), *meaning_test(intact_cfg),
                      project(intact.stream, axes), project(ablated.stream, axes))
