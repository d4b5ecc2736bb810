// "Replay this game", after a game ends: step forward and back through its record, one turn at
// a time. The referee replays the game (GET .../games/{n}/position?turn=k): the page holds no
// rules, only the turn it shows.

import { request } from "./api.js";
import { store } from "./store.js";
import { closeReplay, openReplay, renderReplay, showReplayProblem } from "./view-replay.js";
import { closeDialog } from "./view-result.js";

let shown = null; // { game, turn, turns } of the replay on screen

const $ = (selector) => document.querySelector(selector);

export function wireReplay() {
  const on = (selector, handler) => $(selector).addEventListener("click", handler);
  on("#replay-button", start);
  on("#replay-first", () => go(0));
  on("#replay-back", () => go(shown.turn - 1));
  on("#replay-forward", () => go(shown.turn + 1));
  on("#replay-last", () => go(shown.turns));
  on("#replay-close", closeReplay);
  // The arrow keys step while the replay is open (a button that turns disabled at an end
  // drops the focus, so the page listens rather than the dialog).
  document.addEventListener("keydown", (event) => {
    if (!shown || !$("#replay-dialog").open) return;
    if (event.key === "ArrowLeft" && shown.turn > 0) go(shown.turn - 1);
    if (event.key === "ArrowRight" && shown.turn < shown.turns) go(shown.turn + 1);
  });
}

async function start() {
  const outcome = store.view.last_outcome;
  if (!outcome) return;
  shown = { game: outcome.game_number, turn: 0, turns: 0 };
  closeDialog("result-dialog");
  openReplay();
  await go(0);
}

async function go(turn) {
  const game = shown.game;
  const path = `/v1/matches/${encodeURIComponent(store.matchId)}/games/${game}/position?turn=${turn}`;
  try {
    const position = await request("GET", path);
    if (!shown || shown.game !== game) return;
    shown = { game, turn: position.turn, turns: position.turns };
    renderReplay(position);
  } catch (error) {
    showReplayProblem(error.message);
  }
}
