// Reading a sentence's bundle (ui/bundle.py): its index, its figures and the block ranges around the
// one in focus, each a one-line script (blockstabPart) so the same files load from the app and from
// file://; and Plotly.js, from where the data says.

import { rangeOf } from "./select.js";

const SCHEMA = 2; // the bundle format this reads (ui/bundle.py SCHEMA)

const HELD = 3; // block range parts held (megabytes each, unpacked), the nearest to the block in focus first

const INDEX_MS = 500; // the bundle's index is read again after this long while a range is awaited

let plotlyLoaded;

export function loadPlotly(src) {
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
window.blockstabPart = (script, packed) => { script.packed = packed; };

export function loadPart(url) {
  return new Promise((resolve) => {
    const script = document.createElement("script");
    script.src = url;
    script.onload = () => { script.remove(); resolve(script.packed ? unpack(script.packed) : null); };
    script.onerror = () => { script.remove(); resolve(null); };
    document.head.appendChild(script);
  });
}

export async function unpack(packed) {
  const text = atob(packed);
  const bytes = new Uint8Array(text.length); // (a plain loop: Uint8Array.from with a mapper is many times slower)
  for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

// The bundle's index, read afresh (it lists the parts built so far).
export async function readIndex(mount) {
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
export async function holdRange(mount, range) {
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
  const at = (name) => ranges.findIndex((r) => r.part === name);
  const focus = ranges.indexOf(rangeOf(mount.index, mount.view)[1]);
  mount.held.set(range.part, part);
  const nearest = [...mount.held.keys()].sort((a, b) => Math.abs(at(a) - focus) - Math.abs(at(b) - focus));
  for (const name of nearest.slice(HELD)) mount.held.delete(name);
  showHeld(mount);
  return mount.held.has(range.part);
}

// Wait for the block range in focus, not held: read the index every INDEX_MS while the view stays
// (a report-back has the server build a range not built yet), for at most a minute; then ``held()``.
export function awaitRange(mount, range, held) {
  const generation = mount.generation;
  if (mount.awaiting === generation) return;
  mount.awaiting = generation;
  const deadline = performance.now() + 60_000;
  const poll = async () => {
    const isHeld = await holdRange(mount, range);
    if (generation !== mount.generation) return;
    if (isHeld) held();
    else if (performance.now() < deadline) setTimeout(poll, INDEX_MS);
  };
  poll();
}

export function showHeld(mount) { // the block ranges held, and the bundle they are from (browser tests, benchmarks)
  mount.root.dataset.parts = JSON.stringify([...mount.held.keys()]);
  mount.root.dataset.bundle = mount.data.bundle;
}
