"""A keyboard-only walk of a page, for the browser tests: Tab from the top until focus leaves the page,
recording each stop and the focus ring a sighted keyboard user sees on it (its width, and its colour's
contrast with what is behind it, WCAG 2.1's 3:1 for a focus indicator, 1.4.11)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Every element a Tab can stop on, in document order: focusable, shown, not hidden from a screen reader
# (a chart drawn ahead, off the page, is), and not disabled. Kept on the page for FOCUSED to index into.
TABBABLE = """() => {
  const all = document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]');
  window.__tabbable = [...all].filter(el => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length
    && !el.closest('[inert], [aria-hidden=true]') && getComputedStyle(el).visibility === 'visible');
  return window.__tabbable.length;
}"""

# The focused element: what it is, and the ring a sighted user sees on it: the outline or box-shadow of
# the element itself, or of the first ancestor drawn for it, for a native input hidden under its widget's
# own box, clipped to a pixel (Streamlit's radios, checkboxes and toggles: the label; a slider: its
# thumb). The colour
# behind the ring is the first opaque background under it. A table's grid (glide's) moves focus from its
# canvas to an unseen copy of the chosen cell: that stop is the canvas's, ringed round the grid.
FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const grid = el.tagName === 'TD' ? el.closest('[data-testid=stDataFrame]') : null;
  const tiny = e => { const box = e.getBoundingClientRect(); return box.width < 4 || box.height < 4; };
  const clipped = e => {  // inside a box a pixel wide that clips it (how a native input is hidden)
    for (let p = e.parentElement, up = 0; p && up < 3; p = p.parentElement, up++) {
      const style = getComputedStyle(p);
      if (tiny(p) && (style.overflow !== 'visible' || style.clipPath !== 'none')) return true;
    }
    return false;
  };
  const drawn = e => {  // e's ring, if e is seen
    const style = getComputedStyle(e);
    if (tiny(e) || clipped(e)) return null;
    if (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0)
      return [style.outlineColor, parseFloat(style.outlineWidth)];
    const shadow = style.boxShadow.match(/(rgba?\\([^)]*\\)) -?[\\d.]+px -?[\\d.]+px -?[\\d.]+px ([\\d.]+)px/);
    return shadow && parseFloat(shadow[2]) > 0 ? [shadow[1], parseFloat(shadow[2])] : null;
  };
  let ring = grid ?? el, colour = null, width = 0;
  for (let p = ring, up = 0; p && up < 4; p = p.parentElement, up++) {
    const seen = drawn(p);
    if (seen) { ring = p; [colour, width] = seen; break; }
  }
  let background = 'rgb(255, 255, 255)';
  for (let p = ring.parentElement; p; p = p.parentElement) {
    const b = getComputedStyle(p).backgroundColor;
    if (!/rgba\\(.*, 0\\)$/.test(b) && b !== 'transparent') { background = b; break; }
  }
  let opacity = 1;
  for (let p = ring; p; p = p.parentElement) opacity *= parseFloat(getComputedStyle(p).opacity);
  const seen = ring.getBoundingClientRect();
  const named = /^(a|button|summary|option)$/i.test(el.tagName) ? el.innerText : '';  // (a region: not its text)
  const name = el.getAttribute('aria-label') || el.labels?.[0]?.innerText || named || el.title || '';
  const stop = grid ? grid.querySelector('[data-testid=data-grid-canvas]') : el;
  return {index: (window.__tabbable ?? []).indexOf(stop), tag: el.tagName.toLowerCase(),
          role: el.getAttribute('role') || el.type || '', name: name.replace(/\\s+/g, ' ').trim(),
          sidebar: !!el.closest('[data-testid=stSidebar]'), colour, width, background, opacity,
          in_view: seen.bottom > 0 && seen.top < innerHeight && seen.right > 0 && seen.left < innerWidth};
}"""

# Focus, and where the next Tab starts from (Chromium keeps the last focused place after a blur), at the
# top of the page: a mark there focused, then taken away.
TOP = """() => { const mark = document.createElement('span'); mark.tabIndex = -1; document.body.prepend(mark);
  mark.focus(); mark.remove(); window.scrollTo(0, 0); }"""

# No transition running: the ring is seen as it ends (Plotly's toolbar fades in once focus is in it); and
# focus not on a table's canvas, which hands it to the chosen cell's copy once its copy is drawn (200 ms
# after a key).
SETTLED = """() => document.getAnimations().every(a => !(a instanceof CSSTransition) || a.playState !== 'running')
  && document.activeElement?.dataset.testid !== 'data-grid-canvas'"""

# The tabbable elements no stop reached, of the indices reached: a radio counts as reached when its group
# was (a native radio group is one stop, its arrows move within it).
UNREACHED = """(reached) => {
  const all = window.__tabbable;
  const groups = new Set(reached.filter(i => i >= 0).map(i => all[i]).filter(el => el.type === 'radio')
    .map(el => el.name));
  return all.filter((el, i) => !reached.includes(i) && !(el.type === 'radio' && groups.has(el.name)))
            .map(el => el.outerHTML.slice(0, 160));
}"""


@dataclass(frozen=True)
class Stop:
    index: int  # in TABBABLE's list
    tag: str
    role: str
    name: str
    sidebar: bool
    colour: str | None
    width: float
    background: str
    opacity: float
    in_view: bool

    def ring_contrast(self) -> float:
        """The focus ring's colour (its alpha and the element's opacity laid over the background)
        against the background, as WCAG 2 computes contrast."""
        if self.colour is None:
            return 1.0
        back = _over_white(_rgba(self.background))
        ring = _rgba(self.colour)
        alpha = ring[3] * self.opacity
        shown = tuple(alpha * c + (1 - alpha) * b for c, b in zip(ring[:3], back, strict=True))
        high, low = sorted((_luminance(shown), _luminance(back)), reverse=True)
        return (high + 0.05) / (low + 0.05)

    def ring_problem(self) -> str | None:
        """Why the ring would not be seen, or None: at least 2 px wide, at 3:1, in the window."""
        if self.width < 2 or self.ring_contrast() < 3 or not self.in_view:
            return (f"{self.tag} {self.role} {self.name[:40]!r}: ring {self.colour} {self.width}px, "
                    f"{self.ring_contrast():.2f}:1 on {self.background}, in view {self.in_view}")
        return None


def _rgba(text: str) -> tuple[float, float, float, float]:
    values = [float(v) for v in re.findall(r"[\d.]+", text)]
    return (*values[:3], values[3] if len(values) > 3 else 1.0)


def _over_white(rgba: tuple[float, float, float, float]) -> tuple[float, float, float]:
    return tuple(rgba[3] * c + (1 - rgba[3]) * 255 for c in rgba[:3])


def _luminance(rgb) -> float:
    linear = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in (c / 255 for c in rgb)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def tab_walk(page, most: int = 200) -> list[Stop]:
    """Tab from the top of the page until focus leaves it (or comes back to the first stop): every
    stop in order. Fails if focus is still moving after ``most`` presses (a trap would loop)."""
    from_top(page)
    stops: list[Stop] = []
    for _ in range(most):
        page.keyboard.press("Tab")
        page.wait_for_function(SETTLED)
        focused = page.evaluate(FOCUSED)
        if focused is None or (stops and focused["index"] == stops[0].index):
            return stops
        stops.append(Stop(**focused))
    raise AssertionError(f"still tabbing after {most} stops: {[s.name for s in stops[-5:]]}")


def unreached(page, stops: list[Stop]) -> list[str]:
    """The tabbable elements (as HTML) that no stop of ``stops`` reached."""
    return page.evaluate(UNREACHED, [s.index for s in stops])


def from_top(page) -> None:
    """Focus back at the top of the page, as when it has just opened."""
    page.evaluate(TABBABLE)
    page.evaluate(TOP)


def tab_to(page, name: str, exact: bool = False, from_here: bool = False, most: int = 200) -> Stop:
    """Press Tab from the top of the page (or, ``from_here``, from the focused element) until the
    focused element's name has ``name`` in it (``exact``: is ``name``)."""
    if not from_here:
        from_top(page)
    for _ in range(most):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        if focused is not None and (focused["name"] == name if exact else name in focused["name"]):
            return Stop(**focused)
    raise AssertionError(f"Tab never reached {name!r}")
