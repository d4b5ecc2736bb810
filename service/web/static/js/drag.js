// Dragging tiles with pointer events (mouse, pen and touch alike). A tile follows the pointer
// as a "ghost"; where it would land is marked; on release `onDrop(tileId, target)` is called
// with target {kind: "set", setId, beforeId} | {kind: "new", afterSetId} | {kind: "rack", beforeId}.
// A press without movement is left to the click handler (tap to select, tap to place).

const THRESHOLD = 5; // pixels before a press becomes a drag

export function enableDrag(root, { canDrag, onDrop, onStart, onEnd }) {
  let press = null;
  let suppressClick = false;

  root.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    const el = event.target.closest(".tile.movable");
    if (!el || !root.contains(el) || !canDrag(el)) return;
    press = { el, id: el.dataset.id, x: event.clientX, y: event.clientY, pointerId: event.pointerId };
    press.rect = el.getBoundingClientRect();
    el.setPointerCapture(event.pointerId);
  });

  root.addEventListener("pointermove", (event) => {
    if (!press || event.pointerId !== press.pointerId) return;
    if (!press.ghost) {
      if (Math.hypot(event.clientX - press.x, event.clientY - press.y) < THRESHOLD) return;
      start(event);
    }
    event.preventDefault();
    moveGhost(event);
    mark(targetAt(event.clientX, event.clientY, press.id));
  });

  root.addEventListener("pointerup", (event) => {
    if (!press || event.pointerId !== press.pointerId) return;
    const finished = press;
    press = null;
    if (!finished.ghost) return; // a tap: the click handler takes it
    // A click may follow on the pressed tile: it is not a tap. (It may also never come.)
    suppressClick = true;
    setTimeout(() => { suppressClick = false; }, 0);
    const target = targetAt(event.clientX, event.clientY, finished.id);
    cleanUp(finished);
    if (target) onDrop(finished.id, target.target);
  });

  root.addEventListener("pointercancel", () => {
    if (press) cleanUp(press);
    press = null;
  });

  // The click that follows a drag is not a tap.
  root.addEventListener("click", (event) => {
    if (suppressClick) {
      suppressClick = false;
      event.stopImmediatePropagation();
      event.preventDefault();
    }
  }, true);

  function start() {
    const ghost = press.el.cloneNode(true);
    ghost.classList.add("ghost");
    ghost.removeAttribute("data-id");
    ghost.setAttribute("aria-hidden", "true");
    ghost.style.width = `${press.rect.width}px`;
    ghost.style.height = `${press.rect.height}px`;
    document.body.append(ghost);
    press.ghost = ghost;
    press.dx = press.x - press.rect.left;
    press.dy = press.y - press.rect.top;
    press.el.classList.add("drag-source");
    document.body.classList.add("dragging");
    if (onStart) onStart();
  }

  function moveGhost(event) {
    press.ghost.style.transform =
      `translate(${event.clientX - press.dx}px, ${event.clientY - press.dy}px) rotate(-3deg)`;
  }

  function cleanUp(finished) {
    if (finished.ghost) finished.ghost.remove();
    finished.el.classList.remove("drag-source");
    if (finished.el.hasPointerCapture?.(finished.pointerId)) {
      finished.el.releasePointerCapture(finished.pointerId);
    }
    document.body.classList.remove("dragging");
    mark(null);
    if (onEnd) onEnd();
  }
}

let marked = null;

function mark(found) {
  if (marked) marked.el.classList.remove(marked.className);
  marked = found && found.markEl ? { el: found.markEl, className: found.markClass } : null;
  if (marked) marked.el.classList.add(marked.className);
}

// What lies under (x, y): a place in a set, a new set, or a place on the rack.
export function targetAt(x, y, tileId) {
  const under = document.elementFromPoint(x, y);
  if (!under) return null;
  const zone = under.closest(".new-set");
  if (zone) {
    return { target: { kind: "new", afterSetId: zone.dataset.afterSetId || null }, markEl: zone, markClass: "drop-here" };
  }
  const container = under.closest(".set[data-set-id], .rack");
  if (!container) return null;
  const isRack = container.classList.contains("rack");
  const tiles = [...container.querySelectorAll(".tile[data-id]")].filter((el) => el.dataset.id !== tileId);
  let before = null;
  let best = Infinity;
  // The nearest tile on the pointer's row, if the pointer is on its left half it goes before it.
  for (const el of tiles) {
    const rect = el.getBoundingClientRect();
    if (y < rect.top - 8 || y > rect.bottom + 8) continue;
    const centre = rect.left + rect.width / 2;
    if (x < centre && centre - x < best) {
      best = centre - x;
      before = el;
    }
  }
  const target = isRack
    ? { kind: "rack", beforeId: before ? before.dataset.id : null }
    : { kind: "set", setId: container.dataset.setId, beforeId: before ? before.dataset.id : null };
  if (before) return { target, markEl: before, markClass: "drop-before" };
  return { target, markEl: container, markClass: "drop-end" };
}
