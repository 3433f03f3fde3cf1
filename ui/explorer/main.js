// The instant Explorer in the browser: mounted by the app's component (ui/instant_explorer.py) or by the
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

export default function instantExplorer({ data: bytes, parentElement, setStateValue }) {
  const data = parsed(bytes);
  let mount = mounts.get(parentElement);
  if (!mount) {
    const root = element("div", { class: "instant-explorer" });
    parentElement.append(root);
    mount = { root, view: { ...data.view }, kept: {}, moved: ["depth", 1], generation: 0, held: new Map(),
              loading: new Map() };
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
