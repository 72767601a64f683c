import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

describe('behaviour.md §2.13 loom start|status|stop', () => {
  it('when nothing listens, then status exits 3', async () => {
    const r = await loom(env, ['status']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(`loom is not running on port ${env.port}\n`);
  });

  it('when start runs, then the daemon runs in the background, answers, and its pid is in <data>/loom.pid', async () => {
    const r = await loom(env, ['start']);
    expect(existsSync(pidFile())).toBe(true);
    const pid = notePid();
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`loom started on http://127.0.0.1:${env.port} (pid ${pid})\n`);
    expect(alive(pid)).toBe(true);
    const health = await fetch(`http://127.0.0.1:${env.port}/health`);
    expect(await health.json()).toEqual({ ok: true, agents: 0, sessions: 0 });
  });

  it('when start runs again, then it reports the running daemon and starts nothing (idempotent)', async () => {
    const pid = Number(readFileSync(pidFile(), 'utf8').trim());
    const r = await loom(env, ['start']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`loom is running on http://127.0.0.1:${env.port}\n`);
    expect(Number(readFileSync(pidFile(), 'utf8').trim())).toBe(pid);
  });

  it('when status runs, then it exits 0 with the counts; --json prints /health', async () => {
    const r = await loom(env, ['status']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`loom is running on http://127.0.0.1:${env.port} · agents: 0 · sessions: 0\n`);
    const j = await loom(env, ['--json', 'status']);
    expect(JSON.parse(j.stdout)).toEqual({ ok: true, agents: 0, sessions: 0 });
  });

  it('when a command runs through the background daemon, then it answers', async () => {
    const r = await loom(env, ['main', '/exec echo hi'], { LOOM_AGENT_ID: 'bg' });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('exit: 0 | cwd: ~\n---\nhi\n');
  });

  it('when stop runs, then the daemon exits, the pid file is removed and status exits 3', async () => {
    const pid = Number(readFileSync(pidFile(), 'utf8').trim());
    const r = await loom(env, ['stop']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('loom stopped\n');
    expect(alive(pid)).toBe(false);
    expect(existsSync(pidFile())).toBe(false);
    expect((await loom(env, ['status'])).code).toBe(3);
  });

  it('when stop runs with nothing running, then it says so and exits 0', async () => {
    const r = await loom(env, ['stop']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('loom is not running\n');
  });
});
