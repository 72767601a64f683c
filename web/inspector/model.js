// The page's picture of the daemon (behaviour.md §13.2–13.3): built from the snapshot, then kept
// current by the live messages. Times are kept as daemon milliseconds; `clockOffset` turns the
// browser's clock into the daemon's, so elapsed and waiting times are right even if the two differ.

/** How many finished commands a topic shows and how many transitions or changes an actor keeps (as the daemon does). */
export const RECENT_MAX = 20;
const TRANSITIONS_MAX = 60;
/** The queue limits of spec §3, until the daemon says its own (a topic's snapshot, /describe). */
export const DEFAULT_LIMITS = { queue: 5, waitMs: 120000 };

const ms = (iso) => Date.parse(iso);

/** A topic's key: `<agent>/<topic>` (the part after `topic:` in its system id). */
export const topicKey = (agentId, topic) => `${agentId}/${topic}`;

/** A history entry of the snapshot or a live message, its time as daemon ms (behaviour.md §13.7). */
const entryOf = (e) => ({ ...e, at: ms(e.at) });

function topicFromSnapshot(agentId, t, limits) {
  return {
    // `rev` counts changes: the view redraws a card only when it moved (or shows a live time).
    rev: 0, agentId, topic: t.topic, type: t.topic_type, state: t.state, doc: t.doc, shell: t.shell,
    queueLimit: t.queue_limit ?? limits.queue, waitLimitMs: t.wait_limit_ms ?? limits.waitMs,
    running: t.running ? { ...t.running, startedAt: ms(t.running.started_at), queuedAt: ms(t.running.started_at) } : null,
    waiting: t.waiting.map((w) => ({ ...w, queuedAt: ms(w.queued_at) })),
    recent: [...t.recent],
    // The daemon's record of the topic's changes, kept whether or not a page watched.
    history: (t.history ?? []).map(entryOf),
    historySince: t.history_since ? ms(t.history_since) : null,
    historyTruncated: t.history_truncated === true,
  };
}

export class Model {
  constructor() {
    this.reset();
    /** Per actor system id: its transitions, oldest first (kept across reconnects). */
    this.transitions = new Map();
    /** When the page first connected (daemon ms): where the transitions it saw itself start. */
    this.watchingSince = null;
    this.limits = { ...DEFAULT_LIMITS };
    /** Set for a recorded snapshot: the moment the page's clock stays at. */
    this.frozenAt = null;
  }

  reset() {
    this.version = null;
    this.startedAt = null;
    this.clockOffset = 0;
    /** agent id -> { agentId, home, webhook, events, capabilities, installs } */
    this.agents = new Map();
    /** topic key -> topic */
    this.topics = new Map();
    this.loaded = false;
  }

  /** The daemon's clock now; a recorded picture's own moment, which does not move. */
  now() {
    return this.frozenAt ?? Date.now() + this.clockOffset;
  }

  /**
   * A whole snapshot (the first WebSocket message): the picture starts again from it. `frozen`: a
   * recorded snapshot (behaviour.md §13.8), whose times stay as they were when it was taken.
   */
  applySnapshot(s, { frozen = false } = {}) {
    this.reset();
    this.frozenAt = frozen ? ms(s.at) : null;
    this.clockOffset = ms(s.at) - Date.now();
    this.version = s.version;
    this.startedAt = ms(s.at) - s.uptime_ms;
    this.watchingSince ??= ms(s.at);
    for (const a of s.agents) {
      this.agents.set(a.agent_id, this.agentFields(a));
      for (const t of a.topics) this.topics.set(topicKey(a.agent_id, t.topic), topicFromSnapshot(a.agent_id, t, this.limits));
    }
    this.loaded = true;
  }

  agentFields(a) {
    return {
      rev: 0, agentId: a.agent_id, home: a.home, webhook: a.webhook, events: a.events ?? null,
      capabilities: a.capabilities ?? [], installs: a.installs ?? [],
      sandbox: a.sandbox ?? 'none', network: a.network ?? null, denials: a.denials ?? [],
    };
  }

  /**
   * A snapshot fetched later (GET /inspect/state) to refresh what has no live message (event counts,
   * capabilities, documents, shells). Queues come from the live messages only: a fetched snapshot
   * may be older than the last message, so it never overwrites a queue the page already knows.
   */
  refresh(s) {
    const seen = new Set();
    for (const a of s.agents) {
      seen.add(a.agent_id);
      this.agents.set(a.agent_id, this.agentFields(a));
      for (const t of a.topics) {
        const key = topicKey(a.agent_id, t.topic);
        const known = this.topics.get(key);
        if (!known) this.topics.set(key, topicFromSnapshot(a.agent_id, t, this.limits));
        else if (known.historySince === null && t.history_since) {
          // A topic first met in a live message: the daemon's history of it replaces the page's own.
          Object.assign(known, { history: t.history.map(entryOf), historySince: ms(t.history_since), historyTruncated: t.history_truncated, queueLimit: t.queue_limit, waitLimitMs: t.wait_limit_ms });
          known.rev++;
        }
        else if (JSON.stringify([known.doc, known.shell]) !== JSON.stringify([t.doc, t.shell])) {
          Object.assign(known, { doc: t.doc, shell: t.shell });
          known.rev++;
        }
      }
    }
    for (const id of [...this.agents.keys()]) if (!seen.has(id)) this.dropAgent(id);
  }

  dropAgent(agentId) {
    this.agents.delete(agentId);
    for (const [key, t] of this.topics) if (t.agentId === agentId) this.topics.delete(key);
  }

  topicOf(msg) {
    const key = topicKey(msg.agent_id, msg.topic);
    let t = this.topics.get(key);
    if (!t) {
      t = {
        rev: 0, agentId: msg.agent_id, topic: msg.topic, type: null, state: 'idle', doc: null, shell: null, running: null, waiting: [], recent: [],
        queueLimit: this.limits.queue, waitLimitMs: this.limits.waitMs, history: [], historySince: null, historyTruncated: false,
      };
      this.topics.set(key, t);
    }
    return t;
  }

  /** One live message (behaviour.md §13.3). Returns true when the picture needs a fetched refresh. */
  apply(msg) {
    switch (msg.type) {
      case 'command': this.applyCommand(msg); return false;
      case 'transition': return this.applyTransition(msg);
      case 'actor': return this.applyActor(msg);
      case 'install': return this.applyInstall(msg);
      case 'session': return this.applySession(msg);
      default: return false;
    }
  }

  applyCommand(m) {
    const t = this.topicOf(m);
    t.rev++;
    const at = ms(m.at);
    const waiting = t.waiting.find((w) => w.ticket === m.ticket);
    if (m.phase === 'queued') {
      if (!waiting) t.waiting.push({ ticket: m.ticket, cmd: m.cmd, via: m.via, request_id: m.request_id ?? null, queuedAt: at });
      return;
    }
    t.waiting = t.waiting.filter((w) => w.ticket !== m.ticket);
    if (m.phase === 'started') {
      t.running = { ticket: m.ticket, cmd: m.cmd, via: m.via, request_id: m.request_id ?? null, startedAt: at, queuedAt: waiting ? waiting.queuedAt : at };
      return;
    }
    const running = t.running && t.running.ticket === m.ticket ? t.running : null;
    if (running) t.running = null;
    const startedAt = running ? running.startedAt : at;
    const queuedAt = running ? running.queuedAt : waiting ? waiting.queuedAt : at;
    t.recent.push({
      ticket: m.ticket, cmd: m.cmd, request_id: m.request_id ?? null, via: m.via, ok: m.ok === true, code: m.code ?? null,
      queued_ms: Math.max(0, startedAt - queuedAt), duration_ms: m.duration_ms ?? 0, at: m.at,
    });
    if (t.recent.length > RECENT_MAX) t.recent.splice(0, t.recent.length - RECENT_MAX);
  }

  remember(actor, entry) {
    let list = this.transitions.get(actor);
    if (!list) {
      list = [];
      this.transitions.set(actor, list);
    }
    list.push(entry);
    if (list.length > TRANSITIONS_MAX) list.splice(0, list.length - TRANSITIONS_MAX);
  }

  /** A change of a topic's history, as the daemon keeps it (the last 60). */
  addHistory(t, entry) {
    t.history.push(entry);
    if (t.history.length > TRANSITIONS_MAX) {
      t.history.splice(0, t.history.length - TRANSITIONS_MAX);
      t.historySince = t.history[0].at;
      t.historyTruncated = true;
    }
    t.historySince ??= this.watchingSince;
  }

  applySession(m) {
    const key = m.actor.slice('topic:'.length);
    const t = this.topics.get(key);
    if (!t) return true;
    const { type: _type, actor: _actor, event, ...fields } = m;
    this.addHistory(t, { ...fields, type: event, at: ms(m.at) });
    t.rev++;
    return false;
  }

  applyTransition(m) {
    this.remember(m.actor, { from: m.from, to: m.to, event: m.event, at: ms(m.at) });
    if (m.actor.startsWith('topic:')) {
      // A topic first met here (a coalesced frame may leave out the command that came first) is
      // added as a command would add it; its type comes with the refresh this asks for.
      const key = m.actor.slice('topic:'.length);
      const known = this.topics.has(key);
      const slash = key.indexOf('/');
      const t = this.topicOf({ agent_id: key.slice(0, slash), topic: key.slice(slash + 1) });
      t.state = m.to;
      this.addHistory(t, { type: 'state', from: m.from, to: m.to, event: m.event, at: ms(m.at) });
      t.rev++;
      return !known;
    }
    // Capabilities, agents, webhooks, installs, shells: their rows come from a fetched snapshot.
    return true;
  }

  applyActor(m) {
    this.remember(m.actor, { from: null, to: m.event, event: m.event === 'created' ? 'created' : 'stopped', at: ms(m.at), lifecycle: true });
    if (m.actor.startsWith('topic:') && m.event === 'stopped') this.topics.delete(m.actor.slice('topic:'.length));
    if (m.actor.startsWith('agent:') && m.event === 'stopped') this.dropAgent(m.actor.slice('agent:'.length));
    return true;
  }

  applyInstall(m) {
    const a = this.agents.get(m.agent_id);
    if (!a) return true;
    const id = m.actor.slice('install:'.length);
    const row = { install_id: id, name: m.name, source: m.source, state: m.state, files_done: m.files_done, files_total: m.files_total, bytes: m.bytes };
    const i = a.installs.findIndex((x) => x.install_id === id);
    if (i < 0) a.installs.push(row);
    else a.installs[i] = row;
    a.rev++;
    return false;
  }

  /**
   * What the timeline of `actor` is drawn from: a topic's history as the daemon kept it (since its
   * start, or its oldest kept change), any other actor's transitions as this page saw them.
   */
  historyOf(actor) {
    if (actor.startsWith('topic:')) {
      const t = this.topics.get(actor.slice('topic:'.length));
      if (t) return { entries: t.history, since: t.historySince ?? this.watchingSince, truncated: t.historyTruncated, keptBy: 'daemon' };
    }
    const list = (this.transitions.get(actor) ?? []).map((x) => (x.lifecycle ? { type: x.to, at: x.at, lifecycle: true } : { type: 'state', from: x.from, to: x.to, event: x.event, at: x.at }));
    const truncated = list.length >= TRANSITIONS_MAX;
    return { entries: list, since: truncated ? list[0].at : this.watchingSince, truncated, keptBy: 'page' };
  }

  /** The current state of any actor the page can select, by system id (null when unknown). */
  stateOf(actor) {
    const [kind, rest] = [actor.slice(0, actor.indexOf(':')), actor.slice(actor.indexOf(':') + 1)];
    if (kind === 'topic') return this.topics.get(rest)?.state ?? null;
    if (kind === 'agent') return this.agents.has(rest) ? 'active' : null;
    if (kind === 'webhook') return this.agents.has(rest) ? (this.agents.get(rest).webhook ? 'exists' : 'none') : null;
    for (const a of this.agents.values()) {
      if (kind === 'cap') { const c = a.capabilities.find((x) => x.token_id === rest); if (c) return c.state; }
      if (kind === 'install') { const x = a.installs.find((i) => i.install_id === rest); if (x) return x.state; }
    }
    if (kind === 'shell') return this.topics.get(rest)?.shell?.state ?? null;
    return null;
  }
}
