import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { endAllShells, ShellProcess, type CapturedOutput } from '../../src/effects/shellProcess.js';
import type { SentinelReport } from '../../src/effects/shellProtocol.js';
import { tempDir } from '../helpers/daemon.js';
import { alive, waitFor } from './support.js';

type Event =
  | { type: 'ready'; pid: number; transport: string; cwd: string }
  | ({ type: 'done' } & SentinelReport & CapturedOutput)
  | ({ type: 'interrupted'; cwd: string } & CapturedOutput)
  | ({ type: 'exited'; code: number; startup: string } & CapturedOutput);

/** The private temp folder of a shell (where its scripts are written). */
const dirOf = (shell: ShellProcess): string => (shell as unknown as { dir: string }).dir;

/** A shell process whose reports are queued; `next()` waits for the next one. */
function start(pipes: boolean, cwd = tempDir()) {
  const events: Event[] = [];
  const waiters: Array<(e: Event) => void> = [];
  const push = (e: Event) => { const w = waiters.shift(); if (w) w(e); else events.push(e); };
  const shell = new ShellProcess({
    cwd, pipes,
    env: { PATH: process.env.PATH, HOME: cwd, TERM: 'dumb', PS1: '', PS2: '', PROMPT_COMMAND: '', HISTFILE: '/dev/null' },
    hooks: {
      ready: (i) => push({ type: 'ready', ...i }),
      done: (r) => push({ type: 'done', ...r }),
      interrupted: (r) => push({ type: 'interrupted', ...r }),
      exited: (r) => push({ type: 'exited', ...r }),
    },
  });
  const next = (): Promise<Event> => {
    const e = events.shift();
    return e ? Promise.resolve(e) : new Promise((resolve) => waiters.push(resolve));
  };
  const run = async (text: string) => { shell.run(text); return next(); };
  return { shell, next, run, cwd };
}

afterEach(async () => { await endAllShells(); });

describe.each([['a PTY', false], ['pipes', true]])('effects/shellProcess.ts on %s (behaviour.md §8.3)', (_name, pipes) => {
  it('when started, then it reports ready with its pid and the home as cwd; state persists between commands', async () => {
    const s = start(pipes);
    expect(await s.next()).toEqual({ type: 'ready', pid: s.shell.pid, transport: pipes ? 'pipe' : 'pty', cwd: s.cwd });
    expect(await s.run('cd /tmp && export A=1; f() { echo "fn $1"; }; alias hi="echo alias"')).toMatchObject({ type: 'done', exitCode: 0, cwd: '/tmp' });
    const r = await s.run('echo "$A"; f x; hi; pwd');
    expect(r).toMatchObject({ type: 'done', exitCode: 0, cwd: '/tmp' });
    expect((r as { output: Buffer }).output.toString()).toBe('1\nfn x\nalias\n/tmp\n');
  });

  it('when a script is shorter than the one before, then nothing of the longer one runs (the file is cut to the new length)', async () => {
    const s = start(pipes);
    await s.next();
    const long = await s.run('echo first; echo second; echo third-and-longest-line-of-all');
    expect((long as { output: Buffer }).output.toString()).toBe('first\nsecond\nthird-and-longest-line-of-all\n');
    // Same length as the start of the last script: without the cut, "echo second; …" would run again.
    const short = await s.run('echo 1st;  ');
    expect((short as { output: Buffer }).output.toString()).toBe('1st\n');
    const longer = await s.run('echo a-line-longer-than-the-short-one');
    expect((longer as { output: Buffer }).output.toString()).toBe('a-line-longer-than-the-short-one\n');
  });

  it('when a command prints 50,000 lines, then the head, the omitted count and the tail are exact', async () => {
    const s = start(pipes);
    await s.next();
    const full = Buffer.from(Array.from({ length: 50000 }, (_, i) => `${i + 1}\n`).join(''));
    const r = (await s.run('seq 1 50000')) as { output: Buffer; omitted: number };
    expect(r.omitted).toBe(full.length - 131072);
    expect(r.output.equals(Buffer.concat([full.subarray(0, 65536), full.subarray(full.length - 65536)]))).toBe(true);
  });

  it('when interrupted, then the output so far is kept, later output dropped, and the shell takes the next command', async () => {
    const s = start(pipes);
    await s.next();
    s.shell.run('echo before; sleep 30; echo after');
    await new Promise((r) => setTimeout(r, 300));
    expect(s.shell.interrupt().output.toString()).toBe('before\n');
    const e = await s.next();
    expect(e).toMatchObject({ type: 'interrupted', cwd: s.cwd });
    expect((e as { output: Buffer }).output.toString()).toBe('before\n');
    const n = (await s.run('echo next')) as { output: Buffer };
    expect(n.output.toString()).toBe('next\n');
  });

  it('when the command exits the shell, then exited with its status and the output before it', async () => {
    const s = start(pipes);
    await s.next();
    const e = await s.run('echo bye; exit 3');
    expect(e).toMatchObject({ type: 'exited', code: 3 });
    expect((e as { output: Buffer }).output.toString()).toBe('bye\n');
  });

  it('when ended, then SIGHUP reaches the shell and its background jobs, the group is gone and the temp folder removed', async () => {
    const s = start(pipes);
    await s.next();
    const r = (await s.run('sleep 300 & echo $!')) as { output: Buffer };
    const bg = Number(r.output.toString().trim());
    expect(alive(bg)).toBe(true);
    s.shell.end();
    await s.shell.gone;
    await waitFor(() => !alive(s.shell.pid) && !alive(bg), 1000);
    expect(existsSync(dirOf(s.shell))).toBe(false);
  });

  it('when a job ignores SIGHUP, then SIGKILL reaches it 2 s later', async () => {
    const s = start(pipes);
    await s.next();
    // The shell waits until the job has armed its trap: SIGHUP must not reach it before that.
    const armed = `${s.cwd}/armed`;
    const r = (await s.run(
      `(trap "" HUP; : > ${armed}; sleep 300) & while [ ! -e ${armed} ]; do sleep 0.01; done; echo $!`,
    )) as { type: string; output: Buffer };
    // The command must have finished in a live shell: a shell that died on the way (`exited`) would
    // make end() return at once and hide the grace period this test is about.
    expect({ type: r.type, output: r.output.toString() }).toEqual({ type: 'done', output: expect.stringMatching(/^\d+\n$/) });
    const bg = Number(r.output.toString().trim());
    expect(alive(bg)).toBe(true);
    const started = Date.now();
    s.shell.end();
    await s.shell.gone;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    await waitFor(() => !alive(bg), 2000);
  });

  it('when killed, then the whole group dies at once', async () => {
    const s = start(pipes);
    await s.next();
    s.shell.run('trap "" INT HUP TERM; sleep 300');
    await new Promise((r) => setTimeout(r, 200));
    s.shell.kill();
    expect(await s.next()).toMatchObject({ type: 'exited', code: 137 });
  });
});

describe('effects/shellProcess.ts descriptors and start errors', () => {
  it('when two PTY shells are open, then neither a shell nor its commands hold the other PTY master (close-on-exec)', async () => {
    const a = start(false);
    const b = start(false);
    await Promise.all([a.next(), b.next()]);
    const r = (await b.run('for f in /proc/$$/fd/* /proc/self/fd/*; do readlink "$f"; done')) as { output: Buffer };
    expect(r.output.toString()).not.toContain('ptmx');
    // The daemon side holds both masters.
    const mine = readdirSync('/proc/self/fd').map((f) => { try { return readlinkSync(`/proc/self/fd/${f}`); } catch { return ''; } });
    expect(mine.filter((l) => l === '/dev/ptmx').length).toBeGreaterThanOrEqual(2);
  });

  it('when the cwd does not exist, then the constructor throws ENOENT', () => {
    expect(() => start(false, '/nonexistent/loom-home')).toThrow(/ENOENT/);
  });
});
