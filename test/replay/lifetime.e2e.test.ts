import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, tempDir } from '../helpers/daemon.js';

/**
 * behaviour.md §14.3: replay stops its private daemon, and what that daemon started, on every exit
 * path: the reader of its output leaving (EPIPE), SIGINT, SIGTERM, an uncaught exception, and even
 * kill -9 of the replay. Each run gets its own TMPDIR, so the daemon's temp data folder is found
 * (and must be gone) there, and its processes are found by that folder in their environment.
 */

jest.setTimeout(120000);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Pids of live processes whose environment holds `needle` (the daemon and its children carry TMPDIR). */
function processesWith(needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, 'utf8');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // A zombie has exited; only its parent's wait is missing.
      if (env.includes(needle) && !/^\d+ \(.*\) Z/.test(stat)) out.push(Number(name));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return out;
}

/** True when `cmd` runs as one of `pids` (by its command line). */
function running(pids: number[], cmd: string): boolean {
  return pids.some((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(cmd);
    } catch {
      return false;
    }
  });
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** A trace: an agent, `quick` quick steps, then an /exec of `sleep <secs>`. */
function trace(dir: string, quick: number, sleep: string): string {
  const lines = [JSON.stringify({ seq: 1, kind: 'agent', agent_id: 'leo' })];
  for (let i = 0; i < quick; i++) lines.push(JSON.stringify({ seq: i + 2, kind: 'exec', agent_id: 'leo', cmd: '/info' }));
  lines.push(JSON.stringify({ seq: quick + 2, kind: 'exec', agent_id: 'leo', cmd: `/exec sleep ${sleep}` }));
  const file = join(dir, 't.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

interface Run {
  proc: ChildProcess;
  tmp: string;
  exited: Promise<number | null>;
  stdout: () => string;
}

/** `loom replay <file> --speed 1` with its own TMPDIR; `node` flags first (e.g. a preload). */
function replay(file: string, tmp: string, nodeFlags: string[] = [], shell?: string): Run {
  const env = { ...process.env, TMPDIR: tmp };
  const proc = shell
    ? spawn('sh', ['-c', shell], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [...nodeFlags, CLI, 'replay', file, '--speed', '1'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr?.resume();
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  return { proc, tmp, exited, stdout: () => out };
}

/** After the replay ended: nothing of its daemon runs and its temp folder is gone. */
async function expectAllGone(tmp: string): Promise<void> {
  // The daemon wipes its own start-up environment block (the sandbox keeps agents from reading it), so
  // its end shows as its temp data folder going; its children still carry TMPDIR.
  await until(() => processesWith(`TMPDIR=${tmp}`).length === 0 && readdirSync(tmp).length === 0, 15000);
  expect(processesWith(`TMPDIR=${tmp}`)).toEqual([]);
  expect(readdirSync(tmp)).toEqual([]);
}

describe('loom replay stops its private daemon on every exit path (behaviour.md §14.3)', () => {
  const sleeping = async (tmp: string, secs: string) => {
    expect(await until(() => running(processesWith(`TMPDIR=${tmp}`), `sleep ${secs}`), 30000)).toBe(true);
  };

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGKILL'] as const) {
    it(`${signal} to the replay during a running /exec: the daemon and its sleep end`, async () => {
      const tmp = tempDir('loom-life-');
      dirs.push(tmp);
      const secs = signal === 'SIGINT' ? '301.1' : signal === 'SIGTERM' ? '301.2' : '301.3';
      const run = join(tmp, 'run');
      mkdirSync(run);
      const r = replay(trace(tmp, 1, secs), run);
      await sleeping(r.tmp, secs);
      r.proc.kill(signal);
      // Ended by the signal itself (no handler turns it into an exit code).
      expect(await r.exited).toBe(-1);
      await expectAllGone(r.tmp);
    });
  }

  it('an uncaught exception in the replay: the daemon and its sleep end', async () => {
    const tmp = tempDir('loom-life-');
    dirs.push(tmp);
    const run = join(tmp, 'run');
    mkdirSync(run);
    const preload = join(tmp, 'boom.mjs');
    // Thrown from a timer once the sleep runs: nothing in the replay catches it.
    writeFileSync(preload, `setTimeout(() => { throw new Error('injected failure'); }, 4000).unref();\n`);
    const r = replay(trace(tmp, 1, '301.4'), run, ['--import', preload]);
    await sleeping(run, '301.4');
    expect(await r.exited).toBe(1);
    await expectAllGone(run);
  });

  it('| head -2: the reader leaves, the replay ends (EPIPE) and so does its daemon', async () => {
    const tmp = tempDir('loom-life-');
    dirs.push(tmp);
    const run = join(tmp, 'run');
    mkdirSync(run);
    const file = trace(tmp, 300, '301.5');
    const r = replay(file, run, [], `"${process.execPath}" "${CLI}" replay "${file}" | head -2`);
    expect(await r.exited).toBe(0);
    expect(r.stdout().split('\n').filter(Boolean)).toHaveLength(2);
    await expectAllGone(run);
  });
});
