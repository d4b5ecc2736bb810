// The page's own words in English, Spanish and Swedish. They live in message catalogues a
// translator edits, one JSON file per language (/assets/i18n/<lang>.json), never in code:
//
//   "key": "text with {placeholders}"
//   "key": {"one": "{count} tile", "other": "{count} tiles"}   (plural forms, by `count`)
//
// The language is the one chosen with the page's switch (kept in localStorage), else the
// first of the browser's languages (navigator.languages) we have, else English. A key a
// catalogue lacks falls back to English. The page's API calls send the language as
// Accept-Language, so the referee's problems and violations come back in it too.
// In HTML, data-i18n="key" sets an element's text and data-i18n-<attribute>="key" one of its
// attributes (aria-label, title, placeholder).

export const LANGUAGES = ["en", "es", "sv"];
export const FALLBACK = "en";
const STORAGE_KEY = "rummikub:lang";

let current = FALLBACK;
let messages = {};
let fallback = {};
const listeners = [];

// The language to use: a stored choice, else the first preferred one we have.
export function pickLanguage(stored, preferred) {
  if (LANGUAGES.includes(stored)) return stored;
  for (const tag of preferred || []) {
    const primary = String(tag).toLowerCase().split("-")[0];
    if (LANGUAGES.includes(primary)) return primary;
  }
  return FALLBACK;
}

function storedChoice() {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled: the browser's languages decide
  }
}

async function catalogue(code) {
  const response = await fetch(`/assets/i18n/${code}.json`, { cache: "no-cache" });
  if (!response.ok) throw new Error(`catalogue ${code}: HTTP ${response.status}`);
  return response.json();
}

async function load(code) {
  const [own, english] = await Promise.all([
    catalogue(code),
    code === FALLBACK ? null : catalogue(FALLBACK).catch(() => ({})),
  ]);
  current = code;
  messages = own;
  fallback = english || own;
  document.documentElement.lang = code;
}

// Called once before the page draws anything.
export async function startI18n() {
  const code = pickLanguage(storedChoice(), navigator.languages || [navigator.language]);
  try {
    await load(code);
  } catch {
    await load(FALLBACK).catch(() => {});
  }
  // Without any catalogue (a failed fetch), the page keeps the English its HTML carries.
  if (Object.keys(messages).length) applyStatic();
}

// The switch: remember the choice, load it, redraw.
export async function setLanguage(code) {
  if (!LANGUAGES.includes(code)) return;
  try {
    localStorage.setItem(STORAGE_KEY, code);
  } catch {
    /* not remembered; still switched */
  }
  await load(code);
  applyStatic();
  for (const listener of listeners) listener(code);
}

export function onLanguageChange(listener) {
  listeners.push(listener);
}

export function language() {
  return current;
}

// The text of `key` with its {placeholders} filled in; plural forms follow params.count.
export function t(key, params = {}) {
  let text = key in messages ? messages[key] : fallback[key];
  if (text === undefined) return key;
  if (typeof text === "object") {
    const form = new Intl.PluralRules(current).select(Number(params.count));
    text = text[form] ?? text.other ?? (fallback[key] && fallback[key].other) ?? key;
  }
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

export function applyStatic(root = document) {
  for (const element of root.querySelectorAll("*")) {
    for (const attribute of element.getAttributeNames()) {
      if (!attribute.startsWith("data-i18n")) continue;
      const key = element.getAttribute(attribute);
      if (attribute === "data-i18n") element.textContent = t(key);
      else element.setAttribute(attribute.slice("data-i18n-".length), t(key));
    }
  }
}
