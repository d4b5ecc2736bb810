// The table page's controller: it wires the page's controls to the referee's use cases (play,
// draw, pass, next game, rematch, leave), changes the store with the answers and asks the view
// to draw them.

import { api, ApiError, newKey } from "./api.js";
import { Countdown, tone, unlockAudio } from "./clock.js";
import { enableDrag } from "./drag.js";
import { t } from "./i18n.js";
import { wireKeyboard } from "./keyboard.js";
import { wireReplay } from "./replay.js";
import { GIFT_SECONDS } from "./view-banks.js";
import { store } from "./store.js";
import { acceptView, enqueue, follow, pollUntilSettled, refetch } from "./sync.js";
import { describe, byColour, byNumber } from "./tiles.js";
import {
  cancelDraft, moveTile, onBoardClick, resetWork, scheduleMeldCheck, showHint, sortRack, splitAtSelected, unselect,
} from "./building.js";
import {
  $, disableActions, holdRedrawsWhilePressed, render, setCountdown, setDisabled, setDragging, showClock, showGame,
} from "./view.js";
import {
  clearTurnText, hideProblem, redrawLog, showNotice, showProblem, showRetrying, hideBox,
} from "./view-messages.js";
import {
  closeDialog, closeResult, markCopied, openDialog, renderInvite, showLeftBanner,
} from "./view-result.js";
import { focusGroup, followFocus } from "./view-roving.js";

export async function startGame(matchId, token) {
  store.open(matchId, token, rememberedLeave(matchId, token));
  showGame({ spectator: !token });
  wireGame();
  setCountdown(new Countdown(store.clock, {
    onTick: showClock,
    onWarning: () => {
      if (store.isMyTurn()) tone("warning");
    },
    onExpired: onTurnExpired,
  }));
  // The first view: a failure that may pass (no network, a 5xx such as the store being
  // unreachable, 408, 429) is shown and the request tried again, 1 s later, then 2, 4 ... 30 s;
  // one that will not (404: no such match, 401/403: a wrong link) is shown and ends here.
  for (let wait = 1000; ; wait = Math.min(wait * 2, 30000)) {
    try {
      await refetch();
      break;
    } catch (error) {
      clearTurnText();
      showProblem("#problem", error);
      if (!mayPass(error)) return;
      showRetrying(wait / 1000);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  hideProblem(); // what a failed try showed
  follow(store.view);
  setupInvite();
}

// After a language switch: everything JavaScript wrote, again in the new language.
export function redrawInLanguage() {
  if (!store.view) return;
  hideProblem();
  render();
  redrawLog();
  setupInvite({ open: false });
  showLeftBanner();
  scheduleMeldCheck(); // the checker's notes on the sets, in the new language
}

// Whether asking again later may succeed: no answer at all, a server error, or too many requests.
function mayPass(error) {
  return !(error instanceof ApiError) || error.status >= 500 || error.status === 429 || error.status === 408;
}

function wireGame() {
  const game = $("#game");
  holdRedrawsWhilePressed(game);
  enableDrag(game, {
    canDrag: () => store.isMyTurn(),
    onDrop: (tileId, target) => moveTile(tileId, target),
    onStart: () => {
      setDragging(true);
      store.unselect();
    },
    onEnd: () => setDragging(false),
  });
  game.addEventListener("click", onBoardClick);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && store.selected) unselect();
  });
  followFocus(game);
  wireKeyboard({ play: () => act("play"), draw: () => act("draw") });
  const on = (selector, handler) => $(selector).addEventListener("click", handler);
  on("#play-button", () => act("play"));
  on("#draw-button", () => act("draw"));
  on("#pass-button", () => act("pass"));
  on("#redeal-button", () => act("redeal"));
  on("#reset-button", resetWork);
  on("#hint-button", showHint);
  on("#unselect-button", unselect);
  on("#split-button", splitAtSelected);
  on("#sort-number", () => sortRack(byNumber));
  on("#sort-colour", () => sortRack(byColour));
  on("#next-game-button", () => act("next-game"));
  on("#result-close", () => closeDialog("result-dialog"));
  on("#invite-close", () => closeDialog("invite-dialog"));
  on("#invite-button", () => openDialog("invite-dialog"));
  on("#leave-button", () => openDialog("leave-dialog"));
  on("#leave-cancel", () => closeDialog("leave-dialog"));
  on("#leave-confirm", leave);
  on("#rematch-button", rematch);
  on("#to-rack", () => focusGroup("rack"));
  on("#banks", (event) => {
    const give = event.target.closest(".bank-give");
    if (give) giveTime(Number(give.dataset.seat), give);
  });
  wireReplay();
  // The ways back to the result the turn bar keeps once the dialog is closed.
  on("#turn-text", (event) => {
    if (event.target.closest(".rematch")) rematch();
    else if (event.target.closest(".scores-link")) openDialog("result-dialog");
  });
  on("#invite-list", (event) => {
    const copy = event.target.closest("button.copy");
    if (copy) copyLink(copy);
  });
}

async function copyLink(button) {
  markCopied(button);
  try {
    await navigator.clipboard.writeText(button.dataset.link);
  } catch {
    document.execCommand?.("copy");
  }
}

function onTurnExpired() {
  const view = store.view;
  if (!view || view.status !== "playing") return;
  if (store.isMyTurn()) {
    tone("alert");
    const penalty = view.rules.failed_turn_penalty ?? 3;
    showNotice(store.work.changed()
      ? t("notice.times_up_draft", { count: penalty })
      : t("notice.times_up"), "alert");
  }
  pollUntilSettled();
}

// --- acting: play, draw, pass, next game

async function act(kind) {
  unlockAudio();
  cancelDraft();
  const key = newKey(); // one per user action, kept across the retry below
  disableActions();
  await enqueue(async () => {
    const call = () => {
      const { matchId, token } = store;
      const version = store.view.version;
      if (kind === "play") return api.play(matchId, token, store.work.tableCodes(), version, key);
      if (kind === "draw") return api.draw(matchId, token, version, key);
      if (kind === "pass") return api.pass(matchId, token, version, key);
      if (kind === "redeal") return api.redeal(matchId, token, version, key);
      return api.nextGame(matchId, token, version, key);
    };
    try {
      let answer;
      try {
        answer = await call();
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 412) throw error;
        // The match moved on (a shared draft, a bot, the clock): look again, and if it is
        // still the same turn, try once more on the new version.
        const before = store.workKey;
        await refetch();
        const turnBound = !["next-game", "redeal"].includes(kind);
        if (store.workKey !== before || (turnBound && !store.isMyTurn())) throw error;
        answer = await call();
      }
      hideProblem();
      afterMove(kind, answer);
    } catch (error) {
      showProblem("#problem", error);
      if (error instanceof ApiError && [409, 412].includes(error.status)) await refetch().catch(() => {});
    }
  });
  render();
}

// A chess clock's courtesy: time for another player's bank (a time_given event for everyone).
async function giveTime(seat, button) {
  button.disabled = true;
  try {
    await api.giveTime(store.matchId, store.token, seat, GIFT_SECONDS, newKey());
    hideProblem();
    await refetch();
  } catch (error) {
    showProblem("#problem", error);
    button.disabled = false;
  }
}

function afterMove(kind, answer) {
  const drawn = answer.drawn || [];
  store.setFresh(drawn);
  if (kind === "draw") {
    showNotice(drawn.length ? t("notice.you_drew_tiles", { tiles: drawn.map(describe).join(", ") }) : t("notice.you_drew"));
  } else if (kind === "play") {
    showNotice(t("notice.play_accepted"));
  } else if (kind === "pass") {
    showNotice(t("notice.you_passed"));
  } else if (kind === "redeal") {
    showNotice(t("notice.redealt"));
  } else {
    closeResult();
    showNotice(t("notice.new_game"));
  }
  acceptView(answer.match);
}

// --- rematch: the first seat to ask creates it, the others join it (the same new match). Each
// call hands this seat a fresh token for the new match, and the page moves there.

async function rematch() {
  hideBox("#result-problem");
  const buttons = "#rematch-button, #turn-text .rematch";
  setDisabled(buttons, true);
  try {
    const created = await api.rematch(store.matchId, store.token, newKey());
    const seat = created.seats.find((s) => s.token) || created.seats[0];
    location.hash = `m=${encodeURIComponent(created.id)}&t=${encodeURIComponent(seat.token)}`;
  } catch (error) {
    openDialog("result-dialog");
    showProblem("#result-problem", error);
    setDisabled(buttons, false);
  }
}

// --- leaving: for good, a bot takes the seat (after a confirmation in #leave-dialog)

function leaveKey(matchId) {
  return `rummikub:left:${matchId}`;
}

function rememberedLeave(matchId, token) {
  try {
    const stored = JSON.parse(localStorage.getItem(leaveKey(matchId)) || "null");
    return stored && stored.token === token ? stored.seat : null;
  } catch {
    return null;
  }
}

async function leave() {
  setDisabled("#leave-confirm", true);
  const seat = store.view.seat;
  try {
    cancelDraft();
    const answer = await enqueue(() => api.leave(store.matchId, store.token, newKey()));
    store.markLeft(seat);
    try {
      localStorage.setItem(leaveKey(store.matchId), JSON.stringify({ token: store.token, seat }));
    } catch {
      /* the banner still shows: the view names no seat now */
    }
    closeDialog("leave-dialog");
    hideProblem();
    acceptView(answer.match);
  } catch (error) {
    closeDialog("leave-dialog");
    showProblem("#problem", error);
  } finally {
    setDisabled("#leave-confirm", false);
  }
}

// --- seat links: the seats this browser created, kept for the match's page

function setupInvite({ open = true } = {}) {
  const raw = sessionStorage.getItem(`rummikub:seats:${store.matchId}`);
  if (!raw) return;
  const first = open && sessionStorage.getItem(`rummikub:invite:${store.matchId}`);
  if (first) sessionStorage.removeItem(`rummikub:invite:${store.matchId}`);
  renderInvite(JSON.parse(raw), { open: Boolean(first) });
}
