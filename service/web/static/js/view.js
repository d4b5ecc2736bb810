// The view of the table page: the one writer of its DOM. It draws the store's match (header,
// players, turn, table, rack, actions, meld, selection, result, leaving) and owns the state of
// the page itself: what is pressed or dragged, where focus goes after a redraw.

import { formatSeconds } from "./clock.js";
import { t } from "./i18n.js";
import { store } from "./store.js";
import { emptyTable, meldContent, newSetZone, placeButton, playerChip, setNote, splitButton } from "./template.js";
import { describe, minus, tileElement } from "./tiles.js";
import { renderBanks, tickBanks } from "./view-banks.js";
import { renderLeave, renderResult } from "./view-result.js";
import { rove } from "./view-roving.js";

export const $ = (selector) => document.querySelector(selector);

const ui = {
  dragging: false,
  pressing: false, // a pointer is down on the table or the rack (see holdRedrawsWhilePressed)
  pendingRender: false,
  focusKey: null, // the element to focus after the next render (the tile or target acted on)
  lastInput: "pointer", // "keyboard" or "pointer": keyboard focus may scroll the page
  countdown: null,
  reveal: null, // the referee's reasons, kept in view until the player acts (keepInView)
};

export function showGame({ spectator }) {
  $("#game").hidden = false;
  document.body.classList.add("in-game");
  if (spectator) document.body.classList.add("spectator");
}

// The language switch shows the page's language (its face on a phone is the code).
export function showLanguage(code) {
  $("#language").value = code;
  $("#language-code").textContent = code.toUpperCase();
}

export function setCountdown(countdown) {
  ui.countdown = countdown;
}

export function noteInput(kind) {
  ui.lastInput = kind;
  ui.reveal = null;
}

// Keep `box` (the referee's reasons) in view: now, and after the redraws of the next 3 s until
// the player moves the pointer, touches, types or scrolls (a late answer, such as the meld
// checker's, may grow the page above it). On a phone the rack is pinned to the bottom of the
// screen, and the reasons, just above it in the page, would start behind it.
export function keepInView(box) {
  ui.reveal = { box, until: performance.now() + 3000 };
  reveal(box);
}

function reveal(box) {
  if (box.hidden) return;
  const rack = $("#rack-area");
  const floor = rack && !rack.hidden ? Math.min(window.innerHeight, rack.getBoundingClientRect().top) : window.innerHeight;
  const { top, bottom } = box.getBoundingClientRect();
  if (bottom > floor) window.scrollBy(0, Math.min(bottom - floor + 8, top - 8));
  else if (top < 0) window.scrollBy(0, top - 8);
}

// Focus the element of this key (data-focus-key, or a tile's "tile:<id>") after the next render.
export function focusAfter(key) {
  ui.focusKey = key;
}

export function setDragging(dragging) {
  ui.dragging = dragging;
  if (!dragging && ui.pendingRender) render();
}

// A tap is a press and a release. A redraw between the two (an answer, a live event) replaces
// the pressed tile or place, and the browser then sends the click to no tile at all: the tap
// is lost. So while a pointer is down on the table or the rack, redraws wait; the one held
// back runs after the click (which the release brings in the same task, and which redraws
// anyway when it acts).
export function holdRedrawsWhilePressed(game) {
  game.addEventListener("pointerdown", (event) => {
    if (event.target.closest("#table-sets, #rack")) ui.pressing = true;
  }, true);
  const release = () => {
    if (!ui.pressing) return;
    ui.pressing = false;
    setTimeout(() => {
      if (ui.pendingRender && !ui.dragging) render();
    }, 0);
  };
  const acting = () => { ui.reveal = null; };
  window.addEventListener("wheel", acting, { passive: true });
  document.addEventListener("pointermove", acting, { passive: true });
  document.addEventListener("pointerup", release, true);
  document.addEventListener("pointercancel", release, true);
  window.addEventListener("blur", release);
}

export function render() {
  if (ui.dragging || ui.pressing) {
    ui.pendingRender = true;
    return;
  }
  ui.pendingRender = false;
  const view = store.view;
  if (!view) return;
  const focused = document.activeElement?.dataset?.focusKey || null;
  store.syncWork();
  renderHeader();
  renderPlayers();
  renderBanks(view, (seat) => store.nameOf(seat), view.rack ? store.mySeat() : null);
  renderTurn();
  renderTable();
  renderRack();
  renderActions();
  renderMeld();
  renderSelection();
  renderResult();
  renderLeave();
  restoreFocus(focused);
  rove();
  if (ui.reveal && performance.now() < ui.reveal.until) reveal(ui.reveal.box);
  const turnKey = `${view.game_number}:${view.current_seat}:${view.turn_started}`;
  ui.countdown?.set(view.status === "playing" ? view.turn_deadline : null, turnKey);
}

function renderHeader() {
  const view = store.view;
  // A round is one game per player (000): "1 round" with two players is "Game 1 of 2". A match
  // that ended on its target score before its last game says only how many it played.
  const early = view.status === "finished" && view.game_number < view.games_total;
  const games = view.games_total > 1 && !early
    ? t("header.game_of", { n: view.game_number, total: view.games_total })
    : t("header.game", { n: view.game_number });
  const round = Math.ceil(view.game_number / view.players.length);
  $("#match-info").innerHTML = "";
  const parts = early ? [games] : [games, t("header.round_of", { n: round, total: view.rounds })];
  const target = view.rules.target_score;
  if (target) parts.push(t("header.target", { count: target }));
  parts.push(t("header.pool", { count: view.pool_count }));
  if (!store.token || view.seat === undefined) parts.push(t("header.watching"));
  for (const text of parts) {
    const span = document.createElement("span");
    span.textContent = text;
    $("#match-info").append(span);
  }
  document.title = store.isMyTurn() ? t("header.title_your_turn") : t("app.title");
}

function renderPlayers() {
  const view = store.view;
  const box = $("#players");
  box.innerHTML = "";
  for (const player of view.players) {
    box.append(playerChip(player, {
      name: store.nameOf(player.seat),
      current: view.status === "playing" && view.current_seat === player.seat,
      you: player.seat === view.seat,
    }));
  }
}

function renderTurn() {
  const view = store.view;
  const text = $("#turn-text");
  text.className = "turn-text";
  if (view.status === "playing") {
    if (store.isMyTurn()) {
      text.classList.add("mine");
      text.textContent = store.me().melded
        ? t("turn.yours")
        : t("turn.yours_meld", { points: view.rules.initial_meld_points });
    } else {
      const player = view.players[view.current_seat];
      text.textContent = player.bot
        ? t("turn.bot_thinking", { name: store.nameOf(view.current_seat) })
        : t("turn.playing", { name: store.nameOf(view.current_seat) });
    }
  } else if (view.status === "game_over") {
    text.textContent = t("turn.game_over", { n: view.game_number });
  } else if (view.status === "canceled") {
    text.textContent = t("turn.canceled");
  } else if (view.winner === null || view.winner === undefined) {
    text.textContent = t("turn.abandoned");
  } else {
    text.textContent = t("turn.match_over", { name: store.nameOf(view.winner) });
  }
}

export function showClock(remaining) {
  if (store.view) tickBanks(store.view, (seat) => store.nameOf(seat));
  const clock = $("#clock");
  if (remaining === null) {
    clock.hidden = true;
    return;
  }
  clock.hidden = false;
  clock.textContent = remaining > 0 ? formatSeconds(remaining) : t("clock.time");
  clock.classList.toggle("warn", remaining <= 10 && remaining > 0);
  clock.classList.toggle("expired", remaining <= 0);
  clock.classList.toggle("mine", store.isMyTurn());
}

// The sets to draw: your arrangement on your turn; else the table, or the draft of the player
// at work with the tiles they added marked.
function shownSets(view, mine) {
  if (mine) return store.work.sets.map((set) => ({ id: set.id, tiles: set.tiles }));
  const laid = view.draft || view.table;
  const added = minus(laid.flat(), view.table.flat());
  return laid.map((codes, s) => ({
    id: `v${s}`,
    tiles: codes.map((code, i) => {
      const at = added.indexOf(code);
      if (at >= 0) added.splice(at, 1);
      return { id: null, code, added: at >= 0, key: `${s}.${i}` };
    }),
  }));
}

function renderTable() {
  const view = store.view;
  const box = $("#table-sets");
  box.innerHTML = "";
  const mine = store.isMyTurn();
  const caption = $("#table-caption");
  caption.textContent = "";
  if (!mine && view.draft && view.status === "playing") {
    caption.textContent = t("table.draft_caption", { name: store.nameOf(view.current_seat) });
  }
  const sets = shownSets(view, mine);
  const marks = store.meldMarks();
  sets.forEach((set, index) => {
    const el = document.createElement("div");
    el.className = "set";
    el.setAttribute("role", "group");
    const codes = set.tiles.map((tile) => tile.code);
    el.setAttribute("aria-label", t("table.set_label", { n: index + 1, tiles: codes.map(describe).join(", ") }));
    if (mine) el.dataset.setId = set.id;
    set.tiles.forEach((tile, i) => {
      if (mine && i > 0) {
        el.append(splitButton(set.id, i, t("table.split_label", { n: index + 1, tile: describe(tile.code) })));
      }
      const button = tileElement(tile.code, {
        id: mine ? tile.id : undefined,
        movable: mine,
        added: mine ? tile.origin === "rack" : tile.added,
      });
      button.dataset.focusKey = mine ? `tile:${tile.id}` : `seen:${tile.key}`;
      if (mine && tile.id === store.selected) {
        button.classList.add("selected");
        button.setAttribute("aria-pressed", "true");
      }
      el.append(button);
    });
    if (mine && store.selected) {
      el.append(placeButton(t("table.place_end", { n: index + 1 }), `place:${set.id}`));
    }
    const mark = marks.get(set.id);
    if (mark) {
      el.classList.add(mark.valid ? "valid" : "invalid");
      el.append(setNote(mark));
    }
    if (store.problemSets.has(index)) el.classList.add("refused");
    box.append(el);
  });
  if (mine) box.append(newSetZone(store.selected));
  if (!sets.length && !mine) box.append(emptyTable());
}

function renderRack() {
  const view = store.view;
  const area = $("#rack-area");
  $("#to-rack").hidden = !view.rack;
  if (!view.rack) {
    area.hidden = true;
    return;
  }
  area.hidden = false;
  const mine = store.isMyTurn();
  const rack = $("#rack");
  rack.innerHTML = "";
  const tiles = store.rackTiles();
  const fresh = [...store.fresh];
  const seen = new Map();
  for (const tile of tiles) {
    const at = fresh.indexOf(tile.code);
    if (at >= 0) fresh.splice(at, 1);
    const button = tileElement(tile.code, { id: tile.id, movable: mine, fresh: at >= 0 });
    // By code, not id: focus stays on "your second R7" when the turn changes and ids are new.
    seen.set(tile.code, (seen.get(tile.code) || 0) + 1);
    button.dataset.focusKey = `rack:${tile.code}#${seen.get(tile.code)}`;
    if (mine && tile.id === store.selected) {
      button.classList.add("selected");
      button.setAttribute("aria-pressed", "true");
    }
    rack.append(button);
  }
  const picked = store.selection();
  if (picked && picked.where === "set" && picked.tile.origin === "rack") {
    rack.append(placeButton(t("rack.place_back"), "place:rack"));
  }
  rack.classList.toggle("drop-ok", mine);
  $("#rack-title").textContent = t("rack.title", { count: tiles.length });
}

function renderActions() {
  const view = store.view;
  const mine = store.isMyTurn();
  const changed = mine && store.work.changed();
  $("#actions").hidden = !view.rack;
  $("#play-button").disabled = !changed;
  $("#draw-button").disabled = !mine || view.pool_count === 0;
  $("#pass-button").disabled = !mine || view.pool_count > 0;
  $("#reset-button").disabled = !changed;
  $("#hint-button").hidden = !view.rules.hints;
  $("#hint-button").disabled = !mine;
  $("#pass-button").hidden = view.pool_count > 0;
  $("#redeal-button").hidden = !mayAskForRedeal(view);
  $("#rack-area").classList.toggle("my-turn", mine);
}

// The MSO redeal (docs/CLOCKS.md): a rack dealt 3 doubles may ask for a new deal before the
// game's first move, whoever's turn it is. Before that move the table is empty and every rack
// holds what it was dealt (a draw or a timeout adds to one); the referee has the last word.
export const DOUBLES_FOR_REDEAL = 3;

function mayAskForRedeal(view) {
  if (!view.rack || view.status !== "playing" || !view.rules.redeal_three_doubles) return false;
  if (view.table.length || new Set(view.players.map((p) => p.rack_count)).size !== 1) return false;
  const counts = new Map();
  for (const code of view.rack) if (code !== "J") counts.set(code, (counts.get(code) || 0) + 1);
  return [...counts.values()].filter((n) => n >= 2).length >= DOUBLES_FOR_REDEAL;
}

function renderMeld() {
  const box = $("#meld");
  const player = store.me();
  if (!store.isMyTurn() || !player || player.melded) {
    box.hidden = true;
    return;
  }
  const threshold = store.view.rules.initial_meld_points;
  const result = store.meld?.result;
  const points = result ? result.points : 0;
  const allValid = result ? result.sets.every((set) => set.valid) : true;
  const meets = Boolean(result && result.meets_initial_meld);
  box.hidden = false;
  box.className = `meld${meets ? " meets" : ""}`;
  const verdict = meets
    ? t("meld.enough")
    : !allValid
      ? t("meld.fix_invalid")
      : points < threshold
        ? t("meld.more_needed", { count: threshold - points })
        : "";
  meldContent(box, { points, threshold, verdict });
}

// The selected tile and what can be done with it (tap or Enter on a place to move it there).
function renderSelection() {
  const bar = $("#selection");
  const found = store.selection();
  if (!found) {
    bar.hidden = true;
    return;
  }
  bar.hidden = false;
  $("#selection-text").textContent = found.where === "rack"
    ? t("selection.from_rack", { tile: describe(found.tile.code) })
    : t("selection.from_table", { tile: describe(found.tile.code) });
  const split = $("#split-button");
  split.hidden = !(found.where === "set" && found.index > 0);
  split.setAttribute("aria-label", t("selection.split_label", { tile: describe(found.tile.code) }));
}

function restoreFocus(previous) {
  const key = ui.focusKey || (document.activeElement === document.body ? previous : null);
  ui.focusKey = null;
  if (!key) return;
  const target = [...document.querySelectorAll("[data-focus-key]")].find(
    (el) => el.dataset.focusKey === key || (el.dataset.id && `tile:${el.dataset.id}` === key),
  );
  if (target && !target.disabled) target.focus({ preventScroll: ui.lastInput !== "keyboard" });
}

// Focus an element now (after a reset, a hint) without scrolling the page.
export function focusNow(selector) {
  $(selector)?.focus({ preventScroll: true });
}

export function disableActions() {
  document.querySelectorAll("#actions button, #next-game-button").forEach((b) => { b.disabled = true; });
}

export function setDisabled(selector, disabled) {
  document.querySelectorAll(selector).forEach((b) => { b.disabled = disabled; });
}
