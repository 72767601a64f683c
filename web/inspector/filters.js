// The page's filters (behaviour.md §13.8): a text filter (agent, topic, command), `failed only` and a
// state filter, each kept in the URL so a link shows the same view:
// /inspect?agent=leo&topic=build&q=sleep&failed=1&state=executing. The one text box reads and
// writes the same terms: `agent:leo topic:build sleep`.

/** The URL parameters the filters own; any other (a trace id) is left as it is. */
const KEYS = ['agent', 'topic', 'q', 'failed', 'state'];
const REFUSALS = ['QUEUE_FULL', 'QUEUE_TIMEOUT', 'BUSY'];

/** No filter: everything shows. */
export const NO_FILTERS = Object.freeze({ agent: '', topic: '', q: '', failed: false, state: '' });

/** The filters of a URL query (`location.search`). */
export function readFilters(search) {
  const p = new URLSearchParams(search);
  const text = (k) => (p.get(k) ?? '').trim();
  return { agent: text('agent'), topic: text('topic'), q: text('q'), failed: p.get('failed') === '1', state: text('state') };
}

/** The URL query for `f`, keeping every parameter the filters do not own, in order. */
export function writeFilters(f, search) {
  const p = new URLSearchParams(search);
  for (const k of KEYS) p.delete(k);
  if (f.agent) p.set('agent', f.agent);
  if (f.topic) p.set('topic', f.topic);
  if (f.q) p.set('q', f.q);
  if (f.failed) p.set('failed', '1');
  if (f.state) p.set('state', f.state);
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** The text box's words for `f`: `agent:leo topic:build sleep`. */
export function textOf(f) {
  return [f.agent && `agent:${f.agent}`, f.topic && `topic:${f.topic}`, f.q].filter(Boolean).join(' ');
}

/** The text box's words read back: `agent:` and `topic:` terms, the rest one phrase of a command. */
export function parseText(text) {
  const out = { agent: '', topic: '', q: '' };
  const rest = [];
  for (const word of text.trim().split(/\s+/).filter(Boolean)) {
    const m = /^(agent|topic):(.*)$/i.exec(word);
    if (m) out[m[1].toLowerCase()] = m[2];
    else rest.push(word);
  }
  out.q = rest.join(' ');
  return out;
}

/** Whether any filter is set. */
export const active = (f) => Boolean(f.agent || f.topic || f.q || f.failed || f.state);

/** A key that changes whenever what the filters show may change (the view's redraw check). */
export const filterKey = (f) => JSON.stringify([f.agent, f.topic, f.q, f.failed, f.state]);

const has = (text, part) => String(text ?? '').toLowerCase().includes(part.toLowerCase());
const stateText = (s) => (typeof s === 'string' ? s : JSON.stringify(s));

/** A finished command that did not succeed: failed, or refused by a limit. */
export const failedCommand = (r) => r.ok !== true;

/** Whether a row of a topic's last commands is a refusal (its own colour on the page). */
export const isRefusal = (r) => REFUSALS.includes(r.code);

/** Whether topic `t` (of agent `agentId`) shows under `f`. */
export function topicShown(t, f) {
  if (f.agent && !has(t.agentId, f.agent)) return false;
  if (f.topic && !has(t.topic, f.topic)) return false;
  if (f.state && stateText(t.state) !== f.state) return false;
  if (f.failed && !t.recent.some(failedCommand)) return false;
  if (!f.q) return true;
  const cmds = [t.running, ...t.waiting, ...t.recent].filter(Boolean).map((c) => c.cmd);
  return has(t.agentId, f.q) || has(t.topic, f.q) || cmds.some((c) => has(c, f.q));
}

/**
 * Whether agent `a` shows under `f`, `shownTopics` being how many of its topics show: an agent the
 * agent filter names shows with the topics that pass; one with none shows only while no filter
 * of topics is set (or the text names the agent itself).
 */
export function agentShown(a, shownTopics, f) {
  if (f.agent && !has(a.agentId, f.agent)) return false;
  if (shownTopics > 0) return true;
  if (f.topic || f.failed || f.state) return false;
  return !f.q || has(a.agentId, f.q);
}
