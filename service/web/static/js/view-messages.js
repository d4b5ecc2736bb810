// The view's messages: the referee's refusals and errors, short notices, the connection's
// state, and the log of what happened.

import { ApiError } from "./api.js";
import { language, t } from "./i18n.js";
import { store } from "./store.js";
import { keepInView, render } from "./view.js";

const $ = (selector) => document.querySelector(selector);

// A failed request in `box` (an element or its selector): the referee's reasons, each with its
// code, or that the referee could not be reached. The refused sets are marked on the table.
export function showProblem(box, error) {
  if (typeof box === "string") box = $(box);
  box.hidden = false;
  box.innerHTML = "";
  const title = document.createElement("strong");
  const list = document.createElement("ul");
  list.className = "violations";
  if (error instanceof ApiError) {
    const violations = error.violations;
    title.textContent = violations.length ? t("problem.refused") : error.message;
    for (const violation of violations) {
      const item = document.createElement("li");
      item.textContent = violation.message;
      item.dataset.code = violation.code;
      list.append(item);
    }
    if (!violations.length && error.problem.errors) {
      const item = document.createElement("li");
      item.textContent = JSON.stringify(error.problem.errors);
      list.append(item);
    }
    store.markProblems(violations.map((v) => v.set_index).filter((i) => Number.isInteger(i)));
  } else {
    title.textContent = t("problem.unreachable");
  }
  box.append(title);
  if (list.children.length) box.append(list);
  if (store.view) render(); // the refused sets marked (not while a tap is pressed)
  if (box.id === "problem") keepInView(box);
}

export function hideProblem() {
  $("#problem").hidden = true;
  store.clearProblems();
}

export function hideBox(selector) {
  $(selector).hidden = true;
}

export function clearTurnText() {
  $("#turn-text").textContent = "";
}

// While the first view is tried again: say when.
export function showRetrying(seconds) {
  const retrying = document.createElement("p");
  retrying.className = "retrying";
  retrying.textContent = t("problem.retrying", { count: seconds });
  $("#problem").append(retrying);
}

let noticeTimer = null;
export function showNotice(text, kind = "info") {
  const box = $("#notice");
  box.hidden = false;
  box.className = `notice ${kind}`;
  box.textContent = text;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { box.hidden = true; }, kind === "alert" ? 8000 : 5000);
}

export function showConnection(mode) {
  const conn = $("#conn");
  conn.hidden = false;
  conn.dataset.mode = mode;
  const texts = {
    live: ["conn.live", "conn.live_title"],
    reconnecting: ["conn.reconnecting", "conn.reconnecting_title"],
    polling: ["conn.polling", "conn.polling_title"],
    ended: ["conn.ended", "conn.ended_title"],
  }[mode];
  conn.textContent = texts ? t(texts[0]) : mode;
  conn.title = texts ? t(texts[1]) : "";
}

// --- the event log

// An event the store just logged. A seat leaving renames its later moves (to its bot's),
// which may be in the log already.
export function showEvent(event) {
  if (event.type === "player_left") redrawLog();
  else logItem(event);
}

// Every entry again (after a language switch, in the new language).
export function redrawLog() {
  $("#log").innerHTML = "";
  for (const event of store.log) logItem(event);
}

function logItem(event) {
  const text = describeEvent(event);
  if (!text) return;
  const list = $("#log");
  const item = document.createElement("li");
  item.dataset.type = event.type;
  item.dataset.version = String(event.version);
  item.textContent = text;
  const time = document.createElement("time");
  time.textContent = new Date(event.at * 1000).toLocaleTimeString(language(), { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  item.prepend(time, " ");
  // Newest first.
  const after = [...list.children].find((li) => Number(li.dataset.version) < event.version);
  list.insertBefore(item, after || null);
  while (list.children.length > 40) list.lastChild.remove();
}

function describeEvent(event) {
  const d = event.data || {};
  const v = event.version;
  const nameOf = (seat) => store.nameOf(seat, v);
  const who = event.seat === null || event.seat === undefined ? "" : nameOf(event.seat);
  switch (event.type) {
    case "match_created":
      return t("log.match_created");
    case "first_player_draw":
      return t("log.first_player_draw", { name: nameOf(d.first_seat) });
    case "game_started":
      return t("log.game_started", { n: d.game_number, name: nameOf(d.first_seat) });
    case "played":
      return t(d.went_out ? "log.played_out" : "log.played", { name: who, tiles: (d.added || []).join(" ") });
    case "drew":
      return t("log.drew", { name: who, count: d.count });
    case "turn_timed_out":
      return d.reverted
        ? t("log.timed_out_penalty", { name: who, count: d.penalty })
        : t("log.timed_out", { name: who });
    case "passed":
      return t(d.timed_out ? "log.passed_timed_out" : "log.passed", { name: who });
    case "game_over":
      return d.winner === null || d.winner === undefined
        ? t("log.game_abandoned", { n: d.game_number })
        : t("log.game_over", { n: d.game_number, name: nameOf(d.winner) });
    case "match_finished":
      return d.winner === null || d.winner === undefined
        ? t("log.match_abandoned")
        : t("log.match_finished", { name: nameOf(d.winner) });
    case "player_left":
      return t("log.player_left", { name: who });
    case "rematch_created":
      return t("log.rematch_created");
    case "match_canceled":
      return t("log.match_canceled");
    case "redealt":
      return t("log.redealt", { name: who, count: (d.doubles || []).length });
    case "flag_fell":
      return t("log.flag_fell", { name: who });
    case "time_given":
      return d.by_seat === null || d.by_seat === undefined
        ? t("log.time_given_owner", { name: who, seconds: d.seconds })
        : t("log.time_given", { giver: nameOf(d.by_seat), name: who, seconds: d.seconds });
    case "draft_updated":
    case "tokens_reissued":
    case "clock_advanced":
      return null;
    default:
      return event.type.replace(/_/g, " ");
  }
}
