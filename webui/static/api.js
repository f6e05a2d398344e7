// api.js: the board's HTTP API (devices, login) and the live event stream with reconnect + backoff.

// ApiError carries the HTTP status and the server's {"error": "..."} message.
export class ApiError extends Error {
  constructor(status, message, reason) {
    super(message);
    this.status = status;
    this.reason = reason || ''; // a shed request's reason ("timeout", "closed", ...), if the board gave one
  }
}

// Every state-changing request carries this header: a cross-site form cannot set it, and a
// cross-site fetch that sets it needs a CORS preflight the board never grants.
const csrfHeader = { 'X-Requested-With': 'ews-webui' };

async function request(method, path, { body, headers } = {}) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json', ...headers } };
  if (method !== 'GET') Object.assign(init.headers, csrfHeader);
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, e && e.message ? e.message : 'network error');
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const msg = data && typeof data.error === 'string' ? data.error : (text.trim().slice(0, 200) || res.statusText || 'HTTP ' + res.status);
    throw new ApiError(res.status, msg, data && typeof data.reason === 'string' ? data.reason : '');
  }
  return data;
}

export const getCluster = () => request('GET', '/api/cluster');
export const getDevices = () => request('GET', '/api/devices');

// getSession asks the board about auth: {auth: "token"|"basic"|"none", authenticated: bool}.
// Optional endpoint: null when the board does not offer it.
export async function getSession() {
  try {
    return await request('GET', '/api/session');
  } catch {
    return null;
  }
}

export const login = (creds) => request('POST', '/api/login', { body: creds });
export const logout = () => request('POST', '/api/logout');

function idemKey() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b); // crypto.randomUUID needs a secure context; boards are plain http
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

const RETRY_DELAYS = [500, 1500]; // ms; a takeover is over in about tmax

// deviceAction runs POST /api/devices/{name}/{action}?params. One Idempotency-Key covers the action
// and its retries: after a network error or a 503 (master takeover, queue shedding) it is sent again
// with the same key, so the board runs it at most once. A 503 whose reason is "timeout" is not retried:
// the request already waited the master's whole queue_timeout (its board is down or saturated), and
// the user should see that now rather than after two more waits.
export async function deviceAction(name, action, params) {
  const q = params ? '?' + new URLSearchParams(params).toString() : '';
  const path = `/api/devices/${encodeURIComponent(name)}/${encodeURIComponent(action)}${q}`;
  const headers = { 'Idempotency-Key': idemKey() };
  for (let i = 0; ; i++) {
    try {
      return await request('POST', path, { headers });
    } catch (e) {
      const retriable = e instanceof ApiError && (e.status === 0 || (e.status === 503 && e.reason !== 'timeout'));
      if (!retriable || i >= RETRY_DELAYS.length) throw e;
      await new Promise((r) => setTimeout(r, RETRY_DELAYS[i]));
    }
  }
}

// Live keeps one EventSource to /events open. On error it closes it and reconnects after a backoff
// (1 s doubling to 30 s, with jitter), reporting the state through onState(connected, retryAt).
export class Live {
  constructor(handlers, onState) {
    this.handlers = handlers;
    this.onState = onState;
    this.es = null;
    this.failures = 0;
    this.timer = 0;
    this.retryAt = 0;
  }

  start() {
    clearTimeout(this.timer);
    this.timer = 0;
    if (this.es) this.es.close();
    const es = new EventSource('/events');
    this.es = es;
    es.onopen = () => {
      if (this.es !== es) return;
      this.failures = 0;
      this.onState(true, 0);
    };
    es.onerror = () => {
      if (this.es !== es) return;
      es.close();
      this.es = null;
      this.failures++;
      const base = Math.min(30000, 1000 * 2 ** Math.min(this.failures - 1, 5));
      const delay = Math.round(base * (0.8 + Math.random() * 0.4));
      this.retryAt = Date.now() + delay;
      this.onState(false, this.retryAt);
      this.timer = setTimeout(() => this.start(), delay);
    };
    for (const [name, fn] of Object.entries(this.handlers)) {
      es.addEventListener(name, (ev) => {
        if (this.es !== es) return;
        let data;
        try { data = JSON.parse(ev.data); } catch (e) { console.warn('ews: bad event', name, e); return; }
        try { fn(data); } catch (e) { console.error('ews: event', name, e); }
      });
    }
  }

  // retryNow skips the rest of the backoff.
  retryNow() {
    if (!this.es) this.start();
  }
}

// The board page: this board's facts, restart, firmware upload (body = the binary, with the
// SHA-256 the user confirmed).
export const getBoard = () => request('GET', '/api/board');
export const restartBoard = () => request('POST', '/api/board/restart');
// getBoardLog: this board's recent log lines, {lines: [{seq, time, level, text}]}; admin only.
export const getBoardLog = () => request('GET', '/api/board/log');

export const getRollout = () => request('GET', '/api/cluster/upgrade');

// uploadFirmware sends the binary to this board (path /api/board/firmware) or, for a rolling
// upgrade of the whole cluster coordinated by this board, to /api/cluster/upgrade.
export async function uploadFirmware(file, sha, path = '/api/board/firmware') {
  let res;
  try {
    res = await fetch(path, {
      method: 'POST', credentials: 'same-origin', body: file,
      headers: { Accept: 'application/json', 'Content-Type': 'application/octet-stream', 'X-Firmware-Sha256': sha, ...csrfHeader },
    });
  } catch (e) {
    throw new ApiError(0, e && e.message ? e.message : 'network error');
  }
  let data = null;
  try { data = await res.json(); } catch { data = null; }
  if (!res.ok) throw new ApiError(res.status, data && typeof data.error === 'string' ? data.error : 'HTTP ' + res.status);
  return data || {};
}

// Accounts (issue 24): the users API and the cluster's audit log; admin only.
export const listUsers = () => request('GET', '/api/users');
export const createUser = (u) => request('POST', '/api/users', { body: u });
export const rotateUser = (name) => request('POST', `/api/users/${encodeURIComponent(name)}/rotate`);
export const deleteUser = (name) => request('DELETE', `/api/users/${encodeURIComponent(name)}`);
export const getAudit = (limit = 50) => request('GET', `/api/audit?limit=${limit}`);
// Enrolments waiting for their boards (admin): ids, names, expiry; never the sealed bundle.
export const listEnrolments = () => request('GET', '/api/cluster/enrol');

// The configuration store (admin, the Settings page). GET /api/config is TOML with its version in
// the ETag; PUT takes the whole document with If-Match and answers 400 with every problem.
export async function getConfig() {
  let res;
  try {
    res = await fetch('/api/config', { credentials: 'same-origin', headers: { Accept: 'application/toml' } });
  } catch (e) {
    throw new ApiError(0, e && e.message ? e.message : 'network error');
  }
  const text = await res.text();
  if (!res.ok) {
    let msg = text.trim().slice(0, 200);
    try { msg = JSON.parse(text).error || msg; } catch { /* not JSON */ }
    throw new ApiError(res.status, msg);
  }
  return { text, version: (res.headers.get('ETag') || '').replace(/^W\//, '').replace(/"/g, '') };
}

// putConfig saves text as the version after version; a refusal carries the board's problems
// ([{line, key, msg, text}]) in the error's problems.
export async function putConfig(text, version) {
  let res;
  try {
    res = await fetch('/api/config', { method: 'PUT', credentials: 'same-origin', body: text,
      headers: { Accept: 'application/json', 'Content-Type': 'application/toml', 'If-Match': `"${version}"`, ...csrfHeader } });
  } catch (e) {
    throw new ApiError(0, e && e.message ? e.message : 'network error');
  }
  let data = null;
  try { data = await res.json(); } catch { data = null; }
  if (!res.ok) {
    const err = new ApiError(res.status, data && data.error ? data.error : res.statusText);
    if (data && Array.isArray(data.problems)) err.problems = data.problems;
    throw err;
  }
  return data;
}

export const getConfigHistory = () => request('GET', '/api/config/history');
export const getConfigStatus = () => request('GET', '/api/config/status');
export const getDrivers = () => request('GET', '/api/config/drivers');
export const rollbackConfig = (n) => request('POST', `/api/config/rollback?to=${encodeURIComponent(n)}`);
