// The views drawn ahead (ui/explorer/select.js nextViews): the slider last moved, one more of its step
// either way (a jump counts as 1), the depths beside, then the residual switch flipped after a pause.
import assert from "node:assert/strict";
import { test } from "node:test";

import { nextViews } from "../../ui/explorer/select.js";

const controls = [{ key: "residual", kind: "toggle" }, { key: "depth", kind: "int", low: 1, high: 100 },
                  { key: "block", kind: "int", low: 1, high: 100 }];
const view = { residual: true, depth: 50, block: 31 };
const shown = (next) => next.map(([v, afterPause]) => [v.depth, v.block, v.residual, afterPause]);

test("a depth step: the depth one more step on, then back, then the residual flipped after a pause", () => {
  assert.deepEqual(shown(nextViews(controls, view, ["depth", -1])),
                   [[49, 31, true, false], [51, 31, true, false], [50, 31, false, true]]);
});

test("a PageUp on the block: the block ten on and ten back, the depths beside, then the residual", () => {
  assert.deepEqual(shown(nextViews(controls, view, ["block", 10])),
                   [[50, 41, true, false], [50, 21, true, false], [51, 31, true, false], [49, 31, true, false],
                    [50, 31, false, true]]);
});

test("a jump counts as a step of one; views past a slider's end are left out", () => {
  assert.deepEqual(shown(nextViews(controls, { ...view, depth: 100 }, ["depth", 76])),
                   [[99, 31, true, false], [100, 31, false, true]]);
  assert.deepEqual(shown(nextViews(controls, { ...view, block: 95 }, ["block", 10])).slice(0, 1), [[50, 85, true, false]]);
});

test("a view without the residual switch draws no flip ahead", () => {
  assert.deepEqual(shown(nextViews(controls.slice(1), view, ["depth", 1])), [[51, 31, true, false],
                                                                            [49, 31, true, false]]);
});
