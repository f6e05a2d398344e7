// history.js: a card's history panel: zoom 1 h / 24 h / 7 d / 30 d, a chart or state timeline, CSV download.
import { h, setText } from './dom.js';
import { t, num } from './i18n.js';
import { historyChart } from './charts.js';

// ZOOMS: span and step asked of the board (no step: every reading; a step: min/mean/max per step,
// so a phone gets a few hundred points whatever the span).
export const ZOOMS = [
  { key: '1h', since: '1h', ms: 3600e3, step: '' },
  { key: '24h', since: '24h', ms: 86400e3, step: '5m' },
  { key: '7d', since: '168h', ms: 7 * 86400e3, step: '30m' },
  { key: '30d', since: '720h', ms: 30 * 86400e3, step: '2h' },
];

// historyURL is the API path of a device's history over a zoom.
export function historyURL(name, zoom, csv) {
  const q = new URLSearchParams({ since: zoom.since });
  if (zoom.step) q.set('step', zoom.step);
  if (csv) q.set('format', 'csv');
  return `/api/devices/${encodeURIComponent(name)}/history?${q}`;
}

// openPanels are redrawn when the window is resized (a phone turned sideways).
const openPanels = new Set();
addEventListener('resize', () => { for (const p of openPanels) p.draw(); });

// HistoryPanel fetches and draws one device's history while its card is open.
export class HistoryPanel {
  constructor(name, timeline) {
    this.name = name;
    this.timeline = timeline; // an output or input: a state timeline instead of a line
    this.zoom = ZOOMS[0];
    this.points = [];
    this.seq = 0;
    this.zoomBtns = ZOOMS.map((z) => h('button', {
      type: 'button', class: 'small ghost zoom', dataset: { zoom: z.key }, 'aria-pressed': String(z === this.zoom),
      onclick: () => { this.zoom = z; this.load(); },
    }, z.key));
    this.csv = h('a', { class: 'csv', download: `${name}-history.csv`, href: historyURL(name, this.zoom, true), dataset: { i18n: 'csv' } }, t('csv'));
    this.canvas = h('canvas', { class: 'hist-chart', role: 'img', 'aria-label': `${name} ${t('history')}` });
    this.note = h('p', { class: 'muted hist-note' });
    openPanels.add(this);
    this.el = h('div', { class: 'hist', hidden: true },
      h('div', { class: 'hist-bar' }, h('span', { class: 'zooms' }, this.zoomBtns), this.csv),
      this.canvas, this.note);
  }

  get open() { return !this.el.hidden; }

  toggle() {
    this.el.hidden = !this.el.hidden;
    clearInterval(this.timer);
    if (this.open) {
      this.load();
      this.timer = setInterval(() => this.load(), 15000);
    }
    return this.open;
  }

  async load() {
    const seq = ++this.seq;
    const z = this.zoom;
    for (const b of this.zoomBtns) b.setAttribute('aria-pressed', String(b.dataset.zoom === z.key));
    this.csv.href = historyURL(this.name, z, true);
    let data, err = '';
    try {
      const res = await fetch(historyURL(this.name, z, false), { credentials: 'same-origin', headers: { Accept: 'application/json' } });
      data = await res.json().catch(() => null);
      if (!res.ok) err = (data && data.error) || `HTTP ${res.status}`;
    } catch (e) {
      err = String(e && e.message ? e.message : e);
    }
    if (seq !== this.seq) return; // a newer zoom was asked meanwhile
    this.points = ((data && data.points) || []).map((p) => ({ t: Date.parse(p.t), v: p.v, min: p.min, max: p.max }));
    this.unit = (data && data.unit) || '';
    this.err = err;
    this.draw();
  }

  draw() {
    if (!this.open) return;
    const to = Date.now();
    historyChart(this.canvas, this.points, to - this.zoom.ms, to, { timeline: this.timeline });
    this.canvas.dataset.points = String(this.points.length);
    const last = this.points[this.points.length - 1];
    const text = this.err || (this.points.length
      ? t('histPoints', { n: num(this.points.length) }) + (last && !this.timeline ? ` · ${num(last.v)} ${this.unit}` : '')
      : t('noHistory'));
    setText(this.note, text);
    this.note.classList.toggle('card-err', !!this.err);
  }

  // dispose stops the refresh of a card that is removed.
  dispose() {
    clearInterval(this.timer);
    openPanels.delete(this);
  }
}
