// The turn countdown: the deadline is on the server's clock, so the page keeps the offset
// between the server's clock and its own (measured on every response, halfway through the
// round trip) and counts down on the corrected time. A warning tone sounds 10 s before the
// end of your turn and an alert at the end (WebAudio oscillators: no sound files).

export const WARNING_SECONDS = 10;

export class ServerClock {
  constructor() {
    this.offset = 0; // server minus local, in seconds
    this.bestRoundTrip = Infinity;
    this.measuredAt = 0;
  }

  // A response sent at `sent` and received at `received` (local seconds) said `serverTime`.
  observe(serverTime, sent, received) {
    const roundTrip = Math.max(0, received - sent);
    const fresh = Date.now() / 1000 - this.measuredAt > 30;
    // The answer puts the offset between serverTime - received and serverTime - sent: a kept
    // offset outside that no longer holds (the server's clock jumped: a test-mode match run
    // ahead, or the local clock was set).
    const slack = 0.05;
    const contradicted = this.offset < serverTime - received - slack || this.offset > serverTime - sent + slack;
    // Prefer the measure with the shortest round trip; refresh it now and then (drift).
    if (roundTrip <= this.bestRoundTrip || fresh || contradicted) {
      this.bestRoundTrip = roundTrip;
      this.offset = serverTime - (sent + received) / 2;
      this.measuredAt = Date.now() / 1000;
    }
  }

  now() {
    return Date.now() / 1000 + this.offset;
  }
}

let audio = null;

// Browsers start audio only after a user gesture: call this from one.
export function unlockAudio() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  if (!audio) audio = new Context();
  if (audio.state === "suspended") audio.resume();
}

// Beeps `count` times at `frequency` Hz; notes what it played on <body data-tone>.
export function tone(kind) {
  const settings = kind === "alert"
    ? { frequency: 440, count: 3, length: 0.18, type: "square" }
    : { frequency: 880, count: 2, length: 0.12, type: "sine" };
  document.body.dataset.tone = kind;
  document.body.dataset[`${kind}Count`] = String(Number(document.body.dataset[`${kind}Count`] || 0) + 1);
  if (!audio) unlockAudio();
  if (!audio) return;
  const start = audio.currentTime + 0.02;
  for (let i = 0; i < settings.count; i += 1) {
    const at = start + i * settings.length * 1.8;
    const oscillator = audio.createOscillator();
    const gain = audio.createGain();
    oscillator.type = settings.type;
    oscillator.frequency.value = settings.frequency;
    gain.gain.setValueAtTime(0.0001, at);
    gain.gain.exponentialRampToValueAtTime(0.25, at + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + settings.length);
    oscillator.connect(gain).connect(audio.destination);
    oscillator.start(at);
    oscillator.stop(at + settings.length + 0.02);
  }
}

export function formatSeconds(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// Ticks four times a second. `onTick(remaining)` with the seconds left (or null without a
// deadline), `onWarning()` once when 10 s are left, `onExpired()` once at the deadline.
export class Countdown {
  constructor(clock, { onTick, onWarning, onExpired }) {
    this.clock = clock;
    this.handlers = { onTick, onWarning, onExpired };
    this.deadline = null;
    this.turnKey = null;
    this.warned = false;
    this.expired = false;
    this.timer = setInterval(() => this.tick(), 250);
  }

  // A new view: the turn is identified by `turnKey` so warnings fire once per turn.
  set(deadline, turnKey) {
    if (turnKey !== this.turnKey) {
      this.turnKey = turnKey;
      this.warned = false;
      this.expired = false;
    }
    this.deadline = deadline;
    this.tick();
  }

  tick() {
    if (this.deadline === null || this.deadline === undefined) {
      this.handlers.onTick(null);
      return;
    }
    const remaining = this.deadline - this.clock.now();
    this.handlers.onTick(remaining);
    if (remaining <= WARNING_SECONDS && remaining > 0 && !this.warned) {
      this.warned = true;
      this.handlers.onWarning(remaining);
    }
    if (remaining <= 0 && !this.expired) {
      this.expired = true;
      this.warned = true;
      this.handlers.onExpired();
    }
  }
}
