// The reference web client. It plays through the public API only and holds no rule logic
// beyond display: the referee decides what is legal, and the page shows what it says.
//
//   /                      the lobby: create a match, join one
//   /#m=<id>&t=<token>     a seat at a match (the token stays in the fragment: never sent
//                          to a server or written to its logs)
//   /#m=<id>               watching a match

import { api, ApiError, newKey } from "./api.js";
import { language, onLanguageChange, setLanguage, startI18n, t } from "./i18n.js";
import { Countdown, ServerClock, formatSeconds, tone, unlockAudio } from "./clock.js";
import { enableDrag } from "./drag.js";
import { Follower } from "./live.js";
import { byColour, byNumber, describe, minus, tileElement } from "./tiles.js";
import { Workspace, orderLike } from "./workspace.js";

const $ = (selector) => document.querySelector(selector);
const DRAFT_DELAY = 600; // ms of quiet before the draft is shared
const MELD_DELAY = 200;

const state = {
  matchId: null,
  token: null,
  view: null,
  clock: new ServerClock(),
  work: new Workspace(),
  workKey: null,
  selected: null,
  dragging: false,
  pressing: false, // a pointer is down on the table or the rack (see holdRedrawsWhilePressed)
  pendingRender: false,
  queue: Promise.resolve(),
  draftTimer: null,
  sentDraft: null,
  meldTimer: null,
  meld: null, // {key, result, sets: [setId]}
  fresh: [], // codes just drawn
  rackOrder: [],
  log: [],
  dialogFor: null,
  follower: null,
  countdown: null,
  refetching: false,
  refetchAgain: false,
  pollExpiry: null,
  leftSeat: null, // the seat this page's player left (the view no longer names it)
  watchingRematch: false,
  focusKey: null, // the element to focus after the next render (the tile or target acted on)
  lastInput: "pointer", // "keyboard" or "pointer": keyboard focus may scroll the page
};

// ---------------------------------------------------------------------------------------
// Start

function route() {
  const params = new URLSearchParams(location.hash.slice(1));
  const matchId = params.get("m");
  if (matchId) {
    startGame(matchId, params.get("t"));
  } else {
    startLobby();
  }
}

window.addEventListener("hashchange", () => location.reload());
await startI18n();
wireLanguageSwitch();
document.addEventListener("keydown", () => { state.lastInput = "keyboard"; }, true);
document.addEventListener("pointerdown", () => { state.lastInput = "pointer"; }, true);
document.addEventListener("pointerdown", unlockAudio, { once: true });
document.addEventListener("keydown", unlockAudio, { once: true });
route();

// ---------------------------------------------------------------------------------------
// Language: the switch in the top bar, and redrawing what JavaScript wrote

function wireLanguageSwitch() {
  const select = $("#language");
  select.value = language();
  $("#language-code").textContent = language().toUpperCase(); // the switch's face on a phone
  select.addEventListener("change", () => setLanguage(select.value));
  onLanguageChange((code) => {
    select.value = code;
    $("#language-code").textContent = code.toUpperCase();
    if (!$("#lobby").hidden) {
      document.title = t("lobby.page_title");
      numberPlayerRows();
      renameDefaultPlayers();
      describeMatchLength();
    }
    // A message the referee wrote is in the old language: it goes (the next one comes in the new).
    $("#create-error").hidden = true;
    if (state.view) {
      hideProblem();
      render();
      redrawLog();
      setupInvite({ open: false });
      showLeftBanner();
      scheduleMeldCheck(); // the checker's notes on the sets, in the new language
    }
  });
}

// ---------------------------------------------------------------------------------------
// Lobby

function startLobby() {
  $("#lobby").hidden = false;
  document.title = t("lobby.page_title");
  addPlayerRow(["lobby.default_you", {}], false);
  addPlayerRow(["lobby.default_bot", {}], true);
  $("#add-human").addEventListener("click", () => addPlayerRow(["lobby.default_player", { n: rows().length + 1 }], false));
  $("#add-bot").addEventListener("click", () => addPlayerRow(["lobby.default_bot_n", { n: rows().filter((r) => r.bot).length + 1 }], true));
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

function rows() {
  return [...document.querySelectorAll("#player-rows li")].map((li) => ({
    name: li.querySelector("input[type=text]").value.trim(),
    bot: li.querySelector("input[type=checkbox]").checked,
  }));
}

// After a language switch: the default names nobody edited, in the new language.
function renameDefaultPlayers() {
  for (const input of document.querySelectorAll("#player-rows input[data-default-name]")) {
    if (input.value !== input.dataset.defaultText) continue; // the user's own name
    input.value = t(...JSON.parse(input.dataset.defaultName));
    input.dataset.defaultText = input.value;
  }
}

// Row labels follow the row's place: after a removal, "player 3" is the third row again.
function numberPlayerRows() {
  const list = $("#player-rows");
  [...list.children].forEach((li, i) => {
    const n = i + 1;
    li.querySelector("input[type=text]").setAttribute("aria-label", t("lobby.row_name", { n }));
    li.querySelector("input[type=checkbox]").setAttribute("aria-label", t("lobby.row_bot", { n }));
    const remove = li.querySelector(".remove");
    remove.setAttribute("aria-label", t("lobby.row_remove", { n }));
    li.querySelector(".bot-text").textContent = t("lobby.row_bot_toggle");
    remove.disabled = list.children.length <= 2;
  });
  $("#add-human").disabled = list.children.length >= 6;
  $("#add-bot").disabled = list.children.length >= 6;
}

// A row starts with a default name, [key, params] of the catalogue: while the user leaves it
// as it is, it follows the language (renameDefaultPlayers); an edited name stays.
function addPlayerRow(defaultName, bot) {
  const list = $("#player-rows");
  if (list.children.length >= 6) return;
  const li = document.createElement("li");
  li.innerHTML = `
    <input type="text" maxlength="40" required autocomplete="off">
    <label class="bot-toggle"><input type="checkbox"> <span class="bot-text"></span></label>
    <button type="button" class="remove">×</button>`;
  const input = li.querySelector("input[type=text]");
  input.value = t(...defaultName);
  input.dataset.defaultName = JSON.stringify(defaultName);
  input.dataset.defaultText = input.value;
  li.querySelector("input[type=checkbox]").checked = bot;
  li.querySelector(".remove").addEventListener("click", () => {
    if (list.children.length <= 2) return;
    const next = li.nextElementSibling || li.previousElementSibling;
    li.remove();
    numberPlayerRows();
    describeMatchLength();
    next?.querySelector("input[type=text]")?.focus();
  });
  list.append(li);
  numberPlayerRows();
  describeMatchLength();
}

// The rules as the API takes them, from every [data-rule] control of the form.
function chosenRules(form) {
  const rules = {};
  for (const control of form.querySelectorAll("[data-rule]")) {
    const kind = control.dataset.rule;
    if (kind === "bool") rules[control.name] = control.checked;
    else if (kind === "text") rules[control.name] = control.value;
    else if (kind === "optional-int") rules[control.name] = control.value.trim() === "" ? null : Number(control.value);
    else rules[control.name] = Number(control.value);
  }
  return rules;
}

// How many games the match has: a round is one game per player (000), so "1 round" with
// three players is three games, each started by the next player.
function describeMatchLength() {
  const form = $("#create-form");
  const players = $("#player-rows").children.length;
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

async function createMatch(event) {
  event.preventDefault();
  const form = event.target;
  const errorBox = $("#create-error");
  errorBox.hidden = true;
  const players = rows().map((row) => (row.bot ? { name: row.name || t("lobby.default_bot"), bot: true } : { name: row.name }));
  const body = { players, rules: chosenRules(form) };
  $("#create-button").disabled = true;
  try {
    const created = await api.createMatch(body);
    sessionStorage.setItem(`rummikub:seats:${created.id}`, JSON.stringify(created.seats));
    const mine = created.seats.find((seat) => !seat.bot) || created.seats[0];
    if (created.seats.filter((seat) => !seat.bot).length > 1) {
      sessionStorage.setItem(`rummikub:invite:${created.id}`, "1");
    }
    location.hash = `m=${encodeURIComponent(created.id)}&t=${encodeURIComponent(mine.token)}`;
  } catch (error) {
    showProblem(errorBox, error);
    $("#create-button").disabled = false;
  }
}

// ---------------------------------------------------------------------------------------
// Game

async function startGame(matchId, token) {
  state.matchId = matchId;
  state.token = token;
  state.leftSeat = rememberedLeave(matchId, token);
  $("#game").hidden = false;
  document.body.classList.add("in-game");
  if (!token) document.body.classList.add("spectator");
  wireGame();
  state.countdown = new Countdown(state.clock, {
    onTick: showClock,
    onWarning: () => {
      if (isMyTurn()) tone("warning");
    },
    onExpired: onTurnExpired,
  });
  // The first view: a failure that may pass (no network, a 5xx such as the store being
  // unreachable, 408, 429) is shown and the request tried again, 1 s later, then 2, 4 ... 30 s;
  // one that will not (404: no such match, 401/403: a wrong link) is shown and ends here.
  for (let wait = 1000; ; wait = Math.min(wait * 2, 30000)) {
    try {
      await refetch();
      break;
    } catch (error) {
      $("#turn-text").textContent = "";
      showProblem($("#problem"), error);
      if (!mayPass(error)) return;
      const retrying = document.createElement("p");
      retrying.className = "retrying";
      retrying.textContent = t("problem.retrying", { count: wait / 1000 });
      $("#problem").append(retrying);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  hideProblem(); // what a failed try showed
  const view = state.view;
  state.follower = new Follower(matchId, token, {
    onEvent: addToLog,
    onStale: (version) => refetch(version).catch(() => {}),
    onView: (fresh) => acceptView(fresh),
    onMode: showConnection,
    forcePolling: new URLSearchParams(location.search).has("poll"),
  });
  state.follower.start(Math.max(0, view.version - 30), view.version);
  setupInvite();
}

// Whether asking again later may succeed: no answer at all, a server error, or too many requests.
function mayPass(error) {
  return !(error instanceof ApiError) || error.status >= 500 || error.status === 429 || error.status === 408;
}

function wireGame() {
  const game = $("#game");
  holdRedrawsWhilePressed(game);
  enableDrag(game, {
    canDrag: () => isMyTurn(),
    onDrop: (tileId, target) => moveTile(tileId, target),
    onStart: () => {
      state.dragging = true;
      state.selected = null;
    },
    onEnd: () => {
      state.dragging = false;
      if (state.pendingRender) render();
    },
  });
  game.addEventListener("click", onBoardClick);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && state.selected) unselect();
  });
  $("#play-button").addEventListener("click", () => act("play"));
  $("#draw-button").addEventListener("click", () => act("draw"));
  $("#pass-button").addEventListener("click", () => act("pass"));
  $("#reset-button").addEventListener("click", resetWork);
  $("#hint-button").addEventListener("click", showHint);
  $("#unselect-button").addEventListener("click", unselect);
  $("#split-button").addEventListener("click", splitAtSelected);
  $("#sort-number").addEventListener("click", () => sortRack(byNumber));
  $("#sort-colour").addEventListener("click", () => sortRack(byColour));
  $("#next-game-button").addEventListener("click", () => act("next-game"));
  $("#result-close").addEventListener("click", () => $("#result-dialog").close());
  $("#invite-close").addEventListener("click", () => $("#invite-dialog").close());
  $("#invite-button").addEventListener("click", () => $("#invite-dialog").showModal());
  $("#leave-button").addEventListener("click", () => $("#leave-dialog").showModal());
  $("#leave-cancel").addEventListener("click", () => $("#leave-dialog").close());
  $("#leave-confirm").addEventListener("click", leave);
  $("#rematch-button").addEventListener("click", rematch);
}

// A tap is a press and a release. A redraw between the two (an answer, a live event) replaces
// the pressed tile or place, and the browser then sends the click to no tile at all: the tap
// is lost. So while a pointer is down on the table or the rack, redraws wait; the one held
// back runs after the click (which the release brings in the same task, and which redraws
// anyway when it acts).
function holdRedrawsWhilePressed(game) {
  game.addEventListener("pointerdown", (event) => {
    if (event.target.closest("#table-sets, #rack")) state.pressing = true;
  }, true);
  const release = () => {
    if (!state.pressing) return;
    state.pressing = false;
    setTimeout(() => {
      if (state.pendingRender && !state.dragging) render();
    }, 0);
  };
  document.addEventListener("pointerup", release, true);
  document.addEventListener("pointercancel", release, true);
  window.addEventListener("blur", release);
}

function me() {
  const view = state.view;
  return view && view.seat !== undefined ? view.players[view.seat] : null;
}

// This page's seat: the view's, or the one its player left (a left seat sees the public view).
function mySeat() {
  const view = state.view;
  if (view && view.seat !== undefined) return view.seat;
  return state.leftSeat;
}

// A seat token whose view names no seat belongs to a seat that left.
function hasLeft() {
  return Boolean(state.token && state.view && state.view.seat === undefined);
}

function isMyTurn() {
  const view = state.view;
  return Boolean(view && view.seat !== undefined && view.status === "playing" && view.current_seat === view.seat);
}

// A seat's name as of event `version` (now, without one). Once its player has left, the seat's
// moves are its bot's: "Bot (for Ann)", and the page of the player who left no longer says "you".
function nameOf(seat, version = Infinity) {
  const player = state.view?.players[seat];
  if (!player) return t("player.seat", { seat });
  if (version > leftAt(seat)) return t("player.bot_for", { name: player.name });
  return seat === mySeat() ? t("player.you", { name: player.name }) : player.name;
}

// The event version at which `seat`'s player left: its player_left event in the log; for a seat
// the view says has left without one (it fell out of the log), before every logged event.
function leftAt(seat) {
  const event = state.log.find((e) => e.type === "player_left" && e.seat === seat);
  if (event) return event.version;
  return state.view?.players[seat]?.left ? -Infinity : Infinity;
}

// ---------------------------------------------------------------------------------------
// Views from the referee

// Fetch the view again; `version`, one an event announced: the referee is asked for a view at
// least that new (a worker may not have heard of it yet, README "How a worker knows its copy is
// current"), waiting a few seconds at most.
async function refetch(version = 0) {
  state.announced = Math.max(state.announced || 0, version);
  if (state.refetching) {
    state.refetchAgain = true;
    return;
  }
  state.refetching = true;
  try {
    do {
      state.refetchAgain = false;
      let times = null;
      const options = { clock: (...t) => { times = t; } };
      if (state.announced > (state.view ? state.view.version : 0)) {
        Object.assign(options, { waitVersion: state.announced - 1, waitSeconds: 5 });
      }
      const view = await api.getMatch(state.matchId, state.token, options);
      acceptView(view, times);
    } while (state.refetchAgain);
  } finally {
    state.refetching = false;
  }
}

function acceptView(view, times = null) {
  if (times) state.clock.observe(view.server_time, times[0], times[1]);
  if (state.view && view.version < state.view.version) return;
  state.view = view;
  if (state.follower) state.follower.setKnownVersion(view.version);
  render();
}

// ---------------------------------------------------------------------------------------
// Rendering

function render() {
  if (state.dragging || state.pressing) {
    state.pendingRender = true;
    return;
  }
  state.pendingRender = false;
  const view = state.view;
  if (!view) return;
  const focused = document.activeElement?.dataset?.focusKey || null;
  syncWork();
  renderHeader();
  renderPlayers();
  renderTurn();
  renderTable();
  renderRack();
  renderActions();
  renderMeld();
  renderSelection();
  renderResult();
  renderLeave();
  restoreFocus(focused);
  const turnKey = `${view.game_number}:${view.current_seat}:${view.turn_started}`;
  state.countdown.set(view.status === "playing" ? view.turn_deadline : null, turnKey);
}

// Rebuild your arrangement when the turn, the table or your rack changed under it.
function syncWork() {
  const view = state.view;
  if (!view.rack) return;
  const key = JSON.stringify([view.game_number, view.current_seat, view.turn_started, view.table, view.rack]);
  if (key === state.workKey) return;
  const first = state.workKey === null;
  state.workKey = key;
  const ownDraft = first && isMyTurn() && view.draft ? view.draft : null;
  state.work.reset(view.table, view.rack, { draft: ownDraft, rackOrder: state.rackOrder });
  state.sentDraft = ownDraft ? JSON.stringify(ownDraft) : JSON.stringify(view.table);
  state.selected = null;
  state.meld = null;
  clearProblemMarks();
}

function renderHeader() {
  const view = state.view;
  // A round is one game per player (000): "1 round" with two players is "Game 1 of 2".
  const games = view.games_total > 1
    ? t("header.game_of", { n: view.game_number, total: view.games_total })
    : t("header.game", { n: view.game_number });
  const round = Math.ceil(view.game_number / view.players.length);
  $("#match-info").innerHTML = "";
  const parts = [games, t("header.round_of", { n: round, total: view.rounds })];
  const target = view.rules.target_score;
  if (target) parts.push(t("header.target", { count: target }));
  parts.push(t("header.pool", { count: view.pool_count }));
  if (!state.token || view.seat === undefined) parts.push(t("header.watching"));
  for (const text of parts) {
    const span = document.createElement("span");
    span.textContent = text;
    $("#match-info").append(span);
  }
  document.title = isMyTurn() ? t("header.title_your_turn") : t("app.title");
}

function renderPlayers() {
  const view = state.view;
  const box = $("#players");
  box.innerHTML = "";
  for (const player of view.players) {
    const chip = document.createElement("div");
    chip.className = "player";
    chip.setAttribute("role", "group");
    const current = view.status === "playing" && view.current_seat === player.seat;
    if (current) chip.classList.add("current");
    if (player.seat === view.seat) chip.classList.add("you");
    chip.dataset.seat = String(player.seat);
    const label = [
      nameOf(player.seat),
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
    const name = chip.querySelector(".player-name");
    name.textContent = nameOf(player.seat);
    chip.querySelector(".count").title = t("player.count_title");
    chip.querySelector(".melded").title = t("player.melded_title");
    chip.querySelector(".score").title = t("player.score_title");
    if (player.bot) {
      const tag = document.createElement("span");
      tag.className = player.left ? "tag left" : "tag";
      tag.textContent = player.left ? t("player.left_tag") : t("player.bot");
      name.append(" ", tag);
    }
    chip.querySelector(".count").append(String(player.rack_count));
    chip.querySelector(".melded").textContent = player.melded ? t("player.melded") : t("player.not_melded");
    chip.querySelector(".melded").classList.toggle("yes", player.melded);
    chip.querySelector(".score").textContent = t("player.points", { score: `${player.score >= 0 && player.score ? "+" : ""}${player.score}` });
    box.append(chip);
  }
}

function renderTurn() {
  const view = state.view;
  const text = $("#turn-text");
  text.className = "turn-text";
  if (view.status === "playing") {
    if (isMyTurn()) {
      text.classList.add("mine");
      text.textContent = me().melded
        ? t("turn.yours")
        : t("turn.yours_meld", { points: view.rules.initial_meld_points });
    } else {
      const player = view.players[view.current_seat];
      text.textContent = player.bot
        ? t("turn.bot_thinking", { name: player.name })
        : t("turn.playing", { name: nameOf(view.current_seat) });
    }
  } else if (view.status === "game_over") {
    text.textContent = t("turn.game_over", { n: view.game_number });
  } else if (view.status === "canceled") {
    text.textContent = t("turn.canceled");
  } else if (view.winner === null || view.winner === undefined) {
    text.textContent = t("turn.abandoned");
  } else {
    text.textContent = t("turn.match_over", { name: nameOf(view.winner) });
  }
}

function showClock(remaining) {
  const clock = $("#clock");
  if (remaining === null) {
    clock.hidden = true;
    return;
  }
  clock.hidden = false;
  clock.textContent = remaining > 0 ? formatSeconds(remaining) : t("clock.time");
  clock.classList.toggle("warn", remaining <= 10 && remaining > 0);
  clock.classList.toggle("expired", remaining <= 0);
  clock.classList.toggle("mine", isMyTurn());
}

function onTurnExpired() {
  const view = state.view;
  if (!view || view.status !== "playing") return;
  const mine = isMyTurn();
  if (mine) {
    tone("alert");
    const penalty = view.rules.failed_turn_penalty ?? 3;
    showNotice(state.work.changed()
      ? t("notice.times_up_draft", { count: penalty })
      : t("notice.times_up"), "alert");
  }
  // The referee settles the expired turn on the next request: ask until it has.
  const version = view.version;
  let tries = 0;
  clearInterval(state.pollExpiry);
  state.pollExpiry = setInterval(async () => {
    tries += 1;
    if (state.view.version !== version || tries > 8) {
      clearInterval(state.pollExpiry);
      return;
    }
    await refetch().catch(() => {});
  }, 700);
}

function setLabel(set, index, codes) {
  return t("table.set_label", { n: index + 1, tiles: codes.map(describe).join(", ") });
}

function renderTable() {
  const view = state.view;
  const box = $("#table-sets");
  box.innerHTML = "";
  const mine = isMyTurn();
  const caption = $("#table-caption");
  caption.textContent = "";
  let sets;
  if (mine) {
    sets = state.work.sets.map((set) => ({ id: set.id, tiles: set.tiles }));
  } else {
    const laid = view.draft || view.table;
    const added = minus(laid.flat(), view.table.flat());
    if (view.draft && view.status === "playing") {
      caption.textContent = t("table.draft_caption", { name: nameOf(view.current_seat) });
    }
    sets = laid.map((codes, s) => ({
      id: `v${s}`,
      tiles: codes.map((code, i) => {
        const at = added.indexOf(code);
        if (at >= 0) added.splice(at, 1);
        return { id: null, code, added: at >= 0, key: `${s}.${i}` };
      }),
    }));
  }
  const marks = meldMarks();
  const problemSets = state.problemSets || new Set();
  sets.forEach((set, index) => {
    const el = document.createElement("div");
    el.className = "set";
    el.setAttribute("role", "group");
    const codes = set.tiles.map((tile) => tile.code);
    el.setAttribute("aria-label", setLabel(set, index, codes));
    if (mine) el.dataset.setId = set.id;
    set.tiles.forEach((tile, i) => {
      if (mine && i > 0) {
        const split = document.createElement("button");
        split.type = "button";
        split.className = "split";
        split.dataset.setId = set.id;
        split.dataset.index = String(i);
        split.setAttribute("aria-label", t("table.split_label", { n: index + 1, tile: describe(tile.code) }));
        split.dataset.focusKey = `split:${set.id}:${i}`;
        split.title = t("game.split_here");
        el.append(split);
      }
      const button = tileElement(tile.code, {
        id: mine ? tile.id : undefined,
        movable: mine,
        added: mine ? tile.origin === "rack" : tile.added,
      });
      button.dataset.focusKey = mine ? `tile:${tile.id}` : `seen:${tile.key}`;
      if (mine && tile.id === state.selected) {
        button.classList.add("selected");
        button.setAttribute("aria-pressed", "true");
      }
      el.append(button);
    });
    if (mine && state.selected) {
      el.append(placeButton(t("table.place_end", { n: index + 1 }), `place:${set.id}`));
    }
    const mark = marks.get(set.id);
    if (mark) {
      el.classList.add(mark.valid ? "valid" : "invalid");
      const note = document.createElement("div");
      note.className = "set-note";
      note.textContent = mark.valid
        ? t("table.set_note", { kind: mark.kind === "run" ? t("table.run") : t("table.group"), points: mark.points })
        : mark.reason;
      note.title = note.textContent;
      el.append(note);
    }
    if (problemSets.has(index)) el.classList.add("refused");
    box.append(el);
  });
  if (mine) {
    const zone = document.createElement("button");
    zone.type = "button";
    zone.className = "new-set";
    zone.setAttribute("aria-label", state.selected ? t("table.place_new") : t("table.new_set_label"));
    zone.dataset.focusKey = "new-set";
    zone.textContent = t("table.new_set");
    box.append(zone);
  }
  if (!sets.length && !mine) {
    const empty = document.createElement("p");
    empty.className = "empty";
    empty.textContent = t("table.empty");
    box.append(empty);
  }
}

// Shown while a tile is selected: where it can go, for keyboards (and tapping).
function placeButton(label, focusKey) {
  const button = document.createElement("button");
  button.dataset.focusKey = focusKey;
  button.type = "button";
  button.className = "place";
  button.textContent = "+";
  button.setAttribute("aria-label", label);
  return button;
}

function renderRack() {
  const view = state.view;
  const area = $("#rack-area");
  if (!view.rack) {
    area.hidden = true;
    return;
  }
  area.hidden = false;
  const mine = isMyTurn();
  const rack = $("#rack");
  rack.innerHTML = "";
  let tiles;
  if (mine) {
    tiles = state.work.rack;
  } else {
    const codes = orderLike(view.rack, state.rackOrder);
    tiles = codes.map((code, i) => ({ id: `r${i}`, code }));
  }
  state.rackOrder = tiles.map((tile) => tile.code);
  const fresh = [...state.fresh];
  const seen = new Map();
  for (const tile of tiles) {
    const at = fresh.indexOf(tile.code);
    if (at >= 0) fresh.splice(at, 1);
    const button = tileElement(tile.code, { id: tile.id, movable: mine, fresh: at >= 0 });
    // By code, not id: focus stays on "your second R7" when the turn changes and ids are new.
    seen.set(tile.code, (seen.get(tile.code) || 0) + 1);
    button.dataset.focusKey = `rack:${tile.code}#${seen.get(tile.code)}`;
    if (mine && tile.id === state.selected) {
      button.classList.add("selected");
      button.setAttribute("aria-pressed", "true");
    }
    rack.append(button);
  }
  const picked = mine && state.selected ? state.work.find(state.selected) : null;
  if (picked && picked.where === "set" && picked.tile.origin === "rack") {
    rack.append(placeButton(t("rack.place_back"), "place:rack"));
  }
  rack.classList.toggle("drop-ok", mine);
  $("#rack-title").textContent = t("rack.title", { count: tiles.length });
}

function renderActions() {
  const view = state.view;
  const mine = isMyTurn();
  const changed = mine && state.work.changed();
  $("#actions").hidden = !view.rack;
  $("#play-button").disabled = !changed;
  $("#draw-button").disabled = !mine || view.pool_count === 0;
  $("#pass-button").disabled = !mine || view.pool_count > 0;
  $("#reset-button").disabled = !changed;
  $("#hint-button").hidden = !view.rules.hints;
  $("#hint-button").disabled = !mine;
  $("#pass-button").hidden = view.pool_count > 0;
  $("#rack-area").classList.toggle("my-turn", mine);
}

// ---------------------------------------------------------------------------------------
// Building: moving tiles, sharing the draft, the meld checker

function onBoardClick(event) {
  const split = event.target.closest(".split");
  if (split && isMyTurn()) {
    splitSet(split.dataset.setId, Number(split.dataset.index));
    return;
  }
  if (!isMyTurn()) return;
  const tile = event.target.closest(".tile.movable");
  const selected = state.selected;
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
      state.selected = null;
      moveTile(selected, target);
      return;
    }
    if (tile && tile.dataset.id === selected) {
      unselect();
      return;
    }
  }
  if (tile) {
    state.selected = tile.dataset.id;
    state.focusKey = `tile:${tile.dataset.id}`;
    render();
  }
}

function unselect() {
  if (state.selected) state.focusKey = `tile:${state.selected}`;
  state.selected = null;
  render();
}

// Split the set before its tile at `index`; focus stays on that tile, now the new set's first.
function splitSet(setId, index) {
  const set = state.work.sets.find((s) => s.id === setId);
  const tile = set?.tiles[index];
  if (!tile || !state.work.split(setId, index)) return;
  state.selected = null;
  state.focusKey = `tile:${tile.id}`;
  workChanged();
}

function splitAtSelected() {
  const found = state.selected ? state.work.find(state.selected) : null;
  if (found && found.where === "set") splitSet(found.set.id, found.index);
}

// The selected tile and what can be done with it (tap or Enter on a place to move it there).
function renderSelection() {
  const bar = $("#selection");
  const found = isMyTurn() && state.selected ? state.work.find(state.selected) : null;
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
  const key = state.focusKey || (document.activeElement === document.body ? previous : null);
  state.focusKey = null;
  if (!key) return;
  const target = [...document.querySelectorAll("[data-focus-key]")].find(
    (el) => el.dataset.focusKey === key || (el.dataset.id && `tile:${el.dataset.id}` === key),
  );
  if (target && !target.disabled) target.focus({ preventScroll: state.lastInput !== "keyboard" });
}

function moveTile(tileId, target) {
  if (!isMyTurn()) return;
  if (!state.work.canMove(tileId, target)) {
    showNotice(t("notice.table_tile_stays"));
    render();
    return;
  }
  state.focusKey = `tile:${tileId}`;
  if (state.work.move(tileId, target)) workChanged();
  else render();
}

function workChanged() {
  hideProblem();
  render();
  scheduleDraft();
  scheduleMeldCheck();
}

function resetWork() {
  const view = state.view;
  state.work.reset(view.table, view.rack, { rackOrder: state.rackOrder });
  state.selected = null;
  workChanged();
  $("#rack .tile")?.focus({ preventScroll: true });
}

// The solver's best play (GET /hint), laid out as your draft: Play takes it, Undo all undoes it.
async function showHint() {
  if (!isMyTurn()) return;
  const button = $("#hint-button");
  button.disabled = true;
  try {
    const hint = await api.hint(state.matchId, state.token);
    if (!isMyTurn()) return;
    if (hint.status !== "play_found") {
      showNotice(hint.status === "no_play"
        ? (state.view.pool_count ? t("hint.no_play_draw") : t("hint.no_play_pass"))
        : t("hint.timeout"));
      return;
    }
    const view = state.view;
    state.work.reset(view.table, view.rack, { draft: hint.table, rackOrder: state.rackOrder });
    state.selected = null;
    workChanged();
    const placed = hint.placed.map(describe).join(", ");
    showNotice(t("hint.laid_out", { tiles: placed, points: hint.points }));
    $("#play-button").focus({ preventScroll: true });
  } catch (error) {
    showProblem($("#problem"), error);
  } finally {
    button.disabled = !isMyTurn();
  }
}

function sortRack(compare) {
  if (isMyTurn()) state.work.sortRack(compare);
  state.rackOrder = [...state.rackOrder].sort(compare);
  if (isMyTurn()) state.rackOrder = state.work.rackCodes();
  render();
}

function scheduleDraft() {
  clearTimeout(state.draftTimer);
  state.draftTimer = setTimeout(() => enqueue(shareDraft), DRAFT_DELAY);
}

// Share the arrangement (PUT /draft) so everyone sees it live.
async function shareDraft() {
  state.draftTimer = null;
  if (!isMyTurn()) return;
  const table = state.work.tableCodes();
  const text = JSON.stringify(table);
  if (text === state.sentDraft) return;
  const send = () => api.draft(state.matchId, state.token, table, state.view.version, newKey());
  try {
    let answer;
    try {
      answer = await send();
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 412) throw error;
      await refetch(); // someone else's change (a bot, the clock): try once more on it
      if (!isMyTurn()) return;
      answer = await send();
    }
    state.sentDraft = text;
    acceptView(answer.match);
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) {
      await refetch().catch(() => {});
      return;
    }
    showProblem($("#problem"), error);
  }
}

function enqueue(task) {
  state.queue = state.queue.then(task, task);
  return state.queue;
}

function scheduleMeldCheck() {
  clearTimeout(state.meldTimer);
  state.meldTimer = setTimeout(meldCheck, MELD_DELAY);
}

// The referee's meld checker on the sets you are building (all of them before your
// initial meld: the running total counts toward the threshold).
async function meldCheck() {
  if (!isMyTurn()) return;
  const changed = state.work.changedSets();
  const sets = changed.map(({ set }) => set.tiles.map((tile) => tile.code));
  const key = JSON.stringify([language(), sets]); // its words are in the page's language
  if (state.meld && state.meld.key === key) return;
  if (!sets.length) {
    state.meld = { key, result: null, setIds: [] };
    render();
    return;
  }
  const rules = {
    initial_meld_points: state.view.rules.initial_meld_points,
    joker_worth_zero_in_meld: Boolean(state.view.rules.joker_worth_zero_in_meld),
  };
  try {
    const result = await api.meldCheck(sets, rules);
    const now = state.work.changedSets().map(({ set }) => set.tiles.map((t) => t.code));
    if (JSON.stringify([language(), now]) !== key) return;
    state.meld = { key, result, setIds: changed.map(({ set }) => set.id) };
    render();
  } catch {
    /* the checker is a help, not a gate */
  }
}

function meldMarks() {
  const marks = new Map();
  if (!isMyTurn() || !state.meld || !state.meld.result) return marks;
  state.meld.setIds.forEach((id, i) => {
    const reading = state.meld.result.sets[i];
    if (reading) marks.set(id, reading);
  });
  return marks;
}

function renderMeld() {
  const box = $("#meld");
  const player = me();
  if (!isMyTurn() || !player || player.melded) {
    box.hidden = true;
    return;
  }
  const threshold = state.view.rules.initial_meld_points;
  const result = state.meld?.result;
  const points = result ? result.points : 0;
  const allValid = result ? result.sets.every((set) => set.valid) : true;
  const meets = Boolean(result && result.meets_initial_meld);
  box.hidden = false;
  box.className = `meld${meets ? " meets" : ""}`;
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
  box.querySelector(".meld-verdict").textContent = meets
    ? t("meld.enough")
    : !allValid
      ? t("meld.fix_invalid")
      : points < threshold
        ? t("meld.more_needed", { count: threshold - points })
        : "";
}

// ---------------------------------------------------------------------------------------
// Acting: play, draw, pass, next game

async function act(kind) {
  unlockAudio();
  clearTimeout(state.draftTimer);
  state.draftTimer = null;
  const key = newKey(); // one per user action, kept across the retry below
  const buttons = document.querySelectorAll("#actions button, #next-game-button");
  buttons.forEach((b) => { b.disabled = true; });
  await enqueue(async () => {
    const call = () => {
      const { matchId, token } = state;
      const version = state.view.version;
      if (kind === "play") return api.play(matchId, token, state.work.tableCodes(), version, key);
      if (kind === "draw") return api.draw(matchId, token, version, key);
      if (kind === "pass") return api.pass(matchId, token, version, key);
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
        const before = state.workKey;
        await refetch();
        if (state.workKey !== before || (kind !== "next-game" && !isMyTurn())) throw error;
        answer = await call();
      }
      hideProblem();
      afterMove(kind, answer);
    } catch (error) {
      showProblem($("#problem"), error);
      if (error instanceof ApiError && [409, 412].includes(error.status)) await refetch().catch(() => {});
    }
  });
  render();
}

function afterMove(kind, answer) {
  const drawn = answer.drawn || [];
  state.fresh = drawn;
  if (kind === "draw") {
    showNotice(drawn.length ? t("notice.you_drew_tiles", { tiles: drawn.map(describe).join(", ") }) : t("notice.you_drew"));
  } else if (kind === "play") {
    showNotice(t("notice.play_accepted"));
  } else if (kind === "pass") {
    showNotice(t("notice.you_passed"));
  } else {
    state.dialogFor = null;
    $("#result-dialog").close();
    showNotice(t("notice.new_game"));
  }
  acceptView(answer.match);
}

// ---------------------------------------------------------------------------------------
// Game over, match over

function renderResult() {
  const view = state.view;
  const dialog = $("#result-dialog");
  if (view.status === "playing" || view.status === "canceled") {
    if (dialog.open) dialog.close();
    return;
  }
  const key = `${view.game_number}:${view.status}`;
  const outcome = view.last_outcome;
  const finished = view.status === "finished";
  const abandoned = finished && (view.winner === null || view.winner === undefined);
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
  const table = document.createElement("table");
  table.className = "scores";
  const head = table.createTHead().insertRow();
  for (const key of ["result.col_player", "result.col_game", "result.col_total", "result.col_won"]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = t(key);
    head.append(th);
  }
  const tbody = document.createElement("tbody");
  for (const player of view.players) {
    const row = document.createElement("tr");
    if (outcome && outcome.winner === player.seat) row.className = "winner";
    const game = outcome ? outcome.scores[player.seat] : 0;
    for (const text of [nameOf(player.seat), signed(game), signed(player.score), String(player.games_won)]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.append(cell);
    }
    tbody.append(row);
  }
  table.append(tbody);
  body.append(table);
  $("#next-game-button").hidden = finished || !state.token;
  $("#next-game-button").disabled = false;
  $("#new-match-link").hidden = !finished;
  $("#result-close").hidden = false;
  const rematchButton = $("#rematch-button");
  rematchButton.hidden = !canRematch();
  rematchButton.textContent = view.rematch_id ? t("result.join_rematch") : t("result.rematch");
  rematchButton.setAttribute("aria-label", view.rematch_id ? t("result.join_rematch_label") : t("result.rematch_label"));
  if (canRematch() && !view.rematch_id) watchForRematch();
  if (state.dialogFor !== key) {
    state.dialogFor = key;
    if (!dialog.open) dialog.showModal();
  }
  // Keep a way back to the result once the dialog is closed.
  const text = $("#turn-text");
  if (canRematch() && !text.querySelector(".rematch")) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "link-button rematch";
    button.addEventListener("click", rematch);
    text.append(" ", button);
  }
  const inline = text.querySelector(".rematch");
  if (inline) {
    inline.textContent = view.rematch_id ? t("result.join_rematch") : t("result.rematch");
    inline.setAttribute("aria-label", inline.textContent);
  }
  if (!text.querySelector(".scores-link")) {
    const again = document.createElement("button");
    again.type = "button";
    again.className = "link-button scores-link";
    again.textContent = finished ? t("result.final_scores") : t("result.scores_next");
    again.setAttribute("aria-label", again.textContent);
    again.addEventListener("click", () => dialog.showModal());
    text.append(" ", again);
  }
}

function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

// ---------------------------------------------------------------------------------------
// Rematch: the first seat to ask creates it, the others join it (the same new match). Each
// call hands this seat a fresh token for the new match, and the page moves there.

function canRematch() {
  const view = state.view;
  return Boolean(view && view.status === "finished" && state.token && view.seat !== undefined);
}

async function rematch() {
  const box = $("#result-problem");
  box.hidden = true;
  const buttons = document.querySelectorAll("#rematch-button, #turn-text .rematch");
  buttons.forEach((b) => { b.disabled = true; });
  try {
    const created = await api.rematch(state.matchId, state.token, newKey());
    const seat = created.seats.find((s) => s.token) || created.seats[0];
    location.hash = `m=${encodeURIComponent(created.id)}&t=${encodeURIComponent(seat.token)}`;
  } catch (error) {
    if (!$("#result-dialog").open) $("#result-dialog").showModal();
    showProblem(box, error);
    buttons.forEach((b) => { b.disabled = false; });
  }
}

// The live stream ends with match_finished, so a rematch another seat asks for later
// (event rematch_created, the view's rematch_id) is watched for by long-polling the view.
async function watchForRematch() {
  if (state.watchingRematch) return;
  state.watchingRematch = true;
  while (state.view && !state.view.rematch_id) {
    try {
      const view = await api.getMatch(state.matchId, state.token, { waitVersion: state.view.version });
      if (view.version > state.view.version) {
        if (view.rematch_id) showNotice(t("notice.rematch_ready"));
        acceptView(view);
      }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Leaving: for good, a bot takes the seat (after a confirmation in #leave-dialog).

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
  const confirm = $("#leave-confirm");
  confirm.disabled = true;
  const seat = state.view.seat;
  try {
    clearTimeout(state.draftTimer);
    const answer = await enqueue(() => api.leave(state.matchId, state.token, newKey()));
    state.leftSeat = seat;
    try {
      localStorage.setItem(leaveKey(state.matchId), JSON.stringify({ token: state.token, seat }));
    } catch {
      /* the banner still shows: the view names no seat now */
    }
    $("#leave-dialog").close();
    hideProblem();
    acceptView(answer.match);
  } catch (error) {
    $("#leave-dialog").close();
    showProblem($("#problem"), error);
  } finally {
    confirm.disabled = false;
  }
}

function renderLeave() {
  const view = state.view;
  const seated = Boolean(state.token && view.seat !== undefined);
  $("#leave-button").hidden = !seated || !["playing", "game_over"].includes(view.status);
  document.body.classList.toggle("left-seat", hasLeft());
  showLeftBanner();
}

function showLeftBanner() {
  const banner = $("#left-banner");
  banner.hidden = !hasLeft();
  if (banner.hidden) return;
  const seat = mySeat();
  const player = seat !== null && seat !== undefined ? state.view.players[seat] : null;
  banner.textContent = player
    ? t("leave.done_named", { name: player.name })
    : t("leave.done");
}

// ---------------------------------------------------------------------------------------
// Messages

function showProblem(box, error) {
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
    state.problemSets = new Set(violations.map((v) => v.set_index).filter((i) => Number.isInteger(i)));
  } else {
    title.textContent = t("problem.unreachable");
  }
  box.append(title);
  if (list.children.length) box.append(list);
  if (state.view) render(); // the refused sets marked (not while a tap is pressed)
}

function hideProblem() {
  $("#problem").hidden = true;
  clearProblemMarks();
}

function clearProblemMarks() {
  state.problemSets = new Set();
}

let noticeTimer = null;
function showNotice(text, kind = "info") {
  const box = $("#notice");
  box.hidden = false;
  box.className = `notice ${kind}`;
  box.textContent = text;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { box.hidden = true; }, kind === "alert" ? 8000 : 5000);
}

function showConnection(mode) {
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

// ---------------------------------------------------------------------------------------
// The event log

function addToLog(event) {
  if (state.log.some((e) => e.version === event.version)) return;
  state.log.push(event);
  state.log.sort((a, b) => a.version - b.version);
  if (state.log.length > 60) state.log.shift();
  // A seat leaving renames its later moves (to its bot's), which may be in the log already.
  if (event.type === "player_left") redrawLog();
  else logItem(event);
}

// After a language switch: every entry again, in the new language.
function redrawLog() {
  $("#log").innerHTML = "";
  for (const event of state.log) logItem(event);
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
  const who = event.seat === null || event.seat === undefined ? "" : nameOf(event.seat, v);
  switch (event.type) {
    case "match_created":
      return t("log.match_created");
    case "first_player_draw":
      return t("log.first_player_draw", { name: nameOf(d.first_seat, v) });
    case "game_started":
      return t("log.game_started", { n: d.game_number, name: nameOf(d.first_seat, v) });
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
        : t("log.game_over", { n: d.game_number, name: nameOf(d.winner, v) });
    case "match_finished":
      return d.winner === null || d.winner === undefined
        ? t("log.match_abandoned")
        : t("log.match_finished", { name: nameOf(d.winner, v) });
    case "player_left":
      return t("log.player_left", { name: who });
    case "rematch_created":
      return t("log.rematch_created");
    case "match_canceled":
      return t("log.match_canceled");
    case "draft_updated":
    case "tokens_reissued":
    case "clock_advanced":
      return null;
    default:
      return event.type.replace(/_/g, " ");
  }
}

// ---------------------------------------------------------------------------------------
// Seat links

function setupInvite({ open = true } = {}) {
  const raw = sessionStorage.getItem(`rummikub:seats:${state.matchId}`);
  if (!raw) return;
  const seats = JSON.parse(raw);
  const list = $("#invite-list");
  list.innerHTML = "";
  const base = `${location.origin}${location.pathname}`;
  for (const seat of seats) {
    const item = document.createElement("li");
    const head = document.createElement("div");
    const name = document.createElement("strong");
    name.textContent = seat.name;
    head.append(name);
    item.append(head);
    if (seat.bot) {
      head.append(` ${t("invite.bot")}`);
    } else {
      const link = `${base}#m=${encodeURIComponent(state.matchId)}&t=${encodeURIComponent(seat.token)}`;
      const input = document.createElement("input");
      input.readOnly = true;
      input.value = link;
      input.setAttribute("aria-label", t("invite.link_for", { name: seat.name }));
      const copy = document.createElement("button");
      copy.type = "button";
      copy.textContent = t("invite.copy");
      copy.setAttribute("aria-label", t("invite.copy_label", { name: seat.name }));
      copy.addEventListener("click", async () => {
        input.select();
        try {
          await navigator.clipboard.writeText(link);
        } catch {
          document.execCommand?.("copy");
        }
        copy.textContent = t("invite.copied");
      });
      if (seat.token === state.token) head.append(` ${t("invite.you")}`);
      item.append(input, copy);
    }
    list.append(item);
  }
  const watch = document.createElement("li");
  const watchHead = document.createElement("div");
  const watchName = document.createElement("strong");
  watchName.textContent = t("invite.spectators");
  watchHead.append(watchName, ` ${t("invite.spectators_note")}`);
  watch.append(watchHead);
  const input = document.createElement("input");
  input.readOnly = true;
  input.value = `${base}#m=${encodeURIComponent(state.matchId)}`;
  input.setAttribute("aria-label", t("invite.spectators_link"));
  watch.append(input);
  list.append(watch);
  $("#invite-button").hidden = false;
  if (open && sessionStorage.getItem(`rummikub:invite:${state.matchId}`)) {
    sessionStorage.removeItem(`rummikub:invite:${state.matchId}`);
    $("#invite-dialog").showModal();
  }
}
