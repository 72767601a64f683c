import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { CLI, runCli, freePort, tempDir } from '../helpers/daemon.js';

/*
 * `loom` driving a daemon of the user wire (the CLI accepts --wire user, or detects the
 * wire from /describe): start, status, agent add|list|rm (users), the one-command form, stop.
 */

let env: { SVC_PORT: string; SVC_DATA_DIR: string; LOOM_AGENT_ID: string; SVC_WIRE: string; LOOM_USER_ID: string };
const home = join(tempDir(), 'ann');
const pidFile = () => join(env.SVC_DATA_DIR, 'loom.pid');
const loom = (args: string[], extra: Record<string, string> = {}) => runCli(args, { ...env, ...extra });

beforeAll(async () => {
  env = { SVC_PORT: String(await freePort()), SVC_DATA_DIR: tempDir(), LOOM_AGENT_ID: '', SVC_WIRE: '', LOOM_USER_ID: '' };
});
afterAll(() => {
  // Whatever the tests did, the background daemon goes.
  if (!existsSync(pidFile())) return;
  const pid = Number(readFileSync(pidFile(), 'utf8').trim());
  try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
});

describe('loom --wire user', () => {
  it('start runs a user-wire daemon in the background; status counts users', async () => {
    const s = await loom(['--wire', 'user', 'start']);
    expect(s.code).toBe(0);
    expect(s.stdout).toMatch(/^loom started on http:\/\/127\.0\.0\.1:\d+ \(pid \d+\)\n$/);
    const describe = await (await fetch(`http://127.0.0.1:${env.SVC_PORT}/describe`)).json() as { wire: string };
    expect(describe.wire).toBe('user');
    const st = await loom(['status']);
    expect(st.code).toBe(0);
    expect(st.stdout).toMatch(/ · users: 0 · sessions: 0\n$/);
  });

  it('agent add registers a user (a home is required), list shows the users', async () => {
    const missing = await loom(['--wire', 'user', 'agent', 'add', 'ann']);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'loom: home required\n' });
    const add = await loom(['--wire', 'user', 'agent', 'add', 'ann', '--home', home]);
    expect(add).toEqual({ code: 0, stdout: `Added user 'ann' · home ${home}\n`, stderr: '' });
    const list = await loom(['--wire', 'user', 'agent', 'list']);
    expect(list.stdout.split('\n')[0]).toBe('Users (1)');
    expect(list.stdout).toContain(`ann  ${home}`);
    const json = JSON.parse((await loom(['--wire', 'user', '--json', 'agent', 'list'])).stdout) as { users: Array<{ id: string }> };
    expect(json.users.map((u) => u.id)).toEqual(['ann']);
  });

  it('the one-command form runs in a user-wire topic', async () => {
    const r = await loom(['--wire', 'user', '--agent', 'ann', 'file:notes', '/info']);
    expect(r).toEqual({ code: 0, stdout: 'Session file:notes\n---\nuser:      ann\ntype:      file\ndocument:  (none)\n', stderr: '' });
    const w = await loom(['--wire', 'user', '--agent', 'ann', 'file:notes', '/exec', 'echo call Leo >> ~/notes.md']);
    expect(w).toEqual({ code: 0, stdout: 'exit: 0 | cwd: ~\n---\n(no output)\n', stderr: '' });
    expect(readFileSync(join(home, 'notes.md'), 'utf8')).toContain('call Leo');
  });

  it('LOOM_USER_ID names the user (what the user wire exports to commands)', async () => {
    const r = await loom(['--wire', 'user', 'app:weather:seoul', '/set', '$CITY', '=', 'seoul'], { LOOM_USER_ID: 'ann' });
    expect(r).toEqual({ code: 0, stdout: '$CITY set (config weather:seoul)\n', stderr: '' });
  });

  it('install and packages run in the user\'s file:packages topic (the user wire has no hubs)', async () => {
    mkdirSync(join(home, 'apps', 'w'), { recursive: true });
    writeFileSync(join(home, 'apps', 'w', 'string.md'), '# W\n');
    const r = await loom(['--wire', 'user', '--agent', 'ann', 'install', join(home, 'apps', 'w')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Installed app:w \(local, 1 file\) from /);
    const json = JSON.parse((await loom(['--wire', 'user', '--agent', 'ann', '--json', 'packages'])).stdout) as { user_id: string; packages: Array<{ name: string }> };
    expect(json.user_id).toBe('ann');
    expect(json.packages.map((p) => p.name)).toEqual(['w']);
    expect(existsSync(join(env.SVC_DATA_DIR, 'users', 'ann', 'state', 'packages.json'))).toBe(true);
  });

  it('without --wire the CLI reads the wire from the daemon', async () => {
    const r = await loom(['--agent', 'ann', 'file:notes', '/info']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('user:      ann');
    expect((await loom(['agent', 'list'])).stdout.split('\n')[0]).toBe('Users (1)');
  });

  it('an unknown user fails with the way to create one', async () => {
    const r = await loom(['--wire', 'user', '--agent', 'bob', 'file:notes', '/info']);
    expect(r).toEqual({ code: 1, stdout: '', stderr: "loom: unknown user 'bob'; create it with: loom --wire user agent add bob --home <absolute folder>\n" });
  });

  it('agent rm deletes the user (no capabilities on this wire); stop ends the daemon', async () => {
    const rm = await loom(['--wire', 'user', 'agent', 'rm', 'ann']);
    expect(rm).toEqual({ code: 0, stdout: "Deleted user 'ann' (disposed 3 sessions; home kept)\n", stderr: '' });
    expect(existsSync(home)).toBe(true);
    expect(await loom(['--wire', 'user', 'agent', 'rm', 'ann'])).toEqual({ code: 1, stdout: '', stderr: "loom: no user 'ann'; loom agent list shows the users\n" });
    expect((await loom(['--wire', 'user', 'stop'])).stdout).toBe('loom stopped\n');
  });
});

/** Run the CLI with SVC_PORT unset (runCli can only add variables). */
function cliWithoutPort(args: string[], extra: Record<string, string>): Promise<{ code: number | null; stdout: string }> {
  const e: NodeJS.ProcessEnv = { ...process.env, SVC_DATA_DIR: tempDir(), SVC_WIRE: '', ...extra };
  delete e.SVC_PORT;
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: e }, (err, stdout) => resolve({ code: err ? (err.code as number) : 0, stdout }));
  });
}

describe('choosing the wire and port', () => {
  it('--wire user (or SVC_WIRE=user) makes 3100 the default port', async () => {
    const flag = await cliWithoutPort(['--wire', 'user', '--json', 'status'], {});
    expect((JSON.parse(flag.stdout) as { port: number }).port).toBe(3100);
    const viaEnv = await cliWithoutPort(['--json', 'status'], { SVC_WIRE: 'user' });
    expect((JSON.parse(viaEnv.stdout) as { port: number }).port).toBe(3100);
    const agentWire = await cliWithoutPort(['--json', 'status'], {});
    expect((JSON.parse(agentWire.stdout) as { port: number }).port).toBe(3923);
  });

  it('an unknown wire is a usage error', async () => {
    expect(await loom(['--wire', 'bogus', 'status'])).toEqual({ code: 2, stdout: '', stderr: 'loom: invalid --wire "bogus" (use agent or user)\n' });
    expect(await loom(['status'], { SVC_WIRE: 'users' })).toEqual({ code: 2, stdout: '', stderr: 'loom: invalid SVC_WIRE "users" (use agent or user)\n' });
  });
});

describe('both wires on one data directory through the CLI: no shared files (behaviour.md §11)', () => {
  let shared: { SVC_DATA_DIR: string; LOOM_AGENT_ID: string; SVC_WIRE: string; LOOM_USER_ID: string; SVC_PORT: string };
  let agentPort: string;
  let userPort: string;
  const annHome = join(tempDir(), 'ann');
  const run = (args: string[]) => runCli(args, shared);
  const agentCli = (args: string[]) => run(['--port', agentPort, ...args]);
  const userCli = (args: string[]) => run(['--wire', 'user', '--port', userPort, ...args]);
  const pidOf = (file: string) => Number(readFileSync(join(shared.SVC_DATA_DIR, file), 'utf8').trim());

  beforeAll(async () => {
    shared = { SVC_DATA_DIR: tempDir(), LOOM_AGENT_ID: '', SVC_WIRE: '', LOOM_USER_ID: '', SVC_PORT: '' };
    agentPort = String(await freePort());
    userPort = String(await freePort());
  });
  afterAll(() => {
    for (const f of ['loom.pid', 'loom-user.pid']) {
      if (!existsSync(join(shared.SVC_DATA_DIR, f))) continue;
      try { process.kill(pidOf(f), 'SIGKILL'); } catch { /* already gone */ }
    }
  });

  it('start runs one daemon of each wire, each with its own pid and log file', async () => {
    expect((await agentCli(['start'])).stdout).toMatch(/^loom started on /);
    expect((await userCli(['start'])).stdout).toMatch(/^loom started on /);
    expect(pidOf('loom.pid')).not.toBe(pidOf('loom-user.pid'));
    expect(existsSync(join(shared.SVC_DATA_DIR, 'loom-user.log'))).toBe(true);
  });

  it('the saved default identity is per wire: agent use and --wire user agent use never overwrite each other', async () => {
    expect((await agentCli(['agent', 'add', 'leo'])).code).toBe(0);
    expect((await userCli(['agent', 'add', 'ann', '--home', annHome])).code).toBe(0);
    expect(await userCli(['agent', 'use', 'ann'])).toEqual({ code: 0, stdout: 'Default user: ann\n', stderr: '' });
    expect(await agentCli(['agent', 'use', 'leo'])).toEqual({ code: 0, stdout: 'Default agent: leo\n', stderr: '' });
    expect(JSON.parse(readFileSync(join(shared.SVC_DATA_DIR, 'cli.json'), 'utf8'))).toEqual({ user: 'ann', agent: 'leo' });
    expect((await agentCli(['main', '/info'])).stdout).toMatch(/^agent: +leo$/m);
    expect((await userCli(['file:x', '/info'])).stdout).toMatch(/^user: +ann$/m);
  });

  it('each daemon writes its own request log, and loom logs reads the one of the wire it names', async () => {
    const paths = async (cli: (a: string[]) => ReturnType<typeof run>, want: string) => {
      for (let i = 0; i < 50; i++) {
        const r = JSON.parse((await cli(['--json', 'logs', '-n', '200'])).stdout) as { entries: Array<{ path: string }> };
        const p = r.entries.map((e) => e.path);
        if (p.includes(want)) return p;
        await new Promise((res) => setTimeout(res, 100));
      }
      throw new Error(`no ${want} in the log`);
    };
    const userPaths = await paths(userCli, '/users');
    const agentPaths = await paths(agentCli, '/agents');
    expect(userPaths).not.toContain('/agents');
    expect(agentPaths).not.toContain('/users');
    expect(existsSync(join(shared.SVC_DATA_DIR, 'logs-user', 'requests.log'))).toBe(true);
  });

  it('stop ends only the daemon of the wire it names', async () => {
    expect((await agentCli(['stop'])).stdout).toBe('loom stopped\n');
    expect((await userCli(['status'])).code).toBe(0);
    expect((await userCli(['stop'])).stdout).toBe('loom stopped\n');
    expect((await agentCli(['status'])).code).toBe(3);
    expect((await userCli(['status'])).code).toBe(3);
  });
});
