// The chess clock of a bank-clock match (docs/CLOCKS.md): one face per player with the time
// left in their bank, the running one lit and counting down between views, a warning where a
// bank runs low (the larger of 10 s and a tenth of the bank, as turn.expiring warns), and a
// fallen flag. A per-turn match has no banks: the bar stays hidden.

import { formatSeconds, WARNING_SECONDS } from "./clock.js";
import { t } from "./i18n.js";

const $ = (selector) => document.querySelector(selector);

// When each view was first drawn (local seconds): a bank moves on from its view by the time
// the page has shown it, not by the server's clock, which a test-mode match runs ahead.
const arrivals = new WeakMap();

function localNow() {
  return performance.now() / 1000;
}

// What `player`'s bank shows `elapsed` seconds after `view`: its `time_left` was as of
// `server_time`; only the running bank moves since, and a simple delay holds it still first.
export function bankAt(view, player, elapsed) {
  if (!player.clock_running) return player.time_left;
  const clock = view.rules.clock;
  const spent = (used) => (clock.delay === "simple" ? Math.max(0, used - clock.delay_seconds) : used);
  const before = view.server_time - (view.turn_started ?? view.server_time);
  return Math.max(0, player.time_left + spent(before) - spent(before + elapsed));
}

function lowAt(view) {
  return Math.max(WARNING_SECONDS, view.rules.clock.bank_seconds / 10);
}

// The seconds a "give time" button gives (Lichess gives 15).
export const GIFT_SECONDS = 15;

// Draw the faces for `view` (names from `nameOf`); hidden without a bank clock. A seated
// player (`mySeat`) gets a "give time" button under each other face still in the game.
export function renderBanks(view, nameOf, mySeat = null) {
  if (!arrivals.has(view)) arrivals.set(view, localNow());
  const bar = $("#banks");
  const banked = view.rules.clock?.type === "bank" && view.players.every((p) => p.time_left !== undefined);
  bar.hidden = !banked;
  bar.innerHTML = "";
  if (!banked) return;
  for (const player of view.players) {
    const face = document.createElement("div");
    face.className = "bank";
    face.dataset.seat = String(player.seat);
    face.setAttribute("role", "timer");
    face.innerHTML = '<span class="bank-name"></span><span class="bank-time"></span>';
    face.querySelector(".bank-name").textContent = nameOf(player.seat);
    const slot = document.createElement("div");
    slot.className = "bank-slot";
    slot.append(face);
    if (mySeat !== null && player.seat !== mySeat && view.status === "playing" && !player.flagged) {
      const give = document.createElement("button");
      give.type = "button";
      give.className = "bank-give";
      give.dataset.seat = String(player.seat);
      give.textContent = t("bank.give", { seconds: GIFT_SECONDS });
      give.setAttribute("aria-label", t("bank.give_label", { name: nameOf(player.seat), seconds: GIFT_SECONDS }));
      slot.append(give);
    }
    bar.append(slot);
  }
  tickBanks(view, nameOf);
}

// Move the running face on, four times a second (the turn countdown's tick).
export function tickBanks(view, nameOf) {
  const bar = $("#banks");
  if (!view || bar.hidden) return;
  const elapsed = localNow() - (arrivals.get(view) ?? localNow());
  for (const face of bar.querySelectorAll(".bank")) {
    const player = view.players[Number(face.dataset.seat)];
    const left = bankAt(view, player, elapsed);
    const running = Boolean(player.clock_running) && view.status === "playing";
    face.classList.toggle("running", running);
    face.classList.toggle("low", !player.flagged && left > 0 && left <= lowAt(view));
    face.classList.toggle("flagged", Boolean(player.flagged));
    const shown = player.flagged ? t("bank.flag") : formatSeconds(left);
    face.querySelector(".bank-time").textContent = shown;
    const state = player.flagged ? t("bank.flagged") : running ? t("bank.running") : t("bank.waiting");
    face.setAttribute("aria-label", t("bank.label", { name: nameOf(player.seat), time: shown, state }));
  }
}
