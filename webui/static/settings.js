// settings.js: the admin's Settings page (docs/NOTES.md "Web UI"): the cluster's configuration store
// edited in the browser. Devices in a form built from the drivers' fields (GET /api/config/drivers);
// rules, scheduler, MQTT and history as TOML per section; every save is the whole document with
// If-Match, checked by the board, whose problems are shown at the field or the section's line;
// the per-board status, and the history with its diffs and rollback.
import { $, h } from './dom.js';
import { t } from './i18n.js';
import * as api from './api.js';

const SECTIONS = ['device', 'rule', 'sched', 'mqtt', 'history'];
const header = /^\s*\[\[?\s*([A-Za-z0-9_-]+)/;

// split cuts a document into its blocks: the lines of each table header up to the next, with
// the section (the header's first name) it belongs to; lines before any header are 'head'.
export function split(text) {
  const blocks = [{ section: 'head', lines: [] }];
  for (const line of text.replace(/\n$/, '').split('\n')) {
    const m = header.exec(line);
    if (m) blocks.push({ section: m[1], lines: [line] });
    else blocks[blocks.length - 1].lines.push(line);
  }
  return blocks;
}

// entries reads a [[device]] block's `key = value` lines (values kept as written).
function entries(lines) {
  const out = [];
  for (const l of lines.slice(1)) {
    const m = /^\s*([A-Za-z0-9_-]+)\s*=\s*(.*?)\s*$/.exec(l);
    if (m) out.push({ key: m[1], raw: m[2] });
  }
  return out;
}

// decode turns a simple TOML value into what a form field shows.
function decode(raw) {
  if (raw === undefined) return '';
  if (/^".*"$|^'.*'$/.test(raw)) return raw.startsWith('"') ? JSON.parse(raw) : raw.slice(1, -1);
  if (raw.startsWith('[')) {
    try { return JSON.parse(raw.replace(/'([^']*)'/g, (_, s) => JSON.stringify(s))).join(', '); } catch { return raw; }
  }
  return raw;
}

// encode writes a field's value as TOML by its kind; '' leaves the key out.
function encode(kind, v) {
  if (kind === 'bool') return v ? 'true' : '';
  v = String(v).trim();
  if (v === '') return '';
  if (kind === 'int' || kind === 'number') return v;
  if (kind === 'list') return JSON.stringify(v.split(',').map((s) => s.trim()).filter(Boolean));
  return JSON.stringify(v);
}

export class SettingsView {
  constructor(toast) {
    this.toast = toast;
    this.drivers = [];
    this.defaults = {}; // section -> what is in effect while the store holds none of it (GET /api/config/drivers)
    this.doc = null; // {version, blocks, devices: [{lines, name, driver}], texts: {section: text}}
    this.editing = -1; // the device the form edits; -1 a new one
    $('s-add').addEventListener('click', () => this.openForm(-1));
    $('s-dev-cancel').addEventListener('click', () => { $('s-dev-form').hidden = true; });
    $('s-dev-form').addEventListener('submit', (ev) => { ev.preventDefault(); this.saveDevice(); });
    $('s-dev-driver').addEventListener('change', () => this.fields(this.editing >= 0 ? this.doc.devices[this.editing] : null));
    $('s-refresh').addEventListener('click', () => this.show());
  }

  async show() {
    try {
      if (!this.drivers.length) {
        const d = await api.getDrivers();
        this.drivers = d.drivers || [];
        this.defaults = d.defaults && typeof d.defaults === 'object' ? d.defaults : {};
      }
      const { text, version } = await api.getConfig();
      this.load(text, version);
    } catch (e) { this.fail($('s-err'), e); }
    this.history();
    this.status();
  }

  load(text, version) {
    const blocks = split(text);
    const devices = blocks.filter((b) => b.section === 'device' && /^\s*\[\[\s*device\s*\]\]/.test(b.lines[0])).map((b) => {
      const e = entries(b.lines);
      const get = (k) => decode((e.find((x) => x.key === k) || {}).raw);
      return { lines: b.lines, name: get('name'), driver: get('driver'), node: get('node') };
    });
    const texts = {};
    for (const s of SECTIONS.slice(1)) texts[s] = blocks.filter((b) => b.section === s).map((b) => b.lines.join('\n')).join('\n');
    const other = blocks.filter((b) => b.section !== 'head' && !SECTIONS.includes(b.section)).map((b) => b.lines.join('\n')).join('\n');
    this.doc = { version, head: blocks[0].lines.join('\n'), devices, texts, other };
    $('s-version').textContent = t('sVersion', { v: version });
    $('s-err').hidden = true;
    this.renderDevices();
    this.renderSections();
  }

  renderDevices() {
    const rows = this.doc.devices.map((d, i) => h('tr', { dataset: { device: d.name } },
      h('td', null, d.name), h('td', null, d.driver), h('td', null, d.node || ''),
      h('td', null,
        h('button', { type: 'button', class: 'small ghost s-edit', onclick: () => this.openForm(i) }, t('sEdit')), ' ',
        h('button', { type: 'button', class: 'small ghost s-remove', onclick: () => this.removeDevice(i) }, t('uDelete')))));
    $('s-devices').replaceChildren(h('tr', null, h('th', null, t('name')), h('th', null, t('sDriver')), h('th', null, t('wiredTo')), h('th', null, '')), ...rows);
  }

  renderSections() {
    const out = [];
    for (const s of SECTIONS.slice(1)) {
      // an empty section shows what is in effect instead (the defaults), greyed, never saved as such
      const def = typeof this.defaults[s] === 'string' ? this.defaults[s] : '';
      const empty = this.doc.texts[s].trim() === '';
      const lines = (empty && def ? def : this.doc.texts[s]).split('\n').length;
      const area = h('textarea', { id: 's-text-' + s, class: 'toml', rows: Math.max(3, lines + 1), spellcheck: 'false', placeholder: def });
      area.value = this.doc.texts[s];
      out.push(h('div', { class: 's-section', dataset: { section: s } },
        h('h3', null, t('sSec_' + s)),
        h('p', { class: 'muted small' }, t('sHelp_' + s)),
        empty && def ? h('p', { class: 'muted small s-in-effect' }, t('sInEffect')) : null,
        area,
        h('ul', { id: 's-errs-' + s, class: 'err s-errs' }),
        h('button', { type: 'button', class: 'small s-save', onclick: () => this.saveSection(s) }, t('sSave'))));
    }
    $('s-sections').replaceChildren(...out);
  }

  // openForm shows the device form: a new device (-1) or device i.
  openForm(i) {
    this.editing = i;
    const d = i >= 0 ? this.doc.devices[i] : null;
    $('s-dev-name').value = d ? d.name : '';
    const sel = $('s-dev-driver');
    sel.replaceChildren(...this.drivers.map((dr) => h('option', { value: dr.name }, dr.name)));
    sel.value = d ? d.driver : 'sim-switch';
    $('s-dev-err').hidden = true;
    this.fields(d);
    $('s-dev-form').hidden = false;
    $('s-dev-name').focus();
  }

  // fields builds the chosen driver's fields, with their help, filled from device d.
  fields(d) {
    const dr = this.drivers.find((x) => x.name === $('s-dev-driver').value);
    const e = d ? entries(d.lines) : [];
    const val = (k) => decode((e.find((x) => x.key === k) || {}).raw);
    const rows = ((dr && dr.fields) || []).map((f) => {
      let input;
      if (f.kind === 'bool') {
        input = h('input', { type: 'checkbox', dataset: { key: f.key, kind: f.kind } });
        input.checked = val(f.key) === 'true';
      } else if (f.choices) {
        input = h('select', { dataset: { key: f.key, kind: f.kind } }, ...f.choices.map((c) => h('option', { value: c }, c || '—')));
        input.value = val(f.key);
      } else {
        input = h('input', { autocomplete: 'off', dataset: { key: f.key, kind: f.kind } });
        input.value = val(f.key);
        if (f.required) input.required = true;
      }
      return h('label', { class: 'f', dataset: { field: f.key } }, h('span', null, f.key + (f.required ? ' *' : '')), input,
        h('small', { class: 'muted help' }, f.help), h('small', { class: 'err field-err' }));
    });
    $('s-dev-fields').replaceChildren(...rows);
  }

  // deviceText is the [[device]] block the form describes; keys the form does not show are kept.
  deviceText(old) {
    const driver = $('s-dev-driver').value;
    const shown = new Set(['name', 'driver']);
    const lines = ['[[device]]', 'name = ' + JSON.stringify($('s-dev-name').value.trim()), 'driver = ' + JSON.stringify(driver)];
    for (const el of $('s-dev-fields').querySelectorAll('[data-key]')) {
      shown.add(el.dataset.key);
      const v = encode(el.dataset.kind, el.type === 'checkbox' ? el.checked : el.value);
      if (v !== '') lines.push(el.dataset.key + ' = ' + v);
    }
    if (old && decode((entries(old.lines).find((x) => x.key === 'driver') || {}).raw) === driver) {
      for (const x of entries(old.lines)) if (!shown.has(x.key)) lines.push(x.key + ' = ' + x.raw);
    }
    return lines;
  }

  // assemble is the whole document: the head, the devices, each section, and what else was there;
  // where it puts each section's lines, so a problem's line finds its section.
  assemble(devices) {
    const parts = [];
    const at = {};
    let line = 1;
    const add = (section, text, index) => {
      if (!text) return;
      const n = text.split('\n').length;
      (at[section] = at[section] || []).push({ from: line, to: line + n - 1, index });
      parts.push(text);
      line += n;
    };
    add('head', this.doc.head);
    devices.forEach((d, i) => add('device', d.lines.join('\n'), i));
    for (const s of SECTIONS.slice(1)) add(s, $('s-text-' + s) ? $('s-text-' + s).value.replace(/\n+$/, '') : this.doc.texts[s]);
    add('other', this.doc.other);
    return { text: parts.join('\n') + '\n', at };
  }

  saveDevice() {
    const devices = this.doc.devices.slice();
    const old = this.editing >= 0 ? devices[this.editing] : null;
    const d = { lines: this.deviceText(old), name: $('s-dev-name').value.trim(), driver: $('s-dev-driver').value };
    if (this.editing >= 0) devices[this.editing] = d;
    else devices.push(d);
    this.put(devices, this.editing >= 0 ? this.editing : devices.length - 1);
  }

  removeDevice(i) {
    if (!confirm(t('sRemoveConfirm', { d: this.doc.devices[i].name }))) return;
    this.put(this.doc.devices.filter((_, j) => j !== i), -1);
  }

  saveSection() { this.put(this.doc.devices, -1); }

  // put saves the document with devices; formIndex is the device the open form edits (its
  // problems go to its fields).
  async put(devices, formIndex) {
    const { text, at } = this.assemble(devices);
    for (const el of document.querySelectorAll('.s-errs')) el.replaceChildren();
    for (const el of document.querySelectorAll('#s-dev-fields .field-err')) el.textContent = '';
    $('s-dev-err').hidden = $('s-err').hidden = true;
    try {
      const res = await api.putConfig(text, this.doc.version);
      $('s-dev-form').hidden = true;
      this.toast(res.restart_needed && res.restart_needed.length ? t('sSavedRestart', { v: res.version, r: res.restart_needed.join(', ') }) : t('sSaved', { v: res.version }));
      await this.show();
    } catch (e) {
      if (!e.problems) { this.fail($('s-err'), e); if (e.status === 412) this.show(); return; }
      for (const p of e.problems) this.problem(p, at, formIndex);
    }
  }

  // problem shows one of the board's problems at its field (the device form) or its section's line.
  problem(p, at, formIndex) {
    for (const [section, spans] of Object.entries(at)) {
      const s = spans.find((x) => p.line >= x.from && p.line <= x.to);
      if (!s) continue;
      if (section === 'device' && s.index === formIndex && !$('s-dev-form').hidden) {
        const key = (p.key || '').replace(/^device\[\d+\]\.?/, '');
        const f = $('s-dev-fields').querySelector(`[data-field="${CSS.escape(key)}"] .field-err`);
        if (f) { f.textContent = p.msg; return; }
        const el = $('s-dev-err');
        el.textContent = (key ? key + ': ' : '') + p.msg;
        el.hidden = false;
        return;
      }
      const list = $('s-errs-' + section);
      if (list) { list.append(h('li', null, t('sLine', { n: p.line - s.from + 1 }) + ': ' + (p.key ? p.key + ': ' : '') + p.msg)); return; }
      break;
    }
    const el = $('s-err');
    el.textContent = p.text || p.msg;
    el.hidden = false;
  }

  async history() {
    try {
      const res = await api.getConfigHistory();
      const vs = res.versions || [];
      const rows = [];
      vs.forEach((v, i) => {
        const diff = h('pre', { class: 'diff', hidden: true }, ...(v.diff || '').split('\n').filter((l) => /^[+-]/.test(l)).map((l) => h('span', { class: l[0] === '+' ? 'add' : 'del' }, l + '\n')));
        rows.push(h('tr', { dataset: { version: String(v.version) } },
          h('td', null, String(v.version)), h('td', null, v.who || ''), h('td', null, new Date(v.when).toLocaleString()), h('td', null, v.note || ''),
          h('td', null,
            v.diff ? h('button', { type: 'button', class: 'small ghost s-diff', onclick: () => { diff.hidden = !diff.hidden; } }, t('sDiff')) : null, ' ',
            i > 0 ? h('button', { type: 'button', class: 'small ghost s-rollback', onclick: () => this.rollback(v.version) }, t('sRollback')) : null)));
        rows.push(h('tr', { class: 'diffrow' }, h('td', { colspan: '5' }, diff)));
      });
      $('s-history').replaceChildren(h('tr', null, ...['sVer', 'user', 'uTime', 'sNote', ''].map((k) => h('th', null, k ? t(k) : ''))), ...rows);
    } catch (e) { this.fail($('s-err'), e); }
  }

  async rollback(n) {
    if (!confirm(t('sRollbackConfirm', { v: n }))) return;
    try {
      const res = await api.rollbackConfig(n);
      this.toast(t('sSaved', { v: res.version }));
      await this.show();
    } catch (e) { this.fail($('s-err'), e); }
  }

  async status() {
    try {
      const res = await api.getConfigStatus();
      const rows = (res.boards || []).map((b) => h('tr', { dataset: { board: b.board }, class: b.failed || b.error ? 'bad' : '' },
        h('td', null, b.board), h('td', null, String(b.version)),
        h('td', null, b.error || Object.entries(b.failed || {}).map(([d, why]) => d + ': ' + why).join('; ') || t('sOk')),
        h('td', null, (b.restart_needed || []).join(', '))));
      $('s-status').replaceChildren(h('tr', null, ...['board', 'sVer', 'sApplied', 'sRestart'].map((k) => h('th', null, t(k)))), ...rows);
    } catch (e) { this.fail($('s-err'), e); }
  }

  fail(el, e) {
    el.textContent = e.status ? `${e.message} (${e.status})` : e.message;
    el.hidden = false;
  }
}
