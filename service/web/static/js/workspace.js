// Your arrangement while it is your turn: the sets on the table and the tiles on your rack,
// each tile with an id so it can be dragged. It knows no rules: the referee judges the
// table you send. It only refuses to put a table tile on your rack (that tile is not yours).

import { minus } from "./tiles.js";

export class Workspace {
  constructor() {
    this.sets = []; // [{id, tiles: [{id, code, origin}]}]
    this.rack = []; // [{id, code, origin: "rack"}]
    this.base = { table: [], rack: [] };
    this.seq = 0;
  }

  nextId(prefix) {
    this.seq += 1;
    return `${prefix}${this.seq}`;
  }

  // Start from the table and the rack; `draft` (your own draft, e.g. after a reload) is laid
  // out instead of the table when given; `rackOrder` keeps your rack order across turns.
  reset(table, rack, { draft = null, rackOrder = [] } = {}) {
    this.base = { table: table.map((set) => [...set]), rack: [...rack] };
    const laid = draft || table;
    const onTable = minus(laid.flat(), table.flat()); // your tiles in the draft
    const yours = [...onTable];
    this.sets = laid.map((codes) => ({
      id: this.nextId("s"),
      tiles: codes.map((code) => {
        const i = yours.indexOf(code);
        if (i >= 0) yours.splice(i, 1);
        return { id: this.nextId("t"), code, origin: i >= 0 ? "rack" : "table" };
      }),
    }));
    const remaining = minus(rack, onTable);
    this.rack = orderLike(remaining, rackOrder).map((code) => ({ id: this.nextId("t"), code, origin: "rack" }));
  }

  tableCodes() {
    return this.sets.filter((set) => set.tiles.length).map((set) => set.tiles.map((tile) => tile.code));
  }

  rackCodes() {
    return this.rack.map((tile) => tile.code);
  }

  // Whether the arrangement differs from the table as dealt to this turn.
  changed() {
    return JSON.stringify(this.tableCodes()) !== JSON.stringify(this.base.table);
  }

  // The sets that are not on the table as they were (new, extended, split or rearranged).
  changedSets() {
    const before = this.base.table.map((set) => set.join(" "));
    const out = [];
    this.sets.forEach((set, index) => {
      if (!set.tiles.length) return;
      const key = set.tiles.map((tile) => tile.code).join(" ");
      const at = before.indexOf(key);
      if (at >= 0) before.splice(at, 1);
      else out.push({ index, set });
    });
    return out;
  }

  find(tileId) {
    const inRack = this.rack.findIndex((tile) => tile.id === tileId);
    if (inRack >= 0) return { where: "rack", list: this.rack, index: inRack, tile: this.rack[inRack] };
    for (const set of this.sets) {
      const index = set.tiles.findIndex((tile) => tile.id === tileId);
      if (index >= 0) return { where: "set", set, list: set.tiles, index, tile: set.tiles[index] };
    }
    return null;
  }

  canMove(tileId, target) {
    const found = this.find(tileId);
    if (!found) return false;
    return !(target.kind === "rack" && found.tile.origin !== "rack");
  }

  // target: {kind: "set", setId, beforeId} | {kind: "new", afterSetId} | {kind: "rack", beforeId}
  move(tileId, target) {
    if (!this.canMove(tileId, target) || target.beforeId === tileId) return false;
    const found = this.find(tileId);
    found.list.splice(found.index, 1);
    const { tile } = found;
    if (target.kind === "new") {
      const set = { id: this.nextId("s"), tiles: [tile] };
      const after = this.sets.findIndex((s) => s.id === target.afterSetId);
      if (after >= 0) this.sets.splice(after + 1, 0, set);
      else this.sets.push(set);
    } else {
      const list = target.kind === "rack" ? this.rack : this.sets.find((s) => s.id === target.setId)?.tiles;
      if (!list) {
        found.list.splice(found.index, 0, tile);
        return false;
      }
      const before = target.beforeId ? list.findIndex((t) => t.id === target.beforeId) : -1;
      list.splice(before >= 0 ? before : list.length, 0, tile);
    }
    this.sets = this.sets.filter((set) => set.tiles.length);
    return true;
  }

  // Split a set before its tile at `index`: the tail becomes a new set right after it.
  split(setId, index) {
    const at = this.sets.findIndex((set) => set.id === setId);
    if (at < 0 || index <= 0 || index >= this.sets[at].tiles.length) return false;
    const tail = this.sets[at].tiles.splice(index);
    this.sets.splice(at + 1, 0, { id: this.nextId("s"), tiles: tail });
    return true;
  }

  sortRack(compare) {
    this.rack.sort((a, b) => compare(a.code, b.code));
  }
}

// `codes` in the order of `previous` where they appear there; new ones at the end.
export function orderLike(codes, previous) {
  const left = [...codes];
  const out = [];
  for (const code of previous) {
    const i = left.indexOf(code);
    if (i >= 0) {
      out.push(code);
      left.splice(i, 1);
    }
  }
  return out.concat(left);
}
