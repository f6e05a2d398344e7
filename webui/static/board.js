// board.js: the Board view (#board): this board's facts, its live log, restart and firmware upgrade.
import { $, h, setText } from './dom.js';
import { t, num } from './i18n.js';
import { sha256 } from './sha256.js';
import * as api from './api.js';

const MAX_LINES = 500;

function mib(b) {
  return typeof b === 'number' && b > 0 ? `${num(b / 1048576, 0)} MiB` : '–';
}

function duration(s) {
  if (typeof s !== 'number' || !Number.isFinite(s)) return '–';
  const d = Math.floor(s / 86400), hh = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${hh}h`;
  if (hh) return `${hh}h ${m}m`;
  return m ? `${m}m ${Math.floor(s % 60)}s` : `${Math.floor(s)}s`;
}

function pct(x) {
  return typeof x === 'number' && Number.isFinite(x) ? `${Math.round(x * 100)} %` : '–';
}

export class BoardView {
  // canControl() says whether the user may restart and upgrade; onAuth(status) reports a 401.
  constructor({ canControl, onAuth, toast }) {
    Object.assign(this, { canControl, onAuth, toast });
    this.info = null;
    this.es = null;
    this.timer = 0;
    this.file = null;
    this.fileSum = '';
    this.waitFor = null; // {sha, since, from} while an upload restarts the board
    $('board-restart').addEventListener('click', () => this.restart());
    $('fw-file').addEventListener('change', () => this.pick());
    $('fw-confirm').addEventListener('change', () => this.syncUpload());
    $('fw-upload').addEventListener('click', () => this.upload());
    $('fw-rollout').addEventListener('click', () => this.rollout());
  }

  // show starts polling /api/board and, when allowed, the log stream; hide stops both.
  show() {
    if (this.timer) return;
    this.refresh();
    this.timer = setInterval(() => this.refresh(), 2000);
    this.openLog();
  }

  hide() {
    clearInterval(this.timer);
    this.timer = 0;
    if (this.es) this.es.close();
    this.es = null;
  }

  // authChanged re-opens the log stream after a login or logout.
  authChanged() {
    if (!this.timer) return;
    if (this.es) this.es.close();
    this.es = null;
    this.openLog();
    this.syncUpload();
  }

  async refresh() {
    try {
      this.render(await api.getBoard());
    } catch (e) {
      setText($('board-status'), this.waitFor ? t('fwRestarting') : `${t('networkError')}: ${e.message}`);
    }
  }

  // render shows the board's facts; a full card shows in the history row.
  render(b) {
    if (!b || typeof b !== 'object') return;
    this.info = b;
    const rows = [
      ['name', b.name], ['bAddr', b.http], ['bAdvertise', b.advertise], ['bGossip', b.gossip],
      ['bUptime', duration(b.uptime_s)], ['bVersion', b.version], ['bCommit', b.commit],
      ['bGo', b.go_version], ['bArch', b.arch + (b.goarm ? ` GOARM=${b.goarm}` : '')],
      ['bMemFree', `${mib(b.memory && b.memory.available_bytes)} / ${mib(b.memory && b.memory.total_bytes)}`],
      ['bMemProc', mib(b.memory && b.memory.process_bytes)],
      ['load', `${t('cpu')} ${pct(b.load && b.load.cpu)} · ${t('mem')} ${pct(b.load && b.load.mem)}`],
      ['state', t(b.runstate) || b.runstate], ['master', b.master], ['bPid', String(b.pid)],
      ['bSha', b.sha256 || '–'],
      ['history', historyFact(b.history)], // issue 28
    ];
    // kept stores the board could not read at start: why, and the fix (issue 45)
    const probs = $('board-problems');
    probs.textContent = '';
    for (const p of Array.isArray(b.problems) ? b.problems : []) {
      probs.append(h('li', { dataset: { store: p.store } }, h('strong', null, t('bStoreProblem', { s: p.store, p: p.path })), ` ${p.error}. ${t('bFix')}: ${p.fix}`));
    }
    const dl = $('board-facts');
    dl.textContent = '';
    for (const [k, v] of rows) dl.append(h('dt', null, t(k)), h('dd', { dataset: { k } }, v ?? '–'));
    // the cluster CA (public): what a browser imports to trust every board's HTTPS (issue 47)
    if (b.ca_sha256) {
      dl.append(h('dt', null, t('bCA')), h('dd', { dataset: { k: 'bCA' } },
        h('a', { id: 'board-ca', href: '/api/cluster/ca', download: 'ca.pem' }, 'ca.pem'), ' · SHA-256 ',
        h('code', { id: 'board-ca-sha' }, b.ca_sha256), h('br'), h('small', { class: 'muted' }, t('bCAHelp'))));
    }
    const devs = $('board-devices');
    devs.textContent = '';
    for (const d of Array.isArray(b.devices) ? b.devices : []) {
      devs.append(h('li', { dataset: { name: d.name } }, h('strong', null, d.name), ` ${d.driver || ''} · ${d.state ?? ''}${d.value != null ? ' ' + d.value : ''}${d.unit ? ' ' + d.unit : ''}`));
    }
    if (!devs.children.length) devs.append(h('li', { class: 'muted' }, t('noDevices')));
    const last = b.last_upgrade;
    setText($('board-upgrade'), last ? t(last.outcome === 'committed' ? 'fwCommitted' : 'fwRolledBack', { v: last.from_version, r: last.reason || '' }) : '');
    $('board-upgrade').className = last && last.outcome !== 'committed' ? 'err' : 'muted';
    if (this.waitFor) {
      const w = this.waitFor;
      if (b.sha256 === w.sha && b.runstate === 'running') {
        this.waitFor = null;
        this.toast(t('fwDone', { v: b.version }));
      } else if (last && last.sha256 === w.sha && last.outcome === 'rolled back') {
        this.waitFor = null;
        this.toast(t('fwRolledBack', { v: b.version, r: last.reason || '' }), true);
      }
    }
    setText($('board-status'), this.waitFor ? t('fwRestarting') : '');
    this.syncUpload();
  }

  // openLog fills the Log panel from GET /api/board/log at once, then follows the log stream
  // (its first event is the same lines again; seq keeps each line once).
  openLog() {
    const list = $('board-log');
    if (!this.canControl()) {
      this.logNote(list, t('logNeedsLogin'));
      return;
    }
    if (this.es) return;
    if (!list.querySelector('li:not(.note)')) this.logNote(list, t('logLoading'));
    api.getBoardLog().then((r) => {
      if (r && Array.isArray(r.lines)) this.addLines(list, r.lines, false);
    }).catch((e) => {
      if (e.status === 403) {
        this.logNote(list, t('logAdminOnly'));
        if (this.es) this.es.close();
        this.es = null;
      } else if (e.status === 401) {
        this.onAuth(401);
      }
      // 404: a board of an older build; the stream fills the panel
    });
    const es = new EventSource('/events?scope=log');
    this.es = es;
    es.addEventListener('log', (ev) => {
      let lines;
      try { lines = JSON.parse(ev.data); } catch { return; }
      if (!Array.isArray(lines)) return;
      this.addLines(list, lines, lines.length > 1); // more than one: a snapshot
    });
    es.onerror = () => {
      // The board restarts or the session ended: EventSource retries by itself (the stream's retry).
      if (!this.canControl()) this.hide();
    };
  }

  // logNote replaces the panel's content with one muted line (why it is empty).
  logNote(list, text) {
    list.textContent = '';
    delete list.dataset.seq;
    list.append(h('li', { class: 'muted note' }, text));
  }

  // addLines shows log lines, each once (by seq); replace starts over from a snapshot.
  addLines(list, lines, replace) {
    if (replace) {
      list.textContent = '';
      delete list.dataset.seq;
    }
    for (const n of list.querySelectorAll('li.note')) n.remove();
    for (const l of lines) {
      if (!l || typeof l.text !== 'string') continue;
      if (list.dataset.seq !== undefined && Number(list.dataset.seq) >= l.seq) continue;
      list.dataset.seq = String(l.seq);
      const time = typeof l.time === 'string' ? l.time.slice(11, 19) : '';
      list.append(h('li', { class: `lv-${String(l.level).toLowerCase()}` }, h('time', null, time), h('span', { class: 'lvl' }, l.level), h('span', { class: 'msg' }, l.text)));
    }
    while (list.children.length > MAX_LINES) list.firstElementChild.remove();
    if (!list.children.length) list.append(h('li', { class: 'muted note' }, t('logEmpty')));
    list.scrollTop = list.scrollHeight;
  }

  async restart() {
    if (!this.canControl()) { this.onAuth(401); return; }
    const name = (this.info && this.info.name) || '';
    if (!window.confirm(t('restartConfirm', { b: name }))) return;
    try {
      await api.restartBoard();
      this.waitFor = null;
      this.toast(t('restarting', { b: name }));
    } catch (e) {
      this.toast(`${t('restart')}: ${e.message} (${e.status})`, true);
      if (e.status === 401) this.onAuth(401);
    }
  }

  async pick() {
    const f = $('fw-file').files[0];
    this.file = null;
    this.fileSum = '';
    $('fw-confirm').checked = false;
    setText($('fw-sum'), f ? t('fwHashing') : '');
    this.syncUpload();
    if (!f) return;
    const bytes = new Uint8Array(await f.arrayBuffer());
    if ($('fw-file').files[0] !== f) return; // another file was picked meanwhile
    this.file = f;
    this.fileSum = sha256(bytes);
    setText($('fw-sum'), this.fileSum);
    this.syncUpload();
  }

  syncUpload() {
    $('fw-upload').disabled = !(this.file && this.fileSum && $('fw-confirm').checked && this.canControl() && !this.waitFor);
    $('fw-rollout').disabled = $('fw-upload').disabled;
    $('board-restart').disabled = !this.canControl();
  }

  // rollout hands the binary to this board, which upgrades every board one at a time (followers
  // first, then the master, itself last); the page shows its progress until it restarts itself.
  async rollout() {
    if (!this.file || !$('fw-confirm').checked) return;
    if (!window.confirm(t('rolloutConfirm'))) return;
    $('fw-rollout').disabled = $('fw-upload').disabled = true;
    try {
      const st = await api.uploadFirmware(this.file, this.fileSum, '/api/cluster/upgrade');
      this.waitFor = { sha: st.sha256 || this.fileSum };
      this.showRollout(st);
      clearInterval(this.rollTimer);
      this.rollTimer = setInterval(async () => {
        try {
          const s = await api.getRollout();
          // After this board restarted into the new binary, it knows nothing of the rollout: keep
          // what the page saw.
          if (!s.running && !(Array.isArray(s.done) && s.done.length) && !s.error) { clearInterval(this.rollTimer); return; }
          this.showRollout(s);
          if (!s.running) clearInterval(this.rollTimer);
        } catch { /* this board restarts last */ }
      }, 1000);
    } catch (e) {
      this.toast(`${t('fwRolloutBtn')}: ${e.message} (${e.status})`, true);
      if (e.status === 401) this.onAuth(401);
    }
    this.syncUpload();
  }

  showRollout(s) {
    if (!s || typeof s !== 'object') return;
    const done = Array.isArray(s.done) ? s.done.map((d) => `${d.board}: ${d.msg}`) : [];
    const head = Array.isArray(s.order) ? t('rolloutOrder', { o: s.order.join(' → ') }) : '';
    setText($('fw-rollout-status'), [head, ...done, s.error ? t('rolloutFailed', { e: s.error }) : ''].filter(Boolean).join('\n'));
    $('fw-rollout-status').className = s.error ? 'err' : 'muted';
  }

  async upload() {
    if (!this.file || !$('fw-confirm').checked) return;
    $('fw-upload').disabled = true;
    try {
      const res = await api.uploadFirmware(this.file, this.fileSum);
      this.waitFor = { sha: res.sha256 || this.fileSum };
      setText($('board-status'), t('fwRestarting'));
      this.toast(t('fwUploaded', { v: res.from_version || '' }));
    } catch (e) {
      this.toast(`${t('fwUpload')}: ${e.message} (${e.status})`, true);
      if (e.status === 401) this.onAuth(401);
    }
    this.syncUpload();
  }
}

// historyFact says how the board keeps its history: file size, or that the card is full, or in memory only.
function historyFact(h) {
  if (!h) return '–';
  if (h.full) return t('histFull');
  if (h.error) return h.error;
  if (h.memory_only) return t('histMemory');
  return `${mib(h.bytes)} · ${t('histPoints', { n: h.points })}`;
}
