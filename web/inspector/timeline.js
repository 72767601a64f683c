// The selected actor's history (behaviour.md §13.7): a line saying where it starts, a strip of the
// states it was in with their durations written on them, a time axis under it, a legend, and the
// list of its changes (state changes with how long the state they left lasted, session changes).

import { duration, fill, h } from './dom.js';

/** Ticks of the axis: the smallest step that leaves at most this many. */
const MAX_TICKS = 6;
const STEPS_MS = [100, 250, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 900000, 1800000, 3600000, 7200000, 21600000, 43200000, 86400000];
/** A segment narrower than this share of the strip has its duration in its tooltip and the list only. */
const LABEL_MIN_SHARE = 0.09;
const LIST_MAX = 60;

const fmt = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
const clock = (ms) => new Date(ms).toLocaleTimeString([], { hour12: false });

/** The segments of the strip: one per stretch of time in one state, from `since` to `now`. */
export function segmentsOf(entries, since, current, now) {
  const states = entries.filter((e) => e.type === 'state');
  const segs = [];
  let from = since;
  let state = states.length ? states[0].from : current;
  for (const e of states) {
    if (e.at > from) segs.push({ state, from, to: e.at });
    from = Math.max(from, e.at);
    state = e.to;
  }
  if (now > from) segs.push({ state: current ?? state, from, to: now });
  return segs;
}

function startLine(history, now) {
  const at = history.since;
  if (at === null || at === undefined) return h('p', { class: 'history-start' }, 'No history yet.');
  const when = `${clock(at)} (${duration(now - at)} ago)`;
  let why;
  if (history.truncated) why = `older changes were dropped: the last ${history.entries.length} are kept`;
  else if (history.keptBy === 'daemon') why = 'when the topic started: nothing is missing';
  else why = 'when this page connected: the daemon keeps no history of this actor';
  return h('p', { class: 'history-start', data: { since: new Date(at).toISOString(), truncated: history.truncated } }, `History since ${when}, ${why}.`);
}

function axis(start, span) {
  const step = STEPS_MS.find((s) => span / s <= MAX_TICKS) ?? STEPS_MS[STEPS_MS.length - 1];
  const ticks = [];
  for (let t = Math.ceil(start / step) * step; t <= start + span; t += step) {
    const at = ((t - start) / span) * 100;
    // A tick near an end is written inside the axis, not centred across its edge.
    const tick = h('span', { class: at > 92 ? 'tick end' : at < 8 ? 'tick start' : 'tick' }, clock(t));
    tick.style.left = `${at}%`;
    ticks.push(tick);
  }
  return h('div', { class: 'axis', 'aria-hidden': 'true' }, ticks);
}

function strip(segs, start, span) {
  return h('div', { class: 'strip', role: 'img', 'aria-label': segs.map((s) => `${fmt(s.state)} ${duration(s.to - s.from)}`).join(', ') }, segs.map((s) => {
    const share = (s.to - s.from) / span;
    const text = `${fmt(s.state)} ${duration(s.to - s.from)}`;
    const seg = h('span', { class: 'seg', title: `${text}, from ${clock(s.from)} to ${clock(s.to)}`, data: { state: fmt(s.state), durationMs: Math.round(s.to - s.from) } },
      share >= LABEL_MIN_SHARE ? h('span', { class: 'seg-label' }, duration(s.to - s.from)) : null);
    seg.style.left = `${((s.from - start) / span) * 100}%`;
    seg.style.width = `${share * 100}%`;
    return seg;
  }));
}

function legend(segs) {
  // Sorted, so that the legend reads the same however short the first stretch was.
  const states = [...new Set(segs.map((s) => fmt(s.state)))].sort();
  return h('ul', { class: 'legend' }, states.map((st) => h('li', {}, h('span', { class: 'swatch', data: { state: st } }), st)),
    h('li', { class: 'legend-note' }, 'each bar is one stretch in one state; its length is time'));
}

/** One change of the list, newest first; a state change says how long the state it left lasted. */
function item(e, lasted) {
  const time = h('time', { datetime: new Date(e.at).toISOString() }, clock(e.at));
  if (e.lifecycle) return h('li', { class: 'lifecycle' }, time, ' ', h('span', { class: 'lifecycle' }, e.type));
  if (e.type === 'state') {
    return h('li', { data: { type: 'state', from: fmt(e.from), to: fmt(e.to), ...(lasted !== null ? { lastedMs: Math.round(lasted) } : {}) } }, time, ' ',
      h('span', { class: 'from' }, fmt(e.from)), ' → ', h('span', { class: 'to' }, fmt(e.to)), ' ', h('code', {}, e.event),
      lasted !== null ? h('span', { class: 'lasted' }, ` after ${duration(lasted)} ${fmt(e.from)}`) : null);
  }
  const detail = e.type === 'session.opened' ? `${e.title ?? ''} ${e.uri}`
    : e.type === 'session.navigated' ? `${e.block ?? '(top)'}${e.uri ? ` in ${e.uri}` : ''}`
      : e.type === 'session.set' || e.type === 'session.cleared' ? `${e.scope} ${(e.names ?? []).join(', ')}` : '';
  return h('li', { class: 'session', data: { type: e.type } }, time, ' ', h('code', { class: 'session-type' }, e.type), ' ', h('span', { class: 'session-detail' }, detail.trim()));
}

/**
 * Draw `history` ({ entries, since, truncated, keptBy }) of an actor now in state `current` into
 * the `start`, `strip` and `list` elements.
 */
export function renderHistory(els, history, current, now) {
  fill(els.start, startLine(history, now));
  const since = history.since ?? now;
  const span = Math.max(1000, now - since);
  const segs = segmentsOf(history.entries, since, current, now);
  fill(els.strip, strip(segs, since, span), axis(since, span), legend(segs));
  // How long the state each change left had lasted: since the change before (or since history starts).
  const items = [];
  let prev = history.truncated ? null : since;
  for (const e of history.entries) {
    if (e.type === 'state') {
      items.push(item(e, prev === null ? null : e.at - prev));
      prev = e.at;
    } else items.push(item(e, null));
  }
  fill(els.list, items.reverse().slice(0, LIST_MAX));
}
