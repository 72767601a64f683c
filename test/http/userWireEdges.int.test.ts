import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

/*
 * behaviour.md §11, row by row (continued from userWire.int.test.ts): the /exec head and /health, CORS,
 * topics, /describe, and "agent" read as "user" in what commands print.
 */

let t: TestApp;
let annHome: string;
beforeAll(async () => {
  t = await startApp({ memory: false, env: { SVC_WIRE: 'user' } });
  annHome = join(tempDir(), 'ann');
  const r = await call(t.base, 'POST', '/users', { body: { id: 'ann', home: annHome } });
  expect(r.status).toBe(200);
});
afterAll(async () => { await t?.close(); });

const exec = (body: unknown, headers: Record<string, string> = { 'X-User-Id': 'ann' }) =>
  raw(t.port, { method: 'POST', path: '/exec', headers: { 'Content-Type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

/** Run one command as `ann` and return the parsed head and content. */
async function run(topic: string, cmd: string): Promise<{ head: Record<string, unknown>; content: string }> {
  const r = await exec({ cmd, topic });
  expect(r.status).toBe(200);
  const data = [...r.body.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]) as unknown);
  return { head: data[0] as Record<string, unknown>, content: data[1] as string };
}

describe('row "/exec head, /health": user_id, users', () => {
  it('the head carries user_id where the agent wire has agent_id, framed exactly as spec §4.7', async () => {
    const r = await exec({ cmd: '/set {x} = "1"', topic: ' file:head ', request_id: 'r1' }, { 'X-User-Id': ' ann ' });
    expect(r.status).toBe(200);
    const head = { ok: true, code: null, cmd: '/set {x} = "1"', request_id: 'r1', user_id: 'ann', topic: 'file:head', topic_type: 'file', meta: null };
    expect(r.body).toBe(`event: head\ndata: ${JSON.stringify(head)}\n\nevent: content\ndata: ${JSON.stringify('re: [r1] /set {x} = "1"\n{x} = "1"')}\n\nevent: done\ndata: {}\n\n`);
  });

  it('/health is exactly {ok, users, sessions}', async () => {
    const r = await call(t.base, 'GET', '/health');
    const users = (await call(t.base, 'GET', '/users')).body.users.length;
    const sessions = (await call(t.base, 'GET', '/sessions')).body.sessions.length;
    expect(r.body).toEqual({ ok: true, users, sessions });
    expect(Object.keys(r.body)).toEqual(['ok', 'users', 'sessions']);
  });
});

describe('row "CORS": Content-Type, X-User-Id', () => {
  const CORS = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'Content-Type, X-User-Id' };
  it.each([
    ['GET', '/health', 200],
    ['GET', '/agents', 404],
    ['POST', '/exec', 400],
    ['PUT', '/users', 405],
  ])('when %s %s answers %i, then the headers name X-User-Id', async (method, path, status) => {
    const r = await raw(t.port, { method, path });
    expect(r.status).toBe(status);
    expect(r.headers).toMatchObject(CORS);
  });

  it('a refused HTTP upgrade carries them too (404: a path with no upgrade handler)', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const s = connect(t.port, '127.0.0.1');
      let got = '';
      s.on('data', (d) => { got += d.toString('latin1'); });
      s.on('close', () => resolve(got));
      s.on('error', reject);
      s.write('GET /no-such/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(answer).toContain('\r\nAccess-Control-Allow-Headers: Content-Type, X-User-Id\r\n');
    expect(answer.endsWith('{"error":"Not found: GET /no-such/ws"}')).toBe(true);
  });

  it('the /exec stream and the OPTIONS preflight carry them too', async () => {
    const s = await exec({ cmd: '/help', topic: 'file:cors' });
    expect(s.headers).toMatchObject({ ...CORS, 'content-type': 'text/event-stream' });
    const o = await raw(t.port, { method: 'OPTIONS', path: '/users' });
    expect(o.status).toBe(204);
    expect(o.headers).toMatchObject({ ...CORS, 'access-control-allow-methods': 'GET, POST, PUT, DELETE, HEAD, OPTIONS', 'access-control-max-age': '600' });
  });
});

describe('row "topics": <type>:<name>, app:<name>:<config>', () => {
  it.each([
    ['file:notes', 'file'], ['app:weather', 'app'], ['app:weather:seoul', 'app'], ['web:docs', 'web'], ['bash:build', 'bash'],
    ['file:research.v2', 'file'],
  ])('topic %s has topic_type %s', async (topic, type) => {
    const r = await call(t.base, 'POST', '/sessions', { body: { user_id: 'ann', topic } });
    expect(r.body).toMatchObject({ topic, topic_type: type });
  });

  it.each([
    'main', 'app', 'bash', 'system', 'event', 'tool', 'agent', 'tab:x', 'hub:x', 'tool:x', 'File:x', 'file:', 'file', ':x',
    'file:a:b', 'web:a:b', 'bash:a:b', 'app:a:b:c', 'file:x/y', 'file:a b', `file:${'x'.repeat(65)}`, 'file:..',
  ])('topic %j is 400 Invalid topic: <raw> on /exec and POST /sessions', async (topic) => {
    const e = await exec({ cmd: '/help', topic });
    expect(e.status).toBe(400);
    expect(JSON.parse(e.body)).toEqual({ error: `Invalid topic: ${topic}` });
    const s = await call(t.base, 'POST', '/sessions', { body: { user_id: 'ann', topic } });
    expect(s).toMatchObject({ status: 400, body: { error: `Invalid topic: ${topic}` } });
  });

  it('file and web topics write /set $NAME to the global scope, like tabs; app topics to their app and config scopes', async () => {
    expect((await run('file:vars', '/set $SHARED = "g"')).head.ok).toBe(true);
    expect((await run('app:weather:seoul', '/set $UNITS = "metric"')).head.ok).toBe(true);
    expect((await run('app:weather', '/set $KEY = "k"')).head.ok).toBe(true);
    const env = JSON.parse(readFileSync(join(t.dataDir, 'users', 'ann', 'state', 'env.json'), 'utf8'));
    expect(env.global).toMatchObject({ SHARED: 'g' });
    expect(env.apps.weather.vars).toEqual({ KEY: 'k' });
    expect(env.apps.weather.configs.seoul).toEqual({ UNITS: 'metric' });
    // A web topic sees the global variable set from a file topic.
    expect((await run('web:other', '/set')).content).toContain('$SHARED');
  });
});

describe('row "/describe"', () => {
  it('is present with "wire": "user", only the four core capabilities and the four limits', async () => {
    const r = await call(t.base, 'GET', '/describe');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      name: 'loom', version: r.body.version, protocol: '0.1', wire: 'user',
      instance: { role: 'agent-host', label: 'loom' },
      capabilities: { describe: {}, users: {}, sessions: {}, exec: {} },
      limits: { request_body_bytes: 10485760, queue_max: 16, queue_wait_ms: 60000, field_file_bytes: 1048576 },
    });
    expect(Object.keys(r.body.limits)).toEqual(['request_body_bytes', 'queue_max', 'queue_wait_ms', 'field_file_bytes']);
  });
});

describe('"agent" read as "user" in what commands print', () => {
  it('/info names the user; /topics titles the user and filters by the user wire types', async () => {
    const info = await run('file:notes', '/info');
    expect(info.content).toBe('re: /info\nSession file:notes\n---\nuser:      ann\ntype:      file\ndocument:  (none)');
    const topics = await run('file:notes', '/topics web');
    expect(topics.content.split('\n')[1]).toMatch(/^Topics of user ann \(\d+\)$/);
    const bad = await run('file:notes', '/topics tab');
    expect(bad.content).toBe('re: /topics tab\nERROR(INVALID_ARGS): Unknown topic type: tab (use file, app, web or bash)');
  });

  it('/exec runs in the user home with LOOM_USER_ID set (and no LOOM_AGENT_ID)', async () => {
    const r = await run('file:notes', '/exec echo "$HOME|$LOOM_USER_ID|${LOOM_AGENT_ID-unset}|$LOOM_TOPIC"; pwd');
    expect(r.head.ok).toBe(true);
    expect(r.content).toContain(`${annHome}|ann|unset|file:notes`);
  });

  it('/help names no command the wire lacks and speaks of the user', async () => {
    const help = (await run('file:notes', '/help')).content;
    expect(help).not.toMatch(/\/events|\/webhook|^Events/m);
    expect(help).toContain('Topics     /topics [type]');
    expect((await run('file:notes', '/help exec')).content).toContain('Runs a shell command; bash:<name> topics keep one shell alive (cwd, exports, functions and aliases survive).');
    expect((await run('file:notes', '/help topics')).content).toBe('re: /help topics\nHelp: /topics\n---\n/topics [file|app|web|bash]\nLists the topics of this user with their state.');
    expect((await run('file:notes', '/help events')).content).toBe('re: /help events\nERROR(COMMAND_UNSUPPORTED): /events is not available in the user wire variant');
  });
});
