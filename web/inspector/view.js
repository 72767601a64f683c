// The left side of the page (behaviour.md §13.5): agents, and for each its topics with their live
// state, running command, waiting commands with a countdown to the queue limit, the last commands,
// and the agent's capabilities, inbox counts, installs and shells. Cards are kept per topic and
// agent (keyed), only their contents are redrawn, so a click never lands on a replaced element.

import { bar, duration, fill, h } from './dom.js';
import { agentShown, failedCommand, filterKey, isRefusal, NO_FILTERS, topicShown } from './filters.js';
import { topicKey } from './model.js';

const agentCards = new Map();
const topicCards = new Map();

// Cards scrolled out of view are not redrawn (bench/inspector: rebuilding every card four times a
// second was most of the page's CPU under load); one coming into view is redrawn at the next tick.
const offscreen = new WeakSet();
const visibility = typeof IntersectionObserver === 'function'
  ? new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (e.isIntersecting) offscreen.delete(e.target);
      else offscreen.add(e.target);
    }
  }, { rootMargin: '200px' })
  : null;

function selectable(actor, selected) {
  return { 'data-actor': actor, class: actor === selected ? 'selected' : undefined, tabindex: 0 };
}

const VIA_TITLE = { exec: 'came by POST /exec (or the loom CLI): it waits its turn in the queue', mcp: 'came by the MCP tool: it runs only when the topic is idle, else BUSY' };
const clock = (ms) => new Date(ms).toLocaleTimeString([], { hour12: false });

/** Where a command came from and who asked: `via exec · ticket t3 · request r-7`, each part explained on hover. */
function ticketFacts(x) {
  return h('span', { class: 'facts' },
    h('span', { class: 'via', title: VIA_TITLE[x.via] ?? 'how the command reached the topic' }, `via ${x.via}`), ' · ',
    h('span', { class: 'ticket', title: "the topic's number for this command: t1 is its first" }, `ticket ${x.ticket}`), ' · ',
    x.request_id
      ? h('span', { class: 'request', title: 'the request_id its client sent' }, `request ${x.request_id}`)
      : h('span', { class: 'request none', title: 'its client sent no request_id' }, 'no request id'));
}

function runningView(t, now) {
  if (!t.running) return h('p', { class: 'running none' }, 'nothing running');
  const r = t.running;
  return h('p', { class: 'running', data: { ticket: r.ticket } },
    h('span', { class: 'label' }, 'running'), ' ', h('code', {}, r.cmd), ' ',
    h('span', { class: 'elapsed', title: `running since ${clock(r.startedAt)}` }, duration(now - r.startedAt)), ' ', ticketFacts(r));
}

function waitingView(t, now) {
  if (t.waiting.length === 0) return h('p', { class: 'waiting-none' }, 'queue empty');
  const limit = t.waitLimitMs;
  return h('ol', { class: 'waiting' }, t.waiting.map((w, i) => {
    const waited = now - w.queuedAt;
    const left = Math.max(0, limit - waited);
    // FIFO: the first waiting command runs next, so its place is its index (the snapshot's `position`).
    const position = i + 1;
    return h('li', { data: { ticket: w.ticket, waitedMs: Math.round(waited), position, requestId: w.request_id ?? '' } },
      h('span', { class: 'position', title: `runs after ${position === 1 ? 'the running command' : `${position - 1} more before it`}` }, `#${position}`), ' ',
      h('code', {}, w.cmd), ' ', ticketFacts(w), h('br'),
      h('span', { class: 'arrived' }, `arrived ${clock(w.queuedAt)}`), ' · ',
      h('span', { class: 'waited', title: 'waiting for' }, duration(waited)),
      bar(left / limit, left < limit / 4 ? 'late' : ''),
      h('span', { class: 'expires', title: `refused with QUEUE_TIMEOUT once it has waited ${duration(limit)}` }, `${duration(left)} left of the ${duration(limit)} limit`));
  }));
}

/** A refusal with the limit it hit: `QUEUE_FULL (limit 5 waiting)`, `QUEUE_TIMEOUT (limit 120.0 s)`. */
function resultText(r, t) {
  if (r.ok) return 'ok';
  if (r.code === 'QUEUE_FULL') return `QUEUE_FULL (limit ${r.queue_limit ?? t.queueLimit} waiting)`;
  if (r.code === 'QUEUE_TIMEOUT') return `QUEUE_TIMEOUT (limit ${duration(r.wait_limit_ms ?? t.waitLimitMs)})`;
  if (r.code === 'BUSY') return 'BUSY (MCP: topic not idle)';
  return r.code ?? 'failed';
}

/** The last commands, newest first; under `failed only`, the ones that did not succeed. */
function recentView(t, failedOnly) {
  if (t.recent.length === 0) return h('p', { class: 'recent-none' }, 'no finished commands yet');
  const shown = failedOnly ? t.recent.filter(failedCommand) : t.recent;
  const caption = failedOnly
    ? `${shown.length} failed of the last ${t.recent.length} command${t.recent.length === 1 ? '' : 's'}`
    : `last ${t.recent.length} command${t.recent.length === 1 ? '' : 's'}`;
  const rows = [...shown].reverse().map((r) => {
    const kind = r.ok ? 'ok' : isRefusal(r) ? 'refused' : 'failed';
    return h('tr', { class: kind, data: { ticket: r.ticket } },
      h('td', { class: 'result' }, resultText(r, t)), h('td', {}, h('code', {}, r.cmd)),
      h('td', { class: 'num' }, duration(r.duration_ms)), h('td', { class: 'num' }, duration(r.queued_ms)), h('td', { class: 'via' }, r.via));
  });
  return h('table', { class: 'recent' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, h('th', {}, 'result'), h('th', {}, 'command'), h('th', {}, 'ran'), h('th', {}, 'waited'), h('th', {}, 'via'))),
    h('tbody', {}, rows));
}

function topicCard(t, ctx) {
  const key = topicKey(t.agentId, t.topic);
  const actor = `topic:${key}`;
  let card = topicCards.get(key);
  if (!card) {
    card = h('article', { class: 'topic', 'data-actor': actor, data: { topic: t.topic, agent: t.agentId }, tabindex: 0 });
    topicCards.set(key, card);
    visibility?.observe(card);
  }
  card.dataset.state = t.state;
  card.classList.toggle('selected', actor === ctx.selected);
  if (offscreen.has(card)) return card;
  // Unchanged since it was drawn and showing no live time: left as it is. Rebuilding every card at
  // every tick cost an idle page ~90 ms of CPU a second in style and layout (bench/inspector).
  const live = t.running !== null || t.waiting.length > 0;
  const filters = filterKey(ctx.filters);
  if (!live && card.drawnFrom === t && card.drawnRev === t.rev && card.drawnSelected === ctx.selected && card.drawnFilters === filters) return card;
  card.drawnFrom = t;
  card.drawnRev = t.rev;
  card.drawnSelected = ctx.selected;
  card.drawnFilters = filters;
  // A live shell is its own actor (shell:<agent>/<topic>): selecting it draws the shell machine.
  const shellAttrs = t.shell && t.shell.state !== 'none' ? selectable(`shell:${key}`, ctx.selected) : {};
  const shell = t.shell ? h('p', { ...shellAttrs, class: `shell${shellAttrs.class ? ' selected' : ''}` }, `shell ${t.shell.state ?? ''}`, t.shell.pid ? ` · pid ${t.shell.pid}` : '', t.shell.cwd ? ` · ${t.shell.cwd}` : '') : null;
  const doc = t.doc ? h('p', { class: 'doc' }, 'doc ', h('span', {}, t.doc.title ?? t.doc.uri), t.doc.current_block ? ` ${t.doc.current_block}` : '') : null;
  return fill(card,
    h('header', {}, h('span', { class: 'name' }, t.topic), ' ', h('span', { class: 'type' }, t.type ?? ''),
      h('span', { class: 'state', data: { state: t.state } }, t.state),
      h('span', { class: 'count', title: `${t.waiting.length} of at most ${t.queueLimit} commands wait behind the running one; one more is refused with QUEUE_FULL` }, `waiting ${t.waiting.length}/${t.queueLimit}`)),
    runningView(t, ctx.now), waitingView(t, ctx.now), shell, doc, recentView(t, ctx.filters.failed));
}

function capabilitiesView(a, ctx) {
  if (a.capabilities.length === 0) return null;
  return h('table', { class: 'caps' }, h('caption', {}, 'capabilities'),
    h('tbody', {}, a.capabilities.map((c) => h('tr', { ...selectable(`cap:${c.token_id}`, ctx.selected), data: { state: c.state } },
      h('td', {}, h('code', {}, c.token_id)), h('td', {}, c.path_prefix || '(home)'), h('td', {}, c.verbs.join(' ')),
      h('td', { class: `cap-state ${c.state}` }, c.state), h('td', {}, c.single_use ? 'single-use' : ''),
      h('td', { class: 'num' }, c.state === 'live' ? `expires in ${duration(Date.parse(c.expires_at) - ctx.now)}` : '')))));
}

function installsView(a, ctx) {
  if (a.installs.length === 0) return null;
  return h('ul', { class: 'installs' }, a.installs.map((i) => h('li', selectable(`install:${i.install_id}`, ctx.selected),
    h('span', { class: 'name' }, i.name ?? i.install_id), ' ', h('span', { class: 'state' }, String(i.state)), ' ',
    i.files_total ? bar((i.files_done ?? 0) / i.files_total) : null,
    h('span', { class: 'num' }, `${i.files_done ?? 0}/${i.files_total ?? '?'} files · ${i.bytes ?? 0} bytes`),
    i.source ? h('span', { class: 'source' }, ` ${i.source}`) : null)));
}

function agentHeader(a, ctx) {
  const ev = a.events;
  return h('header', {},
    h('h2', selectable(`agent:${a.agentId}`, ctx.selected), a.agentId),
    h('span', { class: 'home' }, a.home ?? ''),
    ev ? h('span', { class: 'events' }, `inbox ${ev.pending} pending · ${ev.acked} acked · ${ev.streams} stream${ev.streams === 1 ? '' : 's'}`) : null,
    h('span', { ...selectable(`webhook:${a.agentId}`, ctx.selected), class: `webhook ${a.webhook ? 'on' : 'off'}${ctx.selected === `webhook:${a.agentId}` ? ' selected' : ''}` }, a.webhook ? 'webhook on' : 'no webhook'));
}

/** How many of an agent's recent sandbox denials its card lists (the snapshot keeps the last 20). */
const DENIALS_SHOWN = 3;

/**
 * The agent's sandbox (behaviour.md §15.5, §13.8): its mode, its network policy when confined, and
 * its recent denials, newest first with their time.
 */
function sandboxView(a) {
  if (a.sandbox !== 'workspace') {
    return h('div', { class: 'sandbox', data: { mode: 'none' } }, h('span', { class: 'mode', title: "the agent's programs run unconfined (no sandbox)" }, 'sandbox none'));
  }
  const net = a.network && typeof a.network === 'object' ? `allow ${(a.network.allow ?? []).join(', ')}` : a.network ?? 'public';
  const recent = a.denials.slice(-DENIALS_SHOWN).reverse().map((d) => h('li', { data: { kind: d.kind } },
    h('time', {}, d.at ? clock(d.at) : ''), ' ', `${d.kind} ${d.target}`, h('span', { class: 'reason' }, ` (${d.reason})`)));
  const more = a.denials.length > DENIALS_SHOWN ? `${a.denials.length - DENIALS_SHOWN} earlier` : null;
  return h('div', { class: 'sandbox', data: { mode: 'workspace' } },
    h('span', { class: 'mode', title: "the agent's programs are confined to its workspace (Landlock)" }, 'sandbox workspace'), ' · ',
    h('span', { class: 'network', title: 'where its programs may connect, through the egress proxy' }, `network ${net}`), ' · ',
    recent.length
      ? h('span', { class: 'denials-head' }, `${a.denials.length} recent denial${a.denials.length === 1 ? '' : 's'}`)
      : h('span', { class: 'denials-head none' }, 'no recent denials'),
    recent.length ? h('ul', { class: 'denials', 'aria-label': 'recent sandbox denials' }, recent, more ? h('li', { class: 'more' }, more) : null) : null);
}

/** Whether `el`'s children are exactly `nodes`, in order. */
function holds(el, nodes) {
  return el.children.length === nodes.length && nodes.every((n, i) => el.children[i] === n);
}

/** An agent's section, kept across redraws: its header part is redrawn only when it changed. */
function agentSection(a) {
  let sec = agentCards.get(a.agentId);
  if (!sec) {
    sec = { el: h('section', { class: 'agent', data: { agent: a.agentId } }), topics: h('div', { class: 'topics' }), empty: h('p', { class: 'empty' }, 'no open topics'), parts: [], drawnFrom: null, drawnRev: -1, drawnSelected: undefined };
    agentCards.set(a.agentId, sec);
  }
  return sec;
}

/**
 * Draw every agent and topic that passes the filters into `root`. `ctx`: { now, selected, filters }.
 * Returns how many topics show, of how many.
 */
export function renderAgents(root, model, ctx) {
  if (!model.loaded) return { shown: 0, total: 0 };
  const filters = ctx.filters ?? NO_FILTERS;
  ctx = { ...ctx, filters };
  const topicsByAgent = new Map();
  let total = 0;
  let shownTopics = 0;
  for (const t of model.topics.values()) {
    total++;
    if (!topicShown(t, filters)) continue;
    shownTopics++;
    if (!topicsByAgent.has(t.agentId)) topicsByAgent.set(t.agentId, []);
    topicsByAgent.get(t.agentId).push(t);
  }
  const agents = [...model.agents.values()]
    .filter((a) => agentShown(a, topicsByAgent.get(a.agentId)?.length ?? 0, filters))
    .sort((x, y) => (x.agentId < y.agentId ? -1 : 1));
  const keep = new Set();
  const sections = agents.map((a) => {
    const sec = agentSection(a);
    const topics = (topicsByAgent.get(a.agentId) ?? []).sort((x, y) => (x.topic < y.topic ? -1 : 1));
    for (const t of topics) keep.add(topicKey(t.agentId, t.topic));
    // A live capability shows its time to expiry: redrawn at every tick, like a busy topic.
    const live = a.capabilities.some((c) => c.state === 'live');
    if (live || sec.drawnFrom !== a || sec.drawnRev !== a.rev || sec.drawnSelected !== ctx.selected) {
      // Only the head is replaced: the topic cards stay attached (moving them costs a restyle of all).
      for (const p of sec.parts) p.remove();
      sec.parts = [agentHeader(a, ctx), sandboxView(a), capabilitiesView(a, ctx), installsView(a, ctx)].filter((x) => x !== null);
      sec.el.prepend(...sec.parts);
      sec.drawnFrom = a;
      sec.drawnRev = a.rev;
      sec.drawnSelected = ctx.selected;
    }
    const cards = topics.map((t) => topicCard(t, ctx));
    if (!holds(sec.topics, cards)) fill(sec.topics, cards);
    const [body, other] = cards.length ? [sec.topics, sec.empty] : [sec.empty, sec.topics];
    if (other.parentNode === sec.el) other.remove();
    if (body.parentNode !== sec.el) sec.el.append(body);
    return sec.el;
  });
  for (const [key, card] of [...topicCards]) {
    if (keep.has(key)) continue;
    visibility?.unobserve(card);
    topicCards.delete(key);
  }
  for (const id of [...agentCards.keys()]) if (!model.agents.has(id)) agentCards.delete(id);
  if (sections.length === 0) fill(root, h('p', { class: 'empty' }, model.agents.size === 0 ? 'No agents registered.' : 'Nothing matches the filters.'));
  else if (!holds(root, sections)) fill(root, sections);
  return { shown: shownTopics, total };
}
