// Stepping through a recorded trace (behaviour.md §13.8): `/inspect?trace=<trace_id>`. The page fetches
// the trace's steps (GET /inspect/trace/<id>: every topic's state, queue and session after each step,
// rebuilt by the daemon's own topic machine) and draws one step at a time with the live page's cards.
// Nothing here talks to the live feed: the header says the picture is recorded, never `live`.

import { drawMachine } from './diagram.js';
import { duration, fill, h } from './dom.js';
import { Model } from './model.js';
import { renderAgents } from './view.js';

const $ = (id) => document.getElementById(id);
const when = (iso) => new Date(iso).toLocaleString([], { hour12: false });

/** The step control: buttons, slider, `Step k of N`, and what the step was. */
function controls(n, go) {
  const prev = h('button', { type: 'button', class: 'step-prev', 'aria-label': 'Previous step', title: 'Previous step (←)' }, '◀');
  const next = h('button', { type: 'button', class: 'step-next', 'aria-label': 'Next step', title: 'Next step (→)' }, '▶');
  const slider = h('input', { type: 'range', class: 'step-slider', min: 1, max: n, step: 1, value: 1, 'aria-label': 'Step' });
  const count = h('span', { class: 'step-count', 'aria-live': 'polite' });
  const label = h('code', { class: 'step-label' });
  const time = h('span', { class: 'step-time' });
  prev.addEventListener('click', () => go((k) => k - 1));
  next.addEventListener('click', () => go((k) => k + 1));
  slider.addEventListener('input', () => go(() => Number(slider.value)));
  const bar = h('nav', { class: 'steps', 'aria-label': 'Trace steps' }, prev, slider, next, count, time, label);
  return { bar, prev, next, slider, count, label, time };
}

/** Each topic card of the step gets its session: variable names and the documents /back returns to. */
function addSessions(state) {
  for (const a of state.agents) {
    for (const t of a.topics) {
      const card = document.querySelector(`article.topic[data-agent="${CSS.escape(a.agent_id)}"][data-topic="${CSS.escape(t.topic)}"]`);
      if (!card) continue;
      card.querySelector('.step-session')?.remove();
      const s = t.session ?? { variables: [], history: [] };
      card.append(h('p', { class: 'step-session' },
        h('span', { class: 'step-vars' }, s.variables.length ? `variables ${s.variables.join(', ')}` : 'no variables'),
        s.history.length ? h('span', { class: 'step-back', title: 'documents /back returns to, newest last' }, ` · back ${s.history.join(' ← ')}`) : null));
    }
  }
}

/** The selected topic's machine with its state at this step, and the steps that touched it so far. */
function drawDetail(ui, doc, k) {
  if (!ui.selected || !ui.selected.startsWith('topic:')) return;
  const key = ui.selected.slice('topic:'.length);
  const [agent, ...rest] = key.split('/');
  const topic = rest.join('/');
  const t = doc.steps[k - 1].state.agents.find((a) => a.agent_id === agent)?.topics.find((x) => x.topic === topic);
  $('detail-title').textContent = `topic ${key}`;
  $('detail-state').textContent = t ? `state: ${t.state} · machine topicQueue · after step ${k}` : `not yet in the trace at step ${k}`;
  const def = ui.machines?.topicQueue;
  if (def && t) drawMachine($('diagram'), def, t.state);
  fill($('history-start'), h('p', { class: 'history-start' }, 'Steps of this topic in the trace, up to this one'));
  fill($('strip'));
  const prefix = `${key} `;
  const mine = doc.steps.map((s, i) => ({ s, i })).filter(({ s, i }) => i < k && s.label.startsWith(prefix));
  fill($('timeline'), mine.map(({ s, i }) => h('li', { class: i === k - 1 ? 'current' : undefined },
    h('time', {}, `+${duration(s.at_ms)}`), ' ', `step ${i + 1}: ${s.label.slice(prefix.length)}`)));
}

/** Open `traceId` in step mode: the page shows step k of N and moves with the control. */
export async function startSteps(traceId) {
  document.body.classList.add('recorded');
  const link = h('link', { rel: 'stylesheet', href: '/inspect/assets/steps.css' });
  document.head.append(link);
  const conn = $('conn');
  conn.dataset.conn = 'recorded';
  conn.textContent = `loading trace ${traceId}…`;
  let doc;
  try {
    const res = await fetch(`/inspect/trace/${encodeURIComponent(traceId)}`, { cache: 'no-store' });
    doc = await res.json();
    if (!res.ok) throw new Error(doc.error ?? `HTTP ${res.status}`);
  } catch (err) {
    conn.textContent = 'not live';
    fill($('agents'), h('p', { class: 'empty', role: 'alert' }, `This trace cannot be shown: ${err.message}`));
    return;
  }
  conn.textContent = `recorded ${doc.recorded_at ? when(doc.recorded_at) : '(no time)'} — not live`;
  $('meta').textContent = [`trace ${doc.trace_id ?? traceId}`, doc.note, doc.truncated ? `first ${doc.steps.length} of ${doc.steps_total} steps` : null].filter(Boolean).join(' · ');
  const n = doc.steps.length;
  if (n === 0) {
    fill($('agents'), h('p', { class: 'empty' }, 'This trace has no steps.'));
    return;
  }
  const ui = { selected: null, machines: null, k: 0 };
  fetch('/inspect/machines').then((r) => (r.ok ? r.json() : null)).then((m) => { ui.machines = m; show(ui.k); }).catch(() => undefined);
  const c = controls(n, (move) => show(move(ui.k)));
  document.querySelector('header.top').after(c.bar);

  function show(k) {
    ui.k = Math.min(n, Math.max(1, k || 1));
    const step = doc.steps[ui.k - 1];
    const model = new Model();
    model.applySnapshot({ at: step.state.at, version: '', uptime_ms: 0, agents: step.state.agents });
    renderAgents($('agents'), model, { now: Date.parse(step.state.at), selected: ui.selected });
    addSessions(step.state);
    c.slider.value = String(ui.k);
    c.prev.disabled = ui.k === 1;
    c.next.disabled = ui.k === n;
    c.count.textContent = `Step ${ui.k} of ${n}`;
    c.time.textContent = `+${duration(step.at_ms)}`;
    c.label.textContent = step.label;
    drawDetail(ui, doc, ui.k);
    const url = new URL(location.href);
    url.searchParams.set('step', String(ui.k));
    history.replaceState(null, '', url);
  }

  // Selection is the step view's own (the live page's handler would draw the live picture): caught first.
  const pick = (ev) => {
    const target = ev.target instanceof Element ? ev.target.closest('[data-actor]') : null;
    if (!target || (ev.type === 'keydown' && ev.key !== 'Enter' && ev.key !== ' ')) return;
    ev.stopPropagation();
    ev.preventDefault();
    ui.selected = target.dataset.actor;
    $('diagram').replaceChildren();
    show(ui.k);
  };
  $('agents').addEventListener('click', pick, { capture: true });
  $('agents').addEventListener('keydown', pick, { capture: true });
  document.addEventListener('keydown', (ev) => {
    if (ev.target instanceof HTMLInputElement || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.key === 'ArrowLeft') show(ui.k - 1);
    if (ev.key === 'ArrowRight') show(ui.k + 1);
  });
  show(Number(new URLSearchParams(location.search).get('step')) || 1);
}
