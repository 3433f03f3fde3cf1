// A live class's student page (ui/student_page.py makes it, server/class_routes.py serves it): joins the
// class, follows it by a push from the server (Server-Sent Events; asking every second if that fails) and
// draws what the class shows from files made once per language and look: a tour step, a question to answer,
// its reveal, or the Explorer (ui/explorer/) on the teacher's view. It computes nothing: every figure and
// sentence comes from the server.

import { default as instantExplorer } from "../explorer/main.js";
import { POLL_MS, beside, isNew, next, retryIn, showing, start, timeUp } from "./machine.js";
import { chart, escape, figure, jsonFile, markup, painted } from "./shown.js";

const data = JSON.parse(document.getElementById("student-data").textContent);
const activity = document.getElementById("activity");
const announced = document.getElementById("announced");
let lang = data.lang;
let page = start(data.code);
let drawn = null; // what the activity area shows (showing()), and in which language
let drawing = Promise.resolve();
let timed = null; // the state whose timer the page counts down
let countdown = null; // its interval
let warned = null; // the question (``asked``) whose 10 s left a screen reader has heard

// A word of the page's, as HTML, with its {placeholders} filled with text.
function word(key, values = {}) {
  return data.words[lang][key].replace(/\{(\w+)\}/g, (_, name) => escape(String(values[name])));
}

const plotly = `${data.files}plotly-basic.min.js`;

const file = (name) => jsonFile(`${data.files}${name}`);

// A call to the class's routes: [ok, its JSON ({error, message} when refused), seconds to wait before asking
// again when it was "too many" (429), else null].
async function call(path, body) {
  const query = `${path.includes("?") ? "&" : "?"}lang=${lang}`;
  const response = await fetch(`${data.api}${path}${query}`, body === undefined ? { cache: "no-store" }
    : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const wait = response.status === 429 ? Number(response.headers.get("Retry-After")) || 60 : null;
  return [response.ok, await response.json(), wait];
}

function problem(message) {
  const said = markup("p", { class: "problem", role: "alert" });
  said.textContent = message;
  return said;
}

// ---- following the class ----------------------------------------------------------------------------

function moved(event) {
  page = next(page, event);
  render();
}

async function join() {
  const me = new URL(location.href).searchParams.get("me");
  try {
    const [ok, answer, wait] = await call("join", me ? { me } : {});
    if (wait !== null) { // too many tries for now (not this phone's fault): it tries again by itself
      moved({ type: "waiting", error: answer.message });
      return setTimeout(join, wait * 1000 * (1 + Math.random() / 2));
    }
    if (!ok) return moved({ type: "refused", error: answer.message });
    const url = new URL(location.href);
    url.searchParams.set("me", answer.me); // a reload keeps this student, and its one answer
    history.replaceState(null, "", url);
    moved({ type: "joined", me: answer.me, state: answer.state });
    follow();
  } catch {
    moved({ type: "lost" });
    setTimeout(join, retryIn(page, Math.random()));
  }
}

function follow() {
  if (!window.EventSource) return poll();
  const events = new EventSource(`${data.api}events?me=${encodeURIComponent(page.me)}`);
  events.addEventListener("state", (message) => moved({ type: "state", state: JSON.parse(message.data) }));
  events.onerror = () => {
    if (events.readyState === EventSource.CLOSED) poll(); // refused (too many), or no push on this network
    else moved({ type: "lost" }); // the browser connects again by itself
  };
}

async function poll() {
  try {
    const [ok, answer] = await call(`state?me=${encodeURIComponent(page.me)}`);
    moved(ok ? { type: "state", state: answer.state } : { type: "lost" });
  } catch {
    moved({ type: "lost" });
  }
  if (page.phase !== "ended") setTimeout(poll, page.failures ? retryIn(page, Math.random()) : POLL_MS);
}

async function answer(asked, choice) {
  try {
    const [ok, said] = await call("answer", { me: page.me, asked, choice });
    moved(ok ? { type: "answered", asked, choice } : { type: "refused", error: said.message });
  } catch {
    moved({ type: "lost" });
  }
}

// ---- drawing what the class shows ---------------------------------------------------------------------

const tourName = (step) => `tour-${step}-${lang}-${data.look}.json`;
const tourFile = (step) => file(tourName(step));
const aside = markup("div", { class: "drawn-ahead", "aria-hidden": "true" }); // the steps' figures drawn ahead
document.body.append(aside);
const ahead = new Map(); // a tour file's name -> {described: its figure, drawing: its chart drawn}, off screen

// The figure of step ``step`` drawn off screen at the activity's width, so that a Next or Previous shows it drawn.
async function drawStepAhead(step) {
  if (ahead.has(tourName(step))) return;
  const source = await tourFile(step);
  const [described, plot] = figure(source, word("describe.show"));
  aside.style.width = `${activity.clientWidth}px`;
  aside.append(described);
  ahead.set(tourName(step), { described, drawing: chart(plot, source, plotly) });
}

// A tour step: its words (title, text, the figure in words) as soon as its file is here, painted before Plotly.js
// takes the main thread to draw its figure (or with its figure, drawn ahead); then the figures of the steps beside
// it drawn ahead, off screen, and every other kept figure let go.
async function tour(view) {
  const step = await tourFile(view.step);
  const kept = ahead.get(tourName(view.step));
  ahead.delete(tourName(view.step));
  const [described, plot] = kept ? [kept.described, null] : figure(step, word("describe.show"));
  activity.replaceChildren(markup("h2", {}, escape(step.title)), markup("div", { class: "text" }, step.body),
    described);
  if (kept) {
    await kept.drawing;
  } else {
    await painted();
    if (drawn.view !== view) return null; // another state came meanwhile: its drawing is next
    await chart(plot, step, plotly);
  }
  await painted(); // (the step on the screen before the steps beside it take the main thread)
  if (drawn.view !== view) return null;
  const near = new Set(beside(view.step, data.steps).map(tourName));
  for (const [name, { described: far }] of ahead) if (!near.has(name)) { far.remove(); ahead.delete(name); }
  for (const next of beside(view.step, data.steps)) drawStepAhead(next).catch(() => null); // (a step fails: drawn then)
  return step.title;
}

// The question, its choices (a student's own marked) until it closes, then what was chosen and, once
// revealed, the class's answers. Drawn again in place (``here``: it shows this question already): a radio
// keeps its keyboard focus as its student answers.
async function question(view, here) {
  const asked = (await file(`questions-${lang}.json`))[view.question];
  const again = view.round === 2 ? markup("p", { class: "note" }, word("join.round_two")) : null;
  const title = again ? `${asked.title} · ${again.textContent}` : asked.title; // what the live region says
  if (here && view.kind === "question") {
    for (const radio of activity.querySelectorAll("input[type=radio]")) radio.checked = radio.value === view.choice;
    activity.querySelector(".answer-problem").replaceChildren(...(view.error ? [problem(view.error)] : []));
    return title;
  }
  const parts = [markup("h2", {}, escape(asked.title)), markup("div", { class: "text" }, asked.prompt)];
  const named = Object.fromEntries(asked.choices);
  if (again) {
    if (view.kind !== "revealed") parts.push(again);
    if (view.first) parts.push(markup("p", {}, word("join.your_first", { choice: named[view.first] })));
  }
  if (view.kind === "question" && asked.number) {
    parts.push(numberForm(asked.number, view), markup("p", { class: "caption" }, word("join.open")));
  } else if (view.kind === "question") {
    const group = markup("fieldset", { class: "choices" }, `<legend>${word("join.your_answer")}</legend>`);
    for (const [choice, name] of asked.choices) {
      const label = markup("label");
      const radio = markup("input", { type: "radio", name: "answer", value: choice });
      radio.checked = choice === view.choice;
      radio.addEventListener("change", () => answer(view.asked, choice));
      label.append(radio, document.createTextNode(` ${name}`));
      group.append(label);
    }
    parts.push(group, markup("p", { class: "caption" }, word("join.open")));
  } else if (view.choice) {
    parts.push(markup("p", {}, word("join.you_chose", { choice: named[view.choice] ?? escape(view.choice) })));
  }
  if (view.kind === "question") {
    parts.push(markup("div", { class: "answer-problem" }));
    parts.at(-1).replaceChildren(...(view.error ? [problem(view.error)] : []));
  }
  if (view.kind === "closed") parts.push(markup("p", { class: "note" }, word("join.closed")));
  if (view.kind !== "revealed") {
    activity.replaceChildren(...parts);
    return title;
  }
  const [ok, reveal] = await call(`reveal?me=${encodeURIComponent(page.me)}`);
  if (!ok) {
    activity.replaceChildren(...parts, problem(reveal.message));
    return title;
  }
  const [described, plot] = figure(reveal, word("describe.show"));
  activity.replaceChildren(...parts, markup("p", { class: `verdict ${reveal.verdict.kind}` },
    escape(reveal.verdict.said)), described, markup("div", { class: "text" }, reveal.explain));
  const own = reveal.verdict.own ? [reveal.verdict.own] : []; // this phone's number, marked on its own plot
  await chart(plot, { ...reveal, figure: { ...reveal.figure, data: [...reveal.figure.data, ...own] } }, plotly);
  return title;
}

// A numeric prediction's field (its unit and bounds in its label) and the button that sends it; the server
// checks the number, and says why it refuses one.
function numberForm(number, view) {
  const form = markup("form", { class: "number" });
  const field = markup("input", { id: "answer-number", type: "number", inputmode: "numeric", step: "1",
    min: String(number.low), max: String(number.high), required: "" });
  field.value = view.choice ?? "";
  form.append(markup("label", { for: "answer-number" }, escape(number.label)), field,
    markup("button", { type: "submit" }, word("join.send")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    answer(view.asked, field.value);
  });
  return form;
}

// The Explorer on the class's view (read-only), or the student's own (``free``). Mounted again in place
// (``here``) on the teacher's next view: it then takes that view (``lead``).
async function explorer(view, here) {
  const state = page.state;
  let place = here ? activity.querySelector(".class-explorer") : null;
  if (!place) {
    place = markup("div", { class: "class-explorer" });
    activity.replaceChildren(...(view.free ? [markup("p", { class: "note" }, word("join.explore_freely"))] : []),
      place);
  }
  const mount = { ...(await file(`explorer-${lang}-${view.free ? "free" : "follow"}.json`)),
    view: state.view, lead: view.free ? null : state.version, phone: data.look === "phone",
    plotly,
    bundle: `${data.files}bundle/${data.look}-${view.scenario}-${lang}/` };
  instantExplorer({ data: new TextEncoder().encode(JSON.stringify(mount)), parentElement: place,
    setStateValue: () => {} });
  return null;
}

const DRAW = { tour, question, closed: question, revealed: question, explorer };
const SAID = { ended: "class.not_seated", joining: "join.joining", paused: "join.look_up" };

// Whether the activity area, showing ``before``, can take ``after`` in place: the same question still open,
// or the Explorer in the same mode (the language unchanged).
function inPlace(before, after) {
  return before?.lang === lang && before.view.kind === after.kind
    && (after.kind === "question" ? before.view.asked === after.asked : after.kind === "explorer"
      && before.view.free === after.free && before.view.scenario === after.scenario);
}

// An open question's seconds left, counted down on the page from the server's ``closes_in`` (the phone's clock
// is never compared with the server's); a screen reader hears it once when 10 s are left, and once the server
// has closed the question by its timer (``time_up``; the page's own zero only waits for it).
function countDown(state, before) {
  clearInterval(countdown);
  const shown = document.querySelector(".countdown");
  shown.hidden = true;
  if (timeUp(before, state)) announced.innerHTML = word("join.time_up");
  if (page.phase !== "following" || state.paused || state.phase !== "open" || state.closes_in == null) return;
  const ends = performance.now() + state.closes_in * 1000;
  const tick = () => {
    const left = Math.max(0, Math.ceil((ends - performance.now()) / 1000));
    shown.innerHTML = word("join.seconds_left", { seconds: left });
    shown.hidden = false;
    if (left <= 10 && warned !== state.asked) {
      warned = state.asked;
      announced.textContent = shown.textContent;
    }
    if (left === 0) clearInterval(countdown);
  };
  tick();
  countdown = setInterval(tick, 250);
}

function render() {
  if (page.state !== timed) {
    countDown(page.state ?? {}, timed);
    timed = page.state;
  }
  const view = showing(page);
  const before = drawn;
  document.querySelector(".reconnect").hidden = page.failures === 0;
  if (before && before.lang === lang && JSON.stringify(before.view) === JSON.stringify(view)
      && view.kind !== "question" && view.kind !== "explorer") return;
  drawn = { view, lang };
  const here = inPlace(before, view);
  drawing = drawing.then(async () => {
    if (drawn.view !== view) return; // another state came meanwhile
    let title = null;
    if (DRAW[view.kind]) {
      title = await DRAW[view.kind](view, here).catch(() => null);
    } else if (view.kind === "refused") {
      activity.replaceChildren(problem(page.error));
    } else if (SAID[view.kind]) {
      activity.replaceChildren(...(view.error ? [problem(view.error)] : []),
        markup("p", { class: "note" }, word(SAID[view.kind])));
      title = view.kind === "ended" || view.kind === "paused" ? activity.textContent : null;
    }
    if (title && isNew(before?.view, view)) announced.textContent = title; // the live region: what is new
  });
}

// ---- the page's language --------------------------------------------------------------------------------

function switchLanguage(event) {
  event.preventDefault();
  lang = event.currentTarget.dataset.lang;
  const other = lang === "en" ? "zh" : "en";
  document.documentElement.lang = data.tags[lang];
  document.title = `${document.createRange().createContextualFragment(word("join.title")).textContent} · BlockStab`;
  document.querySelector("h1").innerHTML = word("join.title");
  document.querySelector(".languages").setAttribute("aria-label", word("join.language"));
  const link = document.querySelector(".languages a");
  Object.assign(link.dataset, { lang: other });
  link.setAttribute("lang", data.tags[other]);
  link.setAttribute("href", `?lang=${other}`);
  link.innerHTML = word(`lang.${other}`);
  const inClass = document.querySelector(".in-class");
  if (inClass) inClass.innerHTML = word("join.in_class", { code: data.code });
  document.querySelector(".reconnect").innerHTML = word("join.reconnecting");
  const url = new URL(location.href);
  url.searchParams.set("lang", lang);
  history.replaceState(null, "", url);
  drawn = null;
  render();
}

function studentPage() {
  document.querySelector(".languages a").addEventListener("click", switchLanguage);
  const reconnect = markup("p", { class: "reconnect note", hidden: "" }, word("join.reconnecting"));
  activity.before(reconnect, markup("p", { class: "countdown", hidden: "" }));
  if (data.code) {
    render();
    join();
  }
}

studentPage();
