// charts.js: hand-drawn canvas charts: a device sparkline and the requests/s line chart.
import { fitCanvas, cssVar } from './dom.js';
import { num, clock, t as tr } from './i18n.js';

// sparkline draws values (numbers) as a small line with its last point marked.
export const SPARK_W = 96, SPARK_H = 32; // CSS pixels, as .spark in app.css

export function sparkline(cv, values) {
  const { ctx, w, h } = fitCanvas(cv, SPARK_W, SPARK_H);
  if (values.length < 2) return;
  let lo = Infinity, hi = -Infinity;
  for (const v of values) { if (v < lo) lo = v; if (v > hi) hi = v; }
  if (hi === lo) { hi += 1; lo -= 1; }
  const pad = 3;
  const x = (i) => pad + (i * (w - 2 * pad)) / (values.length - 1);
  const y = (v) => h - pad - ((v - lo) * (h - 2 * pad)) / (hi - lo);
  const accent = cssVar('--accent');
  ctx.beginPath();
  values.forEach((v, i) => (i ? ctx.lineTo(x(i), y(v)) : ctx.moveTo(x(i), y(v))));
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = accent;
  ctx.lineJoin = 'round';
  ctx.stroke();
  ctx.lineTo(x(values.length - 1), h);
  ctx.lineTo(x(0), h);
  ctx.closePath();
  ctx.globalAlpha = 0.12;
  ctx.fillStyle = accent;
  ctx.fill();
  ctx.globalAlpha = 1;
  const lx = x(values.length - 1), ly = y(values[values.length - 1]);
  ctx.beginPath();
  ctx.arc(lx, ly, 2.5, 0, Math.PI * 2);
  ctx.fill();
}

// seriesColor picks a stable colour for the i-th class.
export function seriesColor(i) {
  return cssVar(`--c${i % 6}`);
}

// niceStep picks a round grid step so that four steps cover v.
function niceStep(v) {
  const raw = Math.max(v, 1e-9) / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}

// lineChart draws series {name: [{t, v}]} over the last spanMs milliseconds ending at now.
export function lineChart(cv, series, names, now, spanMs) {
  if (!cv.clientWidth) return; // hidden view: drawn when shown
  const { ctx, w, h } = fitCanvas(cv);
  const left = 40, right = 8, top = 8, bottom = 20;
  const pw = w - left - right, ph = h - top - bottom;
  let max = 0;
  for (const n of names) for (const p of series[n] || []) if (p.v > max) max = p.v;
  const step = max > 0 ? niceStep(max * 1.05) : 1;
  max = step * 4;
  const muted = cssVar('--muted'), grid = cssVar('--line');
  ctx.font = '11px system-ui, sans-serif';
  ctx.lineWidth = 1;
  ctx.textBaseline = 'middle';
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const y = Math.round(top + ph - (ph * i) / 4) + 0.5;
    ctx.strokeStyle = grid;
    ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(w - right, y); ctx.stroke();
    ctx.fillStyle = muted;
    ctx.textAlign = 'right';
    ctx.fillText(num(v, step < 1 ? 2 : 0), left - 6, y);
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (let i = 0; i <= 2; i++) {
    const t = now - spanMs + (spanMs * i) / 2;
    const x = left + (pw * i) / 2;
    ctx.textAlign = i === 0 ? 'left' : i === 2 ? 'right' : 'center';
    ctx.fillText(clock(new Date(t)), x, top + ph + 5);
  }
  const x = (t) => left + ((t - (now - spanMs)) * pw) / spanMs;
  const y = (v) => top + ph - (v * ph) / max;
  names.forEach((n, i) => {
    const pts = (series[n] || []).filter((p) => p.t >= now - spanMs);
    if (!pts.length) return;
    ctx.strokeStyle = seriesColor(i);
    ctx.lineWidth = 2;
    ctx.lineJoin = 'round';
    ctx.beginPath();
    pts.forEach((p, j) => (j ? ctx.lineTo(x(p.t), y(p.v)) : ctx.moveTo(x(p.t), y(p.v))));
    ctx.stroke();
  });
}

// axisTime labels a time on an axis spanning spanMs: time of day up to a day, else the date.
function axisTime(t, spanMs) {
  const d = new Date(t);
  if (spanMs <= 86400000) return new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' }).format(d);
  return new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' }).format(d);
}

// historyChart draws a device's history {t (ms), v, min?, max?} between from and to (ms): a line with
// its min–max band for a sensor, or, with timeline, a bar of the time the device was on.
export function historyChart(cv, points, from, to, { timeline = false } = {}) {
  if (!cv.clientWidth) return;
  const { ctx, w, h } = fitCanvas(cv);
  const left = 44, right = 8, top = 8, bottom = 20;
  const pw = w - left - right, ph = h - top - bottom;
  const span = Math.max(1, to - from);
  const x = (t) => left + ((t - from) * pw) / span;
  const muted = cssVar('--muted'), grid = cssVar('--line'), accent = cssVar('--accent');
  ctx.font = '11px system-ui, sans-serif';
  ctx.lineWidth = 1;
  ctx.fillStyle = muted;
  ctx.textBaseline = 'top';
  for (let i = 0; i <= 3; i++) {
    ctx.textAlign = i === 0 ? 'left' : i === 3 ? 'right' : 'center';
    ctx.fillText(axisTime(from + (span * i) / 3, span), left + (pw * i) / 3, top + ph + 5);
  }
  if (timeline) {
    // one bar: filled where on (v is the share of the bucket the device was on)
    const y0 = top + ph * 0.25, bh = ph * 0.5;
    ctx.strokeStyle = grid;
    ctx.strokeRect(left + 0.5, Math.round(y0) + 0.5, pw, Math.round(bh));
    ctx.fillStyle = accent;
    points.forEach((p, i) => {
      const end = i + 1 < points.length ? points[i + 1].t : to;
      if (p.v <= 0 || end <= from) return;
      const a = Math.max(x(p.t), left), b = Math.min(x(end), left + pw);
      if (b <= a) return;
      ctx.globalAlpha = Math.min(1, 0.25 + 0.75 * p.v);
      ctx.fillRect(a, y0, Math.max(1, b - a), bh);
    });
    ctx.globalAlpha = 1;
    ctx.fillStyle = muted;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    ctx.fillText(tr('on'), left - 6, y0 + bh / 2);
    return;
  }
  let lo = Infinity, hi = -Infinity;
  for (const p of points) {
    lo = Math.min(lo, p.min ?? p.v, p.v);
    hi = Math.max(hi, p.max ?? p.v, p.v);
  }
  if (!points.length) { lo = 0; hi = 1; }
  if (hi === lo) { hi += 1; lo -= 1; }
  const step = niceStep(hi - lo);
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  const y = (v) => top + ph - ((v - lo) * ph) / (hi - lo);
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let v = lo; v <= hi + step / 2; v += step) {
    const yy = Math.round(y(v)) + 0.5;
    ctx.strokeStyle = grid;
    ctx.beginPath(); ctx.moveTo(left, yy); ctx.lineTo(w - right, yy); ctx.stroke();
    ctx.fillText(num(v, step < 1 ? 2 : 0), left - 6, yy);
  }
  const band = points.filter((p) => p.min != null && p.max != null);
  if (band.length > 1) {
    ctx.beginPath();
    band.forEach((p, i) => (i ? ctx.lineTo(x(p.t), y(p.max)) : ctx.moveTo(x(p.t), y(p.max))));
    for (let i = band.length - 1; i >= 0; i--) ctx.lineTo(x(band[i].t), y(band[i].min));
    ctx.closePath();
    ctx.globalAlpha = 0.18;
    ctx.fillStyle = accent;
    ctx.fill();
    ctx.globalAlpha = 1;
  }
  ctx.strokeStyle = accent;
  ctx.fillStyle = accent;
  ctx.lineWidth = 2;
  ctx.lineJoin = 'round';
  ctx.beginPath();
  points.forEach((p, i) => (i ? ctx.lineTo(x(p.t), y(p.v)) : ctx.moveTo(x(p.t), y(p.v))));
  ctx.stroke();
  if (points.length === 1) {
    ctx.beginPath();
    ctx.arc(x(points[0].t), y(points[0].v), 3, 0, Math.PI * 2);
    ctx.fill();
  }
}
