// app.js: the ews dashboard: wires the live event stream, the API and the two views together.
import { $, h } from './dom.js';
import { t, applyStatic, current, setLang, num } from './i18n.js';
import * as api from './api.js';
import { DevicesView, numeric, kind } from './devices.js';
import { ClusterView } from './cluster.js';
import { BoardView } from './board.js';
import { UsersView, mayControl } from './users.js';
import { SettingsView } from './settings.js';
import { AddBoardView } from './addboard.js';
import { initTheme } from './theme.js';

const HISTORY = 60; // readings kept per device for its sparkline
const SESSION_KEY = 'ews.session';

const state = {
  devices: new Map(), // name -> device
  history: new Map(), // name -> [numbers]
  cluster: null,
  connected: false,
  retryAt: 0,
  auth: 'unknown', // token | basic | none | unknown (board without /api/session)
  loggedIn: readFlag(),
  session: null, // GET /api/session when logged in: {user, role, devices} (issue 24)
};

function readFlag() {
  try { return localStorage.getItem(SESSION_KEY) === '1'; } catch { return false; }
}
function writeFlag(on) {
  try {
    if (on) localStorage.setItem(SESSION_KEY, '1');
    else localStorage.removeItem(SESSION_KEY);
  } catch { /* ignore */ }
}

const canControl = () => state.auth === 'none' || state.loggedIn;

// ---- views

const devicesView = new DevicesView({
  root: $('device-list'), filter: $('filter'), count: $('dev-count'), empty: $('devices-empty'),
  onAction: runAction,
});
devicesView.histFor = (name) => state.history.get(name) || [];
devicesView.allow = (name) => state.auth === 'none' || mayControl(state.session, name);

const clusterView = new ClusterView({
  head: $('cluster-head'), boards: $('boards'), queue: $('queue'),
  chart: $('rps'), legend: $('rps-legend'), log: $('log'), logEmpty: $('log-empty'),
});
const boardView = new BoardView({
  canControl: () => canControl(),
  onAuth: () => { setLoggedIn(false); openLogin(); },
  toast: (msg, bad) => toast(msg, bad),
});
const usersView = new UsersView((msg, bad) => toast(msg, bad));
const settingsView = new SettingsView((msg, bad) => toast(msg, bad));
const addBoardView = new AddBoardView();
const showTheme = initTheme($('theme'), (s) => t('toTheme', { s: t(s) }), () => {
  devicesView.relabel(state.devices, state.history); // canvases take their colours from CSS variables
  clusterView.drawChart(Date.now());
});

function orderOf(c) {
  const nodes = c && Array.isArray(c.nodes) ? c.nodes : [];
  return [...nodes].sort((a, b) => (a.rank ?? 0) - (b.rank ?? 0)).map((n) => n.name);
}
const boardsInOrder = () => orderOf(state.cluster);

let devicesDirty = false, clusterDirty = false, frame = 0;
function schedule() {
  if (!frame) frame = requestAnimationFrame(flush);
}
function flush() {
  frame = 0;
  if (devicesDirty) {
    devicesDirty = false;
    devicesView.render(state.devices, state.history, boardsInOrder(), canControl());
  }
  if (clusterDirty) {
    clusterDirty = false;
    if (state.cluster) clusterView.render(state.cluster);
    const self = state.cluster && state.cluster.self;
    $('self').textContent = self ? `· ${self}` : '';
  }
}

function remember(d) {
  const v = kind(d) === 'sensor' ? numeric(d.value) : null;
  if (v == null) return;
  let hist = state.history.get(d.name);
  if (!hist) state.history.set(d.name, (hist = []));
  const stamp = d.updated ?? null;
  if (hist.stamp === stamp && stamp !== null && hist.length) return; // same reading sent again
  hist.stamp = stamp;
  hist.push(v);
  if (hist.length > HISTORY) hist.splice(0, hist.length - HISTORY);
}

function validDevice(d) {
  return d && typeof d === 'object' && typeof d.name === 'string' && d.name !== '';
}

function setDevices(list) {
  if (!Array.isArray(list)) return;
  const next = new Map();
  for (const d of list) {
    if (!validDevice(d)) continue;
    next.set(d.name, d);
    remember(d);
  }
  for (const name of state.history.keys()) if (!next.has(name)) state.history.delete(name);
  state.devices = next;
  devicesView.setLoaded();
  devicesDirty = true;
  schedule();
}

function setDevice(d) {
  if (!validDevice(d)) return;
  const old = state.devices.get(d.name);
  state.devices.set(d.name, d);
  remember(d);
  if (!old || old.node !== d.node || !devicesView.updateOne(d, state.history.get(d.name))) {
    devicesDirty = true;
    schedule();
  }
}

// KEPT are the row fields a cluster event may leave out after the first (the master's probes,
// the measured clock offsets): a row without one keeps the last value known for its board.
const KEPT = ['rt_ms', 'clock_offset_ms'];

function keepLast(prev, c) {
  if (!prev || !Array.isArray(prev.nodes) || !Array.isArray(c.nodes)) return;
  const old = new Map(prev.nodes.map((n) => [n && n.name, n]));
  for (const n of c.nodes) {
    const o = n && old.get(n.name);
    if (!o) continue;
    for (const k of KEPT) if (n[k] == null && o[k] != null) n[k] = o[k];
  }
}

function setCluster(c) {
  if (!c || typeof c !== 'object') return;
  keepLast(state.cluster, c);
  const boardsChanged = JSON.stringify(boardsInOrder()) !== JSON.stringify(orderOf(c));
  state.cluster = c;
  clusterDirty = true;
  if (boardsChanged) devicesDirty = true;
  schedule();
}

// ---- actions and toasts

function toast(msg, bad) {
  const close = h('button', { type: 'button', class: 'x', 'aria-label': t('close') }, '×');
  const el = h('div', { class: `toast ${bad ? 'bad' : ''}`, role: bad ? 'alert' : 'status' }, h('span', null, msg), close);
  const done = () => el.remove();
  close.addEventListener('click', done);
  $('toasts').append(el);
  setTimeout(done, bad ? 15000 : 3000);
  while ($('toasts').children.length > 5) $('toasts').firstElementChild.remove();
}

// why is the sentence for a failed action: a 503 shed as no-board names the device's board when it
// is pinned to one ("board ews1 is down"); other errors keep the board's message.
function why(e, name) {
  if (e.reason !== 'no-board') return e.message;
  const d = state.devices.get(name);
  const board = d && typeof d.node === 'string' && d.node !== '' && d.node !== 'any' ? d.node : '';
  const row = board && state.cluster && Array.isArray(state.cluster.nodes) ? state.cluster.nodes.find((n) => n.name === board) : null;
  return board && (!row || row.runstate === 'down') ? t('boardDown', { b: board }) : t('noBoardFree');
}

// runAction calls the device API; it resolves to '' on success or to the error shown on the card.
async function runAction(name, action, params) {
  const label = t('a_' + action);
  try {
    const res = await api.deviceAction(name, action, params);
    if (validDevice(res)) setDevice(res);
    toast(t('actionOk', { d: name, a: label }));
    return '';
  } catch (e) {
    const msg = e.status ? `${why(e, name)} (${e.status})` : `${t('networkError')}: ${e.message}`;
    toast(t('actionFail', { d: name, a: label, e: msg }), true);
    if (e.status === 401) {
      setLoggedIn(false);
      openLogin();
    }
    return msg;
  }
}

// ---- auth

function setLoggedIn(on) {
  state.loggedIn = on;
  writeFlag(on);
  if (!on) state.session = null;
  renderAuth();
  if (on) refreshSession();
}

// refreshSession asks who the credentials name (user, role, device patterns).
async function refreshSession() {
  const s = await api.getSession();
  if (!s || typeof s !== 'object') return;
  if (['token', 'basic', 'none'].includes(s.auth)) state.auth = s.auth;
  if (typeof s.authenticated === 'boolean') {
    state.loggedIn = s.authenticated;
    writeFlag(s.authenticated);
  }
  state.session = s.authenticated && typeof s.role === 'string' ? s : null;
  renderAuth();
}

function renderAuth() {
  const needs = state.auth !== 'none';
  $('login-btn').hidden = !needs || state.loggedIn;
  $('logout-btn').hidden = !needs || !state.loggedIn;
  $('readonly').hidden = canControl();
  const admin = state.auth === 'none' || (state.session && state.session.role === 'admin');
  $('tab-users').hidden = !admin || state.auth === 'none';
  $('tab-settings').hidden = !admin || state.auth === 'none'; // the configuration store is admin only
  const wasHidden = $('addboard').hidden;
  $('addboard').hidden = !admin || state.auth === 'none'; // enrolments are admin only
  if (wasHidden && !$('addboard').hidden && location.hash === '#cluster') addBoardView.show();
  $('who').textContent = state.session && state.session.user ? t('uWho', { u: state.session.user, r: t(state.session.role) }) : '';
  boardView.authChanged();
  devicesDirty = true;
  schedule();
}

const dlg = $('login-dlg');
// With token auth a user may also log in with their name and password (issue 24), so both stay offered.
function loginMode() {
  if (state.auth === 'basic') return state.auth;
  return dlg.querySelector('input[name=mode]:checked').value;
}
function syncLoginMode() {
  const mode = loginMode();
  dlg.querySelector('.seg').hidden = state.auth === 'basic';
  for (const el of dlg.querySelectorAll('.mode-token')) el.hidden = mode !== 'token';
  for (const el of dlg.querySelectorAll('.mode-basic')) el.hidden = mode !== 'basic';
}
function openLogin() {
  $('login-err').hidden = true;
  syncLoginMode();
  if (!dlg.open) dlg.showModal();
  (loginMode() === 'token' ? $('login-token') : $('login-user')).focus();
}
for (const r of dlg.querySelectorAll('input[name=mode]')) r.addEventListener('change', syncLoginMode);
$('login-cancel').addEventListener('click', () => dlg.close());
$('login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const err = $('login-err');
  const mode = loginMode();
  let creds;
  if (mode === 'token') {
    const token = $('login-token').value.trim();
    if (!token) { err.textContent = t('emptyToken'); err.hidden = false; return; }
    creds = { token };
  } else {
    const user = $('login-user').value.trim(), password = $('login-pass').value;
    if (!user || !password) { err.textContent = t('emptyUser'); err.hidden = false; return; }
    creds = { user, password };
  }
  $('login-submit').disabled = true;
  try {
    await api.login(creds);
    $('login-token').value = $('login-pass').value = '';
    dlg.close();
    setLoggedIn(true);
    toast(t('loggedIn'));
  } catch (e) {
    err.textContent = t('loginFailed', { e: e.status ? `${e.message} (${e.status})` : `${t('networkError')}: ${e.message}` });
    err.hidden = false;
  } finally {
    $('login-submit').disabled = false;
  }
});
$('login-btn').addEventListener('click', openLogin);
$('readonly-login').addEventListener('click', openLogin);
$('logout-btn').addEventListener('click', async () => {
  try {
    await api.logout();
    toast(t('loggedOut'));
  } catch (e) {
    toast(`${t('logout')}: ${e.message}`, true);
  }
  setLoggedIn(false);
});

// ---- connection banner

function renderBanner() {
  const b = $('banner');
  b.hidden = state.connected;
  if (state.connected) return;
  const s = Math.max(0, Math.ceil((state.retryAt - Date.now()) / 1000));
  $('banner-text').textContent = state.retryAt && s > 0 ? t('disconnected', { s: num(s, 0) }) : t('connecting');
}

const live = new api.Live({
  cluster: setCluster,
  devices: setDevices,
  device: setDevice,
  takeover: (ev) => clusterView.takeover(ev || {}),
}, (connected, retryAt) => {
  if (connected !== state.connected) clusterView.log(t(connected ? 'evConnected' : 'evDisconnected'), connected ? '' : 'rs-down');
  state.connected = connected;
  state.retryAt = retryAt;
  document.body.classList.toggle('offline', !connected);
  renderBanner();
});
$('banner-retry').addEventListener('click', () => live.retryNow());

// ---- views, language

function showView() {
  const v = { '#cluster': 'cluster', '#board': 'board', '#users': 'users', '#settings': 'settings' }[location.hash] || 'devices';
  for (const k of ['devices', 'cluster', 'board', 'users', 'settings']) {
    $('view-' + k).hidden = v !== k;
    $('tab-' + k).setAttribute('aria-selected', String(v === k));
  }
  if (v === 'cluster') clusterView.drawChart(Date.now());
  if (v === 'cluster' && !$('addboard').hidden) addBoardView.show();
  if (v === 'users') usersView.show();
  if (v === 'settings') settingsView.show();
  if (v === 'board') boardView.show();
  else boardView.hide();
}
window.addEventListener('hashchange', showView);

function relabel() {
  applyStatic();
  $('lang').textContent = current() === 'zh' ? 'English' : '中文';
  showTheme();
  devicesView.relabel(state.devices, state.history);
  clusterView.relabel();
  if (boardView.info) boardView.render(boardView.info);
  renderBanner();
  if (!$('view-cluster').hidden) clusterView.drawChart(Date.now());
}
$('lang').addEventListener('click', () => {
  setLang(current() === 'zh' ? 'en' : 'zh');
  relabel();
});

// Redraw canvases when the colour scheme flips (their colours come from CSS variables).
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
  devicesView.relabel(state.devices, state.history);
  clusterView.drawChart(Date.now());
});

setInterval(() => {
  clusterView.tick(Date.now(), !$('view-cluster').hidden);
  if (!state.connected) renderBanner();
}, 1000);

// ---- start

state.connected = true; // no banner before the first attempt fails
relabel();
showView();
renderAuth();
live.start();
// A first paint from the plain API in case the stream is slow to open; the stream's full state wins.
api.getCluster().then((c) => { if (!state.cluster) setCluster(c); }).catch(() => {});
api.getDevices().then((l) => { if (!state.devices.size) setDevices(l); }).catch(() => {});
refreshSession();
window.ews = { state, devicesView, clusterView, boardView, usersView, settingsView, addBoardView }; // for debugging from the console and for tests
