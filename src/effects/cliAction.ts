import { killGroup, track } from './processes.js';
import { spawnShell } from './shellSpawn.js';

/**
 * The process side of CLI actions (behaviour.md §4.8): `/bin/bash -c <command>` in its own process
 * group, stdin `/dev/null`, output captured up to a cap; on timeout SIGTERM to the group, SIGKILL
 * 2 s later; an abort (topic closed) kills the group at once.
 */

/** One CLI action run. */
export interface CliActionRequest {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Cap of each captured stream (stdout, stderr, interleaved). */
  maxBytes: number;
  signal?: AbortSignal;
}

/** What the run produced. */
export interface CliActionOutcome {
  /** Exit status (signal s → 128+s); null on timeout or abort. */
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  stdout: Buffer;
  stderr: Buffer;
  /** stdout and stderr in arrival order. */
  combined: Buffer;
  /** The spawn itself failed (e.g. a missing cwd). */
  spawnError?: string;
}

/** Collects chunks up to a byte cap. */
class Capped {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}
  push(c: Buffer): void {
    if (this.size >= this.max) return;
    const take = c.subarray(0, this.max - this.size);
    this.chunks.push(take);
    this.size += take.length;
  }
  get(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

/** Run a CLI action command. Never rejects. */
export function runCliAction(req: CliActionRequest): Promise<CliActionOutcome> {
  return new Promise((resolve) => {
    const out = new Capped(req.maxBytes);
    const err = new Capped(req.maxBytes);
    const both = new Capped(req.maxBytes);
    let timedOut = false;
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const child = spawnShell(req.command, { cwd: req.cwd, env: req.env });
    track(child);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child, 'SIGKILL'), 2000);
    }, req.timeoutMs);
    const onAbort = () => { aborted = true; killGroup(child, 'SIGKILL'); };
    req.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (c: Buffer) => { out.push(c); both.push(c); });
    child.stderr.on('data', (c: Buffer) => { err.push(c); both.push(c); });
    let done = false;
    const finish = (code: number | null, sig: NodeJS.Signals | null, spawnError?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      req.signal?.removeEventListener('abort', onAbort);
      // Background children may still hold the pipes: a timed-out or aborted group is ended for good.
      if (timedOut || aborted) killGroup(child, 'SIGKILL');
      const exitCode = timedOut || aborted ? null : code ?? 128 + (sig ? SIGNALS[sig] ?? 0 : 0);
      resolve({ exitCode, timedOut, aborted, stdout: out.get(), stderr: err.get(), combined: both.get(), ...(spawnError ? { spawnError } : {}) });
    };
    child.on('error', (e) => finish(127, null, e.message));
    child.on('close', (code, sig) => finish(code, sig));
  });
}
