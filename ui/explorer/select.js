// Looking a view up in a sentence's bundle (ui/bundle.py), the views likely asked for next, and applying
// a cut: pure functions.

export function merge(target, update) {
  for (const [key, value] of Object.entries(update)) {
    const both = [value, target[key]].every((v) => v && typeof v === "object" && !Array.isArray(v));
    if (both) merge(target[key], value);
    else target[key] = value;
  }
  return target;
}

// A figure with a cut applied (ui/views/cut.py): the index names the arrays a cut shortens.
export function applyCut(figure, cut, alongDepth) {
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

// The index's entry for the view's switches (each combination is listed): its figures' and blocks' keys.
export function settingOf(index, view) {
  return index.settings.find((s) => Object.entries(s.when).every(([key, value]) => view[key] === value));
}

// The block the block view shows (bounded as the index says: a stack shallower than the block in focus shows
// its last) and the index's block range that holds it.
export function rangeOf(index, view) {
  const blockShown = Math.min(view.block, view[index.at_most.block]);
  return [blockShown, index.block_ranges.find((r) => r.first <= blockShown && blockShown <= r.last)];
}

// What ``view`` shows, from the index, the figures part and the block range parts held (by name): the
// reference is tests/support/bundle_reference.py selected. The block is null while its range is not held.
export function select(index, figures, held, view) {
  const entry = settingOf(index, view);
  const setting = figures[entry.figures];
  const [blockShown, range] = rangeOf(index, view);
  const part = held.get(range.part);
  const block = part ? part.settings[entry.blocks][blockShown - range.first] : null;
  const [depthCut, readoutsCut] = setting.cuts[view.depth - 1];
  const [depth, readouts] = setting.descriptions[view.depth - 1];
  return { entry, setting, depthCut, readoutsCut, verdict: setting.verdicts[view.depth - 1],
           headline: setting.headlines[view.depth - 1], blockShown, range, block,
           blockCut: block ? block.stages[view.focus] : null,
           descriptions: { depth, readouts, block: block ? block.descriptions[view.focus] : null } };
}

// The views a student most likely asks for next, each with whether it waits for a pause (draw.js): the
// slider last moved, one more of its step on either side, the way it moved first (a key moves it 1, or
// PAGE with PageUp/PageDown; a farther jump counts as 1); the depths on either side; after a pause, not
// during a walk, the residual switch flipped (the classroom's first question).
const PAGE = 10;

export function nextViews(controls, view, [moved, by]) {
  const spec = (key) => controls.find((s) => s.key === key);
  const step = Math.abs(by) <= PAGE ? by : Math.sign(by);
  const beside = (key, d) => [view[key] + d, view[key] - d]
    .filter((n) => spec(key) && n >= spec(key).low && n <= spec(key).high).map((n) => [{ ...view, [key]: n }, false]);
  const next = [...beside(moved, step), ...(moved === "depth" ? [] : beside("depth", 1))];
  if (spec("residual")) next.push([{ ...view, residual: !view.residual }, true]);
  return next;
}
