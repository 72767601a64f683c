import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { VERSION } from '../../src/version.js';
import { freePort, tempDir } from '../helpers/daemon.js';
import { loom } from './support.js';

/** A background daemon of its own: a temp data dir and a free port. */
let env: { port: number; dataDir: string };
const pidFile = () => join(env.dataDir, 'loom.pid');
const pids = new Set<number>();

/** Remember the pid the CLI wrote, so afterAll can kill the daemon whatever the tests did. */
function notePid(): number {
  const pid = Number(readFileSync(pidFile(), 'utf8').trim());
  pids.add(pid);
  return pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

beforeAll(async () => { env = { port: await freePort(), dataDir: tempDir() }; });
afterAll(async () => {
  if (existsSync(pidFile())) notePid();
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

// Any Node flag on a command line makes Node 20 and 22 compile Node's own modules at every start; the
// daemon sizes its heap at run time instead (src/effects/heapTuning.ts).
describe('no Node flag on the daemon\'s or the loom command\'s line', () => {
  it('when the daemon is started by npm start, then its line is the same as loom start\'s, and the loom command\'s shebang carries no flag', () => {
    const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe('node dist/cli/main.js daemon');
    expect(readFileSync(join(process.cwd(), 'bin', 'loom.js'), 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it('when `loom daemon` runs in the foreground through the loom command, then it runs as the process it was started as, writes that pid, and stops on SIGINT with 0', async () => {
    const port = await freePort();
    const dataDir = tempDir();
    const child = spawn(process.execPath, [join(process.cwd(), 'bin', 'loom.js'), '--port', String(port), 'daemon'], { env: { ...process.env, SVC_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += String(c); });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    while (!out.includes('loom listening')) await new Promise((r) => setTimeout(r, 20));
    const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
    expect(argv.slice(1, 3)).toEqual([join(process.cwd(), 'bin', 'loom.js'), '--port']);
    expect(Number(readFileSync(join(dataDir, 'loom.pid'), 'utf8').trim().split(/\s/)[0])).toBe(child.pid);
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(out).toBe(`loom listening on http://127.0.0.1:${port}\n`);
  });

  it('when the user runs `loom daemon` with a Node flag of their own, then the daemon runs with exactly that flag', async () => {
    const port = await freePort();
    const own = '--max-semi-space-size=8';
    const child = spawn(process.execPath, [own, join(process.cwd(), 'bin', 'loom.js'), '--port', String(port), 'daemon'], { env: { ...process.env, SVC_DATA_DIR: tempDir() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += String(c); });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    while (!out.includes('loom listening')) await new Promise((r) => setTimeout(r, 20));
    const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
    expect(argv.slice(1, 3)).toEqual([own, join(process.cwd(), 'bin', 'loom.js')]);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});

describe('behaviour.md §2.13 loom start|status|stop', () => {
  it('when nothing listens, then status exits 3; --json says {running: false, pid: null, port, version: null}', async () => {
    const r = await loom(env, ['status']);
    expect(r).toEqual({ code: 3, stdout: `loom is not running on port ${env.port}\n`, stderr: '' });
    const j = await loom(env, ['--json', 'status']);
    expect(j.code).toBe(3);
    expect(JSON.parse(j.stdout)).toEqual({ running: false, pid: null, port: env.port, version: null });
  });

  it('when start runs, then it says what it waits for, the daemon answers, and its pid is in <data>/loom.pid', async () => {
    const r = await loom(env, ['start']);
    expect(existsSync(pidFile())).toBe(true);
    const pid = notePid();
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`loom started on http://127.0.0.1:${env.port} (pid ${pid})\n`);
    expect(r.stderr.split('\n')[0]).toBe(`Starting loom on http://127.0.0.1:${env.port} (pid ${pid}, log ${join(env.dataDir, 'loom.log')}); waiting for it to answer…`);
    expect(alive(pid)).toBe(true);
    // Without a Node flag, so Node's own modules come from its code cache.
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(argv.slice(1, 3)).toEqual([join(process.cwd(), 'dist', 'cli', 'main.js'), 'daemon']);
    const health = await fetch(`http://127.0.0.1:${env.port}/health`);
    expect(await health.json()).toEqual({ ok: true, agents: 0, sessions: 0 });
  });

  it('when start runs again, then it reports the running daemon and starts nothing (idempotent)', async () => {
    const pid = Number(readFileSync(pidFile(), 'utf8').trim());
    const r = await loom(env, ['start']);
    expect(r).toEqual({ code: 0, stdout: `loom is already running on http://127.0.0.1:${env.port}\n`, stderr: '' });
    expect(Number(readFileSync(pidFile(), 'utf8').trim())).toBe(pid);
    const j = await loom(env, ['--json', 'start']);
    expect(JSON.parse(j.stdout)).toEqual({ running: true, started: false, pid, port: env.port });
  });

  it('when status runs, then it exits 0 with version, pid and counts; --json prints {running, pid, port, version}', async () => {
    const pid = Number(readFileSync(pidFile(), 'utf8').trim());
    const r = await loom(env, ['status']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`loom ${VERSION} is running on http://127.0.0.1:${env.port} (pid ${pid}) · agents: 0 · sessions: 0\n`);
    const j = await loom(env, ['--json', 'status']);
    expect(JSON.parse(j.stdout)).toEqual({ running: true, pid, port: env.port, version: VERSION });
  });

  it('when a command runs through the background daemon, then it answers', async () => {
    await fetch(`http://127.0.0.1:${env.port}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bg' }) });
    const r = await loom(env, ['main', '/exec echo hi'], { LOOM_AGENT_ID: 'bg' });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('exit: 0 | cwd: ~\n---\nhi\n');
  });

  it('when stop runs, then it says what it waits for, the daemon exits, the pid file is removed and status exits 3', async () => {
    const pid = Number(readFileSync(pidFile(), 'utf8').trim());
    const r = await loom(env, ['stop']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('loom stopped\n');
    expect(r.stderr.split('\n')[0]).toBe(`Stopping loom on http://127.0.0.1:${env.port} (pid ${pid}); waiting for it to exit…`);
    expect(alive(pid)).toBe(false);
    expect(existsSync(pidFile())).toBe(false);
    expect((await loom(env, ['status'])).code).toBe(3);
  });

  it('when stop runs with nothing running, then it says so and exits 0; --json says stopped false', async () => {
    expect(await loom(env, ['stop'])).toEqual({ code: 0, stdout: `loom is not running on port ${env.port}\n`, stderr: '' });
    expect(JSON.parse((await loom(env, ['--json', 'stop'])).stdout)).toEqual({ stopped: false, running: false, port: env.port });
  });

  it('when start runs with --json, then progress stays off stderr and stdout is one JSON document', async () => {
    const r = await loom(env, ['--json', 'start']);
    const pid = notePid();
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ running: true, started: true, pid, port: env.port });
    const s = await loom(env, ['--json', 'stop']);
    expect(s.stderr).toBe('');
    expect(JSON.parse(s.stdout)).toEqual({ stopped: true, running: false, port: env.port });
  });

  it('when the daemon cannot start (port taken by another program), then start fails with exit 1, gives the daemon\'s reason and names the log', async () => {
    const blocker = createServer((_req, res) => { res.statusCode = 404; res.end(); });
    await new Promise<void>((r) => blocker.listen(env.port, '127.0.0.1', () => r()));
    try {
      const r = await loom(env, ['start']);
      expect(r.code).toBe(1);
      expect(r.stderr.trimEnd().split('\n').pop()).toBe(`loom: daemon did not start: port ${env.port} is in use; see ${join(env.dataDir, 'loom.log')}`);
      const j = await loom(env, ['--json', 'start']);
      expect([j.code, JSON.parse(j.stderr)]).toEqual([1, { error: `daemon did not start: port ${env.port} is in use`, code: 'START_FAILED', message: `see ${join(env.dataDir, 'loom.log')}` }]);
      expect(existsSync(pidFile())).toBe(false);
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });
});
