// The lobby's view: the rows of players (default names that follow the language until edited),
// the note on how long the match lasts, and the create form's state.

import { t } from "./i18n.js";
import { playerRow } from "./template.js";

const $ = (selector) => document.querySelector(selector);
const MAX_PLAYERS = 6;

export function showLobby() {
  $("#lobby").hidden = false;
  document.title = t("lobby.page_title");
}

// The rows as the user filled them in: [{name, bot}].
export function rows() {
  return [...document.querySelectorAll("#player-rows li")].map((li) => ({
    name: li.querySelector("input[type=text]").value.trim(),
    bot: li.querySelector("input[type=checkbox]").checked,
  }));
}

// Row labels follow the row's place: after a removal, "player 3" is the third row again. So do
// the default names nobody edited: "Player 3" for a person in the third row, "Bot", "Bot 2"
// for the bots, in the page's language; a row's box ticked or unticked changes its default.
export function numberPlayerRows() {
  const list = $("#player-rows");
  let bots = 0;
  [...list.children].forEach((li, i) => {
    const n = i + 1;
    const bot = li.querySelector("input[type=checkbox]").checked;
    if (bot) bots += 1;
    nameByDefault(li.querySelector("input[type=text]"), defaultName(n, bot ? bots : 0));
    li.querySelector("input[type=text]").setAttribute("aria-label", t("lobby.row_name", { n }));
    li.querySelector("input[type=checkbox]").setAttribute("aria-label", t("lobby.row_bot", { n }));
    const remove = li.querySelector(".remove");
    remove.setAttribute("aria-label", t("lobby.row_remove", { n }));
    li.querySelector(".bot-text").textContent = t("lobby.row_bot_toggle");
    remove.disabled = list.children.length <= 2;
  });
  $("#add-human").disabled = list.children.length >= MAX_PLAYERS;
  $("#add-bot").disabled = list.children.length >= MAX_PLAYERS;
}

// The default name of the person in row `n`, or of the `bot`-th bot.
function defaultName(n, bot) {
  if (!bot) return t("lobby.default_player", { n });
  return bot === 1 ? t("lobby.default_bot") : t("lobby.default_bot_n", { n: bot });
}

// A name the user left as it was follows its default; an edited name stays.
function nameByDefault(input, name) {
  if (input.dataset.defaultText !== undefined && input.value !== input.dataset.defaultText) return;
  input.value = name;
  input.dataset.defaultText = name;
}

// A new row, for a person or a bot, with its default name.
export function addPlayerRow(bot) {
  const list = $("#player-rows");
  if (list.children.length >= MAX_PLAYERS) return;
  const li = playerRow();
  li.querySelector("input[type=checkbox]").checked = bot;
  list.append(li);
  numberPlayerRows();
  describeMatchLength();
}

// Remove the row `li` (never below two) and focus the one that takes its place.
export function removePlayerRow(li) {
  const list = $("#player-rows");
  if (list.children.length <= 2) return;
  const next = li.nextElementSibling || li.previousElementSibling;
  li.remove();
  numberPlayerRows();
  describeMatchLength();
  next?.querySelector("input[type=text]")?.focus();
}

export function playerCount() {
  return $("#player-rows").children.length;
}

// How many games the match has: a round is one game per player (000), so "1 round" with
// three players is three games, each started by the next player.
export function describeMatchLength() {
  const form = $("#create-form");
  const players = playerCount();
  const rounds = Math.max(1, Math.floor(Number(form.elements.rounds.value) || 1));
  const games = rounds * players;
  const target = form.elements.target_score.value.trim();
  const tileSet = form.elements.tile_set;
  if (players > 4 && tileSet.value !== "xp") tileSet.value = "xp";
  const parts = [t("lobby.games_note", {
    games: t("lobby.games", { count: games }),
    rounds: t("lobby.rounds", { count: rounds }),
    players,
  })];
  if (target) parts.push(t("lobby.games_note_target", { target }));
  if (players > 4) parts.push(t("lobby.games_note_xp"));
  $("#games-note").textContent = parts.join(" ");
  $("#games-summary").textContent = target ? t("lobby.games_up_to", { count: games }) : t("lobby.games", { count: games });
}

// Options a preset leaves to the players: how long the match lasts, and hints.
const BESIDE_A_PRESET = ["preset", "rounds", "target_score", "match_winner", "hints"];

// The rules as the API takes them, from every [data-rule] control of the form. A preset sets
// every other option itself (docs/CLOCKS.md); a chess clock has no per-turn cap here.
export function chosenRules(form) {
  const rules = {};
  for (const control of form.querySelectorAll("[data-rule]")) {
    const kind = control.dataset.rule;
    if (kind === "bool") rules[control.name] = control.checked;
    else if (kind === "text") rules[control.name] = control.value;
    else if (kind === "json") rules[control.name] = JSON.parse(control.value);
    else if (kind === "optional-int") rules[control.name] = control.value.trim() === "" ? null : Number(control.value);
    else rules[control.name] = Number(control.value);
  }
  if (rules.clock?.type === "bank") delete rules.turn_seconds;
  if (rules.preset && rules.preset !== "official") {
    for (const name of Object.keys(rules)) if (!BESIDE_A_PRESET.includes(name)) delete rules[name];
  }
  return rules;
}

export function setCreating(creating) {
  $("#create-button").disabled = creating;
  if (creating) $("#create-error").hidden = true;
}

// After a language switch: the lobby's words written by JavaScript, in the new language.
export function redrawLobby() {
  $("#create-error").hidden = true; // a message the referee wrote is in the old language
  if ($("#lobby").hidden) return;
  document.title = t("lobby.page_title");
  numberPlayerRows();
  describeMatchLength();
}
