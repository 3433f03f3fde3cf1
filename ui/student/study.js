// The lesson for one person (/study; ui/study_page.py makes the page): the guided tour's steps, the instant
// Explorer (ui/explorer/) on its own switches and the sentences, and the exercises (predict, reveal, "show me"),
// each drawn from files the server made once: a tour step's title, text, figure and the figure in words, the
// Explorer's texts and bundles, the exercises. It computes nothing: it holds the page's state (lesson.js) and
// keeps the link in the address bar in step with it.

import { control } from "../explorer/controls.js";
import { default as instantExplorer } from "../explorer/main.js";
import { next, query, score, start } from "./lesson.js";
import { chart, escape, figure, jsonFile, markup, painted } from "./shown.js";

const data = JSON.parse(document.getElementById("study-data").textContent);
const activity = document.getElementById("activity");
const announced = document.getElementById("announced");
const plotly = `${data.files}plotly-basic.min.js`;
const other = document.querySelector(".languages a");
const partLinks = [...document.querySelectorAll(".parts a")];
const places = {}; // each part's element, made when first shown and kept (the Explorer keeps its charts)
let lesson = start(data);

// A word of the page's, as HTML, with its {placeholders} filled with text; ``said``: as text.
function word(key, values = {}) {
  return data.words[key].replace(/\{(\w+)\}/g, (_, name) => escape(String(values[name])));
}

const said = (key, values) => markup("span", {}, word(key, values)).textContent;

// The page after ``event``: its state, its links (the address bar's, the other language's, the parts'), and what
// it shows. The address bar's link is replaced (history.replaceState), not pushed: the Back button goes back to
// where the student came from (the teacher's link, the app), not through every step and every switch moved; and
// the page reads a link only where the server opens it (ui/study_page.py opened), so a link is read in one place.
function moved(event) {
  const before = lesson;
  lesson = next(lesson, event);
  history.replaceState(null, "", query(lesson, data.lang, data.defaults));
  other.href = query(lesson, data.other_lang, data.defaults);
  for (const link of partLinks) {
    link.href = query({ ...lesson, part: link.dataset.part }, data.lang, data.defaults);
    if (link.dataset.part === lesson.part) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  show(before);
}

function place(part, make) {
  if (!places[part]) {
    places[part] = markup("section", { class: "part", "data-part": part });
    activity.append(places[part]);
    make(places[part]);
  }
  return places[part];
}

// The part ``lesson`` shows, the others kept out of sight (at their width: the Explorer does not draw its charts
// again when it comes back).
function show(before) {
  for (const [part, element] of Object.entries(places)) element.classList.toggle("away", part !== lesson.part);
  if (before && before.part !== lesson.part) {
    announced.textContent = partLinks.find((link) => link.dataset.part === lesson.part).textContent;
  }
  ({ tour: tourShown, explorer: explorerShown, exercises: exercisesShown })[lesson.part](before);
}

// ---- the tour --------------------------------------------------------------------------------------------------

let stepShown = null; // the step drawn, or being drawn

function tourPlace(section) {
  const steps = markup("div", { class: "steps", role: "group", "aria-label": said("study.steps") });
  const back = markup("button", { type: "button", class: "previous" }, word("tour.previous"));
  const forward = markup("button", { type: "button", class: "next" }, word("tour.next"));
  back.addEventListener("click", () => moved({ type: "step", to: lesson.step - 1 }));
  forward.addEventListener("click", () => moved({ type: "step", to: lesson.step + 1 }));
  steps.append(back, markup("p", { class: "progress" }), forward);
  section.append(steps, markup("div", { class: "step" }));
}

// The step: its place in the tour at once, then its title and text as soon as its file is here, painted, then its
// figure; the next step's file is fetched ahead (the tour is read in order). A step a student moved to is said
// in the live region.
async function tourShown(before) {
  const section = place("tour", tourPlace);
  const step = lesson.step;
  if (stepShown === step) return;
  stepShown = step;
  const [back, forward] = section.querySelectorAll(".steps button");
  const focused = document.activeElement;
  back.disabled = step === 1;
  forward.disabled = step === lesson.steps;
  if (focused?.disabled) (focused === back ? forward : back).focus(); // (the first or last step: the other way)
  section.querySelector(".progress").innerHTML = word("tour.indicator", { step, total: lesson.steps });
  const file = await jsonFile(`${data.files}tour-${step - 1}-${data.lang}-${data.look}.json`);
  if (stepShown !== step) return;
  const [described, plot] = figure(file, word("describe.show"));
  section.querySelector(".step").replaceChildren(markup("h2", {}, escape(file.title)),
    markup("div", { class: "text" }, file.body), described);
  if (before) announced.textContent = `${said("tour.indicator", { step, total: lesson.steps })}: ${file.title}`;
  if (step < lesson.steps) jsonFile(`${data.files}tour-${step}-${data.lang}-${data.look}.json`);
  await painted(); // (the words on the screen before Plotly.js takes the main thread)
  if (stepShown !== step) return;
  await chart(plot, file, plotly);
  if (stepShown === step) section.dataset.drawn = String(step); // (what the browser tests wait for)
}

// ---- the Explorer ----------------------------------------------------------------------------------------------

let mounted = null; // the Explorer's data as last mounted, and its unmount

function explorerPlace(section) {
  const heading = markup("h2", { tabindex: "-1" });
  heading.textContent = partLinks.find((link) => link.dataset.part === "explorer").textContent;
  const sentences = markup("div", { class: "instant-controls study-sentences" });
  section.append(heading, sentences, markup("div", { class: "study-explorer" }));
}

// The instant Explorer on the lesson's view, reading the bundle of the sentences chosen; mounted afresh on an
// exercise's "show me" (its switches then show that view).
async function explorerShown(before) {
  const section = place("explorer", explorerPlace);
  const texts = await jsonFile(`${data.files}explorer-${data.lang}-free.json`);
  const bundle = `${data.files}bundle/${data.look}-${lesson.view.scenario}-${data.lang}/`;
  const anew = !mounted || mounted.shown !== lesson.shown;
  if (!anew && mounted.data.bundle === bundle) return;
  if (anew) {
    mounted?.unmount();
    section.querySelector(".study-explorer").replaceChildren(markup("div"));
    section.querySelector(".study-sentences").replaceChildren(control(data.sentences, lesson.view,
      (key, value) => moved({ type: "view", view: { [key]: value } }), false));
  }
  const view = Object.fromEntries(texts.controls.map(({ key }) => [key, lesson.view[key]])); // (its own switches)
  const mount = { ...texts, view, lead: null, phone: data.look === "phone", plotly, bundle };
  const unmount = instantExplorer({ data: new TextEncoder().encode(JSON.stringify(mount)),
    parentElement: section.querySelector(".study-explorer > div"),
    setStateValue: (_, view) => moved({ type: "view", view }) });
  mounted = { data: mount, shown: lesson.shown, unmount };
  if (before && before.shown !== lesson.shown) section.querySelector("h2").focus(); // ("show me": the view shown)
}

// ---- the exercises ---------------------------------------------------------------------------------------------

// Each question: its prompt, its choices, "Reveal" (once a choice is made), then whether the choice is right, why,
// and "show me" in the Explorer. The score counts each question's choice at its first reveal.
function questionPlace(question) {
  const box = markup("div", { class: "question", "data-question": question.id });
  const group = markup("fieldset", { class: "choices" }, `<legend>${word("join.your_answer")}</legend>`);
  for (const [choice, name] of question.choices) {
    const label = markup("label");
    const radio = markup("input", { type: "radio", name: `answer-${question.id}`, value: choice });
    radio.addEventListener("change", () => moved({ type: "choose", question: question.id, choice }));
    label.append(radio, document.createTextNode(` ${name}`));
    group.append(label);
  }
  const reveal = markup("button", { type: "button", class: "reveal" }, word("study.reveal"));
  reveal.addEventListener("click", () => moved({ type: "reveal", question: question.id }));
  const revealed = markup("div", { class: "revealed", hidden: "" });
  const showMe = markup("button", { type: "button", class: "show-me" }, word("ex.show_me"));
  showMe.addEventListener("click", () => {
    moved({ type: "show_me", view: question.show_me });
    window.scrollTo(0, 0);
  });
  revealed.append(markup("p", { class: "verdict" }), markup("div", { class: "text" }, question.explain), showMe);
  box.append(markup("div", { class: "text" }, question.prompt), group, reveal, revealed);
  return box;
}

async function exercisesShown(before) {
  const section = place("exercises", () => {});
  const exercises = await jsonFile(`${data.files}exercises-${data.lang}.json`);
  const questions = exercises.flatMap((exercise) => exercise.questions);
  if (!section.childElementCount) {
    section.append(markup("p", { class: "score" }));
    for (const exercise of exercises) {
      section.append(markup("h2", {}, escape(exercise.title)), markup("p", { class: "note" }, exercise.intro),
        ...exercise.questions.map(questionPlace), markup("p", { class: "rule", hidden: "" }, exercise.rule));
    }
  }
  for (const question of questions) {
    const box = section.querySelector(`[data-question="${question.id}"]`);
    const chosen = lesson.chosen[question.id];
    for (const radio of box.querySelectorAll("input")) radio.checked = radio.value === chosen;
    const shown = question.id in lesson.revealed;
    box.querySelector(".reveal").disabled = chosen === undefined;
    box.querySelector(".reveal").hidden = shown;
    box.querySelector(".revealed").hidden = !shown;
    const verdict = box.querySelector(".verdict");
    verdict.className = `verdict ${chosen === question.answer ? "right" : "wrong"}`;
    verdict.textContent = chosen === question.answer ? question.right : question.wrong;
    if (shown && before && !(question.id in before.revealed)) { // just revealed: said, and the keyboard's focus on it
      announced.textContent = verdict.textContent;
      box.querySelector(".show-me").focus();
    }
  }
  section.querySelectorAll(".rule").forEach((rule, n) => {
    rule.hidden = !exercises[n].questions.every((question) => question.id in lesson.revealed);
  });
  const answers = Object.fromEntries(questions.map((question) => [question.id, question.answer]));
  section.querySelector(".score").innerHTML = `${word("ex.score", { total: questions.length })}: ${
    word("ex.score_value", score(lesson, answers))}`;
  section.dataset.ready = "true"; // (what the browser tests wait for)
}

// ---- the page ----------------------------------------------------------------------------------------------------

for (const link of partLinks) {
  link.addEventListener("click", (event) => {
    event.preventDefault();
    moved({ type: "part", part: link.dataset.part });
  });
}
show(null);
