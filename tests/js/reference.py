"""What the Python reference picks and draws for views of the lesson's bundle, as JSON on stdout,
for tests/js/select.test.js: the browser's lookups (ui/explorer/select.js) must pick the same
(``support.bundle_reference.selected``) and cut the same (``ui.views.cut.apply_cut``)."""

import itertools
import json
import sys

import plotly.io

from support.bundle_reference import selected
from ui.bundle import FIGURES, block_range, figures_part, index, part_file, read_part, sentence_and_look
from ui.controls import ExplorerState
from ui.text import Text
from ui.views.cut import apply_cut
from ui.views.style import unvalidated

RANGE = "blocks-41"


def main() -> None:
    look, t = sentence_and_look(ExplorerState()), Text("en")
    bundle = {"index": index([FIGURES, RANGE]), FIGURES: read_part(part_file(figures_part(look, t))),
              RANGE: read_part(part_file(block_range(look, t, 41)))}
    picks, cuts = [], []
    for entry, depth, block, focus in itertools.product(bundle["index"]["settings"], (1, 24, 45, 100), (1, 45, 50),
                                                         ("attention", "ffn_residual")):
        view = {**entry["when"], "depth": depth, "block": block, "focus": focus}
        pick = selected(bundle, view)
        picks.append({"view": view, "entry": pick["entry"], "part": pick["part"], "verdict": pick["verdict"],
                      "headline": pick["headline"], "depth_cut": pick["depth_cut"],
                      "readouts_cut": pick["readouts_cut"], "block_cut": pick["block_cut"],
                      "descriptions": pick["descriptions"],
                      "numbers_title": pick["block"]["numbers_title"] if pick["block"] else None})
        if block == 45 and focus == "attention":
            for name, base, cut in (("depth", pick["setting"]["depth"], pick["depth_cut"]),
                                    ("readouts", pick["setting"]["readouts"], pick["readouts_cut"]),
                                    ("block", pick["setting"]["block"], pick["block_cut"])):
                if cut is not None:
                    drawn = json.loads(plotly.io.to_json(apply_cut(unvalidated(base), cut)))
                    cuts.append({"view": view, "figure": name,
                                 "traces": [[trace.get("x"), trace.get("y")] for trace in drawn["data"]],
                                 "notes": [note.get("text") for note in drawn["layout"].get("annotations", [])]})
    json.dump({"bundle": bundle, "picks": picks, "cuts": cuts}, sys.stdout)


if __name__ == "__main__":
    main()
