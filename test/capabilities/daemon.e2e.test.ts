import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../helpers/app.js';
import { runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { parseDuration } from '../../src/cli/capability.js';
import { addAgent, mint } from './helpers.js';

/** Every file under `dir`, recursively. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

const fsGet = (base: string, path: string, secret: string) => call(base, 'GET', `/fs/${path}`, { headers: { Authorization: `Bearer ${secret}` } });

describe('capabilities across a daemon restart (spec §2: records persist; behaviour.md §1.1)', () => {
  let d: RunningDaemon;
  const dataDir = tempDir();
  const secrets: string[] = [];
  let live: { token_id: string; secret: string };
  let once: { token_id: string; secret: string };

  beforeAll(async () => {
    d = await startDaemon({ dataDir });
    const home = await addAgent(d.base, 'leo');
    writeFileSync(join(home, 'note.txt'), 'persisted');
    live = await mint(d.base, { agent_id: 'leo', verbs: ['GET'], ttl_ms: 3_600_000 });
    once = await mint(d.base, { agent_id: 'leo', verbs: ['GET'], ttl_ms: 3_600_000, single_use: true });
    const paired = await call(d.base, 'POST', '/agents', { body: { agent_id: 'mia', capability: { verbs: ['PUT'], ttl_ms: 60_000 } } });
    secrets.push(live.secret, once.secret, paired.body.capability.secret);
    expect((await fsGet(d.base, 'note.txt', once.secret)).status).toBe(200);
  });
  afterAll(async () => { await d.stop(); });

  it('when the daemon restarts, then a live capability still works and a consumed one stays dead', async () => {
    expect(await d.stop()).toBe(0);
    d = await startDaemon({ dataDir });
    const ok = await fsGet(d.base, 'note.txt', live.secret);
    expect(ok.status).toBe(200);
    expect(ok.body).toBe('persisted');
    const dead = await fsGet(d.base, 'note.txt', once.secret);
    expect(dead.status).toBe(401);
    expect(dead.body).toEqual({ error: 'Capability refused: consumed', reason: 'consumed' });
    const states = (await call(d.base, 'GET', '/capabilities?agent_id=leo')).body.capabilities.map((c: { state: string }) => c.state);
    expect(states).toEqual(['live', 'consumed']);
  });

  it('when the data directory is searched for every minted secret, then none is found', () => {
    const all = files(dataDir);
    expect(all).toContain(join(dataDir, 'capabilities.json'));
    for (const f of all) {
      const bytes = readFileSync(f).toString('latin1');
      for (const s of secrets) {
        expect(bytes.includes(s)).toBe(false);
        expect(bytes.includes(s.slice('caps_'.length))).toBe(false);
      }
    }
  });

  it('when capabilities.json is unreadable, then the daemon stops with exit 1 and `loom: cannot read <file>: <reason>`', async () => {
    const broken = tempDir();
    writeFileSync(join(broken, 'capabilities.json'), '{"version":1,');
    await expect(startDaemon({ dataDir: broken })).rejects.toThrow(/daemon exited 1: loom: cannot read .*capabilities\.json: /);
    expect(readFileSync(join(broken, 'capabilities.json'), 'utf8')).toBe('{"version":1,');
  });
});

describe('loom agent capability (spec §4.2 shell form; behaviour.md §2.13)', () => {
  let d: RunningDaemon;
  let env: Record<string, string>;

  beforeAll(async () => {
    d = await startDaemon();
    await addAgent(d.base, 'cli');
    env = { SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, LOOM_AGENT_ID: 'cli' };
  });
  afterAll(async () => { await d.stop(); });

  it('when minting, then five lines are printed with the full secret, and the token works', async () => {
    const r = await runCli(['agent', 'capability', 'mint', '--path', 'docs/', '--verbs', 'get,PUT', '--ttl', '15m', '--single-use'], env);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^Minted cap_[A-Za-z0-9_-]{16} for agent 'cli'$/);
    expect(lines[1]).toBe('scope: docs  verbs: GET, PUT');
    expect(lines[2]).toMatch(/^expires: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  single-use: yes$/);
    expect(lines[3]).toMatch(/^secret: caps_[A-Za-z0-9_-]{43}$/);
    expect(lines[4]).toBe('The secret is shown only once.');
    const listed = (await call(d.base, 'GET', '/capabilities?agent_id=cli')).body.capabilities.at(-1);
    expect(listed).toMatchObject({ path_prefix: 'docs', verbs: ['GET', 'PUT'], ttl_ms: 900_000, single_use: true, state: 'live' });
    const put = await call(d.base, 'PUT', '/fs/docs/x.txt', { headers: { Authorization: `Bearer ${lines[3].slice('secret: '.length)}` }, body: 'x' });
    expect(put.status).toBe(201);
  });

  it('when minting without --path, then the scope is the whole workspace', async () => {
    const r = await runCli(['agent', 'capability', 'mint', '--verbs', 'stat', '--ttl', '7d'], env);
    expect(r.stdout.split('\n')[1]).toBe('scope: (whole workspace)  verbs: STAT');
    expect(r.stdout.split('\n')[2]).toMatch(/single-use: no$/);
  });

  it('when the daemon refuses the spec, then the error is on stderr and the exit code is 1', async () => {
    const r = await runCli(['agent', 'capability', 'mint', '--verbs', 'get,exec', '--ttl', '1h'], env);
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'loom: Invalid capability; verb not on the system plane: exec\n' });
    const j = await runCli(['--json', 'agent', 'capability', 'mint', '--verbs', 'get,exec', '--ttl', '1h'], env);
    expect(JSON.parse(j.stderr)).toEqual({ error: 'Invalid capability', code: 'HTTP_400', message: 'verb not on the system plane: exec' });
  });

  it('when the agent is unknown, then mint and list say how to create it (nothing is registered)', async () => {
    const unknown = { ...env, LOOM_AGENT_ID: 'nobody' };
    const want = { code: 1, stdout: '', stderr: "loom: unknown agent 'nobody'; create it with: loom agent add nobody\n" };
    expect(await runCli(['agent', 'capability', 'mint', '--verbs', 'get', '--ttl', '1h'], unknown)).toEqual(want);
    expect(await runCli(['agent', 'capability', 'list'], unknown)).toEqual(want);
  });

  it('when --json is given, then mint, list and revoke print the HTTP answers', async () => {
    const m = JSON.parse((await runCli(['--json', 'agent', 'capability', 'mint', '--verbs', 'get', '--ttl', '1h'], env)).stdout) as Record<string, unknown>;
    expect(Object.keys(m).sort()).toEqual(['agent_id', 'expires_at', 'path_prefix', 'secret', 'single_use', 'token_id', 'ttl_ms', 'verbs']);
    const l = JSON.parse((await runCli(['--json', 'agent', 'capability', 'list'], env)).stdout) as { capabilities: Array<{ token_id: string }> };
    expect(l.capabilities.map((c) => c.token_id)).toContain(m.token_id);
    const r = JSON.parse((await runCli(['--json', 'agent', 'capability', 'revoke', String(m.token_id)], env)).stdout) as Record<string, unknown>;
    expect(r).toEqual({ token_id: m.token_id, revoked: true });
  });

  it('when the duration is malformed, then it is a usage error (exit 2)', async () => {
    const r = await runCli(['agent', 'capability', 'mint', '--verbs', 'get', '--ttl', '15 minutes'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('use a duration like 90s, 15m, 1h, 7d or milliseconds');
  });

  it('when listing and revoking, then the rows show state and revoke answers per token', async () => {
    const m = await runCli(['agent', 'capability', 'mint', '--verbs', 'get', '--ttl', '90s'], env);
    const id = /Minted (cap_\S+)/.exec(m.stdout)?.[1] as string;
    const list = await runCli(['agent', 'capability', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^Capabilities of 'cli' \(\d+\)\n/);
    // Aligned columns: every row has its state at the same offset.
    const rows = list.stdout.trimEnd().split('\n').slice(1);
    expect(new Set(rows.map((r) => r.search(/ (live|revoked|expired|consumed) /))).size).toBe(1);
    expect(list.stdout).toMatch(new RegExp(`  ${id}  \\(workspace\\) +GET +live +expires \\S+Z`));
    expect(list.stdout).not.toContain('caps_');
    const rv = await runCli(['agent', 'capability', 'revoke', id], env);
    expect(rv.code).toBe(0);
    expect(rv.stdout.trim()).toBe(`Revoked ${id}`);
    const again = await runCli(['agent', 'capability', 'revoke', id], env);
    expect(again).toEqual({ code: 1, stdout: '', stderr: `loom: not revoked: ${id} is unknown or already dead; loom agent capability list shows the live ones\n` });
    expect((await runCli(['agent', 'capability', 'list'], env)).stdout).toMatch(new RegExp(`  ${id}  \\(workspace\\) +GET +revoked`));
  });

  it('when the daemon is not running, then exit 3', async () => {
    const r = await runCli(['agent', 'capability', 'list'], { ...env, SVC_PORT: '1' });
    expect(r.code).toBe(3);
  });
});

describe('parseDuration (behaviour.md §2.13)', () => {
  it.each([
    ['90s', 90_000], ['15m', 900_000], ['1h', 3_600_000], ['7d', 604_800_000], ['250ms', 250], ['1500', 1500], ['0', 0],
  ])('when given %s, then %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '15 m', '1.5h', '-5s', '15min', 'h', '1w', '99999999999999999999d'])('when given %j, then it is not a duration', (text) => {
    expect(parseDuration(text)).toBeNull();
  });
});
