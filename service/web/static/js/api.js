// The referee's HTTP API, as the page uses it: JSON in and out, problem+json errors,
// the seat token as a bearer token, If-Match with the version the page rendered, and one
// Idempotency-Key per user action (reused when the request is retried), and the page's
// language as Accept-Language, so the referee's problems and violations come in it too.

import { language } from "./i18n.js";

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
    this.type = problem.type || "";
    this.violations = Array.isArray(problem.violations) ? problem.violations : [];
  }
}

export function newKey() {
  if (window.crypto && typeof crypto.randomUUID === "function" && window.isSecureContext) {
    return crypto.randomUUID();
  }
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function parse(response) {
  const type = response.headers.get("Content-Type") || "";
  if (response.status === 204 || response.status === 304) return null;
  if (type.includes("json")) return response.json();
  return response.text();
}

// One request; `clock` (optional) receives [sent, received] local times for skew correction.
export async function request(method, path, { token, body, ifMatch, key, signal, clock } = {}) {
  const headers = { Accept: "application/json, application/problem+json", "Accept-Language": language() };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (ifMatch !== undefined && ifMatch !== null) headers["If-Match"] = `"${ifMatch}"`;
  if (key) headers["Idempotency-Key"] = key;
  const init = { method, headers, signal, cache: "no-store" };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  const sent = Date.now() / 1000;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (error.name === "AbortError" || !key) throw error;
    // A network failure: retry once with the same key, so the move is applied at most once.
    await new Promise((resolve) => setTimeout(resolve, 500));
    response = await fetch(path, init);
  }
  if (clock) clock(sent, Date.now() / 1000);
  const data = await parse(response);
  if (!response.ok) {
    const problem = data && typeof data === "object" ? data : { detail: String(data || "") };
    throw new ApiError(response.status, problem);
  }
  return data;
}

const matchPath = (id) => `/v1/matches/${encodeURIComponent(id)}`;

export const api = {
  createMatch: (body) => request("POST", "/v1/matches", { body }),
  getMatch: (id, token, options = {}) => {
    const seconds = options.waitSeconds ?? 25;
    const query = options.waitVersion !== undefined ? `?wait_version=${options.waitVersion}&timeout=${seconds}` : "";
    return request("GET", matchPath(id) + query, { token, signal: options.signal, clock: options.clock });
  },
  events: (id, after, limit = 100) => request("GET", `${matchPath(id)}/events?after=${after}&limit=${limit}`),
  play: (id, token, table, version, key) =>
    request("POST", `${matchPath(id)}/play`, { token, body: { table }, ifMatch: version, key }),
  draw: (id, token, version, key) => request("POST", `${matchPath(id)}/draw`, { token, ifMatch: version, key }),
  pass: (id, token, version, key) => request("POST", `${matchPath(id)}/pass`, { token, ifMatch: version, key }),
  draft: (id, token, table, version, key) =>
    request("PUT", `${matchPath(id)}/draft`, { token, body: { table }, ifMatch: version, key }),
  nextGame: (id, token, version, key) =>
    request("POST", `${matchPath(id)}/next-game`, { token, ifMatch: version, key }),
  redeal: (id, token, version, key) => request("POST", `${matchPath(id)}/redeal`, { token, ifMatch: version, key }),
  giveTime: (id, token, seat, seconds, key) =>
    request("POST", `${matchPath(id)}/seats/${seat}/time`, { token, body: { seconds }, key }),
  hint: (id, token) => request("GET", `${matchPath(id)}/hint`, { token }),
  leave: (id, token, key) => request("POST", `${matchPath(id)}/leave`, { token, key }),
  rematch: (id, token, key) => request("POST", `${matchPath(id)}/rematch`, { token, key }),
  meldCheck: (sets, rules) => request("POST", "/v1/meld-check", { body: { sets, rules } }),
  streamUrl: (id, after) => `${matchPath(id)}/stream?after=${after}`,
};
