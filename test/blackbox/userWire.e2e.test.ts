import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { call } from '../helpers/app.js';
import { CLI, freePort, runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

/*
 * The built daemon on the user wire (behaviour.md §1.1, §11): chosen at start by `--wire user` or
 * SVC_WIRE=user, one wire per process; and the two wires on one data directory never share
 * identities or state.
 */

const running: RunningDaemon[] = [];
afterAll(async () => {
  for (const d of running) await d.kill();
});

async function daemon(opts: Parameters<typeof startDaemon>[0]): Promise<RunningDaemon> {
  const d = await startDaemon(opts);
  running.push(d);
  return d;
}

describe('choosing the wire at start', () => {
  it('`loom daemon --wire user` serves the user wire; /describe says so', async () => {
    const d = await daemon({ args: ['--wire', 'user'] });
    expect(d.stdout()).toBe(`loom listening on http://127.0.0.1:${d.port}\n`);
    expect((await call(d.base, 'GET', '/describe')).body.wire).toBe('user');
    expect((await call(d.base, 'GET', '/agents')).status).toBe(404);
    expect((await call(d.base, 'GET', '/users')).body).toEqual({ users: [] });
  });

  it('SVC_WIRE=user does the same; --wire agent overrides it', async () => {
    const u = await daemon({ env: { SVC_WIRE: 'user' } });
    expect((await call(u.base, 'GET', '/describe')).body.wire).toBe('user');
    const a = await daemon({ env: { SVC_WIRE: 'user' }, args: ['--wire', 'agent'] });
    expect((await call(a.base, 'GET', '/describe')).body.wire).toBe('agent');
  });

  it('without SVC_PORT the user wire listens on 3100 (or says that 3100 is in use)', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_DATA_DIR: tempDir() };
    delete env.SVC_PORT;
    const p = spawn(process.execPath, [CLI, 'daemon', '--wire', 'user'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const exited = new Promise<number | null>((resolve) => p.once('exit', (code) => resolve(code)));
    p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    p.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    const t0 = Date.now();
    while (!out.includes('\n') && p.exitCode === null && Date.now() - t0 < 15000) await new Promise((r) => setTimeout(r, 20));
    if (p.exitCode === null) p.kill('SIGTERM');
    const code = await exited;
    if (out !== '') {
      expect(out).toBe('loom listening on http://127.0.0.1:3100\n');
      expect(code).toBe(0);
    } else {
      expect(err).toBe('loom: port 3100 is in use\n');
      expect(code).toBe(1);
    }
  });

  it.each([
    [['daemon', '--wire', 'bogus'], {}, 'loom: invalid --wire "bogus" (use agent or user)\n'],
    [['daemon'], { SVC_WIRE: 'users' }, 'loom: invalid SVC_WIRE "users" (use agent or user)\n'],
  ])('`loom %j` with %j exits 2 and says why', async (args, env, stderr) => {
    const r = await runCli(args, { SVC_DATA_DIR: tempDir(), SVC_PORT: '1', ...env });
    expect(r).toEqual({ code: 2, stdout: '', stderr });
  });
});

describe('the two wires on one data directory', () => {
  let dataDir: string;
  let agentWire: RunningDaemon;
  let userWire: RunningDaemon;
  const agentHome = join(tempDir(), 'leo-agent');
  const userHome = join(tempDir(), 'leo-user');

  beforeAll(async () => {
    dataDir = tempDir();
    agentWire = await daemon({ dataDir });
    userWire = await daemon({ dataDir, env: { SVC_WIRE: 'user' } });
  });

  it('the same id registers separately on each wire, with its own home', async () => {
    const a = await call(agentWire.base, 'POST', '/agents', { body: { agent_id: 'leo', home: agentHome } });
    expect(a.body).toEqual({ agent_id: 'leo', home: agentHome, created: true });
    const u = await call(userWire.base, 'POST', '/users', { body: { id: 'leo', home: userHome } });
    expect(u.body).toEqual({ user_id: 'leo', home: userHome, created: true });
    expect((await call(agentWire.base, 'GET', '/agents')).body.agents.map((x: { home: string }) => x.home)).toEqual([agentHome]);
    expect((await call(userWire.base, 'GET', '/users')).body.users.map((x: { home: string }) => x.home)).toEqual([userHome]);
  });

  it('an identity of one wire is unknown to the other', async () => {
    await call(agentWire.base, 'POST', '/agents', { body: { agent_id: 'only-agent' } });
    await call(userWire.base, 'POST', '/users', { body: { id: 'only-user', home: join(tempDir(), 'ou') } });
    const u = await new LoomClient(userWire.base, 'only-agent', 'user').exec('file:x', '/info');
    expect(u).toMatchObject({ status: 401, error: { error: 'Unknown user: only-agent' } });
    const a = await new LoomClient(agentWire.base, 'only-user').exec('main', '/info');
    expect(a).toMatchObject({ status: 401, error: { error: 'Unknown agent: only-user' } });
    expect((await call(userWire.base, 'POST', '/sessions', { body: { user_id: 'only-agent', topic: 'file:x' } })).body).toEqual({ error: 'Unknown user: only-agent' });
  });

  it('persistent variables live in separate state folders and never leak across', async () => {
    const agent = new LoomClient(agentWire.base, 'leo');
    const user = new LoomClient(userWire.base, 'leo', 'user');
    expect((await agent.exec('main', '/set $TOKEN = "agent-secret"')).head?.ok).toBe(true);
    expect((await user.exec('file:main', '/set $TOKEN = "user-secret"')).head?.ok).toBe(true);
    const agentEnv = JSON.parse(readFileSync(join(dataDir, 'agents', 'leo', 'state', 'env.json'), 'utf8'));
    const userEnv = JSON.parse(readFileSync(join(dataDir, 'users', 'leo', 'state', 'env.json'), 'utf8'));
    expect(agentEnv.global).toEqual({ TOKEN: 'agent-secret' });
    expect(userEnv.global).toEqual({ TOKEN: 'user-secret' });
    expect((await agent.exec('main', '/exec echo "$HOME"')).body).toBe(`exit: 0 | cwd: ~\n---\n${agentHome}`);
    expect((await user.exec('file:main', '/exec echo "$HOME"')).body).toBe(`exit: 0 | cwd: ~\n---\n${userHome}`);
    expect((await agent.exec('main', '/set')).body).toContain('$TOKEN = "ag…" (12 chars, global)');
    expect((await user.exec('file:main', '/set')).body).toContain('$TOKEN = "us…" (11 chars, global)');
  });

  it('the registries are separate files, and each holds only its own identities', () => {
    const agents = JSON.parse(readFileSync(join(dataDir, 'agents.json'), 'utf8'));
    const users = JSON.parse(readFileSync(join(dataDir, 'users.json'), 'utf8'));
    expect(Object.keys(agents.agents).sort()).toEqual(['leo', 'only-agent']);
    expect(Object.keys(users.users).sort()).toEqual(['leo', 'only-user']);
    expect(users.agents).toBeUndefined();
    expect(agents.users).toBeUndefined();
  });

  it('deleting the user leaves the agent of the same id, its state and its sessions', async () => {
    await call(agentWire.base, 'POST', '/sessions', { body: { agent_id: 'leo', topic: 'main' } });
    const del = await call(userWire.base, 'DELETE', '/users/leo');
    expect(del.body).toEqual({ user_id: 'leo', deleted: true, disposed_sessions: 1 });
    expect(existsSync(join(dataDir, 'users', 'leo', 'state'))).toBe(false);
    expect(existsSync(join(dataDir, 'agents', 'leo', 'state', 'env.json'))).toBe(true);
    expect((await call(agentWire.base, 'GET', '/sessions?agent_id=leo')).body.sessions.map((s: { topic: string }) => s.topic)).toEqual(['main']);
    expect((await new LoomClient(agentWire.base, 'leo').exec('main', '/set')).body).toContain('$TOKEN = "ag…" (12 chars, global)');
  });

  it('after a restart each wire reads back only its own registry', async () => {
    await userWire.stop();
    await agentWire.stop();
    const u = await daemon({ dataDir, args: ['--wire', 'user'] });
    const a = await daemon({ dataDir });
    expect((await call(u.base, 'GET', '/users')).body.users.map((x: { id: string }) => x.id)).toEqual(['only-user']);
    expect((await call(a.base, 'GET', '/agents')).body.agents.map((x: { id: string }) => x.id)).toEqual(['leo', 'only-agent']);
    expect((await call(u.base, 'GET', '/health')).body).toEqual({ ok: true, users: 1, sessions: 0 });
  });
});

describe('a damaged users.json stops the user wire with one line (as agents.json does the agent wire)', () => {
  const USER = (id: string, extra: Record<string, unknown> = {}) => ({ id, home: join(tempDir(), id), allowedPaths: [], createdAt: '2025-06-01T10:00:00.000Z', ...extra });

  it.each([
    ['users is a list', () => [], '"users" must be an object'],
    ['the key is not a user id', () => ({ '../x': USER('../x') }), 'user "../x": not a valid user id'],
    ['home is relative', () => ({ ann: USER('ann', { home: 'rel' }) }), 'user "ann": home must be an absolute path'],
  ])('when %s, then the daemon exits 1 naming it and leaves the file as it was', async (_why, users, message) => {
    const dir = tempDir();
    const text = JSON.stringify({ version: 1, users: users() });
    writeFileSync(join(dir, 'users.json'), text);
    const r = await runCli(['daemon', '--wire', 'user'], { SVC_DATA_DIR: dir, SVC_PORT: String(await freePort()) });
    expect(r).toEqual({ code: 1, stdout: '', stderr: `loom: cannot read ${join(dir, 'users.json')}: ${message}\n` });
    expect(readFileSync(join(dir, 'users.json'), 'utf8')).toBe(text);
  });

  it('when a stored user home is the default home of the agent of the same id, then the user wire refuses it (no shared homes)', async () => {
    const dir = tempDir();
    const agentHome = join(dir, 'agents', 'ann', 'home');
    mkdirSync(agentHome, { recursive: true });
    writeFileSync(join(dir, 'users.json'), JSON.stringify({ version: 1, users: { ann: USER('ann', { home: agentHome }) } }));
    const r = await runCli(['daemon', '--wire', 'user'], { SVC_DATA_DIR: dir, SVC_PORT: String(await freePort()) });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`loom: cannot read ${join(dir, 'users.json')}: user "ann": ${agentHome} is inside the Loom data directory ${dir}\n`);
  });

  it('a users.json never makes the agent wire refuse to start (the agent wire does not read it)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'users.json'), 'null\n');
    const d = await daemon({ dataDir: dir });
    expect((await call(d.base, 'GET', '/agents')).body).toEqual({ agents: [] });
  });
});
