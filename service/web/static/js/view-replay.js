// The replay of a finished game, drawn in its dialog: the position after one turn, as the referee
// works it out (GET /v1/matches/{id}/games/{n}/position?turn=k), and what that turn did.

import { t } from "./i18n.js";
import { tileElement } from "./tiles.js";

const $ = (selector) => document.querySelector(selector);

export function openReplay() {
  const dialog = $("#replay-dialog");
  if (!dialog.open) dialog.showModal();
}

export function closeReplay() {
  $("#replay-dialog").close();
}

export function showReplayProblem(message) {
  const box = $("#replay-problem");
  box.hidden = !message;
  box.textContent = message || "";
}

// One position: the step and what happened, each player (tiles left, score, the rack once the
// game is over), the table; Back and Forward stop at the ends.
export function renderReplay(position) {
  showReplayProblem("");
  const nameOf = (seat) => position.players[seat]?.name ?? String(seat);
  $("#replay-step").textContent = t("replay.step", { turn: position.turn, turns: position.turns });
  $("#replay-what").textContent = whatHappened(position, nameOf);
  const players = $("#replay-players");
  players.innerHTML = "";
  for (const player of position.players) {
    const row = document.createElement("li");
    row.className = "replay-player";
    if (position.current_seat === player.seat) row.classList.add("current");
    const label = document.createElement("span");
    label.className = "replay-name";
    label.textContent = t("replay.player", { name: player.name, count: player.rack_count, score: player.score });
    row.append(label);
    if (player.rack) {
      const rack = document.createElement("span");
      rack.className = "replay-rack";
      rack.setAttribute("role", "group");
      rack.setAttribute("aria-label", t("replay.rack_of", { name: player.name }));
      rack.append(...player.rack.map(shownTile));
      row.append(rack);
    }
    players.append(row);
  }
  const table = $("#replay-table");
  table.innerHTML = "";
  if (!position.table.length) {
    const empty = document.createElement("p");
    empty.className = "replay-empty";
    empty.textContent = t("replay.empty_table");
    table.append(empty);
  }
  for (const set of position.table) {
    const row = document.createElement("div");
    row.className = "replay-set";
    row.setAttribute("role", "group");
    row.append(...set.map(shownTile));
    table.append(row);
  }
  $("#replay-first").disabled = position.turn === 0;
  $("#replay-back").disabled = position.turn === 0;
  $("#replay-forward").disabled = position.turn >= position.turns;
  $("#replay-last").disabled = position.turn >= position.turns;
  if (document.activeElement?.disabled) {
    $(position.turn === 0 ? "#replay-forward" : "#replay-back").focus(); // the focus stays in
  }
}

// A tile to look at, not to move: out of the tab order (the dialog's buttons are the controls).
function shownTile(code) {
  const tile = tileElement(code.startsWith("J=") ? "J" : code);
  tile.tabIndex = -1;
  return tile;
}

function whatHappened(position, nameOf) {
  const turn = position.last_turn;
  if (!turn) return t("replay.dealt");
  const name = nameOf(turn.seat);
  const said = {
    play: () => t("replay.played", { name, tiles: turn.placed.join(" ") }),
    draw: () => t("replay.drew", { name }),
    pass: () => t("replay.passed", { name }),
    timeout: () => t(turn.reverted ? "replay.penalty" : "replay.timeout", { name, count: turn.drawn.length }),
    leave: () => t("replay.left", { name }),
  }[turn.action];
  const happened = said ? said() : turn.action;
  if (!position.result) return happened;
  const { winner, reason } = position.result;
  const end = reason === "abandoned"
    ? t("replay.end_abandoned")
    : t("replay.end", { name: nameOf(winner) });
  return `${happened} ${end}`;
}
