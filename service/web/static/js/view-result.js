// The view's dialogs and banners: the result of a game or match (with rematch), leaving the
// match, and the seat links.

import { t } from "./i18n.js";
import { store } from "./store.js";
import { inviteItem, linkButton, scoresTable, spectatorItem } from "./template.js";

const $ = (selector) => document.querySelector(selector);
let dialogFor = null; // the game and status the result dialog was last opened for

export function renderResult() {
  const view = store.view;
  const dialog = $("#result-dialog");
  if (view.status === "playing" || view.status === "canceled") {
    if (dialog.open) dialog.close();
    return;
  }
  const key = `${view.game_number}:${view.status}`;
  const outcome = view.last_outcome;
  const finished = view.status === "finished";
  const abandoned = finished && (view.winner === null || view.winner === undefined);
  const nameOf = (seat) => store.nameOf(seat);
  $("#result-title").textContent = !finished
    ? t("result.game_over", { n: view.game_number })
    : abandoned
      ? t("result.abandoned")
      : t("result.match_over", { name: nameOf(view.winner) });
  const body = $("#result-body");
  body.innerHTML = "";
  if (outcome) {
    const how = document.createElement("p");
    how.className = "result-how";
    how.textContent = outcome.reason === "went_out"
      ? t("result.went_out", { name: nameOf(outcome.winner), n: outcome.game_number })
      : outcome.reason === "abandoned"
        ? t("result.game_abandoned", { n: outcome.game_number })
        : t("result.stalemate", { name: nameOf(outcome.winner), n: outcome.game_number });
    body.append(how);
  }
  body.append(scoresTable(view.players, outcome, nameOf));
  $("#next-game-button").hidden = finished || !store.token;
  $("#next-game-button").disabled = false;
  $("#new-match-link").hidden = !finished;
  $("#result-close").hidden = false;
  $("#replay-button").hidden = !outcome; // step through the game that ended (its record)
  const canRematch = store.canRematch();
  const rematchButton = $("#rematch-button");
  rematchButton.hidden = !canRematch;
  rematchButton.textContent = view.rematch_id ? t("result.join_rematch") : t("result.rematch");
  rematchButton.setAttribute("aria-label", view.rematch_id ? t("result.join_rematch_label") : t("result.rematch_label"));
  if (dialogFor !== key) {
    dialogFor = key;
    if (!dialog.open) dialog.showModal();
  }
  // Keep a way back to the result once the dialog is closed.
  const text = $("#turn-text");
  if (canRematch && !text.querySelector(".rematch")) text.append(" ", linkButton("rematch", ""));
  const inline = text.querySelector(".rematch");
  if (inline) {
    inline.textContent = view.rematch_id ? t("result.join_rematch") : t("result.rematch");
    inline.setAttribute("aria-label", inline.textContent);
  }
  if (!text.querySelector(".scores-link")) {
    text.append(" ", linkButton("scores-link", finished ? t("result.final_scores") : t("result.scores_next")));
  }
}

// The next game started: the result dialog closes, and opens again at the next game's end.
export function closeResult() {
  dialogFor = null;
  $("#result-dialog").close();
}

export function openDialog(id) {
  const dialog = $(`#${id}`);
  if (!dialog.open) dialog.showModal();
}

export function closeDialog(id) {
  $(`#${id}`).close();
}

export function renderLeave() {
  const view = store.view;
  $("#leave-button").hidden = !store.isSeated() || !["playing", "game_over"].includes(view.status);
  document.body.classList.toggle("left-seat", store.hasLeft());
  showLeftBanner();
}

export function showLeftBanner() {
  const banner = $("#left-banner");
  banner.hidden = !store.hasLeft();
  if (banner.hidden) return;
  const seat = store.mySeat();
  const player = seat !== null && seat !== undefined ? store.view.players[seat] : null;
  banner.textContent = player
    ? t("leave.done_named", { name: player.name })
    : t("leave.done");
}

// The seat links dialog, from the seats this browser created (sessionStorage): a link per
// person, and one to watch.
export function renderInvite(seats, { open }) {
  const list = $("#invite-list");
  list.innerHTML = "";
  const base = `${location.origin}${location.pathname}`;
  const match = encodeURIComponent(store.matchId);
  for (const seat of seats) {
    const link = seat.bot ? null : `${base}#m=${match}&t=${encodeURIComponent(seat.token)}`;
    list.append(inviteItem(seat, link, { mine: seat.token === store.token }));
  }
  list.append(spectatorItem(`${base}#m=${match}`));
  $("#invite-button").hidden = false;
  if (open) $("#invite-dialog").showModal();
}

// A seat link copied: its input selected, its button says so.
export function markCopied(button) {
  button.previousElementSibling?.select();
  button.textContent = t("invite.copied");
}
