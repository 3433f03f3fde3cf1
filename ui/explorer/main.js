// The instant Explorer in the browser: mounted by the app's component (widgets/explorer.py) or by the
// take-home page (ui/take_home.py) with the data of ui/instant.py. It looks each view up in the
// sentence's bundle and draws it; it computes no science: every number and sentence it shows was
// computed in Python. It reports the view back so the app can keep the URL.

import { build, element } from "./controls.js";
import { draw, forget, hidePlotlySvgs } from "./draw.js";
import { holdRange, loadPart, readIndex, showHeld } from "./store.js";
import { rangeOf } from "./select.js";

const mounts = new WeakMap(); // parentElement -> this mount's state

const decoder = new TextDecoder();

let last = { text: null, value: null }; // the data last parsed

function parsed(bytes) { // the server sends the data as JSON in UTF-8 bytes, encoded once
  const text = decoder.decode(bytes);
  if (text !== last.text) last = { text, value: JSON.parse(text) };
  return last.value;
}

// A mounted Explorer: one record, every field named here (it is sealed: a module cannot add one of its own).
// The view it shows is its own (``view``): the app only reads what it reports, and a class's teacher leads it.
function newMount(root, view) {
  return Object.seal({
    root, // the element it draws in
    view, // the view it shows: its controls' values
    data: null, // what it was mounted with (ui/instant.py mount_data)
    index: null, indexAt: 0, indexRead: null, // the bundle's index, when last read, the read in flight (store.js)
    figures: null, // the bundle's figures part
    held: new Map(), loading: new Map(), // block range parts held, and those being read (store.js)
    awaiting: null, // the generation a block range is awaited for (store.js)
    parts: null, // its places on the page: controls, verdict, figures, notes, numbers (controls.js)
    kept: {}, // charts drawn, per place (draw.js)
    offPage: null, // where charts are drawn ahead (draw.js)
    font: null, // the page's font, read once (draw.js)
    moved: ["depth", 1], // the slider last moved and by how much (draw.js: what it draws ahead)
    changedKey: null, announcing: null, // the control last changed, and its announcement's timer (draw.js)
    generation: 0, // each change or resize: a draw for an older one stops
    changed: null, resized: null, svgsHidden: null, // its handler of a change, and its observers
  });
}

export default function instantExplorer({ data: bytes, parentElement, setStateValue }) {
  const data = parsed(bytes);
  let mount = mounts.get(parentElement);
  if (!mount) {
    const root = element("div", { class: "instant-explorer" });
    parentElement.append(root);
    mount = newMount(root, { ...data.view });
    mount.changed = (key, value, report) => {
      if (mount.view[key] !== value) {
        if (typeof value === "number") mount.moved = [key, value - mount.view[key]]; // (draw.js: drawn ahead)
        mount.changedKey = key; // (announced once drawn: draw.js)
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
    mount.svgsHidden = hidePlotlySvgs(root);
    mounts.set(parentElement, mount);
  }
  const before = mount.data;
  mount.data = data;
  const unmount = () => {
    mounts.delete(parentElement);
    mount.offPage?.remove();
    mount.resized?.disconnect();
    mount.svgsHidden?.disconnect();
  };
  if (before === data) return unmount; // a report-back rerun: nothing new to show
  mount.root.classList.toggle("instant-projector", data.projector);
  mount.root.classList.toggle("instant-desktop", !data.projector && !data.phone);
  if (!before || before.controls_for !== data.controls_for) {
    build(mount.root, data, mount);
    forget(mount);
  }
  if (before && data.lead !== null && data.lead !== before.lead) { // the server leads the view (a live class)
    mount.view = { ...data.view };
    mount.generation += 1;
  }
  if (before?.bundle !== data.bundle) { // another sentence, language or look
    (async () => {
      const index = await readIndex(mount);
      const figures = index && (await loadPart(`${data.bundle}${index.figures}.js`));
      if (!figures || mount.data !== data) return;
      [mount.figures, mount.held] = [figures, new Map()];
      forget(mount);
      await holdRange(mount, rangeOf(index, mount.view)[1]);
      showHeld(mount);
      await draw(mount, data);
    })();
  } else if (mount.figures) {
    draw(mount, data);
  }
  return unmount;
}
