// dom.js: builds DOM nodes. Data only ever goes in as text (textContent / text nodes), never as HTML.

// h creates an element. attrs: class, hidden, dataset (object), on<event> (function), anything else
// via setAttribute. Children: nodes, strings (as text nodes), arrays, null/false (skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'text') el.textContent = v;
      else if (k in el && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// setText sets an element's text only when it changed (cheap repeated renders).
export function setText(el, s) {
  s = String(s ?? '');
  if (el.textContent !== s) el.textContent = s;
}

// $ finds one element by id.
export const $ = (id) => document.getElementById(id);

// cssVar reads a CSS custom property (colours for the canvas charts follow light/dark mode).
export function cssVar(name, el = document.documentElement) {
  return getComputedStyle(el).getPropertyValue(name).trim();
}

// fitCanvas sizes a canvas's backing store to its CSS box (or to width x height CSS pixels when given:
// a card skipped by content-visibility has no layout box yet) and the device pixel ratio; returns the
// 2D context scaled to CSS pixels plus the CSS width and height.
export function fitCanvas(cv, width, height) {
  const dpr = Math.min(window.devicePixelRatio || 1, 3);
  const w = Math.max(1, Math.round(width || cv.clientWidth));
  const hgt = Math.max(1, Math.round(height || cv.clientHeight));
  if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(hgt * dpr)) {
    cv.width = Math.round(w * dpr);
    cv.height = Math.round(hgt * dpr);
  }
  const ctx = cv.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, hgt);
  return { ctx, w, h: hgt };
}
