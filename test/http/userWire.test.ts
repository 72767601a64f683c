import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.js';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

/*
 * behaviour.md §11, row by row: the earlier user-based wire (spec §9) served by `--wire user`.
 * The app runs in-process with the real registry files, so the §11 storage rows are checked too.
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

describe('row "port": SVC_PORT, default 3100', () => {
  it('when the wire is user (flag or SVC_WIRE) and SVC_PORT is unset, then the port is 3100; SVC_PORT and --port still win', () => {
    expect(loadConfig({}, { wire: 'user' })).toMatchObject({ wire: 'user', port: 3100 });
    expect(loadConfig({ SVC_WIRE: 'user' })).toMatchObject({ wire: 'user', port: 3100 });
    expect(loadConfig({ SVC_WIRE: 'user', SVC_PORT: '4100' })).toMatchObject({ wire: 'user', port: 4100 });
    expect(loadConfig({ SVC_WIRE: 'user' }, { portOverride: '4200' })).toMatchObject({ port: 4200 });
    // The agent wire keeps 3923; --wire wins over SVC_WIRE.
    expect(loadConfig({})).toMatchObject({ wire: 'agent', port: 3923 });
    expect(loadConfig({ SVC_WIRE: 'user' }, { wire: 'agent' })).toMatchObject({ wire: 'agent', port: 3923 });
  });

  it('when the wire is neither agent nor user, then a configuration error (exit 2) names it', () => {
    expect(() => loadConfig({ SVC_WIRE: 'users' })).toThrow(new ConfigError('loom: invalid SVC_WIRE "users" (use agent or user)'));
    expect(() => loadConfig({}, { wire: 'User' })).toThrow(new ConfigError('loom: invalid --wire "User" (use agent or user)'));
  });
});

describe('row "identity header": X-User-Id', () => {
  it.each([
    [{}, 400, 'X-User-Id header required'],
    [{ 'X-User-Id': '  ' }, 400, 'X-User-Id header required'],
    [{ 'X-Agent-Id': 'ann' }, 400, 'X-User-Id header required'],
    [{ 'X-User-Id': 'ghost' }, 401, 'Unknown user: ghost'],
    [{ 'X-User-Id': '../x' }, 401, 'Unknown user: ../x'],
  ])('when /exec has headers %j, then %i %s', async (headers, status, error) => {
    const r = await exec({ cmd: '/help', topic: 'file:notes' }, headers as Record<string, string>);
    expect(r.status).toBe(status);
    expect(JSON.parse(r.body)).toEqual({ error });
  });
});

describe('row "registry": <data>/users.json, no default homes', () => {
  it('when users register, then they are stored in users.json (mode 0600) and nothing of the agent wire is created', async () => {
    const file = join(t.dataDir, 'users.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { users: Record<string, { home: string }> };
    expect(stored.users.ann.home).toBe(annHome);
    const names = readdirSync(t.dataDir);
    for (const agentOnly of ['agents.json', 'agents', 'capabilities.json']) expect(names).not.toContain(agentOnly);
  });

  it('when a registration has no home, then 400 home required and no default home is made', async () => {
    const r = await call(t.base, 'POST', '/users', { body: { id: 'nohome' } });
    expect(r).toMatchObject({ status: 400, body: { error: 'home required' } });
    expect(existsSync(join(t.dataDir, 'users', 'nohome'))).toBe(false);
    expect((await call(t.base, 'GET', '/users')).body.users.map((u: { id: string }) => u.id)).not.toContain('nohome');
  });
});

describe('row "POST /users"', () => {
  const post = (body: unknown) => call(t.base, 'POST', '/users', { body });

  it.each([
    [{}, 'id required'],
    [{ id: '' }, 'id required'],
    [{ id: null, home: '/tmp/x' }, 'id required'],
    [{ home: '/tmp/x' }, 'id required'],
    [{ id: 'bob' }, 'home required'],
    [{ id: 'bob', home: '' }, 'home required'],
    [{ user_id: 'bob', home: null }, 'home required'],
    [{ id: 'bob', home: 'relative/dir' }, 'home must be an absolute path'],
    [{ id: 'bob', home: 42 }, 'home must be an absolute path'],
    [{ id: 'bob', home: '/tmp/bob', allowed_paths: ['rel'] }, 'allowed_paths must be an array of absolute paths'],
    [{ id: 'bob', home: '/tmp/bob', allowed_paths: '/x' }, 'allowed_paths must be an array of absolute paths'],
    [{ id: '..', home: '/tmp/bob' }, 'Invalid id: ..'],
    [{ user_id: 'a/b', home: '/tmp/bob' }, 'Invalid user_id: a/b'],
    [{ id: 'bob', user_id: 'rob', home: '/tmp/bob' }, 'id and user_id differ'],
  ])('when the body is %j, then 400 %s and nothing is registered', async (body, error) => {
    const r = await post(body);
    expect(r).toMatchObject({ status: 400, body: { error } });
    expect(t.c.system.hasAgent('bob')).toBe(false);
  });

  it('when the 0.1-era client sends {user_id, home, allowed_paths}, then 200 {user_id, home, created} and the paths are kept', async () => {
    const home = join(tempDir(), 'cli');
    const extra = tempDir();
    const r = await post({ user_id: 'cli', home, allowed_paths: [extra] });
    expect(r).toEqual(expect.objectContaining({ status: 200, body: { user_id: 'cli', home, created: true } }));
    expect(statSync(home).isDirectory()).toBe(true);
    const listed = (await call(t.base, 'GET', '/users')).body.users.find((u: { id: string }) => u.id === 'cli');
    expect(listed).toEqual({ id: 'cli', home, allowedPaths: [extra], createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
  });

  it('when a user registers again, then it is idempotent: created false, createdAt kept, the new home stored', async () => {
    const before = (await call(t.base, 'GET', '/users')).body.users.find((u: { id: string }) => u.id === 'cli');
    const home2 = join(tempDir(), 'cli2');
    const r = await post({ id: 'cli', user_id: 'cli', home: home2 });
    expect(r.body).toEqual({ user_id: 'cli', home: home2, created: false });
    const after = (await call(t.base, 'GET', '/users')).body.users.find((u: { id: string }) => u.id === 'cli');
    expect(after).toEqual({ ...before, home: home2 });
  });

  it('when the home lies in the data directory, even where an agent keeps its default home, then 400 Invalid home', async () => {
    for (const home of [join(t.dataDir, 'agents', 'bob', 'home'), join(t.dataDir, 'users', 'bob', 'home'), join(t.dataDir, 'users')]) {
      const r = await post({ id: 'bob', home });
      expect(r).toMatchObject({ status: 400, body: { error: 'Invalid home', message: `${home} is inside the Loom data directory ${t.dataDir}` } });
    }
    expect(t.c.system.hasAgent('bob')).toBe(false);
  });

  it('when agent-wire fields are sent (webhook, capability), then they are ignored: no webhook_url, no capability', async () => {
    const r = await post({ id: 'plain', home: join(tempDir(), 'plain'), webhook: true, capability: { verbs: ['GET'], ttl_ms: 1000 } });
    expect(Object.keys(r.body).sort()).toEqual(['created', 'home', 'user_id']);
  });
});

describe('row "GET /users" and "DELETE /users/:user_id"', () => {
  it('GET /users lists {users: [{id, home, allowedPaths, createdAt}]} sorted by id', async () => {
    const r = await call(t.base, 'GET', '/users');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['users']);
    const ids = r.body.users.map((u: { id: string }) => u.id);
    expect(ids).toEqual([...ids].sort());
    for (const u of r.body.users) expect(Object.keys(u).sort()).toEqual(['allowedPaths', 'createdAt', 'home', 'id']);
  });

  it('DELETE answers {user_id, deleted, disposed_sessions}; the state folder goes, the home stays; unknown: deleted false', async () => {
    const home = join(tempDir(), 'gone');
    await call(t.base, 'POST', '/users', { body: { id: 'gone', home } });
    await call(t.base, 'POST', '/sessions', { body: { user_id: 'gone', topic: 'file:a' } });
    await call(t.base, 'POST', '/sessions', { body: { user_id: 'gone', topic: 'web:b' } });
    const set = await exec({ cmd: '/set $K = "v"', topic: 'file:a' }, { 'X-User-Id': 'gone' });
    expect(set.status).toBe(200);
    expect(existsSync(join(t.dataDir, 'users', 'gone', 'state', 'env.json'))).toBe(true);
    const r = await call(t.base, 'DELETE', '/users/gone');
    expect(r).toEqual(expect.objectContaining({ status: 200, body: { user_id: 'gone', deleted: true, disposed_sessions: 2 } }));
    expect(existsSync(join(t.dataDir, 'users', 'gone', 'state'))).toBe(false);
    expect(existsSync(home)).toBe(true);
    expect((await call(t.base, 'DELETE', '/users/gone')).body).toEqual({ user_id: 'gone', deleted: false, disposed_sessions: 0 });
    const head = await exec({ cmd: '/help', topic: 'file:a' }, { 'X-User-Id': 'gone' });
    expect(JSON.parse(head.body)).toEqual({ error: 'Unknown user: gone' });
  });
});

describe('row "sessions": user_id', () => {
  it.each([
    [{}, 400, 'user_id required'],
    [{ agent_id: 'ann', topic: 'file:notes' }, 400, 'user_id required'],
    [{ user_id: 'ghost', topic: 'file:notes' }, 401, 'Unknown user: ghost'],
    [{ user_id: 'ann' }, 400, 'topic required'],
    [{ user_id: 'ann', topic: 'main' }, 400, 'Invalid topic: main'],
  ])('when POST /sessions has %j, then %i %s', async (body, status, error) => {
    const r = await call(t.base, 'POST', '/sessions', { body });
    expect(r).toMatchObject({ status, body: { error } });
  });

  it('POST answers {user_id, topic, topic_type, created}; GET filters by ?user_id= and every item carries user_id', async () => {
    const a = await call(t.base, 'POST', '/sessions', { body: { user_id: 'ann', topic: ' file:list ' } });
    expect(a.body).toEqual({ user_id: 'ann', topic: 'file:list', topic_type: 'file', created: true });
    expect((await call(t.base, 'POST', '/sessions', { body: { user_id: 'ann', topic: 'file:list' } })).body.created).toBe(false);
    const r = await call(t.base, 'GET', '/sessions?user_id=ann');
    expect(r.body.sessions.length).toBeGreaterThan(0);
    for (const s of r.body.sessions) {
      expect(Object.keys(s).sort()).toEqual(['doc', 'executing', 'queue_length', 'topic', 'topic_type', 'user_id']);
      expect(s.user_id).toBe('ann');
    }
    expect((await call(t.base, 'GET', '/sessions?user_id=nobody')).body).toEqual({ sessions: [] });
  });

  it('DELETE /sessions/:user_id/:topic answers {user_id, topic, deleted}; a path without a topic is 400 Expected /sessions/:user_id/:topic', async () => {
    await call(t.base, 'POST', '/sessions', { body: { user_id: 'ann', topic: 'web:tmp' } });
    expect((await call(t.base, 'DELETE', '/sessions/ann/web%3Atmp')).body).toEqual({ user_id: 'ann', topic: 'web:tmp', deleted: true });
    expect((await call(t.base, 'DELETE', '/sessions/ann/web:tmp')).body).toEqual({ user_id: 'ann', topic: 'web:tmp', deleted: false });
    expect(await call(t.base, 'DELETE', '/sessions/ann')).toMatchObject({ status: 400, body: { error: 'Expected /sessions/:user_id/:topic' } });
    expect(await call(t.base, 'DELETE', '/sessions/ann/main')).toMatchObject({ status: 400, body: { error: 'Invalid topic: main' } });
  });
});

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

  it('a refused HTTP upgrade carries them too (404: the user wire has no upgrade route)', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const s = connect(t.port, '127.0.0.1');
      let got = '';
      s.on('data', (d) => { got += d.toString('latin1'); });
      s.on('close', () => resolve(got));
      s.on('error', reject);
      s.write('GET /inspect/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(answer).toContain('\r\nAccess-Control-Allow-Headers: Content-Type, X-User-Id\r\n');
    expect(answer.endsWith('{"error":"Not found: GET /inspect/ws"}')).toBe(true);
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
    expect((await run('file:notes', '/help exec')).content).toContain('Runs a shell command in a fresh bash, in the user home.');
    expect((await run('file:notes', '/help topics')).content).toBe('re: /help topics\nHelp: /topics\n---\n/topics [file|app|web|bash]\nLists the topics of this user with their state.');
    expect((await run('file:notes', '/help events')).content).toBe('re: /help events\nERROR(COMMAND_UNSUPPORTED): /events is not available in the user wire variant');
  });
});
