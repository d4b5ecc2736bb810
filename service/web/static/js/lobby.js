// The lobby's controller: seat people and bots, choose the rules, create the match (POST
// /v1/matches) and go to the creator's seat; or join with a seat link.

import { api } from "./api.js";
import { t } from "./i18n.js";
import {
  addPlayerRow, chosenRules, describeMatchLength, numberPlayerRows, removePlayerRow, rows, setCreating, showLobby,
} from "./lobby-view.js";
import { showProblem } from "./view-messages.js";

const $ = (selector) => document.querySelector(selector);

export function startLobby() {
  showLobby();
  addPlayerRow(false);
  addPlayerRow(true);
  $("#add-human").addEventListener("click", () => addPlayerRow(false));
  $("#add-bot").addEventListener("click", () => addPlayerRow(true));
  $("#player-rows").addEventListener("click", (event) => {
    const remove = event.target.closest(".remove");
    if (remove) removePlayerRow(remove.closest("li"));
  });
  // A person's row made a bot's (or back) takes that kind's default name, unless edited.
  $("#player-rows").addEventListener("change", (event) => {
    if (event.target.matches("input[type=checkbox]")) numberPlayerRows();
  });
  $("#create-form").addEventListener("submit", createMatch);
  $("#create-form").addEventListener("input", describeMatchLength);
  $("#create-form").addEventListener("change", describeMatchLength);
  $("#join-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const link = $("#join-link").value.trim();
    const hash = link.includes("#") ? link.slice(link.indexOf("#")) : `#${link}`;
    location.hash = hash;
  });
  describeMatchLength();
}

async function createMatch(event) {
  event.preventDefault();
  const form = event.target;
  const players = rows().map((row) => (row.bot ? { name: row.name || t("lobby.default_bot"), bot: true } : { name: row.name }));
  const body = { players, rules: chosenRules(form) };
  setCreating(true);
  try {
    const created = await api.createMatch(body);
    sessionStorage.setItem(`rummikub:seats:${created.id}`, JSON.stringify(created.seats));
    const mine = created.seats.find((seat) => !seat.bot) || created.seats[0];
    if (created.seats.filter((seat) => !seat.bot).length > 1) {
      sessionStorage.setItem(`rummikub:invite:${created.id}`, "1");
    }
    location.hash = `m=${encodeURIComponent(created.id)}&t=${encodeURIComponent(mine.token)}`;
  } catch (error) {
    showProblem("#create-error", error);
    setCreating(false);
  }
}
