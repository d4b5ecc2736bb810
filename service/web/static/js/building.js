// Building a turn: picking tiles up and putting them down (taps, clicks, drags), splitting
// sets, the hint, sorting the rack, sharing the draft, and the referee's meld checker.

import { api, ApiError, newKey } from "./api.js";
import { language, t } from "./i18n.js";
import { store } from "./store.js";
import { acceptView, enqueue, refetch } from "./sync.js";
import { describe } from "./tiles.js";
import { focusAfter, focusNow, render, setDisabled } from "./view.js";
import { hideProblem, showNotice, showProblem } from "./view-messages.js";

const DRAFT_DELAY = 600; // ms of quiet before the draft is shared
const MELD_DELAY = 200;
let draftTimer = null;
let meldTimer = null;

// A click or tap on the table or the rack: pick a tile up, or put the one held down there.
export function onBoardClick(event) {
  const split = event.target.closest(".split");
  if (split && store.isMyTurn()) {
    splitSet(split.dataset.setId, Number(split.dataset.index));
    return;
  }
  if (!store.isMyTurn()) return;
  const tile = event.target.closest(".tile.movable");
  const selected = store.selected;
  if (selected) {
    let target = null;
    if (tile && tile.dataset.id !== selected) {
      const set = tile.closest(".set[data-set-id]");
      target = set
        ? { kind: "set", setId: set.dataset.setId, beforeId: tile.dataset.id }
        : { kind: "rack", beforeId: tile.dataset.id };
    } else if (!tile) {
      const zone = event.target.closest(".new-set, .set[data-set-id], .rack");
      if (!zone && event.target.closest("button")) return;
      if (zone?.classList.contains("new-set")) target = { kind: "new" };
      else if (zone?.classList.contains("rack")) target = { kind: "rack", beforeId: null };
      else if (zone) target = { kind: "set", setId: zone.dataset.setId, beforeId: null };
    }
    if (target) {
      store.unselect();
      moveTile(selected, target);
      return;
    }
    if (tile && tile.dataset.id === selected) {
      unselect();
      return;
    }
  }
  if (tile) {
    store.select(tile.dataset.id);
    focusAfter(`tile:${tile.dataset.id}`);
    render();
  }
}

export function unselect() {
  const was = store.unselect();
  if (was) focusAfter(`tile:${was}`);
  render();
}

// Split the set before its tile at `index`; focus stays on that tile, now the new set's first.
function splitSet(setId, index) {
  const set = store.work.sets.find((s) => s.id === setId);
  const tile = set?.tiles[index];
  if (!tile || !store.split(setId, index)) return;
  focusAfter(`tile:${tile.id}`);
  workChanged();
}

export function splitAtSelected() {
  const found = store.selected ? store.work.find(store.selected) : null;
  if (found && found.where === "set") splitSet(found.set.id, found.index);
}

// Put the tile taken (selected) at `target`; false when none is taken.
export function putSelected(target) {
  const tile = store.unselect();
  if (!tile) return false;
  moveTile(tile, target);
  return true;
}

export function moveTile(tileId, target) {
  if (!store.isMyTurn()) return;
  if (!store.canMove(tileId, target)) {
    showNotice(t("notice.table_tile_stays"));
    render();
    return;
  }
  focusAfter(`tile:${tileId}`);
  if (store.move(tileId, target)) workChanged();
  else render();
}

function workChanged() {
  hideProblem();
  render();
  scheduleDraft();
  scheduleMeldCheck();
}

export function resetWork() {
  store.resetWork();
  workChanged();
  focusNow("#rack .tile");
}

// The solver's best play (GET /hint), laid out as your draft: Play takes it, Undo all undoes it.
export async function showHint() {
  if (!store.isMyTurn()) return;
  setDisabled("#hint-button", true);
  try {
    const hint = await api.hint(store.matchId, store.token);
    if (!store.isMyTurn()) return;
    if (hint.status !== "play_found") {
      showNotice(hint.status === "no_play"
        ? (store.view.pool_count ? t("hint.no_play_draw") : t("hint.no_play_pass"))
        : t("hint.timeout"));
      return;
    }
    store.resetWork(hint.table);
    workChanged();
    const placed = hint.placed.map(describe).join(", ");
    showNotice(t("hint.laid_out", { tiles: placed, points: hint.points }));
    focusNow("#play-button");
  } catch (error) {
    showProblem("#problem", error);
  } finally {
    setDisabled("#hint-button", !store.isMyTurn());
  }
}

export function sortRack(compare) {
  store.sortRack(compare);
  render();
}

// A move is about to be sent: no draft after it.
export function cancelDraft() {
  clearTimeout(draftTimer);
  draftTimer = null;
}

function scheduleDraft() {
  clearTimeout(draftTimer);
  draftTimer = setTimeout(() => enqueue(shareDraft), DRAFT_DELAY);
}

// Share the arrangement (PUT /draft) so everyone sees it live.
async function shareDraft() {
  draftTimer = null;
  if (!store.isMyTurn()) return;
  const table = store.draftToShare();
  if (!table) return;
  const send = () => api.draft(store.matchId, store.token, table, store.view.version, newKey());
  try {
    let answer;
    try {
      answer = await send();
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 412) throw error;
      await refetch(); // someone else's change (a bot, the clock): try once more on it
      if (!store.isMyTurn()) return;
      answer = await send();
    }
    store.draftShared(table);
    acceptView(answer.match);
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) {
      await refetch().catch(() => {});
      return;
    }
    showProblem("#problem", error);
  }
}

export function scheduleMeldCheck() {
  clearTimeout(meldTimer);
  meldTimer = setTimeout(meldCheck, MELD_DELAY);
}

// The referee's meld checker on the sets you are building (all of them before your
// initial meld: the running total counts toward the threshold).
async function meldCheck() {
  if (!store.isMyTurn()) return;
  const { key, sets, setIds } = store.meldQuery(language()); // its words are in the page's language
  if (store.meld && store.meld.key === key) return;
  if (!sets.length) {
    store.setMeld(key, null, []);
    render();
    return;
  }
  const rules = {
    initial_meld_points: store.view.rules.initial_meld_points,
    joker_worth_zero_in_meld: Boolean(store.view.rules.joker_worth_zero_in_meld),
  };
  try {
    const result = await api.meldCheck(sets, rules);
    if (store.meldQuery(language()).key !== key) return;
    store.setMeld(key, result, setIds);
    render();
  } catch {
    /* the checker is a help, not a gate */
  }
}
