import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { HeadTailCapture, SplitCapture } from '../../src/effects/captures.js';
import { runShell, signalNumber } from '../../src/effects/shellRun.js';
import { nativeHelper, spawnWith, type NativeSpawn } from '../../src/effects/shellSpawn.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

/** True while a process exists at all (a zombie counts: it is not reaped yet). */
function exists(pid: number): boolean {
  try {
    readFileSync(`/proc/${pid}/stat`);
    return true;
  } catch {
    return false;
  }
}

/** The pipe inodes this process holds open (`pipe:[123]`). */
function openPipes(): Set<string> {
  const out = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const link = readlinkSync(`/proc/self/fd/${fd}`);
      if (link.startsWith('pipe:')) out.add(link);
    } catch {
      // The fd of the directory listing itself is gone by now: not a pipe of ours.
    }
  }
  return out;
}

describe('the one shell runner (effects/shellRun.ts)', () => {
  it('when a command writes to both streams, then the /exec capture merges them and the action capture keeps them apart', async () => {
    const merged = new HeadTailCapture(65536);
    const r = await runShell({ command: 'echo out; echo err >&2; exit 3', cwd: tmpdir(), env, timeoutMs: 10000, timeoutSignal: 'SIGINT', capture: merged });
    expect(r).toEqual({ exitCode: 3, timedOut: false, aborted: false });
    expect(merged.result().output.toString()).toBe('out\nerr\n');
    const split = new SplitCapture(1 << 20);
    await runShell({ command: 'echo out; echo err >&2', cwd: tmpdir(), env, timeoutMs: 10000, timeoutSignal: 'SIGTERM', capture: split });
    expect([split.stdout.get().toString(), split.stderr.get().toString(), split.combined.get().toString()]).toEqual(['out\n', 'err\n', 'out\nerr\n']);
  });

  it('when the shell is killed by a signal, then the exit status is 128 + its number', async () => {
    const r = await runShell({ command: 'kill -TERM $$', cwd: tmpdir(), env, timeoutMs: 10000, timeoutSignal: 'SIGINT', capture: new HeadTailCapture(10) });
    expect(r.exitCode).toBe(128 + signalNumber('SIGTERM'));
  });

  it('when the cwd is missing, then exit 127 with the spawn error, and no capture is touched', async () => {
    const r = await runShell({ command: 'true', cwd: '/nonexistent/dir', env, timeoutMs: 10000, timeoutSignal: 'SIGINT', capture: new HeadTailCapture(10) });
    expect(r).toEqual({ exitCode: 127, timedOut: false, aborted: false, spawnError: 'spawn /bin/bash ENOENT' });
  });

  it('when the signal is already aborted, then the run ends at once as aborted', async () => {
    const ctl = new AbortController();
    ctl.abort();
    const r = await runShell({ command: 'sleep 30', cwd: tmpdir(), env, timeoutMs: 60000, timeoutSignal: 'SIGINT', capture: new HeadTailCapture(10), signal: ctl.signal });
    expect(r).toEqual({ exitCode: null, timedOut: false, aborted: true });
  });
});

const native = nativeHelper();
(native ? describe : describe.skip)('the native spawn helper when watching a child fails (NativeChild leak)', () => {
  it('when watch() throws, then the child is killed and reaped, its pipes closed, and the start reported as an error', async () => {
    const real = native as NativeSpawn;
    let started: [number, number, number] | undefined;
    let pipes = new Set<string>();
    const failing: NativeSpawn = {
      spawn: (...args) => {
        started = real.spawn(...args);
        pipes = new Set([started[1], started[2]].map((fd) => readlinkSync(`/proc/self/fd/${fd}`)));
        return started;
      },
      watch: () => { throw Object.assign(new Error('pidfd_open failed: Too many open files'), { errno: 24 }); },
      reap: real.reap?.bind(real),
    };
    const child = spawnWith(failing, 'sleep 30', { cwd: tmpdir(), env });
    const err = await new Promise<Error & { code?: string }>((resolve) => child.once('error', resolve));
    expect(err.code).toBe('EMFILE');
    expect(child.pid).toBeUndefined();
    const pid = (started as [number, number, number])[0];
    for (let i = 0; i < 200 && exists(pid); i++) await new Promise((r) => setTimeout(r, 10));
    // Gone from the process table: killed and reaped (a zombie would still be listed).
    expect(exists(pid)).toBe(false);
    const still = openPipes();
    expect([...pipes].filter((p) => still.has(p))).toEqual([]);
  });
});
