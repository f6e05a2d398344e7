// charts.js: hand-drawn canvas charts: a device sparkline and the requests/s line chart.
import { fitCanvas, cssVar } from './dom.js';
import { num, clock } from './i18n.js';

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
