import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

let t: TestApp;
beforeAll(async () => { t = await startApp({ memory: false }); });
afterAll(async () => { await t.close(); });

const post = (body: unknown) => call(t.base, 'POST', '/agents', { body });

describe('POST /agents (spec §4.3; behaviour.md §9.5)', () => {
  it.each([[{}], [{ agent_id: '' }], [{ agent_id: null }]])('when agent_id is missing (%j), then 400 agent_id required', async (body) => {
    const r = await post(body);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'agent_id required' });
  });

  it.each(['..', '.', 'a/b', '-x', 'a b', 'x'.repeat(65), 'é'])('when agent_id is %j, then 400 Invalid agent_id', async (id) => {
    const r = await post({ agent_id: id });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `Invalid agent_id: ${id}` });
  });

  it('when home is not absolute, then 400 home must be an absolute path', async () => {
    const r = await post({ agent_id: 'h1', home: 'relative/dir' });
    expect(r).toMatchObject({ status: 400, body: { error: 'home must be an absolute path' } });
  });

  it('when allowed_paths is not an array of absolute paths, then 400', async () => {
    for (const allowed_paths of ['/x', ['rel'], [1]]) {
      const r = await post({ agent_id: 'h2', allowed_paths });
      expect(r).toMatchObject({ status: 400, body: { error: 'allowed_paths must be an array of absolute paths' } });
    }
    expect(t.c.system.hasAgent('h2')).toBe(false);
  });

  it('when a new agent registers without home, then created is true and the default home exists with mode 0700', async () => {
    const r = await post({ agent_id: 'leo' });
    const home = join(t.dataDir, 'agents', 'leo', 'home');
    expect(r).toEqual(expect.objectContaining({ status: 200, body: { agent_id: 'leo', home, created: true } }));
    expect(statSync(home).isDirectory()).toBe(true);
    expect(statSync(home).mode & 0o777).toBe(0o700);
  });

  it('when the agent registers again, then created is false, createdAt and an omitted home are kept, only given fields change', async () => {
    const before = (await call(t.base, 'GET', '/agents')).body.agents.find((a: { id: string }) => a.id === 'leo');
    const allowed = tempDir();
    const r = await post({ agent_id: 'leo', allowed_paths: [allowed] });
    expect(r.body).toEqual({ agent_id: 'leo', home: before.home, created: false });
    const after = (await call(t.base, 'GET', '/agents')).body.agents.find((a: { id: string }) => a.id === 'leo');
    expect(after).toEqual({ id: 'leo', home: before.home, allowedPaths: [allowed], createdAt: before.createdAt, sandbox: 'none', sandbox_source: 'default', network: 'public' });
    // allowedPaths kept when omitted; `allowedPaths` spelling accepted.
    await post({ agent_id: 'leo' });
    expect((await call(t.base, 'GET', '/agents')).body.agents.find((a: { id: string }) => a.id === 'leo').allowedPaths).toEqual([allowed]);
    await post({ agent_id: 'leo', allowedPaths: [] });
    expect((await call(t.base, 'GET', '/agents')).body.agents.find((a: { id: string }) => a.id === 'leo').allowedPaths).toEqual([]);
  });

  it('when an explicit home is given, then it is created and kept when later omitted', async () => {
    const home = join(tempDir(), 'nested', 'home');
    expect((await post({ agent_id: 'ann', home })).body).toEqual({ agent_id: 'ann', home, created: true });
    expect(existsSync(home)).toBe(true);
    expect((await post({ agent_id: 'ann' })).body.home).toBe(home);
  });

  it('the registry file is written atomically with mode 0600 and never holds a webhook URL host', () => {
    const file = join(t.dataDir, 'agents.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe('GET /agents', () => {
  it('lists agents sorted by id with exactly the spec fields, plus the sandbox mode, its source and the network policy (behaviour.md §15, §15.6)', async () => {
    const r = await call(t.base, 'GET', '/agents');
    expect(r.status).toBe(200);
    const ids = r.body.agents.map((a: { id: string }) => a.id);
    expect(ids).toEqual([...ids].sort());
    for (const a of r.body.agents) expect(Object.keys(a).sort()).toEqual(['allowedPaths', 'createdAt', 'home', 'id', 'network', 'sandbox', 'sandbox_source']);
    for (const a of r.body.agents) expect(a.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe('DELETE /agents/{id}', () => {
  it('when the agent exists, then deleted is true with integer counts, sessions are disposed, state removed, home kept', async () => {
    await post({ agent_id: 'gone' });
    const c = t.client('gone');
    await c.exec('main', '/set $K = "v"');
    await c.exec('other', '/help');
    const state = join(t.dataDir, 'agents', 'gone', 'state');
    expect(existsSync(join(state, 'env.json'))).toBe(true);
    const home = join(t.dataDir, 'agents', 'gone', 'home');
    writeFileSync(join(home, 'keep.txt'), 'x');
    const r = await call(t.base, 'DELETE', '/agents/gone');
    expect(r.body).toEqual({ agent_id: 'gone', deleted: true, revoked_capabilities: 0, disposed_sessions: 2 });
    expect(existsSync(state)).toBe(false);
    expect(existsSync(join(home, 'keep.txt'))).toBe(true);
    expect((await call(t.base, 'GET', '/sessions?agent_id=gone')).body.sessions).toEqual([]);
    expect((await c.exec('main', '/help')).status).toBe(401);
  });

  it('when the agent has a running and a waiting command, then the cascade of its actor answers both (CONFLICT) and kills the running process', async () => {
    await post({ agent_id: 'busy' });
    const c = t.client('busy');
    const marker = `loom-cascade-${process.pid}-${Date.now()}`;
    const running = c.exec('work', `/exec sleep 30 # ${marker}`);
    const busy = async () => (await call(t.base, 'GET', '/sessions?agent_id=busy')).body.sessions.find((s: { topic: string }) => s.topic === 'work');
    while (!(await busy())?.executing) await new Promise((r) => setTimeout(r, 10));
    const waiting = c.exec('work', '/help');
    while ((await busy()).queue_length < 1) await new Promise((r) => setTimeout(r, 10));
    const r = await call(t.base, 'DELETE', '/agents/busy');
    expect(r.body).toEqual({ agent_id: 'busy', deleted: true, revoked_capabilities: 0, disposed_sessions: 1 });
    expect(await running).toMatchObject({ status: 200, head: { ok: false, code: 'CONFLICT' }, body: 'ERROR(CONFLICT): Topic work was closed while this command ran' });
    expect(await waiting).toMatchObject({ status: 200, head: { ok: false, code: 'CONFLICT' }, body: 'ERROR(CONFLICT): Agent busy was deleted while this command waited' });
    // The running command's process group was killed by the session's abort.
    let left = '';
    for (let i = 0; i < 100; i++) {
      try { left = execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }); } catch { left = ''; }
      if (left === '') break;
      await new Promise((res) => setTimeout(res, 20));
    }
    expect(left).toBe('');
  });

  it.each(['nobody', '..%2F..'])('when the agent %s does not exist, then deleted is false with zero counts', async (id) => {
    const r = await call(t.base, 'DELETE', `/agents/${id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ agent_id: decodeURIComponent(id), deleted: false, revoked_capabilities: 0, disposed_sessions: 0 });
  });

  it('when the home changes, then the agent\'s sessions are disposed', async () => {
    await post({ agent_id: 'mover' });
    const c = t.client('mover');
    await c.exec('main', '/set {x} = "1"');
    const newHome = tempDir();
    mkdirSync(newHome, { recursive: true });
    await post({ agent_id: 'mover', home: newHome });
    const r = await c.exec('main', '/set');
    expect(r.body).toContain('No variables in scope.');
  });
});
