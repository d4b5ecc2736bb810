// Templates: the elements the view puts on the page, built detached from the document and
// filled with text (never with markup from the referee or a player).

import { t } from "./i18n.js";

function element(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

export function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

// A player's chip: name (with a bot or left tag), tiles left, melded or not, score.
export function playerChip(player, { name, current, you }) {
  const chip = element("div", "player");
  chip.setAttribute("role", "group");
  if (current) chip.classList.add("current");
  if (you) chip.classList.add("you");
  chip.dataset.seat = String(player.seat);
  const label = [
    name,
    player.left ? t("player.left") : player.bot ? t("player.bot") : null,
    t("player.tiles", { count: player.rack_count }),
    player.melded ? t("player.has_melded") : t("player.has_not_melded"),
    t("player.score_label", { score: player.score }),
    current ? t("player.to_play") : null,
  ].filter(Boolean).join(", ");
  chip.setAttribute("aria-label", label);
  chip.innerHTML = `
    <div class="player-name"></div>
    <div class="player-stats">
      <span class="count"><span class="mini-tile" aria-hidden="true"></span></span>
      <span class="melded"></span>
      <span class="score"></span>
    </div>`;
  const nameBox = chip.querySelector(".player-name");
  nameBox.textContent = name;
  chip.querySelector(".count").title = t("player.count_title");
  chip.querySelector(".melded").title = t("player.melded_title");
  chip.querySelector(".score").title = t("player.score_title");
  if (player.bot) {
    const tag = element("span", player.left ? "tag left" : "tag", player.left ? t("player.left_tag") : t("player.bot"));
    nameBox.append(" ", tag);
  }
  chip.querySelector(".count").append(String(player.rack_count));
  const melded = chip.querySelector(".melded");
  melded.textContent = player.melded ? t("player.melded") : t("player.not_melded");
  melded.classList.toggle("yes", player.melded);
  chip.querySelector(".score").textContent = t("player.points", { score: `${player.score >= 0 && player.score ? "+" : ""}${player.score}` });
  return chip;
}

// The gap before tile `i` of a set, where it can be split.
export function splitButton(setId, i, label) {
  const split = element("button", "split");
  split.type = "button";
  split.dataset.setId = setId;
  split.dataset.index = String(i);
  split.setAttribute("aria-label", label);
  split.dataset.focusKey = `split:${setId}:${i}`;
  split.title = t("game.split_here");
  return split;
}

// Shown while a tile is selected: where it can go, for keyboards (and tapping).
export function placeButton(label, focusKey) {
  const button = element("button", "place", "+");
  button.dataset.focusKey = focusKey;
  button.type = "button";
  button.setAttribute("aria-label", label);
  return button;
}

// The meld checker's note under a set: its kind and points, or why it is not a set.
export function setNote(mark) {
  const text = mark.valid
    ? t("table.set_note", { kind: mark.kind === "run" ? t("table.run") : t("table.group"), points: mark.points })
    : mark.reason;
  const note = element("div", "set-note", text);
  note.title = text;
  return note;
}

export function newSetZone(selected) {
  const zone = element("button", "new-set", t("table.new_set"));
  zone.type = "button";
  zone.setAttribute("aria-label", selected ? t("table.place_new") : t("table.new_set_label"));
  zone.dataset.focusKey = "new-set";
  return zone;
}

export function emptyTable() {
  return element("p", "empty", t("table.empty"));
}

// The initial meld's progress: points so far of the threshold, and what is missing.
export function meldContent(box, { points, threshold, verdict }) {
  const percent = threshold ? Math.min(100, Math.round((points / threshold) * 100)) : 100;
  box.innerHTML = `
    <div class="meld-text"><span class="meld-label"></span> <strong class="meld-points"></strong> / <span class="meld-of"></span>
      <span class="meld-verdict"></span></div>
    <div class="meld-bar" role="progressbar" aria-valuemin="0"
         aria-valuemax="${threshold}" aria-valuenow="${points}"><span style="width:${percent}%"></span></div>`;
  box.querySelector(".meld-label").textContent = t("meld.label");
  box.querySelector(".meld-of").textContent = t("meld.points", { count: threshold });
  box.querySelector(".meld-bar").setAttribute("aria-label", t("meld.bar_label"));
  box.querySelector(".meld-points").textContent = String(points);
  box.querySelector(".meld-verdict").textContent = verdict;
}

// The score table of the result dialog: each player's game score, total and games won.
export function scoresTable(players, outcome, nameOf) {
  const table = element("table", "scores");
  const head = table.createTHead().insertRow();
  for (const key of ["result.col_player", "result.col_game", "result.col_total", "result.col_won"]) {
    const th = element("th", "", t(key));
    th.scope = "col";
    head.append(th);
  }
  const tbody = document.createElement("tbody");
  for (const player of players) {
    const row = document.createElement("tr");
    if (outcome && outcome.winner === player.seat) row.className = "winner";
    const game = outcome ? outcome.scores[player.seat] : 0;
    for (const text of [nameOf(player.seat), signed(game), signed(player.score), String(player.games_won)]) {
      row.append(element("td", "", text));
    }
    tbody.append(row);
  }
  table.append(tbody);
  return table;
}

export function linkButton(className, text) {
  const button = element("button", `link-button ${className}`, text);
  button.type = "button";
  button.setAttribute("aria-label", text);
  return button;
}

// One seat in the seat links dialog: a bot, or a person's link with a copy button.
export function inviteItem(seat, link, { mine }) {
  const item = document.createElement("li");
  const head = document.createElement("div");
  head.append(element("strong", "", seat.name));
  item.append(head);
  if (!link) {
    head.append(` ${t("invite.bot")}`);
    return item;
  }
  const input = document.createElement("input");
  input.readOnly = true;
  input.value = link;
  input.setAttribute("aria-label", t("invite.link_for", { name: seat.name }));
  const copy = element("button", "copy", t("invite.copy"));
  copy.type = "button";
  copy.dataset.link = link;
  copy.setAttribute("aria-label", t("invite.copy_label", { name: seat.name }));
  if (mine) head.append(` ${t("invite.you")}`);
  item.append(input, copy);
  return item;
}

export function spectatorItem(link) {
  const watch = document.createElement("li");
  const head = document.createElement("div");
  head.append(element("strong", "", t("invite.spectators")), ` ${t("invite.spectators_note")}`);
  watch.append(head);
  const input = document.createElement("input");
  input.readOnly = true;
  input.value = link;
  input.setAttribute("aria-label", t("invite.spectators_link"));
  watch.append(input);
  return watch;
}

// A row of the lobby's player list: name, bot toggle, remove.
export function playerRow() {
  const li = document.createElement("li");
  li.innerHTML = `
    <input type="text" maxlength="40" required autocomplete="off">
    <label class="bot-toggle"><input type="checkbox"> <span class="bot-text"></span></label>
    <button type="button" class="remove">×</button>`;
  return li;
}
