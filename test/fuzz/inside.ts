import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SseParser } from '../../src/client/sse.js';
import type { RunningDaemon } from '../helpers/daemon.js';
import { guaranteesSkipReason } from '../helpers/landlock.js';
import { pick, prng } from './inputs.js';

/**
 * The fuzz run's confined agent (behaviour.md §15.3): a `workspace` agent's program calls the
 * daemon's port with generated requests that each name another agent (identity header, query,
 * path, JSON body) or use a route that changes agents or the daemon, in the spellings the router
 * accepts. All go out in one `curl -K` run inside the sandbox (through the egress proxy, as curl
 * does by itself); a few try the port directly. Every one must be refused: 403 with one of the two
 * §15.3 bodies through the proxy, no connection at all directly; and nothing the daemon holds changes.
 */

/** The confined agent's id (not one of the fuzzed agents, so it never names itself by accident). */
export const INSIDE_AGENT = 'fzbox';
/** Requests the confined agent sends per session: one curl run, a second or two. */
export const INSIDE_REQUESTS = 150;

const ACTS = '{"error":"Forbidden: a sandboxed agent acts only as itself"}';
const NOT_INSIDE = '{"error":"Forbidden: not allowed from inside the sandbox"}';

/** One generated request from inside: curl reaches it directly (`direct`) or through the proxy. */
interface InsideRequest {
  method: string;
  path: string;
  header?: string;
  body?: string;
  direct: boolean;
}

/** A route word in the spellings Express routes alike (letter case, one trailing slash). */
function spelt(r: () => number, word: string): string {
  return pick(r, [word, word, word.toUpperCase(), word[0].toUpperCase() + word.slice(1)]);
}

/** An id that is not the confined agent: the fuzzed agents, unknown ones, prototype names, case variants, encodings. */
function other(r: () => number, agents: readonly string[]): string {
  return pick(r, [...agents, 'nobody', '__proto__', 'FZBOX', 'Fzbox', 'fzbox2', 'f%7A2', encodeURIComponent('fz box')]);
}

/** One request naming another agent or changing agents or the daemon. */
function request(r: () => number, agents: readonly string[]): InsideRequest {
  const id = other(r, agents);
  const plainId = decodeURIComponent(id);
  const res = spelt(r, 'agents');
  const slash = r() < 0.2 ? '/' : '';
  const shapes: Array<() => Omit<InsideRequest, 'direct'>> = [
    () => ({ method: 'POST', path: pick(r, ['/exec', '/mcp']), header: `X-Agent-Id: ${plainId}`, body: JSON.stringify({ topic: 'main', cmd: '/exec touch pwned' }) }),
    () => ({ method: 'GET', path: pick(r, ['/capabilities', '/installs', '/packages', '/events/stream']), header: `X-Agent-Id: ${plainId}` }),
    () => ({ method: 'GET', path: `${pick(r, ['/sessions', '/capabilities', '/exec', '/health'])}?${pick(r, ['agent_id', 'agent', 'user_id'])}=${id}` }),
    () => ({ method: pick(r, ['GET', 'POST']), path: `/${res}/${id}/${pick(r, ['events', 'webhook', 'events/ack'])}${slash}`, body: '{"all":true}' }),
    () => ({ method: 'DELETE', path: `/${spelt(r, 'sessions')}/${id}/${pick(r, ['main', 'bash:b', 'fz1'])}` }),
    () => ({ method: 'POST', path: pick(r, ['/sessions', '/capabilities']), body: JSON.stringify({ [pick(r, ['agent_id', 'user_id', 'agentId'])]: plainId, topic: 'planted' }) }),
    () => ({ method: 'POST', path: `/${res}${slash}`, body: JSON.stringify({ agent_id: pick(r, [INSIDE_AGENT, plainId]), ...pick(r, [{ sandbox: 'none' }, { network: 'open' }, { allowed_paths: ['/'] }, {}]) }) }),
    () => ({ method: 'DELETE', path: `/${res}/${pick(r, [INSIDE_AGENT, id])}${slash}` }),
    () => ({ method: pick(r, ['POST', 'GET']), path: `/${spelt(r, 'shutdown')}${slash}` }),
    () => ({ method: 'GET', path: `/${spelt(r, pick(r, ['inspect', 'traces']))}${pick(r, ['', '/', '/state', '/machines'])}` }),
  ];
  return { ...pick(r, shapes)(), direct: r() < 0.05 };
}

/** A string as a curl config value (double-quoted; `\` and `"` escaped). */
const quoted = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The curl config running every request in turn; each answer ends with `@@ <status>` on a line of its own. */
function curlConfig(list: readonly InsideRequest[]): string {
  return list.map((q) => [
    `url = ${quoted(`http://127.0.0.1:$PORT${q.path}`)}`, `request = ${quoted(q.method)}`, 'globoff', 'path-as-is', 'silent', 'max-time = 5',
    'write-out = "\\n@@ %{http_code}\\n"', ...(q.direct ? ['noproxy = "*"'] : []),
    ...(q.header ? [`header = ${quoted(q.header)}`] : []),
    ...(q.body ? ['header = "Content-Type: application/json"', `data-raw = ${quoted(q.body)}`] : []),
  ].join('\n')).join('\nnext\n');
}

/** What the confined agent's run found: how many requests it sent and which answers were not a refusal. */
export interface InsideReport {
  sent: number;
  /** Why the phase did not run here (no sandbox on this machine), or null. */
  skipped: string | null;
  findings: string[];
}

/** What the daemon holds of every agent but the confined one (its own topic opens when it runs): agents and sessions. */
async function snapshot(base: string): Promise<string> {
  const agents = await (await fetch(`${base}/agents`)).text();
  const sessions = ((await (await fetch(`${base}/sessions`)).json()) as { sessions: Array<{ agent_id: string }> }).sessions;
  return `${agents}\n${JSON.stringify(sessions.filter((s) => s.agent_id !== INSIDE_AGENT))}`;
}

/**
 * Register the confined agent, send `count` generated requests from inside it, and judge: every
 * one through the proxy refused with a §15.3 403, every direct one unable to connect, and the
 * daemon's agents and sessions unchanged.
 */
export async function fuzzFromInside(d: RunningDaemon, seed: number, count: number, agents: readonly string[]): Promise<InsideReport> {
  const skipped = guaranteesSkipReason();
  if (skipped) return { sent: 0, skipped, findings: [] };
  const reg = await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: INSIDE_AGENT, sandbox: 'workspace' }) });
  const home = ((await reg.json()) as { home: string }).home;
  const r = prng(seed ^ 0x5bd1e995);
  const list = Array.from({ length: count }, () => request(r, agents));
  writeFileSync(join(home, 'requests.curl'), curlConfig(list).replace(/\$PORT/g, String(d.port)));
  const before = await snapshot(d.base);
  const res = await fetch(`${d.base}/exec`, {
    method: 'POST', headers: { 'X-Agent-Id': INSIDE_AGENT, 'Content-Type': 'application/json' },
    body: JSON.stringify({ topic: 'main', cmd: '/exec --timeout 120 curl -K requests.curl' }),
  });
  const raw = await res.text();
  const content = new SseParser().push(raw).find((e) => e.event === 'content');
  const text = content ? (JSON.parse(content.data) as string) : '';
  // No answer at all: the daemon went away mid-run (a shutdown got through) or refused the command.
  if (!text.includes('---\n')) return { sent: list.length, skipped: null, findings: [`from inside: the confined agent's curl run got no answer (HTTP ${res.status}): ${raw.slice(0, 300)}`] };
  const out = text.slice(text.indexOf('---\n') + 4);
  const answers = out.split(/\n@@ (\d{3})\n?/);
  const findings: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const q = list[i];
    const body = (answers[2 * i] ?? '').trim();
    const status = answers[2 * i + 1];
    const what = `${q.direct ? 'direct ' : ''}${q.method} ${q.path}${q.header ? ` (${q.header})` : ''}${q.body ? ` ${q.body}` : ''}`;
    if (status === undefined) findings.push(`from inside: no answer for ${what}: ${out.slice(0, 300)}`);
    else if (q.direct ? status !== '000' : status !== '403' || (body !== ACTS && body !== NOT_INSIDE)) findings.push(`from inside: ${what} got ${status} ${body.slice(0, 200)}`);
  }
  const after = await snapshot(d.base);
  if (after !== before) findings.push(`from inside: the agents or sessions changed:\n  before ${before}\n  after  ${after}`);
  return { sent: list.length, skipped: null, findings };
}
