// The instant Explorer in the browser. It owns: the Explorer's stabiliser switches and depth
// (native, labelled inputs), looking the view up in the sentence's bundle (ui/bundle.py: an index,
// the figures part, a part per block range, each a one-line script loaded from the app or from the
// take-home folder alike), slicing a cut where the index says, drawing with the app's own copy of
// Plotly.js, keeping the last figures it drew (going back to one is a swap, not a redraw), drawing
// ahead in idle time (the next depths and, after a pause, the residual switch flipped), and reporting
// the view back so the server can keep the URL (and build a block range not built yet). It computes
// no science: every number and sentence it shows was computed in Python.

const SCHEMA = 1; // the bundle format this reads (ui/bundle.py SCHEMA)
const KEPT = 8; // drawn charts kept per place, the most recently shown first
const HELD = 3; // block range parts held (megabytes each, unpacked), the nearest to the block in focus first
const INDEX_MS = 500; // the bundle's index is read again after this long while a range is awaited
const mounts = new WeakMap(); // parentElement -> this mount's state

let plotlyLoaded;
function loadPlotly(src) {
  plotlyLoaded ??= new Promise((resolve, reject) => {
    if (window.Plotly) return resolve(window.Plotly);
    const script = document.createElement("script");
    script.src = src;
    script.onload = () => resolve(window.Plotly);
    script.onerror = () => reject(new Error("Plotly.js did not load"));
    document.head.appendChild(script);
  });
  return plotlyLoaded;
}

// A bundle's file is one line, blockstabPart(document.currentScript, "<packed>"): a script, so it
// loads from file:// too. Resolves with its value, or null when the file is not there.
window.blockstabPart = (script, packed) => { script.dataset.loaded = "1"; script.packed = packed; };
function loadPart(url) {
  return new Promise((resolve) => {
    const script = document.createElement("script");
    script.src = url;
    script.onload = () => { script.remove(); resolve(script.packed ? unpack(script.packed) : null); };
    script.onerror = () => { script.remove(); resolve(null); };
    document.head.appendChild(script);
  });
}

async function unpack(packed) {
  const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function merge(target, update) {
  for (const [key, value] of Object.entries(update)) {
    const both = [value, target[key]].every((v) => v && typeof v === "object" && !Array.isArray(v));
    if (both) merge(target[key], value);
    else target[key] = value;
  }
  return target;
}

// A figure with a cut applied (ui/views/cut.py): the index names the arrays a cut shortens.
function applyCut(figure, cut, alongDepth) {
  const fig = structuredClone(figure);
  const keep = (values) => (Array.isArray(values) && values.length > cut.points ? values.slice(0, cut.points) : values);
  for (const index of cut.along ?? []) {
    const trace = fig.data[index];
    for (const key of alongDepth) if (key in trace) trace[key] = keep(trace[key]);
    if (trace.marker) trace.marker.color = keep(trace.marker.color);
  }
  for (const [index, update] of Object.entries(cut.data ?? {})) merge(fig.data[Number(index)], update);
  fig.data.push(...(cut.traces ?? []));
  merge(fig.layout, cut.layout);
  fig.layout.annotations = [...(fig.layout.annotations || []), ...cut.notes];
  return fig;
}

// What Streamlit's chart theme gives a figure that does not say otherwise (st.plotly_chart draws the
// app's other charts with it): the page's font, and axis, legend and hover text at 12 px, axis
// titles at 14 px. The views place names for these sizes (ui/views/labels.py).
function themed(layout, family) {
  const axis = { tickfont: { size: 12 }, title: { font: { size: 14 }, standoff: 20 }, automargin: true };
  for (const key of Object.keys(layout).filter((k) => /^[xy]axis\d*$/.test(k))) {
    layout[key] = merge(structuredClone(axis), layout[key]);
  }
  layout.legend = merge({ font: { size: 12 } }, layout.legend || {});
  layout.hoverlabel = merge({ font: { size: 12 } }, layout.hoverlabel || {});
  merge(layout, { font: { family }, title: { font: { family } }, hoverlabel: { font: { family } } });
}

// The index's entry for the view's switches (each combination is listed): its figures' and blocks' keys.
function settingOf(index, view) {
  return index.settings.find((s) => Object.entries(s.when).every(([key, value]) => view[key] === value));
}

function element(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  node.textContent = text; // text, never HTML: names come from the scenario editor
  return node;
}

function control(spec, view, changed, compact) {
  const id = `instant-${spec.key}`;
  if (spec.kind === "toggle") {
    const label = element("label", { class: "instant-toggle", for: id });
    const input = element("input", { id, type: "checkbox", role: "switch", "data-key": spec.key });
    input.checked = view[spec.key];
    input.addEventListener("change", () => changed(spec.key, input.checked, true));
    label.append(input, element("span", {}, spec.label));
    return label;
  }
  if (spec.kind === "choice" && compact) { // one line high, as in projector mode's row
    const label = element("label", { class: "instant-select", for: id });
    const select = element("select", { id, "data-key": spec.key });
    for (const [value, text] of spec.options) select.append(element("option", { value }, text));
    select.value = view[spec.key];
    select.addEventListener("change", () => changed(spec.key, select.value, true));
    label.append(element("span", {}, spec.label), select);
    return label;
  }
  if (spec.kind === "choice") {
    const group = element("fieldset", { class: "instant-choice", "data-key": spec.key });
    group.append(element("legend", {}, spec.label));
    for (const [value, text] of spec.options) {
      const label = element("label");
      const input = element("input", { type: "radio", name: id, value });
      input.checked = view[spec.key] === value;
      input.addEventListener("change", () => input.checked && changed(spec.key, value, true));
      label.append(input, element("span", {}, text));
      group.append(label);
    }
    return group;
  }
  const label = element("label", { class: "instant-range", for: id });
  const input = element("input", { id, type: "range", min: spec.low, max: spec.high, step: 1, "data-key": spec.key,
                                    "aria-label": spec.label });
  const shown = element("output", { for: id }, String(view[spec.key]));
  input.value = view[spec.key];
  input.addEventListener("input", () => {
    shown.textContent = input.value;
    changed(spec.key, Number(input.value), false);
  });
  input.addEventListener("change", () => changed(spec.key, Number(input.value), true)); // released: report
  label.append(element("span", {}, spec.label), input, shown);
  return label;
}

function build(root, data, mount) {
  root.replaceChildren();
  // The stack's controls above everything; the block's and stage's under the block view they pick.
  const controls = element("div", { class: "instant-controls", role: "group", "aria-label": data.texts.controls });
  const blockControls = element("div", { class: "instant-controls instant-block-controls", role: "group",
                                         "aria-label": data.texts.block_controls });
  for (const spec of data.controls) {
    (spec.under_block ? blockControls : controls).append(control(spec, mount.view, mount.changed, data.projector));
  }
  const figures = {}; // each place holds one drawn chart at a time (mount.kept has the others)
  for (const name of ["block", "depth", "readouts"]) figures[name] = element("div", { class: `instant-place-${name}` });
  const pair = element("div", { class: "instant-pair" });
  const course = element("p", { class: "instant-course", role: "status" });
  const left = element("div");
  left.append(figures.block, ...(blockControls.childElementCount ? [blockControls] : []), course);
  pair.append(left, figures.depth);
  const numbers = element("section", { class: "instant-numbers" });
  mount.parts = { verdict: element("p", { class: "instant-verdict", role: "status", "aria-live": "polite" }),
                  notes: element("div", { class: "instant-notes" }), course, figures, numbers };
  root.append(controls, mount.parts.verdict, mount.parts.notes, pair, figures.readouts, numbers);
}

// The block's numbers (ui/views/tables.py stage_rows, sent with its block view) as a table: every
// cell is text.
function numbersTable(part, title, numbers) {
  if (part.shows === numbers) return;
  const head = element("tr");
  for (const column of numbers.columns) head.append(element("th", { scope: "col" }, column));
  const body = element("tbody");
  for (const cells of numbers.rows) {
    const row = element("tr");
    cells.forEach((cell, i) => row.append(i ? element("td", {}, cell) : element("th", { scope: "row" }, cell)));
    body.append(row);
  }
  const [table, thead] = [element("table"), element("thead")];
  thead.append(head);
  table.append(thead, body);
  part.replaceChildren(element("h3", {}, title), table);
  part.shows = numbers;
}

// What the verdict's box ends with and the notes under it: LayerNorm's 2-D warning and its link (in
// projector mode, with no room for them, its short caveat ends the verdict's box, so the figures stay
// on the screen), RMSNorm's note, and the block shown when the stack is shallower than the one in focus.
function notes(parts, data, view) {
  const texts = data.texts;
  const lines = [];
  const layernorm = view.norm && view.norm_kind === "layernorm";
  if (layernorm && data.projector) {
    parts.verdict.append(" ", element("span", { class: "instant-caveat" }, texts.layernorm_2d));
  } else if (layernorm) {
    lines.push(element("p", { class: "instant-warning", role: "note" }, texts.layernorm_2d));
    if (texts.why_href) { // the geometry page (in the app only)
      const link = element("p", { class: "instant-note" });
      link.append(element("a", { href: texts.why_href, target: "_self" }, texts.why_link));
      lines.push(link);
    }
  } else if (view.norm && !data.projector) {
    lines.push(element("p", { class: "instant-note" }, texts.rmsnorm_note));
  }
  if (view.block > view.depth) {
    lines.push(element("p", { class: "instant-note" }, texts.block_clamped[view.depth - 1]));
  }
  parts.notes.replaceChildren(...lines);
}

// A chart of ``kept`` (charts drawn at this width, the most recently shown first) for ``source`` (a
// figure and its cut): [the one drawn for it, true], else [one to draw into, false]: the least
// recently shown of three kept for this figure (a walk along depth keeps the depth shown and its
// two neighbours), else a new one while fewer than KEPT are kept, else the least recently shown.
// The chart is taken out of ``kept``.
function take(kept, name, source, width) {
  const at = kept.findIndex((k) => source.every((part, i) => part === k.source[i]));
  const sameFigure = kept.flatMap((k, i) => (k.source[0] === source[0] ? [i] : []));
  const reuse = at >= 0 ? at : sameFigure.length >= 3 ? sameFigure.at(-1) : kept.length >= KEPT ? kept.length - 1 : -1;
  const chart = reuse >= 0 ? Object.assign(kept.splice(reuse, 1)[0], { source, width })
    : { source, width, gd: element("div", { class: `instant-plot instant-${name}` }) };
  return [chart, at >= 0];
}

// The chart in ``name``'s place that shows ``source``: going back to a setting or a depth drawn
// before is a swap (returns null); else the chart to draw into. Charts drawn at another width are
// dropped.
function shown(mount, name, source) {
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
  const index = mount.index;
  const entry = settingOf(index, view);
  const setting = mount.figures[entry.figures];
  const [depthCut, readoutsCut] = setting.cuts[view.depth - 1];
  const shown = Math.min(view.block, view.depth); // a stack shallower than the block in focus shows its last
  const range = index.block_ranges.find((r) => r.first <= shown && shown <= r.last);
  const part = mount.held.get(range.part);
  const block = part ? part.settings[entry.blocks][shown - range.first] : null;
  const of = { depth: [setting.depth, depthCut], readouts: [setting.readouts, readoutsCut],
    block: block ? [setting.block, block.stages[view.focus]] : [null] };
  return { setting, block, of, range };
}

// The bundle's index, read afresh (it lists the parts built so far).
async function readIndex(mount) {
  const bundle = mount.data.bundle;
  const index = await loadPart(`${bundle}index.js?read=${Date.now()}`);
  if (index && index.schema !== SCHEMA) throw new Error(`bundle schema ${index.schema}, not ${SCHEMA}`);
  if (index && bundle === mount.data.bundle) mount.index = index;
  return index;
}

// The bundle's index, read again if it was read more than INDEX_MS ago (reads in flight are shared).
function recentIndex(mount) {
  if (!(performance.now() - mount.indexAt < INDEX_MS)) {
    mount.indexAt = performance.now();
    mount.indexRead = readIndex(mount);
  }
  return mount.indexRead;
}

// Hold the block range ``range`` of this bundle if the index lists it as built. Whether it is held.
async function holdRange(mount, range) {
  if (mount.held.has(range.part)) return true;
  if (!mount.index.built.includes(range.part)) await recentIndex(mount);
  if (!mount.index.built.includes(range.part)) return false;
  const url = `${mount.data.bundle}${range.part}.js`;
  if (!mount.loading.has(url)) {
    mount.loading.set(url, loadPart(url).finally(() => mount.loading.delete(url)));
  }
  const part = await mount.loading.get(url);
  if (!part || !url.startsWith(mount.data.bundle)) return false; // gone, or another sentence meanwhile
  const ranges = mount.index.block_ranges; // keep the range in focus and those nearest it
  const shown = Math.min(mount.view.block, mount.view.depth);
  const at = (name) => ranges.findIndex((r) => r.part === name);
  const focus = ranges.findIndex((r) => r.first <= shown && shown <= r.last);
  mount.held.set(range.part, part);
  const nearest = [...mount.held.keys()].sort((a, b) => Math.abs(at(a) - focus) - Math.abs(at(b) - focus));
  for (const name of nearest.slice(HELD)) mount.held.delete(name);
  showHeld(mount);
  return mount.held.has(range.part);
}

// Wait for the block range in focus, not held: read the index every INDEX_MS while the view stays
// (a report-back has the server build a range not built yet), for at most a minute; then draw.
function awaitRange(mount, range) {
  const generation = mount.generation;
  if (mount.awaiting === generation) return;
  mount.awaiting = generation;
  const deadline = performance.now() + 60_000;
  const poll = async () => {
    const held = await holdRange(mount, range);
    if (generation !== mount.generation) return;
    if (held) draw(mount, mount.data);
    else if (performance.now() < deadline) setTimeout(poll, INDEX_MS);
  };
  poll();
}

function showHeld(mount) { // the block ranges held, and the bundle they are from (browser tests, benchmarks)
  mount.root.dataset.parts = JSON.stringify([...mount.held.keys()]);
  mount.root.dataset.bundle = mount.data.bundle;
}

function figureOf(mount, source) {
  const fig = applyCut(...source, mount.index.along_depth);
  themed(fig.layout, mount.font);
  return fig;
}

async function draw(mount, data) {
  const Plotly = await loadPlotly(data.plotly);
  const view = mount.view;
  const { setting, block, of, range } = sources(mount, view);
  if (!block) awaitRange(mount, range);
  const fresh = [];
  for (const [name, source] of Object.entries(of)) {
    const gd = source[0] && shown(mount, name, source);
    if (gd) fresh.push([gd, name, source]);
  }
  mount.parts.verdict.textContent = setting.verdicts[view.depth - 1];
  mount.parts.course.textContent = block && block.course_match ? data.texts.course_match : "";
  notes(mount.parts, data, view);
  if (block) numbersTable(mount.parts.numbers, block.numbers_title, block.numbers);
  for (const part of [mount.parts.figures.block, mount.parts.numbers]) part.classList.toggle("instant-waiting", !block);
  mount.font ??= getComputedStyle(mount.root).fontFamily; // once: reading a style forces a style pass
  await Promise.all(fresh.map(([gd, name, source]) => {
    const fig = figureOf(mount, source);
    return Plotly.react(gd, fig.data, fig.layout, data.config);
  }));
  mount.root.dataset.drawn = JSON.stringify(view); // what the browser tests wait for
  mount.root.dataset.drawnWidth = mount.root.clientWidth; // (and, after a resize, for this)
  const ranges = mount.index.block_ranges; // the ranges beside, once built
  const at = ranges.indexOf(range);
  for (const beside of [ranges[at + 1], ranges[at - 1]]) if (beside) holdRange(mount, beside);
  const generation = mount.generation;
  requestIdleCallback(() => drawAhead(mount, data, generation));
}

// In idle time after a draw, one chart per idle callback while nothing else happened: the charts of
// the views a student most likely asks for next, drawn off the page at their place's width and
// kept, so that view is a swap: one depth on either side (the way the depth last moved first), then,
// once nothing has happened for SETTLED_MS (a pause, not a walk along depth), the residual switch
// flipped (the classroom's first question).
const SETTLED_MS = 500;
async function drawAhead(mount, data, generation, settled = false) {
  if (generation !== mount.generation) return;
  const view = mount.view;
  const has = (key) => data.controls.find((spec) => spec.key === key);
  const depth = has("depth");
  const next = [view.depth + mount.step, view.depth - mount.step]
    .filter((n) => depth && n >= depth.low && n <= depth.high).map((n) => [{ ...view, depth: n }, false]);
  if (has("residual")) next.push([{ ...view, residual: !view.residual }, true]);
  for (const [ahead, afterPause] of next) {
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
  mount.root.dataset.ahead = JSON.stringify(view); // the views beside it are drawn (browser tests)
}

function forget(mount) { // the charts drawn for another sentence, language or look
  for (const kept of Object.values(mount.kept)) for (const chart of kept) window.Plotly?.purge(chart.gd);
  mount.kept = {};
}

const decoder = new TextDecoder();
let last = { text: null, value: null }; // the data last parsed
function parsed(bytes) { // the server sends the data as JSON in UTF-8 bytes, encoded once
  const text = decoder.decode(bytes);
  if (text !== last.text) last = { text, value: JSON.parse(text) };
  return last.value;
}

export default function instantExplorer({ data: bytes, parentElement, setStateValue }) {
  const data = parsed(bytes);
  let mount = mounts.get(parentElement);
  if (!mount) {
    const root = element("div", { class: "instant-explorer" });
    parentElement.append(root);
    mount = { root, view: { ...data.view }, kept: {}, step: 1, generation: 0, held: new Map(), loading: new Map() };
    mount.changed = (key, value, report) => {
      if (mount.view[key] !== value) {
        if (key === "depth") mount.step = Math.sign(value - mount.view.depth);
        mount.generation += 1;
        mount.view = { ...mount.view, [key]: value };
        if (mount.figures) draw(mount, mount.data);
      }
      if (report) setStateValue("view", mount.view);
    };
    mount.resized = new ResizeObserver(() => { // a window resized: draw afresh, as a first visit at that width
      if (mount.figures && String(mount.root.clientWidth) !== mount.root.dataset.drawnWidth) {
        mount.generation += 1;
        draw(mount, mount.data);
      }
    });
    mount.resized.observe(root);
    mounts.set(parentElement, mount);
  }
  const before = mount.data;
  mount.data = data;
  const unmount = () => { mounts.delete(parentElement); mount.offPage?.remove(); mount.resized?.disconnect(); };
  if (before === data) return unmount; // a report-back rerun: nothing new to show
  mount.root.classList.toggle("instant-projector", data.projector);
  if (!before || before.controls_for !== data.controls_for) {
    build(mount.root, data, mount);
    forget(mount);
  }
  if (before?.bundle !== data.bundle) { // another sentence, language or look
    (async () => {
      const index = await readIndex(mount);
      const figures = index && (await loadPart(`${data.bundle}${index.figures}.js`));
      if (!figures || mount.data !== data) return;
      [mount.figures, mount.held] = [figures, new Map()];
      forget(mount);
      const { range } = sources(mount, mount.view);
      await holdRange(mount, range);
      showHeld(mount);
      await draw(mount, data);
    })();
  } else if (mount.figures) {
    draw(mount, data);
  }
  return unmount;
}
