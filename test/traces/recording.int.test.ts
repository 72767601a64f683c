import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';
import type { WireJson } from '../helpers/json.js';

/** The lines of a trace as objects (GET /traces/<id>). */
async function traceLines(app: TestApp, id: string): Promise<Array<Record<string, WireJson>>> {
  const r = await raw(app.port, { path: `/traces/${id}` });
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('application/x-ndjson');
  return r.body.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

async function start(app: TestApp, body: unknown): Promise<string> {
  const r = await call(app.base, 'POST', '/traces', { body });
  expect(r.status).toBe(201);
  return r.body.trace_id;
}

describe('POST/GET/DELETE /traces (behaviour.md §14.1)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ queue: { max: 1, waitMs: 60000 } });
    await app.client().registerAgent({ agent_id: 'leo' });
    await app.client().registerAgent({ agent_id: 'ana' });
  });
  afterAll(async () => { await app?.close(); });

  it('POST /traces answers 201 with trace_id, agent_id, topic, started_at', async () => {
    const r = await call(app.base, 'POST', '/traces', { body: { agent_id: 'leo', topic: ' main ', note: 'bug 12' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['trace_id', 'agent_id', 'topic', 'started_at']);
    expect(r.body.trace_id).toMatch(/^trc_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(r.body).toMatchObject({ agent_id: 'leo', topic: 'main' });
    expect(new Date(r.body.started_at).toISOString()).toBe(r.body.started_at);
    const all = await call(app.base, 'POST', '/traces', { body: '' });
    expect(all.body).toMatchObject({ agent_id: null, topic: null });
  });

  it.each([
    [{ agent_id: '../x' }, 'Invalid agent_id: ../x'],
    [{ agent_id: 7 }, 'Invalid agent_id: 7'],
    [{ topic: 'a b' }, 'Invalid topic: a b'],
    [{ note: 5 }, 'Invalid note: a string of at most 1000 characters'],
    [{ note: 'x'.repeat(1001) }, 'Invalid note: a string of at most 1000 characters'],
  ])('a bad field is 400 and nothing starts: %j', async (body, error) => {
    const before = (await call(app.base, 'GET', '/traces')).body.traces.length;
    const r = await call(app.base, 'POST', '/traces', { body });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error });
    expect((await call(app.base, 'GET', '/traces')).body.traces.length).toBe(before);
  });

  it('a body that is not a JSON object is 400 Invalid JSON body', async () => {
    const r = await call(app.base, 'POST', '/traces', { body: '[1]' });
    expect(r).toMatchObject({ status: 400, body: { error: 'Invalid JSON body' } });
  });

  it('an unknown id is 404 Unknown trace: <id> on GET and DELETE; other methods 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await call(app.base, method, '/traces/trc_nope');
      expect(r).toMatchObject({ status: 404, body: { error: 'Unknown trace: trc_nope' } });
    }
    const r = await call(app.base, 'PUT', '/traces');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST, GET');
  });

  it('records /exec and /mcp commands of its agent, refusals included, with agent and file steps first', async () => {
    const home = app.c.system.agentHome('leo') as string;
    writeFileSync(join(home, 'w.md'), '---\ntitle: W\n---\n# W\nhello\n');
    await app.client('leo').exec('main', '/help');
    const id = await start(app, { agent_id: 'leo' });
    const leo = app.client('leo');
    await app.client('ana').exec('main', '/help');
    expect((await leo.exec('main', '/open ~/w.md', 'r1')).status).toBe(200);
    // A long command, one waiting, one refused with 429 (queue max 1 in this app).
    const slow = leo.exec('q', '/exec sleep 0.4');
    await new Promise((r) => setTimeout(r, 100));
    const waiting = leo.exec('q', '/exec echo second');
    await new Promise((r) => setTimeout(r, 50));
    const refused = await leo.exec('q', '/exec echo third');
    const busy = await leo.mcpCall('q', '/info');
    expect(refused.status).toBe(429);
    expect(busy.text).toContain('ERROR(BUSY)');
    await Promise.all([slow, waiting]);
    await leo.mcpCall('main', '/info');
    const lines = await traceLines(app, id);
    expect(lines[0]).toMatchObject({ loom_trace: 2, loom_version: '0.1.0', protocol: '0.1', trace_id: id, agent_id: 'leo', topic: null });
    const steps = lines.slice(1);
    expect(steps.map((s) => s.seq)).toEqual(steps.map((_s, i) => i + 1));
    expect(steps.map((s) => [s.kind, s.via ?? null, s.topic ?? null, s.cmd ?? s.path ?? s.agent_id])).toEqual([
      ['agent', null, null, 'leo'],
      ['file', null, null, '~/w.md'],
      ['exec', 'exec', 'main', '/open ~/w.md'],
      ['exec', 'exec', 'q', '/exec echo third'],
      ['exec', 'mcp', 'q', '/info'],
      ['exec', 'exec', 'q', '/exec sleep 0.4'],
      ['exec', 'exec', 'q', '/exec echo second'],
      ['exec', 'mcp', 'main', '/info'],
    ]);
    expect(steps[1].content).toBe('---\ntitle: W\n---\n# W\nhello\n');
    expect(steps[2]).toMatchObject({ request_id: 'r1', expect: { status: 200, head: { ok: true, code: null, topic: 'main', topic_type: 'tab', meta: { uri: 'file://~/w.md', title: 'W', current_block: null } } } });
    expect(steps[2].expect.content.split('\n')[0]).toBe('re: [r1] /open ~/w.md');
    expect(steps[3].expect).toEqual({ status: 429, error: { error: 'QUEUE_FULL', message: 'Topic q already has 1 commands waiting.' } });
    expect(steps[4].expect).toEqual({ status: 200, head: { ok: false, code: 'BUSY', topic: 'q' }, content: busy.text });
    expect(steps[7].expect.content).toBe((await leo.mcpCall('main', '/info')).text?.replace(`file://${home}/`, 'file://~/'));
    // t_ms is the arrival, duration_ms arrival → answer: the waiting command arrived before the refused one.
    expect(steps[6].t_ms).toBeLessThan(steps[3].t_ms);
    expect(steps[5].duration_ms).toBeGreaterThanOrEqual(300);
    // Version 2: each command's ticket in its topic (arrival order) and its wait before it started; refusals never started.
    expect(steps.slice(3, 7).map((s) => s.ticket)).toEqual(['t3', 't4', 't1', 't2']);
    expect([steps[3].queued_ms, steps[4].queued_ms, steps[5].queued_ms]).toEqual([undefined, undefined, 0]);
    expect(steps[6].queued_ms).toBeGreaterThanOrEqual(200);
    expect(steps[6].queued_ms).toBeLessThanOrEqual(steps[6].duration_ms);
    // The /open's session change, as the topic emitted it.
    expect(steps[2].session).toEqual([{ type: 'session.opened', uri: 'file://~/w.md', title: 'W' }]);
    const stop = await call(app.base, 'DELETE', `/traces/${id}`);
    expect(stop).toMatchObject({ status: 200, body: { trace_id: id, stopped: true, steps: 9 } });
  });

  it('a topic filter keeps that topic; commands after DELETE are not recorded', async () => {
    const id = await start(app, { agent_id: 'ana', topic: 'notes' });
    await app.client('ana').exec('main', '/help');
    await app.client('ana').exec('notes', '/help');
    await call(app.base, 'DELETE', `/traces/${id}`);
    await app.client('ana').exec('notes', '/info');
    const steps = (await traceLines(app, id)).slice(1);
    expect(steps.map((s) => `${s.kind} ${s.topic ?? ''} ${s.cmd ?? ''}`.trim())).toEqual(['agent', 'exec notes /help']);
    const listed = (await call(app.base, 'GET', '/traces')).body.traces.find((t: { trace_id: string }) => t.trace_id === id);
    expect(listed).toMatchObject({ trace_id: id, agent_id: 'ana', topic: 'notes', note: null, steps: 2 });
    expect(listed.stopped_at).not.toBeNull();
    expect(listed.bytes).toBe(Buffer.byteLength((await raw(app.port, { path: `/traces/${id}` })).body));
  });

  it('--<field>-file arguments become file steps; webhook posts become webhook steps', async () => {
    const home = app.c.system.agentHome('ana') as string;
    mkdirSync(join(home, 'docs'), { recursive: true });
    writeFileSync(join(home, 'docs', 'act.md'), '# Act\n\n```cli echo\necho {msg}\n```\n');
    writeFileSync(join(home, 'msg.txt'), 'from a file');
    const id = await start(app, { agent_id: 'ana' });
    const ana = app.client('ana');
    await ana.exec('t', '/open ~/docs/act.md');
    await ana.exec('t', '/act.echo --msg-file msg.txt');
    const hook = await app.client().webhook('ana');
    await ana.postWebhook(hook.body.webhook_url, 'deploy done');
    const steps = (await traceLines(app, id)).slice(1);
    expect(steps.filter((s) => s.kind === 'file').map((s) => [s.path, s.content])).toEqual([
      ['~/docs/act.md', '# Act\n\n```cli echo\necho {msg}\n```\n'], ['~/msg.txt', 'from a file'],
    ]);
    expect(steps.find((s) => s.kind === 'webhook')).toMatchObject({ agent_id: 'ana', text: 'deploy done', expect: { status: 202 } });
    await call(app.base, 'DELETE', `/traces/${id}`);
  });

  it('DELETE is idempotent; ?purge=1 removes the file, after which the id is unknown', async () => {
    const id = await start(app, {});
    // A topic with no document open: no file step.
    await app.client('leo').exec('fresh', '/help');
    const file = join(app.dataDir, 'traces', `${id}.jsonl`);
    expect((await call(app.base, 'DELETE', `/traces/${id}`)).body).toEqual({ trace_id: id, stopped: true, steps: 2 });
    expect((await call(app.base, 'DELETE', `/traces/${id}`)).body).toEqual({ trace_id: id, stopped: true, steps: 2 });
    expect(existsSync(file)).toBe(true);
    expect((await call(app.base, 'DELETE', `/traces/${id}?purge=1`)).body).toEqual({ trace_id: id, stopped: true, steps: 2 });
    expect(existsSync(file)).toBe(false);
    expect((await call(app.base, 'GET', `/traces/${id}`)).status).toBe(404);
  });
});

describe('active traces are limited', () => {
  it('when 32 traces record, then one more is 429 and nothing starts; stopping one frees a place', async () => {
    const app = await startApp();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 32; i++) ids.push(await start(app, {}));
      const r = await call(app.base, 'POST', '/traces', { body: {} });
      expect(r).toMatchObject({ status: 429, body: { error: 'Too many active traces (32); stop one with DELETE /traces/<id>' } });
      expect((await call(app.base, 'GET', '/traces')).body.traces).toHaveLength(32);
      await call(app.base, 'DELETE', `/traces/${ids[0]}`);
      expect((await call(app.base, 'POST', '/traces', { body: {} })).status).toBe(201);
    } finally {
      await app.close();
    }
  });
});

describe('traces across restarts', () => {
  it('a trace file from an earlier run is listed as stopped and readable; trace files are 0600', async () => {
    const first = await startApp({ memory: false });
    let id = '';
    try {
      await first.client().registerAgent({ agent_id: 'leo' });
      id = await start(first, { agent_id: 'leo', note: 'kept' });
      await first.client('leo').exec('main', '/help');
    } finally {
      await first.close();
    }
    const file = join(first.dataDir, 'traces', `${id}.jsonl`);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n').filter(Boolean)).toHaveLength(3);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await startApp({ memory: false, dataDir: first.dataDir });
    try {
      const listed = (await call(again.base, 'GET', '/traces')).body.traces;
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({ trace_id: id, agent_id: 'leo', topic: null, note: 'kept', steps: 2, bytes: Buffer.byteLength(text) });
      expect(listed[0].stopped_at).not.toBeNull();
      expect((await raw(again.port, { path: `/traces/${id}` })).body).toBe(text);
    } finally {
      await again.close();
    }
  });
});
