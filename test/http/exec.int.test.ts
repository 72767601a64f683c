import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { SimulatedClock } from 'xstate';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
const clock = new SimulatedClock();
beforeAll(async () => {
  clock.set(Date.now());
  t = await startApp({ clock });
  await call(t.base, 'POST', '/agents', { body: { agent_id: 'leo' } });
});
afterAll(async () => { await t.close(); });

const exec = (body: unknown, headers: Record<string, string> = { 'X-Agent-Id': 'leo' }) =>
  raw(t.port, { method: 'POST', path: '/exec', headers: { 'Content-Type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('POST /exec check order (behaviour.md §9.4; spec §7)', () => {
  it.each([
    [{}, { cmd: '/help', topic: 'main' }, 400, 'X-Agent-Id header required'],
    [{ 'X-Agent-Id': '   ' }, { cmd: '/help', topic: 'main' }, 400, 'X-Agent-Id header required'],
    [{ 'X-Agent-Id': 'ghost' }, { cmd: '/help', topic: 'main' }, 401, 'Unknown agent: ghost'],
    [{ 'X-Agent-Id': '../x' }, 'not json', 401, 'Unknown agent: ../x'],
    [{ 'X-Agent-Id': 'leo' }, '{bad', 400, 'Invalid JSON body — expected {"cmd": "/…", "topic": "…"}'],
    [{ 'X-Agent-Id': 'leo' }, '[]', 400, 'Invalid JSON body — expected {"cmd": "/…", "topic": "…"}'],
    [{ 'X-Agent-Id': 'leo' }, { topic: 'main' }, 400, 'Empty command — provide a non-empty "cmd"'],
    [{ 'X-Agent-Id': 'leo' }, { cmd: '   ', topic: 'main' }, 400, 'Empty command — provide a non-empty "cmd"'],
    [{ 'X-Agent-Id': 'leo' }, { cmd: 42, topic: 'main' }, 400, 'Empty command — provide a non-empty "cmd"'],
    [{ 'X-Agent-Id': 'leo' }, { cmd: 'help', topic: 'x y' }, 400, 'Command must start with /'],
    [{ 'X-Agent-Id': 'leo' }, { cmd: '/help' }, 400, 'topic required'],
    [{ 'X-Agent-Id': 'leo' }, { cmd: '/help', topic: 'bash:a:b' }, 400, 'Invalid topic: bash:a:b'],
    [{ 'X-Agent-Id': 'leo' }, { cmd: '/help', topic: 'main', request_id: 7 }, 400, 'Invalid request_id'],
    [{ 'X-Agent-Id': 'leo' }, { cmd: '/help', topic: 'main', request_id: 'r'.repeat(257) }, 400, 'Invalid request_id'],
  ])('headers %j body %j → %i %s', async (headers, body, status, error) => {
    const r = await exec(body, headers as Record<string, string>);
    expect(r.status).toBe(status);
    expect(JSON.parse(r.body)).toEqual({ error });
  });
});

describe('POST /exec answered before Express (the hot path) keeps the app\'s rules', () => {
  it('when Host or Origin is foreign, then 403 with the exact error and the CORS headers, and nothing runs', async () => {
    for (const [headers, error] of [[{ Host: 'evil.example' }, 'Forbidden host: evil.example'], [{ Origin: 'http://evil.example' }, 'Forbidden origin: http://evil.example']] as const) {
      const r = await exec({ cmd: '/set {forbidden} = "1"', topic: 'guarded' }, { 'X-Agent-Id': 'leo', ...headers });
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body)).toEqual({ error });
      expect(r.headers['access-control-allow-origin']).toBe('*');
      expect(r.headers['access-control-allow-headers']).toBe('Content-Type, X-Agent-Id');
    }
    const after = await t.client('leo').exec('guarded', '/set');
    expect(after.content).not.toContain('forbidden');
  });

  it('when the target is /exec?x, /EXEC or /exec/, then the answer is the same as for /exec', async () => {
    const answers = [];
    for (const path of ['/exec', '/exec?x=1', '/EXEC', '/exec/']) {
      const r = await raw(t.port, { method: 'POST', path, headers: { 'X-Agent-Id': 'leo' }, body: JSON.stringify({ cmd: '/set {p} = "1"', topic: 'paths', request_id: 'p' }) });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('text/event-stream');
      expect(r.headers['access-control-allow-origin']).toBe('*');
      answers.push(r.body);
    }
    expect(new Set(answers).size).toBe(1);
  });

  it('when the method is not POST, then 405 with Allow: POST; OPTIONS is the 204 preflight', async () => {
    const r = await raw(t.port, { method: 'GET', path: '/exec', headers: { 'X-Agent-Id': 'leo' } });
    expect(r.status).toBe(405);
    expect(JSON.parse(r.body)).toEqual({ error: 'Method not allowed: GET /exec' });
    expect(r.headers.allow).toBe('POST');
    expect((await raw(t.port, { method: 'OPTIONS', path: '/exec' })).status).toBe(204);
  });
});

describe('POST /exec stream (spec §4.7)', () => {
  it('answers 200 with the four stream headers and exactly head, content, done framed with LF', async () => {
    const r = await exec({ cmd: '/set {x} = "1"', topic: ' main ', request_id: 'r1' }, { 'X-Agent-Id': ' leo ' });
    expect(r.status).toBe(200);
    expect(r.headers).toMatchObject({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no', 'access-control-allow-origin': '*' });
    const head = { ok: true, code: null, cmd: '/set {x} = "1"', request_id: 'r1', agent_id: 'leo', topic: 'main', topic_type: 'tab', meta: null };
    expect(r.body).toBe(`event: head\ndata: ${JSON.stringify(head)}\n\nevent: content\ndata: ${JSON.stringify('re: [r1] /set {x} = "1"\n{x} = "1"')}\n\nevent: done\ndata: {}\n\n`);
  });

  it('without request_id (or with ""), the re: line has no brackets and request_id is null', async () => {
    for (const body of [{ cmd: '/info', topic: 'main' }, { cmd: '/info', topic: 'main', request_id: '' }]) {
      const r = await t.client('leo').exec(body.topic, body.cmd, body.request_id);
      expect(r.head?.request_id).toBeNull();
      expect(r.content?.startsWith('re: /info\nSession main\n---\n')).toBe(true);
    }
  });

  it('a failing command keeps HTTP 200 with ok false, code and ERROR(<CODE>) content', async () => {
    const r = await t.client('leo').exec('main', '/frobnicate now', 'q');
    expect(r.status).toBe(200);
    expect(r.head).toMatchObject({ ok: false, code: 'COMMAND_UNSUPPORTED', cmd: '/frobnicate now' });
    expect(r.content).toBe('re: [q] /frobnicate now\nERROR(COMMAND_UNSUPPORTED): Unknown command: /frobnicate\nRecovery: /help lists the commands');
  });

  it('head.cmd is the first line, cut to 199 characters + … past 200', async () => {
    const long = '/help ' + 'x'.repeat(300);
    const r = await t.client('leo').exec('main', `${long}\nbody`);
    expect(r.head?.cmd).toBe(long.slice(0, 199) + '…');
  });

  it('the stream is sent whatever Accept says, and a chunked body without Content-Length is accepted', async () => {
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/exec', headers: { 'X-Agent-Id': 'leo', 'Content-Type': 'application/json', Accept: 'application/json', 'Transfer-Encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('{"cmd":"/he');
      req.end('lp","topic":"main"}');
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatch(/^event: head\n/);
  });
});

/** Start a long command on a topic and resolve when its 200 headers arrive. */
function startLong(topic: string, seconds: number): Promise<{ done: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/exec', headers: { 'X-Agent-Id': 'leo', 'Content-Type': 'application/json' } }, (res) => {
      let body = '';
      const done = new Promise<string>((r) => res.on('end', () => r(body)));
      res.on('data', (c: Buffer) => { body += c.toString(); });
      resolve({ done });
    });
    req.on('error', reject);
    req.end(JSON.stringify({ cmd: `/exec sleep ${seconds}`, topic }));
  });
}

const sessionOf = async (topic: string) => (await call(t.base, 'GET', '/sessions?agent_id=leo')).body.sessions.find((s: { topic: string }) => s.topic === topic);

describe('topic queue over HTTP (spec §3, §8)', () => {
  it('when 5 commands wait, then the 6th gets 429 {"error":"QUEUE_FULL","message"}; a queued one times out with 504 after 120000 ms', async () => {
    const long = await startLong('q1', 30);
    const waiting = Array.from({ length: 5 }, () => t.client('leo').exec('q1', '/help'));
    while ((await sessionOf('q1')).queue_length < 5) await new Promise((r) => setTimeout(r, 10));
    expect(await sessionOf('q1')).toMatchObject({ executing: true, queue_length: 5 });
    const sixth = await exec({ cmd: '/help', topic: 'q1' });
    expect(sixth.status).toBe(429);
    expect(JSON.parse(sixth.body)).toEqual({ error: 'QUEUE_FULL', message: 'Topic q1 already has 5 commands waiting.' });
    clock.increment(120000);
    for (const w of await Promise.all(waiting)) {
      expect(w.status).toBe(504);
      expect(w.error).toEqual({ error: 'QUEUE_TIMEOUT', message: 'Waited 120000 ms in the queue of topic q1.' });
    }
    // Closing the topic aborts the running command (behaviour.md §1.3).
    await call(t.base, 'DELETE', '/sessions/leo/q1');
    const body = await long.done;
    expect(body).toContain('ERROR(CONFLICT): Topic q1 was closed while this command ran');
  });

  it('when a queued client disconnects, then it is removed and the next command still runs', async () => {
    const long = await startLong('q2', 30);
    const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/exec', headers: { 'X-Agent-Id': 'leo', 'Content-Type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ cmd: '/help', topic: 'q2' }));
    while ((await sessionOf('q2')).queue_length < 1) await new Promise((r) => setTimeout(r, 10));
    req.destroy();
    while ((await sessionOf('q2')).queue_length > 0) await new Promise((r) => setTimeout(r, 10));
    expect((await sessionOf('q2')).queue_length).toBe(0);
    await call(t.base, 'DELETE', '/sessions/leo/q2');
    await long.done;
  });

  it('commands of one topic run one at a time in arrival order; other topics run concurrently', async () => {
    const long = await startLong('q3', 30);
    // Another topic is not blocked by q3.
    const other = await t.client('leo').exec('q4', '/help');
    expect(other.head?.ok).toBe(true);
    const a = t.client('leo').exec('q3', '/set {n} = "a"');
    while ((await sessionOf('q3')).queue_length < 1) await new Promise((r) => setTimeout(r, 5));
    const b = t.client('leo').exec('q3', '/set {n} = "b"');
    while ((await sessionOf('q3')).queue_length < 2) await new Promise((r) => setTimeout(r, 5));
    await call(t.base, 'DELETE', '/sessions/leo/q3');
    await long.done;
    expect((await a).body).toBe('{n} = "a"');
    expect((await b).body).toBe('{n} = "b"');
    expect((await t.client('leo').exec('q3', '/set')).body).toContain('{n} = "b"');
  });
});
