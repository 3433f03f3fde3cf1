// A live class's student page as a state machine (ui/student/machine.js): joining, following the teacher
// through a tour step, a question, an answer (changed, refused), the reveal, the Explorer, the end; a lost
// connection and the waits before asking again; the tour steps whose files a page fetches ahead.
import assert from "node:assert/strict";
import { test } from "node:test";

import { POLL_MS, beside, isNew, mine, next, retryIn, showing, start, timeUp } from "../../ui/student/machine.js";

const state = (change = {}) => ({ version: 0, activity: "tour", step: 0, question: 0, asked: 0, phase: "open",
  following: true, scenario: "both", view: { residual: true, depth: 24 }, mine: null, ...change });

function run(page, ...events) {
  return events.reduce(next, page);
}

test("a page with no code asks for it; a code joins, then follows the tour", () => {
  assert.deepEqual(showing(start(null)), { kind: "no_code" });
  const joining = start("ACDEFG");
  assert.deepEqual(showing(joining), { kind: "joining" });
  const page = next(joining, { type: "joined", me: "m".repeat(16), state: state() });
  assert.equal(page.me, "m".repeat(16));
  assert.deepEqual(showing(page), { kind: "tour", step: 0 });
  assert.deepEqual(showing(next(page, { type: "state", state: state({ version: 1, step: 3 }) })), { kind: "tour", step: 3 });
});

test("a refused join says why; a join told to wait says why and stays joining; no seat ends the page", () => {
  const refused = next(start("ACDEFG"), { type: "refused", error: "This class is full." });
  assert.deepEqual(showing(refused), { kind: "refused" });
  assert.equal(refused.error, "This class is full.");
  const waiting = next(start("ACDEFG"), { type: "waiting", error: "Too many wrong codes." });
  assert.deepEqual(showing(waiting), { kind: "joining", error: "Too many wrong codes." });
  const joined = next(waiting, { type: "joined", me: "m".repeat(16), state: state() });
  assert.deepEqual([showing(joined), joined.error], [{ kind: "tour", step: 0 }, null]);
  const gone = next(start("ACDEFG"), { type: "state", state: null });
  assert.deepEqual(showing(gone), { kind: "ended" });
});

test("a question: the choice sent is the student's, kept until the next question, and shown when closed", () => {
  let page = run(start("ACDEFG"), { type: "joined", me: "m", state: state() },
    { type: "state", state: state({ version: 1, activity: "question", question: 2, asked: 1 }) });
  assert.deepEqual(showing(page), { kind: "question", question: 2, asked: 1, choice: null, version: 1 });
  page = next(page, { type: "answered", asked: 1, choice: "hold" });
  assert.equal(mine(page), "hold");
  page = next(page, { type: "answered", asked: 1, choice: "smarter" }); // changed
  assert.equal(showing(page).choice, "smarter");
  page = next(page, { type: "state", state: state({ version: 2, activity: "question", question: 2, asked: 1,
    phase: "closed", mine: "smarter" }) });
  assert.deepEqual(showing(page), { kind: "closed", question: 2, asked: 1, choice: "smarter", version: 2 });
  page = next(page, { type: "state", state: state({ version: 3, activity: "question", question: 2, asked: 1,
    phase: "revealed", mine: "smarter" }) });
  assert.equal(showing(page).kind, "revealed");
  page = next(page, { type: "state", state: state({ version: 4, activity: "question", question: 3, asked: 4 }) });
  assert.deepEqual([page.sent, mine(page)], [null, null]); // a new question: nothing chosen yet
});

test("an answer refused later (the question closed) keeps the page following, the answer sent kept", () => {
  const page = run(start("ACDEFG"), { type: "joined", me: "m", state: state({ activity: "question", asked: 1 }) },
    { type: "answered", asked: 1, choice: "hold" });
  assert.deepEqual(page.sent, { asked: 1, choice: "hold" });
  assert.equal(showing(page).choice, "hold");
  const refused = next(page, { type: "refused", error: "The question is closed." });
  assert.equal(refused.phase, "following");
  assert.equal(showing(refused).error, "The question is closed."); // said on the question, in its words
  const again = next(refused, { type: "state", state: state({ version: 3, activity: "question", asked: 1 }) });
  assert.equal(showing(again).error, "The question is closed."); // another's move: still said
  assert.equal(showing(next(refused, { type: "answered", asked: 1, choice: "hold" })).error, undefined);
  const newer = next(refused, { type: "state", state: state({ version: 4, activity: "question", asked: 4 }) });
  assert.equal(showing(newer).error, undefined); // a new question: a clean slate
});

test("a second round shows the student's own first choice, and nothing chosen yet", () => {
  const page = run(start("ACDEFG"), { type: "joined", me: "m", state: state({ activity: "question", asked: 1 }) },
    { type: "answered", asked: 1, choice: "hold" },
    { type: "state", state: state({ version: 2, activity: "question", asked: 2, round: 2, first: "hold" }) });
  assert.deepEqual(showing(page), { kind: "question", question: 0, asked: 2, choice: null, version: 2, round: 2,
    first: "hold" });
  assert.ok(isNew({ kind: "question", question: 0, asked: 1 }, showing(page))); // announced, as a new round
});

test("the Explorer follows the teacher, or is the student's own while the class explores freely", () => {
  const page = next(start("ACDEFG"), { type: "joined", me: "m", state: state({ activity: "explorer", scenario: "confirmed" }) });
  assert.deepEqual(showing(page), { kind: "explorer", free: false, scenario: "confirmed" });
  const free = next(page, { type: "state", state: state({ version: 1, activity: "explorer", following: false }) });
  assert.deepEqual(showing(free), { kind: "explorer", free: true, scenario: "both" });
  assert.deepEqual(showing(next(free, { type: "state", state: state({ version: 2, activity: "tour", following: false }) })),
    { kind: "explorer", free: true, scenario: "both" }); // free until the teacher calls the class back
});

test("the class ending ends the page", () => {
  const page = run(start("ACDEFG"), { type: "joined", me: "m", state: state() }, { type: "state", state: null });
  assert.deepEqual(showing(page), { kind: "ended" });
});

test("a lost connection waits longer each time, spread over the class, and a state received starts afresh", () => {
  let page = next(start("ACDEFG"), { type: "joined", me: "m", state: state() });
  assert.equal(retryIn(page), POLL_MS);
  const waits = [];
  for (let i = 0; i < 8; i += 1) {
    page = next(page, { type: "lost" });
    waits.push(retryIn(page));
  }
  assert.deepEqual(waits, [500, 1000, 2000, 4000, 8000, 15000, 15000, 15000]);
  assert.deepEqual([retryIn(page, 0), retryIn(page, 0.999999)], [11250, 18750]);
  assert.equal(showing(page).kind, "tour"); // still showing the class meanwhile
  page = next(page, { type: "state", state: state({ version: 1 }) });
  assert.equal(page.failures, 0);
});

test("a new step or question is announced; the same one again (a reconnect, a close, a reveal) is not", () => {
  const tour = { kind: "tour", step: 1 };
  assert.ok(isNew(null, tour));
  assert.ok(!isNew(tour, { kind: "tour", step: 1 }));
  assert.ok(isNew(tour, { kind: "tour", step: 2 }));
  const asked = { kind: "question", question: 0, asked: 3, choice: null };
  assert.ok(isNew(tour, asked));
  assert.ok(!isNew(asked, { ...asked, kind: "closed", choice: "hold" }));
  assert.ok(!isNew({ ...asked, kind: "closed" }, { ...asked, kind: "revealed" }));
  assert.ok(isNew(asked, { ...asked, asked: 5 })); // asked again: a new question
});

test("a pause shows the projector's call, then the page goes back to what it had, its answer included", () => {
  const asking = state({ version: 1, activity: "question", question: 2, asked: 1 });
  let page = run(start("ACDEFG"), { type: "joined", me: "m", state: asking }, { type: "answered", asked: 1, choice: "hold" });
  page = next(page, { type: "state", state: { ...asking, version: 2, paused: true, mine: "hold" } });
  assert.deepEqual(showing(page), { kind: "paused" });
  assert.ok(isNew({ kind: "question", question: 2, asked: 1 }, showing(page))); // announced
  page = next(page, { type: "state", state: { ...asking, version: 3, paused: false, mine: "hold" } });
  assert.deepEqual(showing(page), { kind: "question", question: 2, asked: 1, choice: "hold", version: 3 });
});

test("time is up once, when the server closes the question by its timer, however late its word comes", () => {
  const open = { asked: 4, phase: "open", closes_in: 0.4, time_up: false };
  const closed = { asked: 4, phase: "closed", closes_in: null, time_up: true };
  assert.ok(!timeUp(null, open));
  assert.ok(timeUp(open, closed));
  assert.ok(timeUp(null, closed)); // a page opened (or reloaded) after it
  assert.ok(!timeUp(closed, { ...closed, version: 9 })); // another student's move: said already
  assert.ok(timeUp(closed, { ...closed, asked: 6 })); // a later question's own timer
  assert.ok(!timeUp(open, { ...closed, time_up: false })); // closed by the teacher
});

test("the steps fetched ahead are those beside the step drawn, the next first, never past either end", () => {
  assert.deepEqual(beside(3, 8), [4, 2]);
  assert.deepEqual(beside(0, 8), [1]);
  assert.deepEqual(beside(7, 8), [6]);
  assert.deepEqual(beside(0, 1), []);
});
