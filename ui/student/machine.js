// A live class's student page as a state machine (page.js runs it): what the page holds after each event
// and what it shows. Pure: tested under node (tests/js/student.test.js).

const RETRY_MS = [500, 1000, 2000, 4000, 8000, 15000]; // waits before asking again, after failures in a row
export const POLL_MS = 1000; // how often a page with no push asks for the class's state

export function start(code) {
  return { phase: code ? "joining" : "no_code", me: null, state: null, sent: null, error: null, failures: 0 };
}

// ``page`` after ``event``: joined (``me``, ``state``), state (the class's state for this seat, null once it
// has none: the class ended, or the teacher removed it), refused (the server's words: joining or an answer
// refused), waiting (joining refused for now, ``error`` its words: the page tries again), answered (an answer
// the server took: ``asked``, ``choice``), lost (a request or the push failed).
export function next(page, event) {
  switch (event.type) {
    case "joined":
      return { ...page, phase: "following", me: event.me, state: event.state, error: null, failures: 0 };
    case "state": {
      if (event.state === null) return { ...page, phase: "ended", state: null, error: null, failures: 0 };
      const same = page.state?.asked === event.state.asked; // the same question: what was sent, and said, stays
      return { ...page, phase: "following", state: event.state, failures: 0,
        sent: same && page.sent?.asked === event.state.asked ? page.sent : null, error: same ? page.error : null };
    }
    case "refused":
      return { ...page, phase: page.phase === "joining" ? "refused" : page.phase, error: event.error, failures: 0 };
    case "waiting":
      return { ...page, error: event.error };
    case "answered":
      return { ...page, sent: { asked: event.asked, choice: event.choice }, error: null };
    case "lost":
      return { ...page, failures: page.failures + 1 };
    default:
      return page;
  }
}

// How long to wait before asking again after ``page.failures`` failures in a row (``random`` in [0, 1): each
// page waits a little differently, so a class does not come back at once after a server restarts).
export function retryIn(page, random = 0.5) {
  const wait = RETRY_MS[Math.min(page.failures, RETRY_MS.length) - 1] ?? POLL_MS;
  return Math.round(wait * (0.75 + random / 2));
}

// The choice the page shows as this student's: the one it sent to this question, else the class's record of it.
export function mine(page) {
  return page.sent && page.state && page.sent.asked === page.state.asked ? page.sent.choice : page.state?.mine ?? null;
}

// What the page shows: {kind} of no_code, joining (``error``: why it waits, if it does), refused, ended, paused
// (the teacher's "look at the projector"), tour (``step``), question, closed, revealed (``question``, ``asked``,
// ``choice``: the student's; in a second round ``round`` 2 and ``first``, the student's first choice;
// ``error``: why the server refused the student's answer), or
// explorer (``free``: the student's own switches).
export function showing(page) {
  if (page.phase === "joining" && page.error) return { kind: "joining", error: page.error };
  if (page.phase !== "following") return { kind: page.phase };
  const s = page.state;
  if (s.paused) return { kind: "paused" };
  if (!s.following) return { kind: "explorer", free: true, scenario: s.scenario };
  if (s.activity === "tour") return { kind: "tour", step: s.step };
  if (s.activity === "explorer") return { kind: "explorer", free: false, scenario: s.scenario };
  const kind = { open: "question", closed: "closed", revealed: "revealed" }[s.phase];
  return { kind, question: s.question, asked: s.asked, choice: mine(page), version: s.version,
    ...(s.round === 2 ? { round: 2, first: s.first } : {}), ...(page.error ? { error: page.error } : {}) };
}

// The tour steps beside step ``step`` of ``steps`` (0-based), the next first: the page fetches their files once it
// has drawn the step, so that the teacher's Next (or Previous) finds its file there.
export function beside(step, steps) {
  return [step + 1, step - 1].filter((n) => n >= 0 && n < steps);
}

// Whether going from ``before`` to ``after`` (two showing() values) is a new activity, which the page announces.
export function isNew(before, after) {
  const key = (v) => [v.kind === "closed" || v.kind === "revealed" ? "question" : v.kind, v.step, v.asked].join();
  return !before || key(before) !== key(after);
}

// Whether the class's state ``after`` (following ``before``) is the moment to say the question's time is up: the
// server closed it by its timer, and the page has not heard so for this question.
export function timeUp(before, after) {
  return Boolean(after?.time_up) && !(before?.time_up && before.asked === after.asked);
}
