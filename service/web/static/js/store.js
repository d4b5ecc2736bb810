// The page's model and its one owner: the match as the referee last showed it, this page's
// seat, the arrangement being built (a Workspace), the selection, the meld checker's reading
// and the event log. The view and the controllers read it; only its methods change it.

import { ServerClock } from "./clock.js";
import { t } from "./i18n.js";
import { Workspace, orderLike } from "./workspace.js";

class Store {
  constructor() {
    this.matchId = null;
    this.token = null;
    this.view = null; // GET /v1/matches/{id}'s answer, the newest seen
    this.clock = new ServerClock();
    this.work = new Workspace();
    this.workKey = null; // what the arrangement was built on (see syncWork)
    this.selected = null; // the id of the tile picked up
    this.sentDraft = null; // the table last shared (JSON)
    this.meld = null; // {key, result, setIds}
    this.fresh = []; // codes just drawn
    this.rackOrder = [];
    this.log = []; // public events, by version
    this.leftSeat = null; // the seat this page's player left (the view no longer names it)
    this.problemSets = new Set(); // indexes of the sets the referee refused
  }

  open(matchId, token, leftSeat) {
    this.matchId = matchId;
    this.token = token;
    this.leftSeat = leftSeat;
  }

  // Take a view unless it is older than the one held; true when taken. `times`, the request's
  // start and end, set the server clock.
  accept(view, times = null) {
    if (times) this.clock.observe(view.server_time, times[0], times[1]);
    if (this.view && view.version < this.view.version) return false;
    this.view = view;
    return true;
  }

  // --- who is who

  me() {
    const view = this.view;
    return view && view.seat !== undefined ? view.players[view.seat] : null;
  }

  // This page's seat: the view's, or the one its player left (a left seat sees the public view).
  mySeat() {
    const view = this.view;
    if (view && view.seat !== undefined) return view.seat;
    return this.leftSeat;
  }

  // A seat token whose view names no seat belongs to a seat that left.
  hasLeft() {
    return Boolean(this.token && this.view && this.view.seat === undefined);
  }

  isSeated() {
    return Boolean(this.token && this.view && this.view.seat !== undefined);
  }

  isMyTurn() {
    const view = this.view;
    return Boolean(view && view.seat !== undefined && view.status === "playing" && view.current_seat === view.seat);
  }

  canRematch() {
    const view = this.view;
    return Boolean(view && view.status === "finished" && this.token && view.seat !== undefined);
  }

  markLeft(seat) {
    this.leftSeat = seat;
  }

  // A seat's name as of event `version` (now, without one). Once its player has left, the seat's
  // moves are its bot's: "Bot (for Ann)", and the page of the player who left no longer says "you".
  nameOf(seat, version = Infinity) {
    const player = this.view?.players[seat];
    if (!player) return t("player.seat", { seat });
    if (version > this.leftAt(seat)) return t("player.bot_for", { name: player.name });
    return seat === this.mySeat() ? t("player.you", { name: player.name }) : player.name;
  }

  // The event version at which `seat`'s player left: its player_left event in the log; for a seat
  // the view says has left without one (it fell out of the log), before every logged event.
  leftAt(seat) {
    const event = this.log.find((e) => e.type === "player_left" && e.seat === seat);
    if (event) return event.version;
    return this.view?.players[seat]?.left ? -Infinity : Infinity;
  }

  // --- the arrangement

  // Rebuild the arrangement when the turn, the table or the rack changed under it.
  syncWork() {
    const view = this.view;
    if (!view || !view.rack) return;
    const key = JSON.stringify([view.game_number, view.current_seat, view.turn_started, view.table, view.rack]);
    if (key === this.workKey) return;
    const first = this.workKey === null;
    this.workKey = key;
    const ownDraft = first && this.isMyTurn() && view.draft ? view.draft : null;
    this.work.reset(view.table, view.rack, { draft: ownDraft, rackOrder: this.rackOrder });
    this.sentDraft = ownDraft ? JSON.stringify(ownDraft) : JSON.stringify(view.table);
    this.selected = null;
    this.meld = null;
    this.clearProblems();
  }

  // Start again from the table and the rack, or lay out `draft` (a hint's table) instead.
  resetWork(draft = null) {
    this.work.reset(this.view.table, this.view.rack, { draft, rackOrder: this.rackOrder });
    this.selected = null;
  }

  select(tileId) {
    this.selected = tileId;
  }

  // Drop the selection; answers the tile that was selected (or null).
  unselect() {
    const was = this.selected;
    this.selected = null;
    return was;
  }

  // Where the selected tile is ({where, tile, set, index}), on your turn.
  selection() {
    return this.isMyTurn() && this.selected ? this.work.find(this.selected) : null;
  }

  canMove(tileId, target) {
    return this.work.canMove(tileId, target);
  }

  move(tileId, target) {
    return this.work.move(tileId, target);
  }

  split(setId, index) {
    if (!this.work.split(setId, index)) return false;
    this.selected = null;
    return true;
  }

  // The rack as shown: your arrangement's on your turn, else the view's in your order.
  rackTiles() {
    const tiles = this.isMyTurn()
      ? this.work.rack
      : orderLike(this.view.rack, this.rackOrder).map((code, i) => ({ id: `r${i}`, code }));
    this.rackOrder = tiles.map((tile) => tile.code);
    return tiles;
  }

  sortRack(compare) {
    if (this.isMyTurn()) this.work.sortRack(compare);
    this.rackOrder = [...this.rackOrder].sort(compare);
    if (this.isMyTurn()) this.rackOrder = this.work.rackCodes();
  }

  // The table to share as a draft, or null when it is the one shared last.
  draftToShare() {
    const table = this.work.tableCodes();
    return JSON.stringify(table) === this.sentDraft ? null : table;
  }

  draftShared(table) {
    this.sentDraft = JSON.stringify(table);
  }

  // --- the meld checker

  // The sets to check (those you changed) with the key of their reading.
  meldQuery(language) {
    const changed = this.work.changedSets();
    const sets = changed.map(({ set }) => set.tiles.map((tile) => tile.code));
    return { key: JSON.stringify([language, sets]), sets, setIds: changed.map(({ set }) => set.id) };
  }

  setMeld(key, result, setIds) {
    this.meld = { key, result, setIds };
  }

  // The checker's reading of each set, by set id, on your turn.
  meldMarks() {
    const marks = new Map();
    if (!this.isMyTurn() || !this.meld || !this.meld.result) return marks;
    this.meld.setIds.forEach((id, i) => {
      const reading = this.meld.result.sets[i];
      if (reading) marks.set(id, reading);
    });
    return marks;
  }

  // --- the referee's answers

  markProblems(setIndexes) {
    this.problemSets = new Set(setIndexes);
  }

  clearProblems() {
    this.problemSets = new Set();
  }

  setFresh(drawn) {
    this.fresh = drawn;
  }

  // Add a public event to the log; false when it was there already.
  addEvent(event) {
    if (this.log.some((e) => e.version === event.version)) return false;
    this.log.push(event);
    this.log.sort((a, b) => a.version - b.version);
    if (this.log.length > 60) this.log.shift();
    return true;
  }
}

export const store = new Store();
