import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { nativeSpawnAvailable, spawnShell, type ShellChild } from '../../src/effects/shellSpawn.js';
import { tempDir } from '../helpers/daemon.js';

/*
 * The shell starter of CLI actions and /exec (src/effects/shellSpawn.ts): on Linux the native
 * posix_spawn helper, which must give the same child as child_process.spawn with
 * `detached: true, stdio: ['ignore', 'pipe', 'pipe']` (behaviour.md §4.8, §8.2).
 */

interface Ran { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; order: string[] }

function collect(child: ShellChild | ReturnType<typeof spawn>): Promise<Ran> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const order: string[] = [];
    child.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.on('error', reject);
    child.on('exit', () => order.push('exit'));
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) => { order.push('close'); resolve({ code, signal, stdout, stderr, order }); });
  });
}

const run = (cmd: string, cwd = tempDir(), env: NodeJS.ProcessEnv = process.env) => collect(spawnShell(cmd, { cwd, env }));
const reference = (cmd: string, cwd: string, env: NodeJS.ProcessEnv) =>
  collect(spawn('/bin/bash', ['-c', cmd], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }));

describe('spawnShell', () => {
  it('on Linux, when the package is installed, then the native posix_spawn helper is the one in use', () => {
    // npm ci builds native/spawn.cc (package.json "install"); a silent fallback would lose the speed-up.
    if (process.platform === 'linux') expect(nativeSpawnAvailable()).toBe(true);
    else expect(nativeSpawnAvailable()).toBe(false);
  });

  it('when the command writes to both streams and exits 3, then stdout, stderr and the code are kept apart, exit before close', async () => {
    const r = await run('echo out; echo err >&2; exit 3');
    expect(r).toEqual({ code: 3, signal: null, stdout: 'out\n', stderr: 'err\n', order: ['exit', 'close'] });
  });

  it('when the shell is killed by a signal, then the code is null and the signal is named', async () => {
    const r = await run('kill -TERM $$');
    expect(r.code).toBeNull();
    expect(r.signal).toBe('SIGTERM');
  });

  it('then the shell leads its own session and process group, and stdin is /dev/null', async () => {
    const r = await run('ps -o pid=,pgid=,sid= -p $$; readlink /proc/$$/fd/0');
    const [ids, stdin] = r.stdout.trim().split('\n');
    const [pid, pgid, sid] = ids.trim().split(/\s+/);
    expect(pgid).toBe(pid);
    expect(sid).toBe(pid);
    expect(stdin).toBe('/dev/null');
  });

  it('then the cwd, the environment and the open descriptors are exactly those child_process.spawn gives', async () => {
    const cwd = tempDir();
    const env = { PATH: process.env.PATH, HOME: cwd, LOOM_X: "it's \"quoted\" $x", EMPTY: '', MULTI: 'a\nb' };
    // `_` is set by bash itself to its own path; the rest must match byte for byte. The descriptors
    // are listed by a glob in the shell itself: `ls /proc/$$/fd | …` races with bash closing the
    // pipeline's pipe ends in the parent, which made this test flaky (a stray fd 4 either side).
    // The signal mask is read by a program the shell starts (bash restores the mask it was given in
    // each child), not from bash's own status: bash blocks SIGINT, SIGTERM and SIGCHLD for a moment
    // around each fork, so its own mask depends on when it is read.
    const probe = 'pwd; env -0 | sort -z | tr "\\0" "\\n" | grep -v "^_="; fds=(/proc/$$/fd/*); echo "${fds[@]##*/}"; trap -p; grep SigBlk /proc/self/status';
    const [mine, theirs] = await Promise.all([run(probe, cwd, env), reference(probe, cwd, env)]);
    expect(mine.stdout).toBe(theirs.stdout);
    expect(mine.stdout.startsWith(`${cwd}\n`)).toBe(true);
    expect(mine.stdout).toContain('LOOM_X=it\'s "quoted" $x\n');
    expect(mine.stdout).toContain('SigBlk:\t0000000000000000\n');
  });

  it('when a background child keeps stdout open, then close waits for it (as child_process does)', async () => {
    const started = Date.now();
    const r = await run('(sleep 0.3; echo late) & echo now');
    expect(r.stdout).toBe('now\nlate\n');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('when the cwd does not exist, then an error event says `spawn /bin/bash ENOENT`, as child_process does', async () => {
    const err = await new Promise<Error & { code?: string }>((resolve) => {
      spawnShell('true', { cwd: '/nonexistent/loom', env: process.env }).on('error', resolve);
    });
    expect(err.message).toBe('spawn /bin/bash ENOENT');
    expect(err.code).toBe('ENOENT');
  });

  it('when 20 shells run at once, then each gets its own output and code', async () => {
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => run(`echo ${i}; exit ${i}`)));
    rs.forEach((r, i) => expect([r.stdout, r.code]).toEqual([`${i}\n`, i]));
  });
});
