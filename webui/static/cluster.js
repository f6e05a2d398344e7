// cluster.js: the Cluster view: boards, the master's queue, requests/s per class and the event log.
import { h, setText } from './dom.js';
import { t, num, pct, ago, clock } from './i18n.js';
import { lineChart, seriesColor } from './charts.js';

const SPAN_MS = 120000; // the chart shows at most the last two minutes…
const MIN_SPAN_MS = 20000; // …and at least 20 s, growing with the data it has
const MAX_LOG = 200;

// offsetText writes a clock offset in milliseconds with its sign, in the largest unit that fits.
function offsetText(ms) {
  const sign = ms < 0 ? '\u2212' : '+';
  const a = Math.abs(ms);
  if (a < 1000) return `${sign}${num(a, 0)} ms`;
  for (const [u, d] of [['d', 86400e3], ['h', 3600e3], ['min', 60e3]]) {
    if (a >= d) return `${sign}${num(a / d, a / d < 10 ? 1 : 0)} ${u}`;
  }
  return `${sign}${num(a / 1000, 1)} s`;
}

// age turns last_seen_ms into milliseconds since the board was heard: small numbers are already an
// age; Unix-millisecond timestamps are converted.
export function age(lastSeen, now) {
  if (typeof lastSeen !== 'number' || !Number.isFinite(lastSeen)) return NaN;
  return lastSeen > 1e11 ? Math.max(0, now - lastSeen) : lastSeen;
}

function frac(x) {
  return typeof x === 'number' && Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

function bar(fraction, cls) {
  const fill = h('span', { class: 'fill' });
  fill.style.width = `${Math.round(frac(fraction) * 100)}%`;
  return { el: h('span', { class: `meter ${cls || ''}` }, fill), fill };
}

function setBar(b, fraction, warn) {
  b.fill.style.width = `${Math.round(frac(fraction) * 100)}%`;
  b.el.classList.toggle('warn', !!warn);
}

// limitOf is a positive finite limit from the table's limits, or undefined.
function limitOf(limits, key) {
  const v = limits && limits[key];
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
}

// setLimit marks a share limit on a bar (the integrated policy's), or hides the mark.
function setLimit(b, limit) {
  if (limit === undefined) {
    if (b.limit) b.limit.hidden = true;
    b.el.title = '';
    return;
  }
  if (!b.limit) {
    b.limit = h('span', { class: 'limit' });
    b.el.append(b.limit);
  }
  b.limit.hidden = false;
  b.limit.dataset.limit = String(limit);
  b.limit.style.left = `calc(${Math.round(frac(limit) * 100)}% - 1px)`;
  b.el.title = t('limitAt', { v: pct(limit) });
}

// The figures of the load cell: paper 003's monitoring table (cpu, memory, disk space; then the
// response time), each with the integrated policy's limit and the default warning level.
const FIGS = [
  { key: 'cpu', load: 'cpu', warn: 0.7 },
  { key: 'mem', load: 'mem', warn: 0.85 },
  { key: 'disk', load: 'disk_used', warn: 0.9 },
];

// boardURL is the address of a board's own page from its http field (host:port), or '' when it has
// none a browser elsewhere can open (no host, or not a plain host:port). A page served over HTTPS
// links HTTPS: with TLS on, the field is each board's HTTPS address.
export function boardURL(http) {
  if (typeof http !== 'string' || !/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$/.test(http)) return '';
  const scheme = globalThis.location?.protocol === 'https:' ? 'https' : 'http';
  return `${scheme}://${http}/`;
}

function setBoardLink(a, n) {
  const url = boardURL(n.http) && boardURL(n.http) + '#board'; // its own board page
  if (url) {
    if (a.getAttribute('href') !== url) a.href = url;
    a.title = t('openBoard', { b: n.name });
  } else {
    a.removeAttribute('href');
    a.removeAttribute('title');
  }
}

export class ClusterView {
  constructor({ head, boards, queue, chart, legend, log, logEmpty }) {
    Object.assign(this, { headEl: head, boardsEl: boards, queueEl: queue, chart, legend, logEl: log, logEmpty });
    this.rows = new Map();
    this.cluster = null;
    this.series = {}; // class -> [{t, v}]
    this.classes = [];
    this.prevSample = null; // {t, completed}
    this.latest = null; // last completed counts seen
    this.sawCompleted = false;
    this.byEpoch = new Map(); // epoch -> log <li> about that master change
    this.prevCluster = null;
    this.buildHeader();
  }

  buildHeader() {
    this.boardsEl.textContent = '';
    const cols = ['rank', 'name', 'role', 'state', 'links', 'load', 'lastHeard'];
    this.hdr = h('div', { class: 'row hdr', role: 'row' }, cols.map((c) => h('span', { role: 'columnheader', dataset: { i18n: c }, title: c === 'links' ? t('linksHelp') : null }, t(c))));
    this.boardsEl.append(this.hdr);
    this.rows.clear();
  }

  // render shows a /api/cluster object.
  render(c) {
    this.cluster = c;
    const nodes = Array.isArray(c.nodes) ? [...c.nodes].sort((a, b) => (a.rank ?? 0) - (b.rank ?? 0)) : [];
    setText(this.headEl, '');
    this.headEl.textContent = '';
    this.headEl.append(
      h('strong', { title: t('tableVersion', { v: num(c.version ?? 0, 0) }) }, t('masterIs', { m: c.master || '?', e: num(c.epoch ?? 0, 0) })),
      h('span', { class: 'muted' }, t('viewedFrom', { s: c.self || '?' })));
    const now = Date.now();
    const seen = new Set();
    let last = this.hdr;
    for (const n of nodes) {
      seen.add(n.name);
      let r = this.rows.get(n.name);
      if (!r) {
        r = this.buildRow(n.name);
        this.rows.set(n.name, r);
      }
      if (last.nextElementSibling !== r.el) last.after(r.el);
      last = r.el;
      this.updateRow(r, n, c, now);
    }
    for (const [name, r] of this.rows) {
      if (!seen.has(name)) {
        r.el.remove();
        this.rows.delete(name);
      }
    }
    this.renderQueue(c.queue);
    if (c.completed && typeof c.completed === 'object') {
      this.sawCompleted = true;
      this.latest = { t: now, completed: { ...c.completed } };
      for (const k of Object.keys(c.completed)) if (!this.classes.includes(k)) this.classes.push(k);
    }
    for (const k of Object.keys(c.queue || {})) if (!this.classes.includes(k)) this.classes.push(k);
    this.noteChanges(c);
    this.prevCluster = c;
  }

  buildRow(name) {
    const cells = {};
    const mk = (k, ...kids) => h('span', { role: 'cell', class: `c-${k}`, dataset: { label: t(k) } }, ...kids);
    cells.rankEl = h('span', { class: 'num' });
    cells.nameEl = h('a', { class: 'bname' }, name); // a link to the board's own page once its address is known
    cells.selfEl = h('span', { class: 'tag', hidden: true }, t('thisBoard'));
    cells.simEl = h('span', { class: 'tag', hidden: true }, t('simulated'));
    cells.roleEl = h('span', { class: 'badge' });
    cells.stateEl = h('span', { class: 'badge' });
    cells.authEl = h('span', { class: 'badge bad auth-mismatch', hidden: true }); // text only while shown
    cells.links = bar(0);
    cells.linksTxt = h('span', { class: 'num' });
    cells.figs = {};
    const figEls = FIGS.map((f) => {
      const b = bar(0, 'thin');
      const txt = h('span', { class: 'num' });
      const el = h('span', { class: 'ld', dataset: { fig: f.key } }, h('span', { class: 'muted', dataset: { i18n: f.key } }, t(f.key)), b.el, txt);
      cells.figs[f.key] = { el, bar: b, txt };
      return el;
    });
    cells.rtTxt = h('span', { class: 'num' });
    const rtEl = h('span', { class: 'ld', dataset: { fig: 'rt' } }, h('span', { class: 'muted', dataset: { i18n: 'rt' } }, t('rt')), cells.rtTxt);
    cells.clockTxt = h('span', { class: 'num' });
    const clockEl = h('span', { class: 'ld', dataset: { fig: 'clock' } }, h('span', { class: 'muted', dataset: { i18n: 'clock' } }, t('clock')), cells.clockTxt);
    cells.heard = h('span', { class: 'num' });
    const el = h('div', { class: 'row', role: 'row', dataset: { board: name } },
      mk('rank', cells.rankEl),
      mk('name', cells.nameEl, cells.selfEl, cells.simEl),
      mk('role', cells.roleEl),
      mk('state', cells.stateEl, cells.authEl),
      mk('links', cells.links.el, cells.linksTxt),
      mk('load', ...figEls, rtEl, clockEl),
      mk('lastHeard', cells.heard));
    return { el, ...cells };
  }

  updateRow(r, n, c, now) {
    const isMaster = n.name === c.master;
    setText(r.rankEl, num(n.rank ?? 0, 0));
    setBoardLink(r.nameEl, n);
    r.selfEl.hidden = n.name !== c.self;
    setText(r.selfEl, t('thisBoard'));
    r.simEl.hidden = !n.simulated; // its devices drive no hardware
    setText(r.simEl, t('simulated'));
    setText(r.roleEl, isMaster ? `${t('master')} · ${t('epoch', { e: num(c.epoch ?? 0, 0) })}` : t('follower'));
    r.roleEl.className = 'badge ' + (isMaster ? 'accent' : '');
    const rs = ['joining', 'running', 'overloaded', 'down', 'revoked'].includes(n.runstate) ? n.runstate : 'down';
    setText(r.stateEl, t(rs));
    r.stateEl.className = `badge rs-${rs}`;
    r.authEl.hidden = !n.auth_mismatch;
    setText(r.authEl, n.auth_mismatch ? t('authMismatch') : '');
    r.authEl.title = n.auth_mismatch ? t('authMismatchHint') : '';
    r.el.classList.toggle('is-down', rs === 'down' || rs === 'revoked');
    r.el.classList.toggle('is-master', isMaster);
    const cap = n.capacity > 0 ? n.capacity : 1;
    const links = n.linknum ?? 0;
    setBar(r.links, links / cap, links >= cap);
    setText(r.linksTxt, `${num(links, 0)} / ${num(n.capacity ?? 0, 0)}`);
    r.linksTxt.title = t('linksHelp');
    const load = n.load || {};
    const unknown = new Set(Array.isArray(n.load_unknown) ? n.load_unknown : []);
    const limits = c.limits && typeof c.limits === 'object' ? c.limits : null;
    for (const f of FIGS) {
      const cell = r.figs[f.key];
      const v = load[f.load];
      const lim = limitOf(limits, f.key);
      const lost = unknown.has(f.load);
      cell.el.classList.toggle('unknown', lost);
      cell.el.title = lost ? t('figUnknown') : '';
      setBar(cell.bar, lost ? 0 : v, !lost && v > (lim ?? f.warn));
      setLimit(cell.bar, lim);
      setText(cell.txt, lost ? '?' : pct(v));
    }
    const rt = n.rt_ms;
    const rtLim = limitOf(limits, 'rt');
    const hasRT = typeof rt === 'number' && Number.isFinite(rt);
    setText(r.rtTxt, hasRT ? `${num(rt, rt < 10 ? 1 : 0)} ms` + (rtLim !== undefined ? ` / ${num(rtLim, 0)}` : '') : '–');
    r.rtTxt.classList.toggle('warn', hasRT && rtLim !== undefined && rt > rtLim);
    r.rtTxt.title = hasRT ? t('rtHelp') + (rtLim !== undefined ? ' · ' + t('limitAt', { v: `${num(rtLim, 0)} ms` }) : '') : t('rtNone');
    // clock_offset_ms: the board's clock against the one answering (docs/DESIGN.md, Time)
    const off = n.clock_offset_ms;
    const hasOff = typeof off === 'number' && Number.isFinite(off);
    setText(r.clockTxt, hasOff ? offsetText(off) : '–');
    r.clockTxt.classList.toggle('warn', hasOff && Math.abs(off) > 1000);
    r.clockTxt.title = !hasOff ? t('clockNone') : Math.abs(off) > 1000 ? t('clockWarn') : t('clockHelp');
    const a = age(n.last_seen_ms, now);
    setText(r.heard, n.name === c.self ? t('thisBoard') : ago(a));
  }

  renderQueue(q) {
    this.queueEl.textContent = '';
    const entries = Object.entries(q || {});
    if (!entries.length) {
      this.queueEl.append(h('p', { class: 'muted' }, t('queueEmpty')));
      return;
    }
    const max = Math.max(10, ...entries.map(([, v]) => Number(v) || 0));
    for (const [cls, depth] of entries) {
      const b = bar((Number(depth) || 0) / max);
      b.fill.style.background = seriesColor(Math.max(0, this.classIndex(cls)));
      this.queueEl.append(h('div', { class: 'qrow', dataset: { class: cls } },
        h('span', { class: 'qname' }, cls), b.el, h('span', { class: 'num' }, num(Number(depth) || 0, 0))));
    }
  }

  classIndex(cls) {
    let i = this.classes.indexOf(cls);
    if (i < 0) {
      this.classes.push(cls);
      i = this.classes.length - 1;
    }
    return i;
  }

  // tick samples completed counters once a second into requests/s points and redraws the chart.
  tick(now, visible) {
    if (this.latest) {
      const cur = this.latest;
      const prev = this.prevSample;
      if (prev && cur.t > prev.t) {
        const dt = (cur.t - prev.t) / 1000;
        for (const [k, v] of Object.entries(cur.completed)) {
          const before = prev.completed[k];
          if (typeof v !== 'number' || typeof before !== 'number') continue;
          const rate = Math.max(0, (v - before) / dt); // a counter reset (new master) reads as 0
          (this.series[k] ||= []).push({ t: cur.t, v: rate });
        }
        for (const k of Object.keys(this.series)) {
          const s = this.series[k];
          while (s.length && s[0].t < now - SPAN_MS - 2000) s.shift();
        }
      }
      if (!prev || cur.t > prev.t) this.prevSample = cur;
    }
    if (visible) this.drawChart(now);
  }

  drawChart(now) {
    const names = this.classes.filter((k) => this.series[k]);
    this.legend.textContent = '';
    if (!this.sawCompleted) {
      this.legend.append(h('span', { class: 'muted' }, t('noRate')));
    }
    names.forEach((k) => {
      const s = this.series[k];
      const last = s.length ? s[s.length - 1].v : 0;
      const sw = h('i');
      sw.style.background = seriesColor(this.classIndex(k));
      this.legend.append(h('span', { class: 'key' }, sw, `${k} ${num(last, 1)}/s`));
    });
    let first = now;
    for (const k of names) if (this.series[k].length) first = Math.min(first, this.series[k][0].t);
    const span = Math.min(SPAN_MS, Math.max(MIN_SPAN_MS, now - first));
    lineChart(this.chart, this.series, names, now, span);
  }

  // noteChanges logs master changes and runstate changes seen between two tables.
  noteChanges(c) {
    const p = this.prevCluster;
    if (!p) return;
    if (c.master && (c.master !== p.master || c.epoch !== p.epoch) && !this.byEpoch.has(c.epoch)) {
      this.byEpoch.set(c.epoch, this.log(t('evMaster', { m: c.master, e: num(c.epoch ?? 0, 0) }), 'master'));
    }
    const before = new Map((p.nodes || []).map((n) => [n.name, n.runstate]));
    for (const n of c.nodes || []) {
      const was = before.get(n.name);
      if (was && was !== n.runstate) this.log(t('evState', { n: n.name, s: t(n.runstate) }), `rs-${n.runstate}`);
    }
  }

  // takeover logs a takeover event {epoch, master, previous}; it replaces a line already written for
  // the same epoch from the table.
  takeover(ev) {
    const text = t('evTakeover', { m: ev.master || '?', e: num(ev.epoch ?? 0, 0), p: ev.previous || '?' });
    const li = this.byEpoch.get(ev.epoch);
    if (li) {
      setText(li.querySelector('.msg'), text);
      li.className = 'takeover';
      return;
    }
    this.byEpoch.set(ev.epoch, this.log(text, 'takeover'));
  }

  // log prepends a line to the event log.
  log(text, cls) {
    const li = h('li', { class: cls || '' }, h('time', null, clock(new Date())), h('span', { class: 'msg' }, text));
    this.logEl.prepend(li);
    if (this.logEmpty) this.logEmpty.hidden = true;
    while (this.logEl.children.length > MAX_LOG) this.logEl.lastElementChild.remove();
    return li;
  }

  // relabel re-renders texts after a language switch.
  relabel() {
    this.buildHeader();
    if (this.cluster) {
      const prev = this.prevCluster;
      this.prevCluster = null; // no change events for a redraw
      this.render(this.cluster);
      this.prevCluster = prev;
    }
  }
}
