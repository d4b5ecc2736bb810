// Following a match live. The stream (Server-Sent Events) carries public events only:
// on each one the page refetches GET /v1/matches/{id} with its seat token to see its rack.
// Without EventSource, or when the stream cannot be opened, it long-polls
// GET /v1/matches/{id}?wait_version=N instead.

import { api } from "./api.js";

export const EVENT_TYPES = [
  "match_created", "first_player_draw", "game_started", "played", "drew", "draft_updated",
  "turn_timed_out", "passed", "game_over", "match_finished", "player_left", "match_canceled",
  "rematch_created", "tokens_reissued", "clock_advanced", "flag_fell", "time_given", "redealt",
];

export class Follower {
  // onEvent(event) for each public event (SSE mode), onStale(version) when the page should refetch,
  // onView(view) when long-poll brought a fresh view, onMode(mode) with "live" | "reconnecting" |
  // "polling" | "ended".
  constructor(matchId, token, { onEvent, onStale, onView, onMode, forcePolling = false }) {
    this.matchId = matchId;
    this.token = token;
    this.handlers = { onEvent, onStale, onView, onMode };
    this.forcePolling = forcePolling;
    this.source = null;
    this.pollAbort = null;
    this.stopped = false;
    this.lastEvent = 0;
  }

  start(afterVersion, knownVersion) {
    this.lastEvent = afterVersion;
    this.knownVersion = knownVersion;
    if (!this.forcePolling && typeof window.EventSource === "function") {
      this.openStream();
    } else {
      this.poll();
    }
  }

  setKnownVersion(version) {
    this.knownVersion = Math.max(this.knownVersion || 0, version);
  }

  openStream() {
    const source = new EventSource(api.streamUrl(this.matchId, this.lastEvent));
    this.source = source;
    source.onopen = () => this.handlers.onMode("live");
    source.onerror = () => {
      if (this.stopped) return;
      if (source.readyState === EventSource.CLOSED) {
        // A 204 (finished match, all sent) or an error answer: nothing more from the stream.
        this.source = null;
        if (this.finished) {
          this.handlers.onMode("ended");
        } else {
          this.poll();
        }
      } else {
        this.handlers.onMode("reconnecting");
      }
    };
    const onMessage = (message) => {
      const event = JSON.parse(message.data);
      this.lastEvent = Math.max(this.lastEvent, event.version);
      this.handlers.onEvent(event);
      if (event.version > (this.knownVersion || 0)) this.handlers.onStale(event.version);
      if (event.type === "match_finished" || event.type === "match_canceled") {
        this.finished = true;
        source.close();
        this.source = null;
        this.handlers.onMode("ended");
      }
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, onMessage);
    source.onmessage = onMessage; // events of a type this page does not know yet
  }

  async poll() {
    this.handlers.onMode("polling");
    while (!this.stopped) {
      this.pollAbort = new AbortController();
      try {
        const view = await api.getMatch(this.matchId, this.token, {
          waitVersion: this.knownVersion || 0,
          signal: this.pollAbort.signal,
        });
        if (this.stopped) return;
        if (view.version > (this.knownVersion || 0)) {
          await this.backfill();
          this.handlers.onView(view);
        }
        if (view.status === "finished" || view.status === "canceled") {
          this.handlers.onMode("ended");
          return;
        }
      } catch (error) {
        if (this.stopped || error.name === "AbortError") return;
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  }

  // In polling mode, the event log comes from GET /events.
  async backfill() {
    try {
      const page = await api.events(this.matchId, this.lastEvent, 100);
      for (const event of page.events) {
        this.lastEvent = Math.max(this.lastEvent, event.version);
        this.handlers.onEvent(event);
      }
    } catch {
      /* the log is a nicety: the view is what matters */
    }
  }

  stop() {
    this.stopped = true;
    if (this.source) this.source.close();
    if (this.pollAbort) this.pollAbort.abort();
  }
}
