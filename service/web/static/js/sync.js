// Keeping the page in step with the referee: fetching views, following the match live, one
// queue for the requests that change it (a draft never overtakes a play), and watching for
// what the live stream no longer carries (a settled deadline, a rematch).

import { api } from "./api.js";
import { t } from "./i18n.js";
import { Follower } from "./live.js";
import { store } from "./store.js";
import { render } from "./view.js";
import { showConnection, showEvent, showNotice } from "./view-messages.js";

let follower = null;
let queue = Promise.resolve();
let refetching = false;
let refetchAgain = false;
let announced = 0;
let pollExpiry = null;
let watchingRematch = false;

// Fetch the view again; `version`, one an event announced: the referee is asked for a view at
// least that new (a worker may not have heard of it yet, docs/ARCHITECTURE.md, "How a worker knows
// its copy is current"), waiting a few seconds at most.
export async function refetch(version = 0) {
  announced = Math.max(announced, version);
  if (refetching) {
    refetchAgain = true;
    return;
  }
  refetching = true;
  try {
    do {
      refetchAgain = false;
      let times = null;
      const options = { clock: (...t) => { times = t; } };
      if (announced > (store.view ? store.view.version : 0)) {
        Object.assign(options, { waitVersion: announced - 1, waitSeconds: 5 });
      }
      const view = await api.getMatch(store.matchId, store.token, options);
      acceptView(view, times);
    } while (refetchAgain);
  } finally {
    refetching = false;
  }
}

export function acceptView(view, times = null) {
  if (!store.accept(view, times)) return;
  if (follower) follower.setKnownVersion(view.version);
  render();
  if (store.canRematch() && !view.rematch_id) watchForRematch();
}

// Follow the match from `view`: its last events for the log, then each new one.
export function follow(view) {
  follower = new Follower(store.matchId, store.token, {
    onEvent: (event) => {
      if (store.addEvent(event)) showEvent(event);
    },
    onStale: (version) => refetch(version).catch(() => {}),
    onView: (fresh) => acceptView(fresh),
    onMode: showConnection,
    forcePolling: new URLSearchParams(location.search).has("poll"),
  });
  follower.start(Math.max(0, view.version - 30), view.version);
}

export function enqueue(task) {
  queue = queue.then(task, task);
  return queue;
}

// The referee settles an expired turn on the next request: ask until it has.
export function pollUntilSettled() {
  const version = store.view.version;
  let tries = 0;
  clearInterval(pollExpiry);
  pollExpiry = setInterval(async () => {
    tries += 1;
    if (store.view.version !== version || tries > 8) {
      clearInterval(pollExpiry);
      return;
    }
    await refetch().catch(() => {});
  }, 700);
}

// The live stream ends with match_finished, so a rematch another seat asks for later
// (event rematch_created, the view's rematch_id) is watched for by long-polling the view.
async function watchForRematch() {
  if (watchingRematch) return;
  watchingRematch = true;
  while (store.view && !store.view.rematch_id) {
    try {
      const view = await api.getMatch(store.matchId, store.token, { waitVersion: store.view.version });
      if (view.version > store.view.version) {
        if (view.rematch_id) showNotice(t("notice.rematch_ready"));
        acceptView(view);
      }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
  }
}
