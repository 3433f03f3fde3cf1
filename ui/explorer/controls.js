// The instant Explorer's page: its controls (native, labelled inputs that work by keyboard), the places
// its charts go, the verdict, the notes under it and the numbers table. Every text is text, never HTML.

export function element(tag, attributes = {}, text = "") {
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
    for (const [value, text, lang] of spec.options) select.append(element("option", { value, ...(lang && { lang }) }, text));
    select.value = view[spec.key];
    select.addEventListener("change", () => changed(spec.key, select.value, true));
    label.append(element("span", {}, spec.label), select);
    return label;
  }
  if (spec.kind === "choice") {
    const group = element("fieldset", { class: "instant-choice", "data-key": spec.key });
    group.append(element("legend", {}, spec.label));
    for (const [value, text, lang] of spec.options) { // (lang: an English name on a Chinese page, for the voice)
      const label = element("label");
      const input = element("input", { type: "radio", name: id, value });
      input.checked = view[spec.key] === value;
      input.addEventListener("change", () => input.checked && changed(spec.key, value, true));
      label.append(input, element("span", lang ? { lang } : {}, text));
      group.append(label);
    }
    return group;
  }
  const label = element("label", { class: "instant-range", for: id });
  const input = element("input", { id, type: "range", min: spec.low, max: spec.high, step: 1, "data-key": spec.key,
                                    "aria-label": spec.label });
  // (seen, not heard: the slider says its own value, and an output is a live region that would speak at each step)
  const value = element("output", { for: id, "aria-hidden": "true" }, String(view[spec.key]));
  input.value = view[spec.key];
  input.addEventListener("input", () => {
    value.textContent = input.value;
    changed(spec.key, Number(input.value), false);
  });
  input.addEventListener("change", () => changed(spec.key, Number(input.value), true)); // released: report
  label.append(element("span", {}, spec.label), input, value);
  return label;
}

export function build(root, data, mount) {
  root.replaceChildren();
  // The stack's controls above everything; the block's and stage's under the block view they pick.
  const controls = element("div", { class: "instant-controls", role: "group", "aria-label": data.texts.controls });
  const blockControls = element("div", { class: "instant-controls instant-block-controls", role: "group",
                                         "aria-label": data.texts.block_controls });
  for (const spec of data.controls) {
    (spec.under_block ? blockControls : controls).append(control(spec, mount.view, mount.changed, data.projector));
  }
  // Each place holds one drawn chart at a time (mount.kept has the others); under it, the chart in words.
  const [figures, described] = [{}, {}];
  for (const name of ["block", "depth", "readouts"]) {
    figures[name] = element("div", { class: `instant-place-${name}`, role: "figure" });
    described[name] = element("details", { class: "instant-describe" });
    described[name].append(element("summary", {}, data.texts.describe), element("p"));
  }
  const pair = element("div", { class: "instant-pair", id: "instant-figures", tabindex: "-1" });
  const skip = element("a", { class: "instant-skip", href: "#instant-figures" }, data.texts.skip);
  skip.addEventListener("click", (event) => { event.preventDefault(); pair.focus(); }); // (the URL keeps no #)
  const course = element("p", { class: "instant-course", role: "status" });
  const [left, right] = [element("div"), element("div")];
  left.append(figures.block, described.block, ...(blockControls.childElementCount ? [blockControls] : []), course);
  right.append(figures.depth, described.depth);
  pair.append(left, right);
  const numbers = element("section", { class: "instant-numbers" });
  const desktop = !data.projector && !data.phone;
  const [verdict, more] = verdictBox(data.texts, desktop);
  const notes = element("div", { class: "instant-notes" });
  mount.parts = { verdict, more, notes, course, figures, described, numbers,
                  announced: element("p", { class: "instant-announced", role: "status" }) }; // (draw.js announce)
  // On a desktop the notes go under the figures, so that a laptop's first screen holds both planes.
  root.append(skip, controls, verdict, ...(desktop ? [pair, notes] : [notes, pair]), figures.readouts,
              described.readouts, numbers, mount.parts.announced);
}

// The verdict's box and its disclosure: on a desktop the headline, the rest of the verdict behind a
// disclosure (so that both planes fit a laptop's first screen); in projector mode and on a phone the
// whole verdict, and no disclosure.
function verdictBox(texts, desktop) {
  if (!desktop) return [element("p", { class: "instant-verdict" }), null];
  const more = element("details", { class: "instant-more" });
  more.append(element("summary", {}, texts.verdict_more), element("p"));
  const box = element("div", { class: "instant-verdict" });
  box.append(element("p", { class: "instant-headline" }), " ", more);
  return [box, more];
}

// The verdict in its box: the whole, or the headline with the rest in the disclosure (hidden when the
// headline is all of it). The bundle's verdict begins with its headline (ui/bundle.py, tested).
export function showVerdict(parts, verdict, headline) {
  if (!parts.more) {
    parts.verdict.textContent = verdict;
    return;
  }
  const rest = verdict.slice(headline.length).trim();
  parts.verdict.firstChild.textContent = headline;
  parts.more.lastChild.textContent = rest;
  parts.more.hidden = !rest;
}

// The block's numbers (ui/views/tables.py stage_rows, sent with its block view) as a table: every
// cell is text.
export function numbersTable(part, title, numbers) {
  if (part.shows === numbers) return;
  const head = element("tr");
  for (const column of numbers.columns) head.append(element("th", { scope: "col" }, column));
  const body = element("tbody");
  for (const cells of numbers.rows) {
    const row = element("tr");
    cells.forEach((cell, i) => row.append(i ? element("td", {}, cell) : element("th", { scope: "row" }, cell)));
    body.append(row);
  }
  // (it scrolls sideways on a narrow screen: focusable, so a keyboard can scroll it)
  const [table, thead] = [element("table", { tabindex: "0", "aria-label": title }), element("thead")];
  thead.append(head);
  table.append(thead, body);
  part.replaceChildren(element("h3", {}, title), table);
  part.shows = numbers;
}

// What the verdict's box ends with and the notes (under it; on a desktop under the figures): the setting's
// note (the bundle's index says which, and where: ui/bundle.py setting_note; in projector mode, with no room,
// a short caveat ends the verdict's box, so the figures stay on the screen), and the note that a stack
// shallower than the block in focus shows its last block.
export function notes(parts, data, view, note, blockShown) {
  const texts = data.texts;
  const lines = [];
  if (note && data.projector) {
    if (note.projector === "caveat") parts.verdict.append(" ", element("span", { class: "instant-caveat" }, texts[note.text]));
  } else if (note) {
    lines.push(element("p", { class: `instant-${note.kind}`, ...(note.kind === "warning" ? { role: "note" } : {}) },
      texts[note.text]));
    if (note.why && texts.why_href) { // the geometry page (in the app only)
      const link = element("p", { class: "instant-note" });
      link.append(element("a", { href: texts.why_href, target: "_self" }, texts.why_link));
      lines.push(link);
    }
  }
  if (blockShown !== view.block) lines.push(element("p", { class: "instant-note" }, texts.block_clamped[view.depth - 1]));
  parts.notes.replaceChildren(...lines);
}
