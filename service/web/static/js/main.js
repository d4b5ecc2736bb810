// The reference web client. It plays through the public API only and holds no rule logic
// beyond display: the referee decides what is legal, and the page shows what it says.
//
//   /                      the lobby: create a match, join one
//   /#m=<id>&t=<token>     a seat at a match (the token stays in the fragment: never sent
//                          to a server or written to its logs)
//   /#m=<id>               watching a match
//
// The modules, after TodoMVC's vanilla-es6 example: store.js owns the match's state; view.js
// (with view-result.js, view-messages.js, view-banks.js, the chess clock, and lobby-view.js)
// alone writes the DOM, from template.js's elements; controller.js, building.js, sync.js and
// lobby.js turn what the user does into requests and the answers into the store's changes.

import { unlockAudio } from "./clock.js";
import { redrawInLanguage, startGame } from "./controller.js";
import { language, onLanguageChange, setLanguage, startI18n } from "./i18n.js";
import { startLobby } from "./lobby.js";
import { redrawLobby } from "./lobby-view.js";
import { noteInput, showLanguage } from "./view.js";

function route() {
  const params = new URLSearchParams(location.hash.slice(1));
  const matchId = params.get("m");
  if (matchId) {
    startGame(matchId, params.get("t"));
  } else {
    startLobby();
  }
}

// The language switch in the top bar; a switch redraws what JavaScript wrote.
function wireLanguageSwitch() {
  const select = document.querySelector("#language");
  showLanguage(language());
  select.addEventListener("change", () => setLanguage(select.value));
  onLanguageChange((chosen) => {
    showLanguage(chosen);
    redrawLobby();
    redrawInLanguage();
  });
}

window.addEventListener("hashchange", () => location.reload());
await startI18n();
wireLanguageSwitch();
document.addEventListener("keydown", () => noteInput("keyboard"), true);
document.addEventListener("pointerdown", () => noteInput("pointer"), true);
document.addEventListener("pointerdown", unlockAudio, { once: true });
document.addEventListener("keydown", unlockAudio, { once: true });
route();
