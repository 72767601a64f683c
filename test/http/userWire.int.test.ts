import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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
