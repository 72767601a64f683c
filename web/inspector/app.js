// The inspector page (behaviour.md §13.5): connects to /inspect/ws, keeps the model current, redraws
// a few times a second, reconnects by itself and says so plainly when the daemon is gone.

import { drawMachine } from './diagram.js';
import { active, parseText, readFilters, textOf, writeFilters } from './filters.js';
import { Model } from './model.js';
import { renderHistory } from './timeline.js';
import { renderAgents } from './view.js';

const REDRAW_MS = 250;
// Under a flood of messages (a daemon answering thousands of commands a second) the page redraws once
// a second instead: drawing was most of its CPU (bench/inspector), taken from the daemon it watches
// on a small machine, and nobody reads faster than that. It says so beside the connection state.
const BUSY_MESSAGES_PER_S = 500;
const BUSY_REDRAW_MS = 1000;
const REFRESH_MS = 5000;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5000;

const $ = (id) => document.getElementById(id);
const model = new Model();
const ui = { selected: null, machines: null, conn: 'connecting', lostAt: null, attempts: 0, refreshTimer: null, received: 0, rateAt: 0, busy: false, drawnAt: 0, filters: readFilters(location.search), recorded: null };

function setConn(state, text) {
  ui.conn = state;
  const c = $('conn');
  c.dataset.conn = state;
  c.textContent = text;
  document.body.classList.toggle('stale', state === 'gone');
}

function showGone() {
  const g = $('gone');
  g.hidden = false;
  const since = ui.lostAt ? ` since ${new Date(ui.lostAt).toLocaleTimeString()}` : '';
  g.textContent = `The Loom daemon at ${location.host} is not answering${since}. What you see is the last known state; this page reconnects by itself (attempt ${ui.attempts}).`;
}

async function fetchJson(path) {
  const res = await fetch(path, { cache: 'no-store' });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.json();
}

/** Limits and machine definitions: fetched once per connection (they change only with the daemon). */
async function loadStatic() {
  const [describe, machines] = await Promise.all([fetchJson('/describe'), fetchJson('/inspect/machines')]);
  // The limits a topic first met in a live message shows until its snapshot comes.
  model.limits = { queue: describe.limits?.queue_max ?? model.limits.queue, waitMs: describe.limits?.queue_wait_ms ?? model.limits.waitMs };
  ui.machines = machines;
  $('meta').textContent = `loom ${describe.version} · ${describe.instance?.label ?? ''}`;
  showFilters();
}

/** A refresh of what has no live message (event counts, capabilities, documents), soon but not per message. */
function scheduleRefresh(delay = 300) {
  if (ui.refreshTimer) return;
  ui.refreshTimer = setTimeout(async () => {
    ui.refreshTimer = null;
    if (ui.conn !== 'live') return;
    try {
      model.refresh(await fetchJson('/inspect/state'));
    } catch {
      // The WebSocket's close tells the user when the daemon is gone; a failed refresh waits for the next.
    }
  }, delay);
}

function connect() {
  // The coalesced feed: under a flood, frames of a second with only what changes this picture (the
  // last 20 commands per topic, the last transitions per actor), so the page's work stays small.
  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/inspect/ws?coalesce=1`);
  let opened = false;
  ws.onopen = () => {
    opened = true;
    ui.attempts = 0;
    ui.lostAt = null;
    $('gone').hidden = true;
    loadStatic().catch(() => undefined);
  };
  ws.onmessage = (ev) => {
    // The snapshot is one object; every later frame is an array of live messages, in order.
    const data = JSON.parse(ev.data);
    if (!Array.isArray(data)) {
      if (data.type !== 'snapshot') return;
      model.applySnapshot(data);
      // Live only once there is something to show: before the snapshot the page knows nothing yet.
      setConn('live', 'live');
      redraw();
      return;
    }
    // A coalesced frame (under a flood) leads with what it left out: counted for the busy rate.
    let count = data.length;
    let refresh = false;
    for (const msg of data) {
      if (msg.type === 'coalesced') count += msg.messages;
      else if (model.apply(msg)) refresh = true;
    }
    ui.received += count;
    if (refresh) scheduleRefresh();
  };
  ws.onclose = (ev) => {
    ui.lostAt ??= Date.now();
    ui.attempts++;
    if (ev.code === 1013) setConn('gone', 'dropped (page too slow), reconnecting…');
    else setConn('gone', opened ? 'daemon gone, reconnecting…' : 'daemon not reachable, retrying…');
    showGone();
    const delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(ui.attempts - 1, 4));
    setTimeout(connect, delay);
  };
}

function actorTitle(actor) {
  const [kind, rest] = [actor.slice(0, actor.indexOf(':')), actor.slice(actor.indexOf(':') + 1)];
  const names = { topic: 'topicQueue', cap: 'capability', agent: 'agent', webhook: 'webhookToken', install: 'install', shell: 'shell' };
  return { kind, rest, machine: names[kind] ?? null };
}

function renderDetail(now) {
  if (!ui.selected) return;
  const { kind, rest, machine } = actorTitle(ui.selected);
  const current = model.stateOf(ui.selected);
  $('detail-title').textContent = `${kind} ${rest}`;
  $('detail-state').textContent = current === null ? 'not live' : `state: ${typeof current === 'string' ? current : JSON.stringify(current)} · machine ${machine}`;
  const def = ui.machines?.[machine];
  const diagram = $('diagram');
  if (def && diagram.dataset.key !== `${ui.selected}|${JSON.stringify(current)}`) {
    drawMachine(diagram, def, current);
    diagram.dataset.key = `${ui.selected}|${JSON.stringify(current)}`;
  }
  renderHistory({ start: $('history-start'), strip: $('strip'), list: $('timeline') }, model.historyOf(ui.selected), current, now);
}

/** The redraw tick: every REDRAW_MS, or every BUSY_REDRAW_MS while messages flood in. */
function tick() {
  const t = performance.now();
  if (t - ui.rateAt >= 1000) {
    const busy = (ui.received * 1000) / (t - ui.rateAt) > BUSY_MESSAGES_PER_S;
    if (busy !== ui.busy) {
      ui.busy = busy;
      $('busy').hidden = !busy;
    }
    ui.received = 0;
    ui.rateAt = t;
  }
  if (ui.busy && t - ui.drawnAt < BUSY_REDRAW_MS) return;
  redraw();
}

function redraw() {
  ui.drawnAt = performance.now();
  const now = model.now();
  const { shown, total } = renderAgents($('agents'), model, { now, selected: ui.selected, filters: ui.filters });
  $('filter-count').textContent = model.loaded && active(ui.filters) ? `showing ${shown} of ${total} topic${total === 1 ? '' : 's'}` : '';
  renderDetail(now);
}

/** The filter controls show `ui.filters`; the state list offers the topic machine's states. */
function showFilters() {
  const f = ui.filters;
  if (document.activeElement !== $('filter-text')) $('filter-text').value = textOf(f);
  $('filter-failed').checked = f.failed;
  const states = (ui.machines?.topicQueue?.states ?? []).filter((s) => !s.parent).map((s) => s.id);
  if (f.state && !states.includes(f.state)) states.push(f.state);
  const select = $('filter-state');
  const want = ['', ...states];
  if ([...select.options].map((o) => o.value).join('\n') !== want.join('\n')) {
    select.replaceChildren(...want.map((v) => new Option(v || 'any', v)));
  }
  select.value = f.state;
}

/** A filter changed: kept in the URL (so a link shows the same view), then drawn. */
function setFilters(next) {
  ui.filters = next;
  history.replaceState(history.state, '', `${location.pathname}${writeFilters(next, location.search)}${location.hash}`);
  showFilters();
  redraw();
}

$('filter-text').addEventListener('input', (ev) => setFilters({ ...ui.filters, ...parseText(ev.target.value) }));
$('filter-failed').addEventListener('change', (ev) => setFilters({ ...ui.filters, failed: ev.target.checked }));
$('filter-state').addEventListener('change', (ev) => setFilters({ ...ui.filters, state: ev.target.value }));
$('filter-clear').addEventListener('click', () => {
  $('filter-text').value = '';
  setFilters({ ...ui.filters, agent: '', topic: '', q: '', failed: false, state: '' });
});
$('filters').addEventListener('submit', (ev) => ev.preventDefault());

function select(actor) {
  ui.selected = actor;
  $('diagram').dataset.key = '';
  redraw();
}

$('agents').addEventListener('click', (ev) => {
  const target = ev.target instanceof Element ? ev.target.closest('[data-actor]') : null;
  if (target) select(target.dataset.actor);
});
$('agents').addEventListener('keydown', (ev) => {
  const target = ev.target instanceof Element ? ev.target.closest('[data-actor]') : null;
  if (target && (ev.key === 'Enter' || ev.key === ' ')) {
    ev.preventDefault();
    select(target.dataset.actor);
  }
});

/** `2026-01-05 10:00:01`, in the browser's time zone. */
function wallClock(iso) {
  const d = new Date(iso);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * A recorded file served by `loom inspect <file>` (behaviour.md §13.8): one snapshot and the machines,
 * read once; no WebSocket, no refresh, and time stands still at the moment it was recorded.
 */
async function openRecorded(describe) {
  ui.recorded = describe.recorded;
  document.body.classList.add('recorded');
  setConn('recorded', `recorded ${wallClock(describe.recorded.at)} — not live`);
  $('conn').title = `${describe.recorded.kind} ${describe.recorded.file ?? ''}, served read-only by loom inspect`.trim();
  $('meta').textContent = `loom ${describe.version} · ${describe.recorded.file ?? describe.recorded.kind}`;
  const [state, machines] = await Promise.all([fetchJson('/inspect/state'), fetchJson('/inspect/machines')]);
  ui.machines = machines;
  model.applySnapshot(state, { frozen: true });
  showFilters();
  redraw();
}

/** Live from a daemon's WebSocket, or a recorded file: `/describe` says which (its `recorded`). */
async function start() {
  // `/inspect?trace=<id>`: a recorded trace, stepped through (steps.js); no live feed.
  const traceId = new URLSearchParams(location.search).get('trace');
  if (traceId !== null) {
    const steps = await import('./steps.js');
    steps.startSteps(traceId);
    return;
  }
  showFilters();
  let describe = null;
  try {
    describe = await fetchJson('/describe');
  } catch {
    // No daemon yet: the WebSocket's failures say so, and it keeps trying.
  }
  if (describe?.recorded) {
    await openRecorded(describe);
    return;
  }
  setInterval(tick, REDRAW_MS);
  setInterval(() => scheduleRefresh(0), REFRESH_MS);
  connect();
}

start().catch((err) => {
  setConn('gone', 'could not load');
  const g = $('gone');
  g.hidden = false;
  g.textContent = `The inspector could not load: ${err.message}`;
});
