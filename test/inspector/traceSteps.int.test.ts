import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

/**
 * behaviour.md §13.8 on a daemon: a trace recorded while a queue fills and drains, stepped through
 * with GET /inspect/trace/<id>, shows at each step what GET /inspect/state showed live at the same
 * point; its session changes are names, never values; unknown and damaged traces answer as the
 * routes say.
 */

interface LiveTicket { ticket: string; cmd: string }
interface LiveTopic { topic: string; state: string; running: LiveTicket | null; waiting: LiveTicket[] }
type Snapshot = { agents: Array<{ agent_id: string; topics: LiveTopic[] }> };

/** A topic's queue as one comparable line: state, running ticket and command, waiting tickets and commands. */
const picture = (t: LiveTopic | undefined): string | null => (t
  ? `${t.state} ${t.running ? `${t.running.ticket}:${t.running.cmd}` : '-'} [${t.waiting.map((w) => `${w.ticket}:${w.cmd}`).join(', ')}]`
  : null);
const topicOf = (s: Snapshot, agent: string, topic: string) => s.agents.find((a) => a.agent_id === agent)?.topics.find((t) => t.topic === topic);
/** Consecutive equal pictures once. */
const changes = (list: Array<string | null>) => list.filter((p, i) => p !== null && p !== list[i - 1]) as string[];

/** Whether `part` appears in `whole` in order (some of whole's pictures may have been too short to see live). */
function inOrder(part: string[], whole: string[]): boolean {
  let i = 0;
  for (const p of whole) if (i < part.length && part[i] === p) i++;
  return i === part.length;
}

describe('GET /inspect/trace/<id> (behaviour.md §13.8)', () => {
  let app: TestApp;
  beforeAll(async () => { app = await startApp(); });
  afterAll(async () => { await app?.close(); });

  it('when a queue of three is recorded, then every step the live snapshots saw is a step of the trace, in the same order, with the same state and queue', async () => {
    await app.client().registerAgent({ agent_id: 'leo' });
    const leo = app.client('leo');
    const trace = (await call(app.base, 'POST', '/traces', { body: { agent_id: 'leo' } })).body.trace_id as string;
    const seen: Array<string | null> = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        seen.push(picture(topicOf((await call(app.base, 'GET', '/inspect/state')).body as Snapshot, 'leo', 'q')));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const first = leo.exec('q', '/exec sleep 1 && echo one');
    while (!seen.some((p) => p?.startsWith('executing t1:'))) await new Promise((r) => setTimeout(r, 10));
    // The two that wait are sent at once: whichever arrives first is t2, and the trace says which.
    const rest = [leo.exec('q', '/exec sleep 0.6 && echo two'), leo.exec('q', '/exec sleep 0.6 && echo three')];
    expect((await Promise.all([first, ...rest])).map((o) => o.status)).toEqual([200, 200, 200]);
    await new Promise((r) => setTimeout(r, 100));
    polling = false;
    await poll;
    await call(app.base, 'DELETE', `/traces/${trace}`);

    const res = await call(app.base, 'GET', `/inspect/trace/${trace}`);
    expect(res.status).toBe(200);
    const doc = res.body as { format: string; trace_format: number; trace_id: string; steps: Array<{ label: string; state: Snapshot }> };
    expect(doc).toMatchObject({ format: 'loom-inspector-steps', version: 1, trace_format: 2, trace_id: trace });
    const stepped = changes(doc.steps.map((s) => picture(topicOf(s.state, 'leo', 'q'))));
    const live = changes(seen);
    // The trace names the order the two waiting ones arrived in; the live pictures show the same.
    const [a, b] = stepped[2].match(/\[(.*)\]/)?.[1].split(', ') ?? [];
    expect(stepped).toEqual([
      'executing t1:/exec sleep 1 && echo one []',
      `executing t1:/exec sleep 1 && echo one [${a}]`,
      `executing t1:/exec sleep 1 && echo one [${a}, ${b}]`,
      `executing ${a} [${b}]`,
      `executing ${b} []`,
      'idle - []',
    ]);
    expect([a, b].map((x) => x.slice(0, 3)).sort()).toEqual(['t2:', 't3:']);
    expect(inOrder(live, stepped)).toBe(true);
    // Each picture that lasted 0.6 s or more was seen live.
    expect(live).toEqual(expect.arrayContaining([stepped[0], stepped[2], stepped[3], stepped[4], stepped[5]]));
  }, 30000);

  it('when a secret and a session variable are set while recording, then the trace file holds neither value, only the variable name, and the steps neither', async () => {
    const leo = app.client('leo');
    const trace = (await call(app.base, 'POST', '/traces', { body: { agent_id: 'leo', topic: 's' } })).body.trace_id as string;
    const secret = 'sk-live-Vault-Key-93817';
    const city = 'Hvolsvollur-5521';
    expect((await leo.exec('s', `/set $API_KEY = "${secret}"`)).status).toBe(200);
    expect((await leo.exec('s', `/set {city} = "${city}"`)).status).toBe(200);
    expect((await leo.exec('s', `/exec echo ${secret}`)).content).toContain(secret);
    await call(app.base, 'DELETE', `/traces/${trace}`);
    const text = readFileSync(join(app.dataDir, 'traces', `${trace}.jsonl`), 'utf8');
    expect(text).not.toContain(secret);
    const steps = text.trim().split('\n').map((l) => JSON.parse(l));
    expect(steps.filter((s) => s.session).map((s) => s.session)).toEqual([[{ type: 'session.set', names: ['city'] }]]);
    // The session value stays in its /set command (a replay sets it again: docs/decisions/0106), and nowhere else.
    expect(steps.filter((s) => JSON.stringify(s).includes(city)).map((s) => s.cmd)).toEqual([`/set {city} = "${city}"`]);
    const page = JSON.stringify((await call(app.base, 'GET', `/inspect/trace/${trace}`)).body);
    expect(page).not.toContain(secret);
    expect(page).not.toContain(city);
    expect(page).toContain('"variables":["city"]');
  });

  it('when the id is unknown, or not a trace id, then 404 Unknown trace: <id>', async () => {
    const unknown = 'trc_01ARZ3NDEKTSV4RRFFQ69G5FAV';
    expect(await call(app.base, 'GET', `/inspect/trace/${unknown}`)).toMatchObject({ status: 404, body: { error: `Unknown trace: ${unknown}` } });
    expect(await call(app.base, 'GET', '/inspect/trace/..%2F..%2Fetc%2Fpasswd')).toMatchObject({ status: 404, body: { error: 'Unknown trace: ../../etc/passwd' } });
  });

  it('when a stored trace file is damaged, then 422 names the line and the daemon goes on', async () => {
    const dataDir = tempDir();
    const id = 'trc_01ARZ3NDEKTSV4RRFFQ69G5FAV';
    mkdirSync(join(dataDir, 'traces'), { recursive: true });
    writeFileSync(join(dataDir, 'traces', `${id}.jsonl`), '{"loom_trace":2}\n{"kind":"exec","cmd":"/help","session":[{"type":"session.opened"}]}\n');
    const other = await startApp({ dataDir });
    try {
      expect(await call(other.base, 'GET', `/inspect/trace/${id}`)).toMatchObject({ status: 422, body: { error: 'Cannot step through this trace: line 2: "session[0]".uri must be a string' } });
      expect((await call(other.base, 'GET', '/health')).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});
