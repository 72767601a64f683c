import { constants } from 'node:os';
import { killGroup, track } from './processes.js';
import { spawnShell, type NativeConfine } from './shellSpawn.js';

/**
 * The one runner of `/bin/bash -c <command>` (CLI actions, behaviour.md §4.8; `/exec`, §8.2): its
 * own process group, stdin `/dev/null`, output handed to a capture as it arrives. The time limit is
 * a hard bound on the caller: when it passes, the group gets the first signal (SIGINT for /exec,
 * SIGTERM for CLI actions) and SIGKILL 2 s later, and the outcome is returned at most SETTLE_MS after
 * the limit whatever still holds the pipes (a background job, a `setsid` child): the pipes are let
 * go, so a process that escaped the group is detached, never waited for. An abort (the topic closed)
 * kills the group at once and settles the same way.
 */

/** Where a run's output goes (the run itself keeps nothing). */
export interface OutputCapture {
  push(stream: 'stdout' | 'stderr', chunk: Buffer): void;
}

export interface ShellRunRequest {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** First signal to the group when the time limit passes. */
  timeoutSignal: 'SIGINT' | 'SIGTERM';
  capture: OutputCapture;
  signal?: AbortSignal;
  /** Run confined by Landlock (behaviour.md §15). */
  confine?: NativeConfine;
}

export interface ShellRunOutcome {
  /** Exit status (signal s → 128+s); null on timeout or abort; 127 when the shell could not start. */
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  /** Why the shell could not start (e.g. a missing cwd: `spawn /bin/bash ENOENT`). */
  spawnError?: string;
}

/** behaviour.md §8.2, §4.8: SIGKILL follows the first signal after this long. */
export const KILL_GRACE_MS = 2000;
/** After a timeout or an abort, output still arriving is taken for this long; then the run is over. */
export const SETTLE_MS = 250;

/** The number of a signal name (`SIGINT` → 2), 0 when unknown. */
export function signalNumber(name: NodeJS.Signals | null): number {
  return name ? (constants.signals as Record<string, number>)[name] ?? 0 : 0;
}

/** Run one shell command; never rejects. */
export function runShell(req: ShellRunRequest): Promise<ShellRunOutcome> {
  return new Promise((resolve) => {
    const child = spawnShell(req.command, { cwd: req.cwd, env: req.env, ...(req.confine ? { confine: req.confine } : {}) });
    track(child);
    let timedOut = false;
    let aborted = false;
    let done = false;
    let settleTimer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (c: Buffer) => req.capture.push('stdout', c));
    child.stderr.on('data', (c: Buffer) => req.capture.push('stderr', c));
    const finish = (exitCode: number | null, spawnError?: string) => {
      if (done) return;
      done = true;
      clearTimeout(limit);
      clearTimeout(settleTimer);
      req.signal?.removeEventListener('abort', onAbort);
      if (timedOut || aborted) {
        // Whatever still holds the pipes is detached: the run is over.
        child.stdout.destroy();
        child.stderr.destroy();
      }
      resolve({ exitCode: timedOut || aborted ? null : exitCode, timedOut, aborted, ...(spawnError !== undefined ? { spawnError } : {}) });
    };
    const stop = (first: NodeJS.Signals) => {
      killGroup(child, first);
      if (first !== 'SIGKILL') setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS).unref();
      settleTimer = setTimeout(() => finish(null), SETTLE_MS);
    };
    const limit = setTimeout(() => { timedOut = true; stop(req.timeoutSignal); }, req.timeoutMs);
    const onAbort = () => {
      if (done || aborted || timedOut) return;
      aborted = true;
      stop('SIGKILL');
    };
    if (req.signal?.aborted) onAbort();
    else req.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e: Error) => finish(127, e.message));
    child.on('close', (code: number | null, sig: NodeJS.Signals | null) => finish(code ?? 128 + signalNumber(sig)));
  });
}
