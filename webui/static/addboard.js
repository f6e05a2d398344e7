// addboard.js: the admin's "Add a board" (Cluster tab): the exact `ews cluster enrol` command for a
// new board and the enrolments waiting for their boards. The command runs where the admin bundle is
// kept: the CA's key never comes to the browser, so the one-time code is printed there, not here.
import { $, h } from './dom.js';
import { t } from './i18n.js';
import * as api from './api.js';

const nameRe = /^[a-z0-9][a-z0-9-]{0,62}$/;

// quote makes an argument safe to paste into a POSIX shell.
function quote(s) {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

// enrolCommand is the command for board name reached at addrs, valid minutes, left with origin.
export function enrolCommand(name, addrs, minutes, origin) {
  const parts = ['ews', 'cluster', 'enrol', name];
  for (const a of addrs) parts.push('--addr', a);
  parts.push('--url', origin, '--ttl', `${minutes}m`, '--bundle', 'admin.bundle');
  return parts.map(quote).join(' ');
}

export class AddBoardView {
  constructor() {
    $('ab-form').addEventListener('submit', (ev) => { ev.preventDefault(); this.showCommand(); });
    $('ab-refresh').addEventListener('click', () => this.list());
  }

  show() { this.list(); }

  fail(msg) {
    const el = $('ab-status');
    el.textContent = msg;
    el.hidden = false;
  }

  showCommand() {
    $('ab-status').hidden = true;
    const name = $('ab-name').value.trim();
    if (!nameRe.test(name)) { this.fail(t('abBadName')); return; }
    const addrs = $('ab-addrs').value.split(/[\s,]+/).filter(Boolean);
    const minutes = Math.min(1440, Math.max(1, Math.round(Number($('ab-minutes').value) || 15)));
    $('ab-command').textContent = enrolCommand(name, addrs, minutes, location.origin);
    $('ab-then').textContent = t('abThen', { b: name, u: location.origin, m: minutes });
    $('ab-out').hidden = false;
    this.list();
  }

  async list() {
    try {
      const res = await api.listEnrolments();
      const rows = (res.pending || []).map((p) => h('tr', { dataset: { enrol: p.name || p.id } },
        h('td', null, p.name || '-'), h('td', null, h('code', null, p.id.slice(0, 8))), h('td', null, new Date(p.expires).toLocaleString())));
      if (!rows.length) {
        $('ab-list').replaceChildren(h('tr', null, h('td', { class: 'muted' }, t('abNone'))));
        return;
      }
      $('ab-list').replaceChildren(h('tr', null, h('th', null, t('board')), h('th', null, 'id'), h('th', null, t('abExpires'))), ...rows);
    } catch (e) { this.fail(e.status ? `${e.message} (${e.status})` : e.message); }
  }
}
