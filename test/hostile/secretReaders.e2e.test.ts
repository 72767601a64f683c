import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { runCli } from '../helpers/daemon.js';
import { openInspector, type InspectorSession } from '../inspector/support.js';
import { collect, leaks, planted, secretCases, startPlantServer, until, type PlantServer, type SecretCase } from './secretCases.js';
import { alive, Daemons } from './support.js';

/**
 * behaviour.md §13.4 against the built daemon, reader by reader: every kind of secret (Loom's own,
 * credentials by shape, the agent's env-store and session values), each plain, percent-encoded,
 * in a URL path and in a URL query, planted where the agent controls the text — a document's title
 * and address, an install source, a request id, a request path — and looked for in what each
 * reader got. A leak is reported by case (`<kind> / <encoding>`).
 */
const daemons = new Daemons();
const cases = secretCases();
/** What each reader got, filled once by beforeAll. */
const got: Record<string, string> = {};
let plants: PlantServer | undefined;
let dataDir = '';

/** Topics: a case's documents are opened in `d<tag>`, its install runs in `i<tag>`; each sets the case's session value first. */
async function plantDocsAndInstalls(eve: LoomClient, origin: string): Promise<Array<Promise<unknown>>> {
  const setSession = (topic: string, c: SecretCase) => (c.kind.value === 'session' ? eve.exec(topic, `/set {leak} = "${c.core}"`) : Promise.resolve());
  for (const c of cases) {
    await setSession(`d${c.tag}`, c);
    const open = await eve.exec(`d${c.tag}`, `/open ${planted(c, `${origin}/d`).url}`);
    if (open.head?.ok !== true) throw new Error(`/open failed for ${c.id}: ${JSON.stringify(open)}`);
  }
  const installs: Array<Promise<unknown>> = [];
  for (const c of cases) {
    await setSession(`i${c.tag}`, c);
    installs.push(eve.exec(`i${c.tag}`, `/install "${planted(c, `${origin}/i`).url}" --as p${c.tag}`));
  }
  return installs;
}

/** The request log's fields a client chooses: a request id (with the case's topic) and a path (with the agent only). */
async function plantRequests(base: string): Promise<void> {
  for (const c of cases) {
    const { text } = planted(c, `${base}/x`);
    await fetch(`${base}/exec`, { method: 'POST', headers: { 'X-Agent-Id': 'eve', 'Content-Type': 'application/json' }, body: JSON.stringify({ cmd: '/info', topic: `d${c.tag}`, request_id: text }) });
    // A path names no topic: it is masked with every value of the agent it names.
    await fetch(`${base}/nothing/${c.enc === 'url-path' || c.enc === 'url-query' ? text.slice(base.length + 3) : text}`, { headers: { 'X-Agent-Id': 'eve' } });
  }
}

beforeAll(async () => {
  const d = await daemons.start();
  dataDir = d.dataDir;
  plants = await startPlantServer();
  const origin = plants.origin;
  for (const c of cases) plants.titles.set(c.tag, planted(c, `${origin}/d`).text);
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'eve' }) });
  const eve = new LoomClient(d.base, 'eve');
  for (const c of cases.filter((x) => x.kind.value === 'env')) await eve.exec('setup', `/set $LEAK_${c.tag} = "${c.core}"`);
  const trace = (await (await fetch(`${d.base}/traces`, { method: 'POST', body: JSON.stringify({ agent_id: 'eve' }) })).json() as { trace_id: string }).trace_id;
  const ws: InspectorSession = await openInspector(d.port);
  const stop = new AbortController();
  const stream = { text: '' };
  const streamRes = await fetch(`${d.base}/installs/stream`, { headers: { 'X-Agent-Id': 'eve' }, signal: stop.signal });
  const streaming = collect(streamRes, stream);

  const installs = await plantDocsAndInstalls(eve, origin);
  await until(async () => ((await (await fetch(`${d.base}/installs`, { headers: { 'X-Agent-Id': 'eve' } })).json()) as { installs: unknown[] }).installs.length === cases.length, 'every install to be running');
  got['GET /installs'] = await (await fetch(`${d.base}/installs`, { headers: { 'X-Agent-Id': 'eve' } })).text();
  got['GET /inspect/state'] = await (await fetch(`${d.base}/inspect/state`)).text();
  got['loom inspect --json'] = (await runCli(['inspect', '--json'], { SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir })).stdout;
  plants.release();
  await Promise.all(installs);
  got['GET /packages'] = await (await fetch(`${d.base}/packages`, { headers: { 'X-Agent-Id': 'eve' } })).text();
  await until(() => cases.every((c) => new RegExp(`"name":"p${c.tag}","source":"[^"]*","state":"installed"`).test(stream.text)), 'the stream to tell every install\'s end');
  stop.abort();
  await streaming;
  got['GET /installs/stream'] = stream.text;
  await ws.until(() => ws.messages.filter((m) => m.type === 'session' && m.event === 'session.opened').length >= cases.length, 'a session message per document');

  await plantRequests(d.base);
  const state = JSON.parse(got['GET /inspect/state']) as { agents: Array<{ topics: Array<{ doc: unknown; history: unknown[] }> }> };
  const topics = state.agents.flatMap((a) => a.topics);
  got['snapshot doc'] = JSON.stringify(topics.map((t) => t.doc));
  got['topic history'] = JSON.stringify(topics.map((t) => t.history));
  got['live session messages'] = JSON.stringify(ws.messages.filter((m) => m.type === 'session'));
  got['inspector WebSocket'] = ws.raw.join('\n');
  await ws.close();
  await fetch(`${d.base}/traces/${trace}`, { method: 'DELETE' });
  got['trace file'] = readFileSync(join(d.dataDir, 'traces', `${trace}.jsonl`), 'utf8');
  expect(await alive(d)).toBe(true);
  await d.stop();
  got['request log'] = readFileSync(join(d.dataDir, 'logs', 'requests.log'), 'utf8');
}, 180000);

afterAll(async () => {
  await plants?.close();
  await daemons.killAll();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Every case the reader could have received; traces keep session values by design (behaviour.md §14.2: a replay sets them). */
const expected = (reader: string) => (reader === 'trace file' ? cases.filter((c) => c.kind.value !== 'session') : cases);

/** What shows a reader really got the planted text (a test that saw nothing would prove nothing). */
const reached: Record<string, (text: string) => boolean> = {
  'GET /inspect/state': (t) => cases.every((c) => t.includes(`"topic":"d${c.tag}"`)) && (t.match(/"install_id"/g) ?? []).length === cases.length,
  'snapshot doc': (t) => (t.match(/"title":/g) ?? []).length === cases.length,
  'topic history': (t) => (t.match(/"session\.opened"/g) ?? []).length === cases.length,
  'live session messages': (t) => (t.match(/"session\.opened"/g) ?? []).length >= cases.length,
  'inspector WebSocket': (t) => (t.match(/"type":"install"/g) ?? []).length >= cases.length,
  'loom inspect --json': (t) => (t.match(/"source": /g) ?? []).length === cases.length,
  'GET /installs': (t) => (t.match(/"source":/g) ?? []).length === cases.length,
  'GET /installs/stream': (t) => (t.match(/event: install/g) ?? []).length >= cases.length,
  'GET /packages': (t) => (t.match(/"source":/g) ?? []).length === cases.length,
  'trace file': (t) => (t.match(/"cmd":"\/open /g) ?? []).length === cases.length && (t.match(/"cmd":"\/install /g) ?? []).length === cases.length,
  'request log': (t) => (t.match(/"path":"\/nothing\//g) ?? []).length === cases.length,
};

describe('a secret of every kind, in every encoding, reaches no reader unmasked', () => {
  it.each(Object.keys(reached))('%s', (reader) => {
    const text = got[reader];
    expect(reached[reader](text)).toBe(true);
    expect(leaks(text, expected(reader))).toEqual([]);
  });
});
