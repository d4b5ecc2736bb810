// A roving tabindex, as in WAI-ARIA's grid and listbox patterns: the rack and the table are
// one Tab stop each, and the arrow keys move the focus inside them (Home and End to the ends;
// in the table Up and Down go to the set before or after). The stop is the element focused
// last in the group, so Tab comes back to where the player was.

const GROUPS = { rack: "#rack", table: "#table-sets" };
// Each group's stop: its data-focus-key, and its place (when that element goes, as a tile put
// on the table leaves the rack, the stop is its neighbour).
const remembered = { rack: { key: null, index: 0 }, table: { key: null, index: 0 } };

// The focusable elements of a group, in order: tiles and places (the 8 px split strips are for
// pointers; the keyboard splits with "Split here").
function items(group) {
  const root = document.querySelector(GROUPS[group]);
  if (!root) return [];
  return [...root.querySelectorAll("button")].filter(
    (button) => !button.classList.contains("split") && !button.disabled && button.offsetParent !== null,
  );
}

export function groupOf(element) {
  for (const [group, selector] of Object.entries(GROUPS)) {
    if (element?.closest?.(selector)) return group;
  }
  return null;
}

function makeStop(group, element) {
  for (const button of document.querySelectorAll(`${GROUPS[group]} button`)) button.tabIndex = -1;
  element.tabIndex = 0;
  remembered[group] = { key: element.dataset.focusKey || null, index: Math.max(0, items(group).indexOf(element)) };
}

// After a redraw: one stop per group (the focused element, the remembered one, the selected
// tile, the one now in the remembered one's place, or the last).
export function rove() {
  for (const group of Object.keys(GROUPS)) {
    const list = items(group);
    for (const button of document.querySelectorAll(`${GROUPS[group]} button`)) button.tabIndex = -1;
    const { key, index } = remembered[group];
    const stop = list.find((button) => button === document.activeElement)
      || list.find((button) => button.dataset.focusKey === key)
      || list.find((button) => button.classList.contains("selected"))
      || list[Math.min(index, list.length - 1)];
    if (stop) stop.tabIndex = 0;
  }
}

// Whatever takes the focus in a group (a click, a tap, a script) becomes its stop.
export function followFocus(root) {
  root.addEventListener("focusin", (event) => {
    const group = groupOf(event.target);
    if (group && event.target.matches("button")) makeStop(group, event.target);
  });
}

// Move the focus from `from` inside its group: "next", "previous", "first", "last", and in the
// table "up" and "down" (the first place of the set before or after). True when it moved.
export function moveFocus(from, where) {
  const group = groupOf(from);
  const list = items(group);
  const at = list.indexOf(from);
  if (!group || at < 0) return false;
  let to = null;
  if (where === "next") to = list[at + 1];
  else if (where === "previous") to = list[at - 1];
  else if (where === "first") to = list[0];
  else if (where === "last") to = list[list.length - 1];
  else {
    const unit = (el) => el.closest(".set") || el;
    const units = [...new Set(list.map(unit))];
    const next = units[units.indexOf(unit(from)) + (where === "down" ? 1 : -1)];
    to = next ? list.find((el) => unit(el) === next) : null;
  }
  if (!to) return false;
  makeStop(group, to);
  to.focus();
  return true;
}

// Focus a group at its stop ("rack" or "table"); false when it has nothing to focus.
export function focusGroup(group) {
  const list = items(group);
  const stop = list.find((button) => button.tabIndex === 0) || list[0];
  if (!stop) return false;
  stop.focus();
  return true;
}
