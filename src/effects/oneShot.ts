import { EXEC_OUTPUT_BYTES } from '../domain/limits.js';
import { killGroup, track } from './processes.js';
import { spawnShell } from './shellSpawn.js';

/** Outcome of a one-shot shell command. */
export interface ShellOutcome {
  /** Exit status (signal s → 128+s), or null on timeout/abort. */
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  /** stdout and stderr merged in arrival order, head and tail kept when over the cap. */
  output: Buffer;
  /** Bytes dropped from the middle. */
  omitted: number;
}

/** Keeps the first and last `half` bytes of a stream (behaviour.md §8.1 output cap; one-shot and persistent shells). */
export class HeadTail {
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  total = 0;
  constructor(private readonly half: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headLen < this.half) {
      const take = chunk.subarray(0, this.half - this.headLen);
      this.head.push(take);
      this.headLen += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailLen += chunk.length;
    while (this.tailLen - this.tail[0].length >= this.half) this.tailLen -= (this.tail.shift() as Buffer).length;
  }

  result(): { output: Buffer; omitted: number } {
    const tail = Buffer.concat(this.tail);
    const keptTail = tail.subarray(Math.max(0, tail.length - this.half));
    return { output: Buffer.concat([...this.head, keptTail]), omitted: this.total - this.headLen - keptTail.length };
  }
}

/**
 * Run `/bin/bash -c <text>` in its own process group with stdin /dev/null (behaviour.md §8.2).
 * On timeout the group gets SIGINT, then SIGKILL 2 s later; an abort (topic closed) kills it.
 */
export function runOneShot(opts: { text: string; cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal }): Promise<ShellOutcome> {
  return new Promise((resolve) => {
    const child = spawnShell(opts.text, { cwd: opts.cwd, env: opts.env });
    track(child);
    const out = new HeadTail(EXEC_OUTPUT_BYTES / 2);
    let timedOut = false;
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const stop = (first: NodeJS.Signals) => {
      killGroup(child, first);
      killTimer = setTimeout(() => killGroup(child, 'SIGKILL'), 2000);
    };
    const timer = setTimeout(() => { timedOut = true; stop('SIGINT'); }, opts.timeoutMs);
    const onAbort = () => { aborted = true; stop('SIGKILL'); };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => out.push(c));
    const finish = (code: number | null, sig: NodeJS.Signals | null) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      // The group may still hold the pipes open (background children): make sure it is gone.
      if (timedOut || aborted) killGroup(child, 'SIGKILL');
      const sigNo = sig ? (({ SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 }) as Record<string, number>)[sig] ?? 0 : 0;
      resolve({ exitCode: timedOut || aborted ? null : code ?? 128 + sigNo, timedOut, aborted, ...out.result() });
    };
    child.on('error', () => finish(127, null));
    child.on('close', finish);
  });
}

/** behaviour.md §8.1: ANSI escape sequences and CR removed, trailing newlines removed. */
export function cleanOutput(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]/g, '').replace(/\r/g, '').replace(/\n+$/, '');
}
