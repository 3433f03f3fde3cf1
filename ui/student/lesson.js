// The lesson for one person (/study: ui/study_page.py makes the page, study.js runs it) as a state: the part it
// shows (the tour, the Explorer, the exercises), the tour's step, the Explorer's view (its URL's keys: the
// sentences and the instant controls), the exercises' choices and reveals; and the link that opens it again.
// Pure: tested under node (tests/js/lesson.test.js).

// The state a page opens on: what its link said, as the server read it (ui/study_page.py opened).
export function start(data) {
  return { part: data.part, step: data.step, steps: data.steps, view: { ...data.view }, shown: 0, chosen: {},
    revealed: {} };
}

// ``lesson`` after ``event``: part (``part`` opened), step (``to``: the tour's step, kept within the tour), view
// (the Explorer reported ``view``: its keys that are the page's taken), show_me (an exercise's ``view`` opened in
// the Explorer: ``shown`` counts them, so that a mounted Explorer takes it), choose (``question``'s ``choice``),
// reveal (``question``'s answer, once chosen: ``revealed`` keeps the choice it was first revealed for).
export function next(lesson, event) {
  switch (event.type) {
    case "part":
      return { ...lesson, part: event.part };
    case "step":
      return { ...lesson, part: "tour", step: Math.min(Math.max(event.to, 1), lesson.steps) };
    case "view":
      return { ...lesson, view: Object.fromEntries(Object.entries(lesson.view)
        .map(([key, value]) => [key, key in event.view ? event.view[key] : value])) };
    case "show_me":
      return { ...next(lesson, { type: "view", view: event.view }), part: "explorer", shown: lesson.shown + 1 };
    case "choose":
      return { ...lesson, chosen: { ...lesson.chosen, [event.question]: event.choice } };
    case "reveal":
      return event.question in lesson.chosen && !(event.question in lesson.revealed)
        ? { ...lesson, revealed: { ...lesson.revealed, [event.question]: lesson.chosen[event.question] } } : lesson;
    default:
      return lesson;
  }
}

// The query of the link that opens ``lesson`` again in ``lang``: the part, the step and the view, each left out at
// its default (``defaults``: each key's default as its URL writes it, from the table of controls, ui/controls.py;
// a value's URL form is its JSON text: true, 24, "post").
export function query(lesson, lang, defaults) {
  const values = { part: lesson.part, step: lesson.step, ...lesson.view };
  const search = new URLSearchParams({ lang });
  for (const [key, value] of Object.entries(values)) if (String(value) !== defaults[key]) search.set(key, String(value));
  return `?${search}`;
}

// The score: of the questions revealed, how many were right at their first reveal (``answers``: each question's
// right choice), as the exercises' page counts a first choice.
export function score(lesson, answers) {
  const first = Object.entries(lesson.revealed);
  return { right: first.filter(([question, choice]) => answers[question] === choice).length, answered: first.length };
}
