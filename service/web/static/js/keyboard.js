// Playing with the keyboard. The rack and the table are one Tab stop each, with the arrow keys
// inside (view-roving.js), and the moves made most have a key each. The letters work while the
// focus is in the rack area or on the table (WCAG 2.1.4: a shortcut of one character key is
// active only on its component), and never in a text field or an open dialog:
//   Enter, Space  take the focused tile; with a tile taken, put it there (a tile or a "+")
//   N             put the taken tile in a new set;  1-9: at the end of that set
//   Escape        put it back;  P play;  D draw;  T to the table;  R to the rack

import { putSelected } from "./building.js";
import { store } from "./store.js";
import { focusGroup, groupOf, moveFocus } from "./view-roving.js";

const ARROWS = { ArrowRight: "next", ArrowLeft: "previous", ArrowDown: "down", ArrowUp: "up", Home: "first", End: "last" };
const IN_A_LINE = { up: "previous", down: "next" }; // the rack is one row of tiles

export function wireKeyboard({ play, draw }) {
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    const target = event.target;
    if (!target.closest?.("#rack-area, #table-sets") || target.matches("input, select, textarea")) return;
    if (document.querySelector("dialog[open]")) return;
    if (ARROWS[event.key]) {
      const group = groupOf(target);
      const where = group === "rack" ? IN_A_LINE[ARROWS[event.key]] || ARROWS[event.key] : ARROWS[event.key];
      if (group && moveFocus(target, where)) event.preventDefault();
      return;
    }
    if (act(event.key.toLowerCase(), { play, draw })) event.preventDefault();
  });
}

// The key's move; false when the key means nothing here.
function act(key, { play, draw }) {
  const mine = store.isMyTurn();
  if (key === "t") return focusGroup("table");
  if (key === "r") return focusGroup("rack");
  if (key === "p") {
    if (mine && store.work.changed()) play();
    return true;
  }
  if (key === "d") {
    if (mine && store.view.pool_count > 0) draw();
    return true;
  }
  if (!mine || !store.selected) return false;
  if (key === "n") return putSelected({ kind: "new" });
  const set = /^[1-9]$/.test(key) ? store.work.sets[Number(key) - 1] : null;
  return set ? putSelected({ kind: "set", setId: set.id, beforeId: null }) : false;
}
