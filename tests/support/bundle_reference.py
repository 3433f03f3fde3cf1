"""What the browser shows for a view of the Explorer, picked from a bundle (``ui.bundle``) in Python: the reference
``ui/explorer/select.js`` follows (tests/js/select.test.js compares them on the lesson's bundle), and what page
tests read a browser would show (``support.explorer_view``)."""

from __future__ import annotations


def selected(bundle: dict, view: dict) -> dict:
    """What the browser shows for ``view`` (the instant controls' values) from ``bundle`` (the
    index, ``"index"``, and the parts it holds, by name): the reference ``ui/explorer/select.js`` follows.
    The index's entry for the switches, the setting's figures and cuts at the depth; the block shown
    (a stack shallower than the block in focus shows its last block), its range's part name and,
    when that part is held, the block's entry (else ``None``)."""
    idx = bundle["index"]
    (entry,) = (s for s in idx["settings"] if all(view[k] == v for k, v in s["when"].items()))
    setting = bundle[idx["figures"]][entry["figures"]]
    shown = min(view["block"], view[idx["at_most"]["block"]])
    (block_range,) = (r for r in idx["block_ranges"] if r["first"] <= shown <= r["last"])
    part = bundle.get(block_range["part"])
    block = part["settings"][entry["blocks"]][shown - block_range["first"]] if part else None
    depth_cut, readouts_cut = setting["cuts"][view["depth"] - 1]
    depth_text, readouts_text = setting["descriptions"][view["depth"] - 1]
    return {"entry": entry, "setting": setting, "depth_cut": depth_cut, "readouts_cut": readouts_cut,
            "verdict": setting["verdicts"][view["depth"] - 1], "headline": setting["headlines"][view["depth"] - 1],
            "block_shown": shown, "part": block_range["part"], "block": block,
            "block_cut": block["stages"][view["focus"]] if block else None,
            "descriptions": {"depth": depth_text, "readouts": readouts_text,
                             "block": block["descriptions"][view["focus"]] if block else None}}
