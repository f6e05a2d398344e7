// devices.js: the Devices view: a card per device, grouped by the board it is wired to.
import { h, setText } from './dom.js';
import { t, withUnit, num, clock, locale } from './i18n.js';
import { sparkline } from './charts.js';
import { HistoryPanel } from './history.js';

const OUTPUTS = new Set(['gpio-out', 'sim-switch', 'sim-relay', 'modbus-coil']);
const PWMS = new Set(['pwm', 'sim-pwm']);
// INPUTS are buttons and contacts: their value is pressed or released (as rules name them), never "false".
const INPUTS = new Set(['gpio-in', 'sim-button']);

// kind says which controls a device gets: 'output' (switch + pulse), 'pwm' (slider), 'sensor'.
export function kind(d) {
  if (OUTPUTS.has(d.driver)) return 'output';
  if (PWMS.has(d.driver)) return 'pwm';
  return 'sensor';
}

export function isOn(d) {
  return d.state === 'on' || d.value === true || d.value === 1 || d.value === 'on';
}

// numeric returns the number to plot for a reading, or null.
export function numeric(v) {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) if (typeof x === 'number' && Number.isFinite(x)) return x;
  }
  return null;
}

const asNumber = (x) => (typeof x === 'string' && x.trim() !== '' && Number.isFinite(Number(x)) ? Number(x) : x);

function isReadings(v) {
  return v && typeof v === 'object' && !Array.isArray(v);
}

// readings lists a multi-value sensor (e.g. temperature, humidity, pressure), one row each.
function readings(d) {
  const units = d.unit && typeof d.unit === 'object' ? d.unit : {};
  return h('dl', { class: 'readings' }, Object.entries(d.value).map(([k, x]) => [
    h('dt', null, k), h('dd', null, withUnit(asNumber(x), typeof units[k] === 'string' ? units[k] : '')),
  ]));
}

function formatValue(d) {
  const v = d.value;
  if (INPUTS.has(d.driver) && d.state !== 'error' && (typeof v === 'boolean' || v == null || v === '')) return t(isOn(d) ? 'pressed' : 'released');
  if (typeof v === 'boolean') return t(v ? 'on' : 'off');
  if (Array.isArray(v)) return v.map((x) => String(x)).join(', ');
  if (v == null || v === '') return d.state ? stateText(d.state) : '–';
  const n = typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
  return withUnit(n, typeof d.unit === 'string' ? d.unit : '');
}

function stateText(s) {
  return s === 'on' || s === 'off' || s === 'error' ? t(s) : String(s ?? '');
}

function toDate(u) {
  if (u == null || u === '') return null;
  const d = typeof u === 'number' ? new Date(u > 1e11 ? u : u * 1000) : new Date(u);
  return Number.isNaN(d.getTime()) ? null : d;
}

function when(d) {
  if (!d) return t('never');
  const today = new Date().toDateString() === d.toDateString();
  if (today) return clock(d);
  return new Intl.DateTimeFormat(locale(), { dateStyle: 'short', timeStyle: 'medium' }).format(d);
}

// DevicesView keeps one card element per device and updates it in place, so a slider being dragged
// or a focused control is never rebuilt under the user's hand.
export class DevicesView {
  constructor({ root, filter, count, empty, onAction }) {
    this.root = root;
    this.filter = filter;
    this.count = count;
    this.empty = empty;
    this.onAction = onAction;
    this.cards = new Map(); // name -> card record
    this.groups = new Map(); // board -> group record
    this.canControl = false;
    this.loaded = false; // no device list yet: "Loading devices…", never "No devices" (setLoaded)
    this.allow = () => true; // whether the user's role covers this device (issue 24)
    this.histFor = () => [];
    filter.addEventListener('input', () => this.applyFilter());
  }

  // render brings the cards in line with devices (Map name -> device), history (Map name -> numbers),
  // boards (names in rank order) and whether the user may control devices.
  render(devices, history, boards, canControl) {
    const ctlChanged = canControl !== this.canControl;
    this.canControl = canControl;
    for (const [name, rec] of this.cards) {
      if (!devices.has(name)) {
        rec.hist.dispose();
        rec.el.remove();
        this.cards.delete(name);
      }
    }
    const names = [...devices.keys()].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    const order = new Map(boards.map((b, i) => [b, i]));
    const used = new Set();
    for (const g of this.groups.values()) g.last = null;
    for (const name of names) {
      const d = devices.get(name);
      let rec = this.cards.get(name);
      if (!rec) {
        rec = this.build(d);
        this.cards.set(name, rec);
      }
      const board = d.node || '?';
      used.add(board);
      const g = this.group(board);
      rec.board = board;
      // Move a card only when it is out of place: moving a node would blur a focused control.
      if (rec.el.parentNode !== g.grid || rec.el.previousElementSibling !== g.last) {
        if (g.last) g.last.after(rec.el);
        else g.grid.prepend(rec.el);
      }
      g.last = rec.el;
      this.update(rec, d, history.get(name) || [], ctlChanged);
    }
    for (const [b, g] of this.groups) {
      if (!used.has(b)) {
        g.el.remove();
        this.groups.delete(b);
      }
    }
    const rank = (b) => (order.has(b) ? order.get(b) : b === 'any' ? 1e6 : 1e6 + 1);
    const sorted = [...this.groups.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    let last = null;
    for (const b of sorted) {
      const el = this.groups.get(b).el;
      if (el.parentNode !== this.root || el.previousElementSibling !== last) {
        if (last) last.after(el);
        else this.root.prepend(el);
      }
      last = el;
    }
    this.applyFilter();
  }

  // update refreshes one device (a `device` event) without touching the others.
  updateOne(d, hist) {
    const rec = this.cards.get(d.name);
    if (!rec || rec.board !== (d.node || '?')) return false;
    this.update(rec, d, hist || [], false);
    this.applyFilter();
    return true;
  }

  // relabel re-renders texts after a language switch.
  relabel(devices, history) {
    for (const [name, rec] of this.cards) {
      rec.lastKey = '';
      const d = devices.get(name);
      if (d) this.update(rec, d, history.get(name) || [], true);
      for (const el of rec.el.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
    }
    for (const [b, g] of this.groups) setText(g.title, b === 'any' ? t('anyBoard') : b);
    this.applyFilter();
  }

  group(board) {
    let g = this.groups.get(board);
    if (g) return g;
    const title = h('h2', null, board === 'any' ? t('anyBoard') : board);
    const cnt = h('span', { class: 'muted count' });
    const grid = h('div', { class: 'grid' });
    const el = h('section', { class: 'group', dataset: { board } }, h('div', { class: 'group-head' }, title, cnt), grid);
    g = { el, title, cnt, grid };
    this.groups.set(board, g);
    return g;
  }

  build(d) {
    const k = kind(d);
    const rec = { kind: k, board: d.node || '?', busy: false, actionErr: '', lastKey: '', name: d.name };
    rec.nameEl = h('h3', { class: 'name', title: d.name }, d.name);
    rec.driverEl = h('span', { class: 'driver' }, d.driver || '');
    rec.stateEl = h('span', { class: 'badge' });
    // issue 25: the state was brought back from the cluster's memory after the board restarted
    rec.restoredEl = h('span', { class: 'tag restored', hidden: true, title: t('restoredHint') }, t('restored'));
    rec.errEl = h('p', { class: 'card-err', role: 'alert', hidden: true });
    rec.boardEl = h('span', { class: 'board' });
    rec.updEl = h('time', { class: 'upd' });
    let body;
    if (k === 'output') {
      rec.sw = h('input', {
        type: 'checkbox', role: 'switch', class: 'sw', 'aria-label': d.name,
        onchange: () => this.act(rec, rec.sw.checked ? 'turn_on' : 'turn_off'),
      });
      rec.swLabel = h('span', { class: 'sw-label' });
      rec.ms = h('input', { type: 'number', class: 'ms', min: '1', max: '60000', step: '50', value: '500', 'aria-label': t('ms') });
      rec.pulseBtn = h('button', {
        type: 'button', class: 'small ghost pulse', dataset: { i18n: 'pulse' },
        onclick: () => this.act(rec, 'pulse', { ms: String(Math.max(1, Math.round(Number(rec.ms.value) || 500))) }),
      }, t('pulse'));
      body = h('div', { class: 'ctl' },
        h('label', { class: 'switch' }, rec.sw, h('span', { class: 'track' }), rec.swLabel),
        h('span', { class: 'pulse-box' }, rec.pulseBtn, rec.ms, h('span', { class: 'muted unit', dataset: { i18n: 'ms' } }, t('ms'))));
    } else if (k === 'pwm') {
      rec.range = h('input', {
        type: 'range', min: '0', max: '100', step: '1', class: 'range', 'aria-label': d.name,
        onpointerdown: () => { rec.dragging = true; },
        oninput: () => setText(rec.rangeOut, withUnit(Number(rec.range.value), '%')),
        onchange: () => { rec.dragging = false; this.act(rec, 'set', { value: rec.range.value }); },
      });
      rec.rangeOut = h('output', { class: 'range-out' });
      body = h('div', { class: 'ctl' }, rec.range, rec.rangeOut);
    } else {
      rec.valEl = h('div', { class: 'value' });
      rec.spark = h('canvas', { class: 'spark', width: '120', height: '32', 'aria-hidden': 'true' });
      rec.readBtn = h('button', {
        type: 'button', class: 'small ghost', dataset: { i18n: 'read' },
        onclick: () => this.act(rec, 'read'),
      }, t('read'));
      body = h('div', { class: 'ctl sensor' }, rec.valEl, rec.spark, rec.readBtn);
    }
    // the card opens on its history: a chart for a sensor, a state timeline for an output or input
    rec.hist = new HistoryPanel(d.name, k === 'output' || typeof d.value === 'boolean');
    rec.histBtn = h('button', {
      type: 'button', class: 'small ghost hist-btn', 'aria-expanded': 'false', dataset: { i18n: 'history' },
      onclick: () => {
        const open = rec.hist.toggle();
        rec.el.classList.toggle('open', open);
        rec.histBtn.setAttribute('aria-expanded', String(open));
      },
    }, t('history'));
    rec.el = h('article', { class: `card k-${k}`, dataset: { name: d.name } },
      h('div', { class: 'card-head' }, rec.nameEl, rec.restoredEl, rec.stateEl),
      rec.driverEl,
      body,
      rec.errEl,
      rec.hist.el,
      h('div', { class: 'card-foot' }, rec.boardEl, rec.histBtn, rec.updEl));
    return rec;
  }

  update(rec, d, hist, force) {
    const key = JSON.stringify([d.state, d.value, d.unit, d.updated, d.error, d.node, d.simulated, d.restored, hist.length, hist[hist.length - 1], rec.actionErr, rec.busy, this.canControl, this.allow(d.name)]);
    if (!force && key === rec.lastKey) return;
    rec.lastKey = key;
    rec.device = d;
    const err = rec.actionErr || d.error || (d.state === 'error' ? t('error') : '');
    rec.el.classList.toggle('is-error', !!err);
    rec.el.classList.toggle('busy', rec.busy);
    rec.errEl.hidden = !err;
    setText(rec.errEl, err);
    const on = isOn(d);
    rec.el.classList.toggle('is-on', rec.kind === 'output' && on && d.state !== 'error');
    setText(rec.stateEl, d.state === 'error' ? t('error') : rec.kind === 'output' ? t(on ? 'on' : 'off') : stateText(d.state));
    rec.stateEl.className = 'badge ' + (d.state === 'error' ? 'bad' : rec.kind === 'output' && on ? 'good' : '');
    setText(rec.boardEl, d.node === 'any' ? t('anyBoard') : `${t('wiredTo')} ${d.node || '?'}`);
    rec.restoredEl.hidden = !d.restored;
    setText(rec.restoredEl, t('restored'));
    rec.restoredEl.title = t('restoredHint');
    setText(rec.driverEl, d.simulated ? `${d.driver || ''} · ${t('simulated')}` : d.driver || '');
    const upd = toDate(d.updated);
    setText(rec.updEl, upd ? when(upd) : t('never'));
    rec.updEl.title = upd ? upd.toISOString() : '';
    const may = this.canControl && this.allow(d.name);
    rec.el.classList.toggle('read-only', this.canControl && !may); // logged in, but not this device: no controls
    const disabled = !may || rec.busy;
    const why = !this.canControl ? t('needLogin') : may ? '' : t('noRights');
    if (rec.kind === 'output') {
      if (!rec.busy) rec.sw.checked = on; // while an action runs, the switch shows what was asked
      rec.sw.disabled = disabled;
      setText(rec.swLabel, t(on ? 'on' : 'off'));
      rec.pulseBtn.disabled = disabled;
      rec.ms.disabled = disabled;
      rec.sw.title = rec.pulseBtn.title = why;
    } else if (rec.kind === 'pwm') {
      const v = numeric(d.value) ?? 0;
      if (!rec.dragging && !rec.busy) {
        rec.range.value = String(v);
        setText(rec.rangeOut, withUnit(v, '%'));
      }
      rec.range.disabled = disabled;
      rec.range.title = why;
    } else {
      if (isReadings(d.value)) {
        rec.valEl.classList.add('multi');
        rec.valEl.replaceChildren(readings(d));
      } else {
        rec.valEl.classList.remove('multi');
        setText(rec.valEl, formatValue(d));
      }
      rec.readBtn.disabled = disabled;
      rec.readBtn.title = why;
      if (hist.length >= 2) {
        rec.spark.hidden = false;
        sparkline(rec.spark, hist);
        rec.spark.title = hist.slice(-5).map((x) => num(x)).join(' · ');
      } else {
        rec.spark.hidden = true;
      }
    }
  }

  async act(rec, action, params) {
    if (rec.busy) return;
    rec.busy = true;
    if (rec.device) this.update(rec, rec.device, this.histFor(rec.name), true);
    let err = '';
    try {
      err = (await this.onAction(rec.name, action, params)) || '';
    } catch (e) {
      err = String(e && e.message ? e.message : e);
    } finally {
      rec.busy = false;
    }
    rec.actionErr = err;
    // The answer may already have updated rec.device; redraw with the latest state either way.
    if (rec.device) this.update(rec, rec.device, this.histFor(rec.name), true);
  }

  applyFilter() {
    const words = this.filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0, total = 0;
    const perGroup = new Map();
    for (const rec of this.cards.values()) {
      total++;
      const d = rec.device || {};
      const hay = `${d.name} ${d.driver} ${d.node} ${d.state}`.toLowerCase();
      const hit = words.every((w) => hay.includes(w));
      if (rec.el.hidden === hit) rec.el.hidden = !hit;
      if (hit) {
        shown++;
        perGroup.set(rec.board, (perGroup.get(rec.board) || 0) + 1);
      }
    }
    for (const [b, g] of this.groups) {
      const n = perGroup.get(b) || 0;
      g.el.hidden = n === 0;
      setText(g.cnt, num(n));
    }
    setText(this.count, words.length ? t('nShown', { shown: num(shown), n: num(total) }) : t('nDevices', { n: num(total) }));
    this.empty.hidden = shown > 0;
    this.empty.classList.toggle('loading', !this.loaded);
    if (this.loaded && total === 0) {
      // a new board: say where devices come from, not just that there are none
      this.empty.textContent = '';
      this.empty.append(t('noDevices'), ' ', h('a', { href: '#settings', id: 'devices-empty-go' }, t('noDevicesGo')));
    } else {
      setText(this.empty, !this.loaded ? t('devLoading') : t('noMatch'));
    }
  }

  // setLoaded says the board answered with its device list (maybe empty): from now on an
  // empty list means "No devices".
  setLoaded() {
    if (this.loaded) return;
    this.loaded = true;
    this.applyFilter();
  }
}
