// users.js: the admin page (issue 24): create, rotate and delete users; the cluster's audit log.
import { $, h } from './dom.js';
import { t } from './i18n.js';
import * as api from './api.js';

// globRe turns a device pattern (Go's path.Match: * ? [..]) into a RegExp.
function globRe(p) {
  let re = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const j = p.indexOf(']', i + 1);
      if (j < 0) return null;
      let cls = p.slice(i + 1, j).replace(/\\/g, '\\\\');
      if (cls.startsWith('^')) cls = '^' + cls.slice(1);
      re += '[' + cls + ']';
      i = j;
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp('^' + re + '$');
}

// mayControl says whether a session ({role, devices}) covers device name; a board without
// accounts (no role) leaves it to the credentials alone.
export function mayControl(session, name) {
  if (!session || !session.role || session.role === 'admin') return true;
  if (session.role !== 'operator') return false;
  return (session.devices || []).some((p) => { const re = globRe(p); return re && re.test(name); });
}

export class UsersView {
  constructor(toast) {
    this.toast = toast;
    $('u-form').addEventListener('submit', (ev) => { ev.preventDefault(); this.create(); });
    $('u-audit-refresh').addEventListener('click', () => this.audit());
  }

  show() { this.list(); this.audit(); }

  fail(e) {
    const el = $('u-status');
    el.textContent = e.status ? `${e.message} (${e.status})` : e.message;
    el.hidden = false;
  }

  shown(name, token) {
    const el = $('u-token');
    el.replaceChildren(t('uTokenOnce', { u: name }), ' ', h('code', { class: 'token', id: 'u-token-value' }, token));
    el.hidden = false;
  }

  async create() {
    $('u-status').hidden = true;
    const devices = $('u-devices').value.split(',').map((s) => s.trim()).filter(Boolean);
    const u = { name: $('u-name').value.trim(), role: $('u-role').value };
    if (devices.length) u.devices = devices;
    try {
      const res = await api.createUser(u);
      this.shown(res.name, res.token);
      if (res.warning) this.toast(res.warning, true);
      $('u-name').value = $('u-devices').value = '';
      this.list();
    } catch (e) { this.fail(e); }
  }

  async list() {
    try {
      const res = await api.listUsers();
      const rows = (res.users || []).map((u) => h('tr', { dataset: { user: u.name } },
        h('td', null, u.name), h('td', null, t(u.role)), h('td', null, (u.devices || []).join(', ')),
        h('td', null,
          h('button', { type: 'button', class: 'small ghost u-rotate', onclick: () => this.rotate(u.name) }, t('uRotate')), ' ',
          h('button', { type: 'button', class: 'small ghost u-delete', onclick: () => this.remove(u.name) }, t('uDelete')))));
      $('u-list').replaceChildren(h('tr', null, h('th', null, t('uName')), h('th', null, t('role')), h('th', null, t('devices')), h('th', null, '')), ...rows);
    } catch (e) { this.fail(e); }
  }

  async rotate(name) {
    try {
      const res = await api.rotateUser(name);
      this.shown(name, res.token);
      this.audit();
    } catch (e) { this.fail(e); }
  }

  async remove(name) {
    if (!confirm(t('uDeleteConfirm', { u: name }))) return;
    try { await api.deleteUser(name); this.list(); } catch (e) { this.fail(e); }
  }

  async audit() {
    try {
      const res = await api.getAudit(50);
      const rows = (res.entries || []).map((e) => h('tr', null,
        h('td', null, new Date(e.time).toLocaleString()), h('td', null, e.user || '-'), h('td', null, e.action),
        h('td', null, e.target || ''), h('td', null, String(e.result)), h('td', null, e.client || ''), h('td', null, e.board || '')));
      $('u-audit').replaceChildren(h('tr', null, ...['uTime', 'user', 'uAction', 'uTarget', 'uResult', 'uClient', 'board'].map((k) => h('th', null, t(k)))), ...rows);
    } catch (e) { this.fail(e); }
  }
}
