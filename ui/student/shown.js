// What a student's pages draw alike (a live class's, page.js; the lesson's for one person, study.js): elements
// made from the server's HTML or from escaped text, the page's files (fetched once), and a file's figure with
// its chart in words.

import { hidePlotlySvgs, themed } from "../explorer/draw.js";
import { loadPlotly } from "../explorer/store.js";

const fetched = new Map(); // a file's URL -> its JSON (a promise)

export const escape = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function markup(tag, attributes = {}, html = "") { // (its HTML: the server's, or escaped here)
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value);
  made.innerHTML = html;
  return made;
}

export function jsonFile(url) {
  if (!fetched.has(url)) {
    fetched.set(url, fetch(url).then((r) => (r.ok ? r.json() : Promise.reject(new Error(url)))));
    fetched.get(url).catch(() => fetched.delete(url)); // a file that failed (fetched ahead, say) is asked for again
  }
  return fetched.get(url);
}

// Resolves once the browser has painted what the page placed (at once in a hidden tab, which paints nothing): words
// placed before a chart is drawn are seen before Plotly.js takes the main thread.
export const painted = () => new Promise((done) => (document.hidden ? done()
  : requestAnimationFrame(() => setTimeout(done))));

// ``source``'s chart (a file's figure and config) drawn in ``place`` with Plotly.js from ``plotly``, then marked
// ``data-drawn`` (what a test or a benchmark waits for).
export async function chart(place, source, plotly) {
  const Plotly = await loadPlotly(plotly);
  const layout = source.figure.layout;
  themed(layout, getComputedStyle(document.body).fontFamily);
  await Plotly.react(place, source.figure.data, layout, source.config);
  place.dataset.drawn = "";
}

// A figure named by ``source``'s description, which unfolds under it (``summary``: the disclosure's words, HTML):
// [the figure, the place of its chart].
export function figure(source, summary) {
  const described = markup("figure", { "aria-label": source.description });
  const plot = markup("div", { class: "plot" });
  const words = markup("details", {}, `<summary>${summary}</summary>`);
  words.append(markup("p", {}, escape(source.description)));
  described.append(plot, words);
  hidePlotlySvgs(described);
  return [described, plot];
}
