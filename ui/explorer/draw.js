// Drawing a view with Plotly.js: the charts kept (going back to a view drawn is a swap), the verdict,
// the notes and the numbers table, and the views a student most likely asks for next, drawn ahead.

import { element, notes, numbersTable, showVerdict } from "./controls.js";
import { applyCut, merge, nextViews, select } from "./select.js";
import { awaitRange, holdRange, loadPlotly } from "./store.js";
const CHARTS_KEPT = 8; // drawn charts kept per place, the most recently shown first

// What Streamlit's chart theme gives a figure that does not say otherwise (st.plotly_chart draws the
// app's other charts with it): the page's font, and axis, legend and hover text at 12 px, axis
// titles at 14 px. The views place names for these sizes (ui/views/labels.py).
export function themed(layout, family) {
  const axis = { tickfont: { size: 12 }, title: { font: { size: 14 }, standoff: 20 }, automargin: true };
  for (const key of Object.keys(layout).filter((k) => /^[xy]axis\d*$/.test(k))) {
    layout[key] = merge(structuredClone(axis), layout[key]);
  }
  layout.legend = merge({ font: { size: 12 } }, layout.legend || {});
  layout.hoverlabel = merge({ font: { size: 12 } }, layout.hoverlabel || {});
  merge(layout, { font: { family }, title: { font: { family } }, hoverlabel: { font: { family } } });
}

// A chart of ``kept`` (charts drawn at this width, the most recently shown first) for ``source`` (a
// figure and its cut): [the one drawn for it, true], else [one to draw into, false]: the least
// recently shown of three kept for this figure (a walk along depth keeps the depth shown and its
// two neighbours), else a new one while fewer than CHARTS_KEPT are kept, else the least recently shown.
// The chart is taken out of ``kept``.
function take(kept, name, source, width) {
  const at = kept.findIndex((k) => source.every((part, i) => part === k.source[i]));
  const sameFigure = kept.flatMap((k, i) => (k.source[0] === source[0] ? [i] : []));
  const reuse = at >= 0 ? at : sameFigure.length >= 3 ? sameFigure.at(-1) : kept.length >= CHARTS_KEPT ? kept.length - 1 : -1;
  const chart = reuse >= 0 ? Object.assign(kept.splice(reuse, 1)[0], { source, width })
    : { source, width, gd: element("div", { class: `instant-plot instant-${name}` }) };
  return [chart, at >= 0];
}

// The chart in ``name``'s place that shows ``source``: going back to a setting or a depth drawn
// before is a swap (returns null); else the chart to draw into. Charts drawn at another width are
// dropped.
function chartFor(mount, name, source) {
  const place = mount.parts.figures[name];
  const width = place.clientWidth;
  const all = mount.kept[name] ?? [];
  for (const stale of all.filter((k) => k.width !== width)) window.Plotly.purge(stale.gd);
  const kept = (mount.kept[name] = all.filter((k) => k.width === width));
  const [chart, drawn] = take(kept, name, source, width);
  kept.unshift(chart);
  if (place.firstChild !== chart.gd) place.replaceChildren(chart.gd);
  return drawn ? null : chart.gd;
}

// What each place shows for ``view``: the depth and readouts figures with their cut, and the block
// view's frame with the cut of the block and stage in focus (null while its range is not held).
function sources(mount, view) {
  const { entry, setting, depthCut, readoutsCut, verdict, headline, blockShown, range, block, blockCut, descriptions } =
    select(mount.index, mount.figures, mount.held, view);
  const of = { depth: [setting.depth, depthCut], readouts: [setting.readouts, readoutsCut],
    block: block ? [setting.block, blockCut] : [null] };
  return { verdict, headline, note: entry.note, blockShown, block, of, range, descriptions };
}

function figureOf(mount, source) {
  const fig = applyCut(...source, mount.index.along_depth);
  themed(fig.layout, mount.font);
  return fig;
}

export async function draw(mount, data) {
  const Plotly = await loadPlotly(data.plotly);
  const view = mount.view;
  const { verdict, headline, note, blockShown, block, of, range, descriptions } = sources(mount, view);
  if (!block) awaitRange(mount, range, () => draw(mount, mount.data));
  const fresh = [];
  for (const [name, source] of Object.entries(of)) {
    const gd = source[0] && chartFor(mount, name, source);
    if (gd) fresh.push([gd, source]);
  }
  showVerdict(mount.parts, verdict, headline);
  announce(mount, data, headline);
  for (const [name, place] of Object.entries(mount.parts.figures)) { // each chart in words: its name, and under it
    place.setAttribute("aria-label", descriptions[name] ?? data.texts.waiting);
    mount.parts.described[name].lastChild.textContent = descriptions[name] ?? data.texts.waiting;
  }
  mount.parts.course.textContent = block && block.course_match ? data.texts.course_match : "";
  notes(mount.parts, data, view, note, blockShown);
  if (block) numbersTable(mount.parts.numbers, block.numbers_title, block.numbers);
  for (const part of [mount.parts.figures.block, mount.parts.numbers]) part.classList.toggle("instant-waiting", !block);
  mount.font ??= getComputedStyle(mount.root).fontFamily; // once: reading a style forces a style pass
  await Promise.all(fresh.map(([gd, source]) => {
    const fig = figureOf(mount, source);
    return Plotly.react(gd, fig.data, fig.layout, data.config);
  }));
  mount.root.dataset.drawn = JSON.stringify(view); // what the browser tests wait for
  mount.root.dataset.drawnWidth = mount.root.clientWidth; // (and, after a resize, for this)
  const ranges = mount.index.block_ranges; // the ranges beside, once built, then the views drawn ahead
  const at = ranges.indexOf(range);
  const generation = mount.generation;
  Promise.all([ranges[at + 1], ranges[at - 1]].filter(Boolean).map((beside) => holdRange(mount, beside)))
    .then(() => data.ahead && requestIdleCallback(() => drawAhead(mount, data, generation)));
}

// After a change, one sentence in the live region for a screen reader: the control and its new value,
// then the verdict's headline (not the whole verdict), once the view has settled for ANNOUNCE_MS (a
// dragged slider is announced once, at its last value).
const ANNOUNCE_MS = 500;

function announce(mount, data, headline) {
  const key = mount.changedKey;
  if (!key) return;
  clearTimeout(mount.announcing);
  mount.announcing = setTimeout(() => {
    const spec = data.controls.find((s) => s.key === key);
    const value = mount.view[key];
    const said = spec.kind === "toggle" ? data.texts[value ? "on" : "off"]
      : spec.kind === "choice" ? spec.options.find(([option]) => option === value)[1] : String(value);
    mount.parts.announced.textContent = data.texts.changed.replace("{control}", spec.label)
      .replace("{value}", said).replace("{headline}", headline);
    mount.changedKey = null;
  }, ANNOUNCE_MS);
}

const SETTLED_MS = 500; // the pause before a view of nextViews that waits for one is drawn ahead

// In idle time after a draw, one chart per idle callback while nothing else happened: the charts of
// nextViews, drawn off the page at their place's width and kept, so that view is a swap.
async function drawAhead(mount, data, generation, settled = false) {
  if (generation !== mount.generation) return;
  for (const [ahead, afterPause] of nextViews(data.controls, mount.view, mount.moved)) {
    const { of } = sources(mount, ahead);
    for (const name of ["depth", "readouts", "block"]) {
      const width = mount.parts.figures[name].clientWidth;
      const kept = mount.kept[name] ?? [];
      const drawn = kept.some((k) => of[name].every((part, i) => part === k.source[i]));
      if (!of[name][0] || kept[0]?.width !== width || drawn) continue;
      if (afterPause && !settled) {
        setTimeout(() => requestIdleCallback(() => drawAhead(mount, data, generation, true)), SETTLED_MS);
        return;
      }
      const [chart] = take(kept, name, of[name], width);
      const offPage = (mount.offPage ??= document.body.appendChild(element("div", { "aria-hidden": "true",
        style: "position: fixed; left: -10000px; top: 0; visibility: hidden" })));
      offPage.style.width = `${width}px`;
      offPage.replaceChildren(chart.gd);
      const fig = figureOf(mount, of[name]);
      await window.Plotly.react(chart.gd, fig.data, fig.layout, data.config);
      chart.gd.remove();
      const now = mount.kept[name]; // (a switch or new data may have replaced the list meanwhile)
      if (now?.[0]?.width === width) now.splice(1, 0, chart); // after the chart shown
      else window.Plotly.purge(chart.gd);
      requestIdleCallback(() => drawAhead(mount, data, generation, settled));
      return;
    }
  }
  mount.root.dataset.ahead = JSON.stringify(mount.view); // the views beside it are drawn (browser tests)
}

// Plotly's SVGs out of the accessibility tree: each chart's place is named by its description, and
// their tick labels would be read beside it. Watched, not set once per draw: Plotly draws new SVGs
// when it draws a chart afresh (a react with another config, a newPlot), and charts drawn ahead move in.
export function hidePlotlySvgs(root) {
  const hide = () => {
    for (const svg of root.querySelectorAll(".main-svg:not([aria-hidden])")) svg.setAttribute("aria-hidden", "true");
  };
  hide();
  const observer = new MutationObserver(hide);
  observer.observe(root, { childList: true, subtree: true });
  return observer;
}

export function forget(mount) { // the charts drawn for another sentence, language or look
  for (const kept of Object.values(mount.kept)) for (const chart of kept) window.Plotly?.purge(chart.gd);
  mount.kept = {};
}
