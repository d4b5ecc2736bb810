// Tiles as the page shows them. Codes are the referee's: R7, B13, K1, O10, J.

import { t } from "./i18n.js";

// Catalogue keys of the colour names.
export const COLOURS = { R: "tile.red", B: "tile.blue", K: "tile.black", O: "tile.orange" };
const COLOUR_ORDER = { K: 0, B: 1, O: 2, R: 3, J: 4 };

// A tile's name in the page's language: "red 7", "joker".
export function describe(code) {
  if (code === "J") return t("tile.joker");
  const colour = COLOURS[code[0]] ? t(COLOURS[code[0]]) : code[0];
  return t("tile.numbered", { colour, number: code.slice(1) });
}

export function colourOf(code) {
  return code === "J" ? "J" : code[0];
}

export function numberOf(code) {
  return code === "J" ? 99 : Number(code.slice(1));
}

export const byNumber = (a, b) =>
  numberOf(a) - numberOf(b) || COLOUR_ORDER[colourOf(a)] - COLOUR_ORDER[colourOf(b)];
export const byColour = (a, b) =>
  COLOUR_ORDER[colourOf(a)] - COLOUR_ORDER[colourOf(b)] || numberOf(a) - numberOf(b);

const JOKER_SVG = `
<svg viewBox="0 0 32 32" aria-hidden="true" focusable="false" class="joker-face">
  <circle cx="16" cy="16" r="13" fill="#ffd54f" stroke="#212121" stroke-width="2"/>
  <circle cx="11.5" cy="13" r="2" fill="#212121"/>
  <circle cx="20.5" cy="13" r="2" fill="#212121"/>
  <path d="M9.5 18.5 Q16 25.5 22.5 18.5" fill="none" stroke="#c62828" stroke-width="2.4"
        stroke-linecap="round"/>
</svg>`;

// A tile element: a button (focusable, labelled) with its code in data-code.
export function tileElement(code, { id, movable = false, fresh = false, added = false } = {}) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = `tile c-${colourOf(code)}`;
  if (fresh) button.classList.add("fresh");
  if (added) button.classList.add("added");
  if (movable) button.classList.add("movable");
  button.dataset.code = code;
  if (id) button.dataset.id = id;
  button.setAttribute("aria-label", describe(code));
  if (code === "J") {
    button.innerHTML = `${JOKER_SVG}<span class="tile-dot" aria-hidden="true"></span>`;
  } else {
    const number = document.createElement("span");
    number.className = "tile-number";
    number.textContent = code.slice(1);
    const dot = document.createElement("span");
    dot.className = "tile-dot";
    dot.setAttribute("aria-hidden", "true");
    button.append(number, dot);
  }
  return button;
}

// The multiset difference a - b of two lists of codes.
export function minus(a, b) {
  const counts = new Map();
  for (const code of b) counts.set(code, (counts.get(code) || 0) + 1);
  const out = [];
  for (const code of a) {
    const n = counts.get(code) || 0;
    if (n > 0) counts.set(code, n - 1);
    else out.push(code);
  }
  return out;
}
