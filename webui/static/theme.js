// theme.js: the light/dark toggle: follows prefers-color-scheme until the user picks one, which sticks.
const KEY = 'ews.theme';
const dark = () => window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;

function saved() {
  try {
    const v = localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : '';
  } catch { return ''; }
}

// theme returns the scheme in effect: 'light' or 'dark'.
export function theme() {
  return document.documentElement.dataset.theme || (dark() ? 'dark' : 'light');
}

// initTheme applies a saved choice and makes button switch and remember the other scheme;
// label(scheme) is the button's title, changed() runs after a switch. It returns the function that
// relabels the button (after a language switch).
export function initTheme(button, label, changed) {
  const s = saved();
  if (s) document.documentElement.dataset.theme = s;
  const show = () => {
    button.textContent = theme() === 'dark' ? '☀' : '☾';
    button.title = label(theme() === 'dark' ? 'light' : 'dark');
    button.setAttribute('aria-label', button.title);
  };
  button.addEventListener('click', () => {
    const next = theme() === 'dark' ? 'light' : 'dark';
    document.documentElement.dataset.theme = next;
    try { localStorage.setItem(KEY, next); } catch { /* storage may be blocked */ }
    show();
    changed();
  });
  if (window.matchMedia) window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', show);
  show();
  return show;
}
