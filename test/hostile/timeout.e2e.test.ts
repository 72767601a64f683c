import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

/**
 * The `/exec` time limit bounds the topic (behaviour.md §8.1–8.2). When it passes,
 * the answer comes back whatever still holds the output pipes: a process that left the group
 * (`setsid`) is detached, a background job of the group is killed (SIGINT, then SIGKILL 2 s later).
 * Each test proves the order of events rather than timing it: the answer arrives while the
 * offending process is still alive.
 */

let d: RunningDaemon | undefined;
let client: LoomClient;
const dir = tempDir('loom-timeout-');
const strays: number[] = [];

beforeAll(async () => {
  d = await startDaemon();
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'tm' }) });
  client = new LoomClient(d.base, 'tm');
});

afterAll(async () => {
  // Only a stray that still runs (and is still the sleep it was): a pid that has ended may belong to
  // another test's process by now (pids wrap at 32768 in a long CI run).
  for (const pid of strays) {
    if (!alive(pid) || !/sleep/.test(cmdline(pid))) continue;
    try { process.kill(pid, 'SIGKILL'); } catch { /* already gone: nothing to clean up */ }
  }
  await d?.stop();
});

/** A process's command line ('' when it is gone). */
function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** True while a process runs (a zombie counts as ended). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until(ok: () => boolean, tries = 400): Promise<boolean> {
  for (let i = 0; i < tries && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  return ok();
}

const pidIn = (file: string) => Number(readFileSync(file, 'utf8').trim());

describe('/exec --timeout bounds the topic', () => {
  it('when a process that left the group holds the pipes, then TIMEOUT comes back while it still runs, and the topic takes the next command', async () => {
    const pidFile = join(dir, 'setsid.pid');
    const r = await client.exec('t1', `/exec --timeout 2 echo before; setsid sh -c 'echo $$ > ${pidFile}; exec sleep 45' & sleep 60`);
    const pid = pidIn(pidFile);
    strays.push(pid);
    expect(r.head?.code).toBe('TIMEOUT');
    expect(r.body).toBe('ERROR(TIMEOUT): timed out after 2 s; the command was interrupted\nexit: timeout | cwd: ~\n---\nbefore');
    // The answer did not wait for the detached process: it is still running now.
    expect(alive(pid)).toBe(true);
    // And the topic is free: the next command on it is answered at once (not after the 45 s sleep).
    expect((await client.exec('t1', '/exec echo next')).body).toBe('exit: 0 | cwd: ~\n---\nnext');
  }, 30000);

  it('when a background job of the group holds the pipes after the shell exited, then TIMEOUT comes back before the SIGKILL grace, and the job is killed by it', async () => {
    const pidFile = join(dir, 'bg.pid');
    // A background job of a non-interactive shell ignores SIGINT: only the SIGKILL 2 s later ends it.
    const r = await client.exec('t2', `/exec --timeout 2 sleep 30 & echo $! > ${pidFile}; echo started`);
    const pid = pidIn(pidFile);
    strays.push(pid);
    expect(r.head?.code).toBe('TIMEOUT');
    expect(r.body).toBe('ERROR(TIMEOUT): timed out after 2 s; the command was interrupted\nexit: timeout | cwd: ~\n---\nstarted');
    // Answered at the limit, not after the grace: the job (immune to SIGINT) still runs now…
    expect(alive(pid)).toBe(true);
    // …and the SIGKILL of the group ends it.
    expect(await until(() => !alive(pid))).toBe(true);
  }, 30000);

  it('when the shell and its job finish in time, then their whole output is kept (the pipes are waited for until the limit)', async () => {
    const r = await client.exec('t3', '/exec --timeout 20 (sleep 0.3; echo late) & echo now');
    expect(r.body).toBe('exit: 0 | cwd: ~\n---\nnow\nlate');
  }, 30000);
});
