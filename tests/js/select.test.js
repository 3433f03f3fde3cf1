// The browser's lookups (ui/explorer/select.js) against the Python reference (tests/js/reference.py:
// support.bundle_reference.selected and ui.views.cut.apply_cut) on the lesson's real bundle, for every combination
// of the switches at several depths, blocks and stages.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";

import { applyCut, rangeOf, select, settingOf } from "../../ui/explorer/select.js";

const python = process.env.PYTHON ?? ".venv/bin/python";
const reference = JSON.parse(execFileSync(python, ["tests/js/reference.py"], {
  env: { ...process.env, PYTHONPATH: ".:tests" }, maxBuffer: 1 << 30, encoding: "utf8" }));
const { bundle } = reference;
const held = new Map(Object.entries(bundle).filter(([name]) => name.startsWith("blocks-")));

test("every combination of the switches is listed once in the index", () => {
  const combinations = new Set(bundle.index.settings.map((s) => JSON.stringify(s.when)));
  assert.equal(combinations.size, bundle.index.settings.length);
  assert.equal(combinations.size, 16);
});

test("each view picks what the Python reference picks", () => {
  assert.ok(reference.picks.length > 300);
  for (const want of reference.picks) {
    const got = select(bundle.index, bundle.figures, held, want.view);
    assert.deepEqual(settingOf(bundle.index, want.view), want.entry);
    assert.equal(rangeOf(bundle.index, want.view)[1].part, want.part);
    assert.equal(got.verdict, want.verdict);
    assert.equal(got.headline, want.headline);
    assert.deepEqual([got.depthCut, got.readoutsCut, got.blockCut], [want.depth_cut, want.readouts_cut, want.block_cut]);
    assert.deepEqual(got.descriptions, want.descriptions);
    assert.equal(got.block ? got.block.numbers_title : null, want.numbers_title);
  }
});

test("a block range not held leaves the block view empty, the figures still picked", () => {
  const got = select(bundle.index, bundle.figures, new Map(), { ...bundle.index.settings[0].when, depth: 50, block: 45,
                                                                focus: "attention" });
  assert.equal(got.block, null);
  assert.equal(got.blockCut, null);
  assert.equal(got.descriptions.block, null);
  assert.ok(got.verdict && got.depthCut && got.readoutsCut && got.descriptions.depth && got.descriptions.readouts);
});

test("a cut applied here draws the points and notes the Python reference draws", () => {
  assert.ok(reference.cuts.length >= 48);
  for (const want of reference.cuts) {
    const got = select(bundle.index, bundle.figures, held, want.view);
    const [base, cut] = { depth: [got.setting.depth, got.depthCut], readouts: [got.setting.readouts, got.readoutsCut],
                          block: [got.setting.block, got.blockCut] }[want.figure];
    const drawn = applyCut(base, cut, bundle.index.along_depth);
    assert.deepEqual(drawn.data.map((trace) => [trace.x ?? null, trace.y ?? null]), want.traces, want.figure);
    assert.deepEqual((drawn.layout.annotations ?? []).map((note) => note.text ?? null), want.notes, want.figure);
  }
});
