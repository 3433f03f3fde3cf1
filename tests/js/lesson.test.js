// The lesson for one person as a state (ui/student/lesson.js): the tour's step kept within the tour, the
// Explorer's view as it reports it and as "show me" opens it, the exercises' reveals and score, and the link that
// opens the same page again (tests/views/test_study_page.py reads it back as the server does).
import assert from "node:assert/strict";
import { test } from "node:test";

import { next, query, score, start } from "../../ui/student/lesson.js";

const VIEW = { scenario: "both", residual: true, norm: true, norm_kind: "rmsnorm", placement: "post", depth: 24,
  block: 1, focus: "attention_residual" };
const DEFAULTS = { part: "tour", step: "1", ...Object.fromEntries(Object.entries(VIEW).map(([k, v]) => [k, String(v)])) };
const opened = (change = {}) => start({ part: "tour", step: 1, steps: 8, view: { ...VIEW }, ...change });
const run = (lesson, ...events) => events.reduce(next, lesson);

test("Next and Previous move through the tour's eight steps and never past its ends", () => {
  let lesson = opened();
  lesson = run(lesson, { type: "step", to: lesson.step - 1 });
  assert.equal(lesson.step, 1);
  for (let n = 0; n < 10; n += 1) lesson = next(lesson, { type: "step", to: lesson.step + 1 });
  assert.equal(lesson.step, 8);
  assert.equal(next(lesson, { type: "step", to: 7 }).step, 7);
});

test("a step moved to shows the tour, from any part", () => {
  const lesson = run(opened(), { type: "part", part: "explorer" }, { type: "step", to: 3 });
  assert.deepEqual([lesson.part, lesson.step], ["tour", 3]);
});

test("the Explorer's report changes the page's view, its own keys only", () => {
  const lesson = next(opened(), { type: "view", view: { residual: false, depth: 7, projector: true } });
  assert.deepEqual(lesson.view, { ...VIEW, residual: false, depth: 7 });
  assert.equal(next(lesson, { type: "view", view: { scenario: "confirmed" } }).view.scenario, "confirmed");
});

test("show me opens the Explorer on the exercise's view, counted so that a mounted Explorer takes it", () => {
  const shown = { ...VIEW, norm: false, depth: 3, focus: "ffn_residual" };
  const lesson = run(opened({ part: "exercises" }), { type: "view", view: { depth: 50 } }, { type: "show_me", view: shown });
  assert.deepEqual([lesson.part, lesson.view, lesson.shown], ["explorer", shown, 1]);
  assert.equal(next(lesson, { type: "show_me", view: shown }).shown, 2);
});

test("a reveal needs a choice, keeps the choice it was first revealed for, and the score counts that one", () => {
  const answers = { drop_input: "overwrite", range: "unstable" };
  let lesson = next(opened(), { type: "reveal", question: "drop_input" });
  assert.deepEqual(lesson.revealed, {});
  lesson = run(lesson, { type: "choose", question: "drop_input", choice: "nothing" },
    { type: "reveal", question: "drop_input" }, { type: "choose", question: "drop_input", choice: "overwrite" },
    { type: "reveal", question: "drop_input" }, { type: "choose", question: "range", choice: "unstable" },
    { type: "reveal", question: "range" });
  assert.deepEqual(lesson.revealed, { drop_input: "nothing", range: "unstable" });
  assert.equal(lesson.chosen.drop_input, "overwrite");
  assert.deepEqual(score(lesson, answers), { right: 1, answered: 2 });
});

test("the link names the language, then only what differs from the defaults", () => {
  assert.equal(query(opened(), "en", DEFAULTS), "?lang=en");
  const lesson = run(opened(), { type: "step", to: 4 }, { type: "part", part: "explorer" },
    { type: "view", view: { residual: false, placement: "pre", depth: 100, scenario: "not_confirmed" } });
  assert.equal(query(lesson, "zh", DEFAULTS),
    "?lang=zh&part=explorer&step=4&scenario=not_confirmed&residual=false&placement=pre&depth=100");
});
