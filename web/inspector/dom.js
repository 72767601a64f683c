// Small DOM helpers. Text from the daemon is always set as text (textContent), never parsed as HTML.

/**
 * Create an element: `h('li', { class: 'x', data: { ticket: 't1' } }, 'text', child)`.
 * Attributes are set with setAttribute; children are nodes or strings (text nodes).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'data') for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = String(dv);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replace every child of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** `812 ms`, `4.2 s`, `2 min 03 s` */
export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '–';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** A progress bar whose fill is `fraction` (0–1) wide; CSSOM sets the width (the page's CSP forbids inline style attributes). */
export function bar(fraction, cls) {
  const inner = h('span', { class: 'bar-fill' });
  inner.style.width = `${Math.round(Math.max(0, Math.min(1, fraction)) * 1000) / 10}%`;
  return h('span', { class: `bar ${cls ?? ''}`.trim(), role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': Math.round(fraction * 100) }, inner);
}
