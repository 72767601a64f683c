/*
 * The part of node-pty's API that Loom uses, declared here. node-pty is an optional dependency
 * (behaviour.md §17): a source checkout without a C++ toolchain has no node-pty folder, and the
 * type-check must not need its files. The declarations follow node-pty's typings for the calls
 * Loom makes; test/adapters/nodePty.int.test.ts drives them against the real library.
 */

/** A listener registration node-pty hands back; `dispose()` removes it. */
export interface PtyDisposable {
  dispose(): void;
}

/** What node-pty reports when the process on the PTY ends. */
export interface PtyExit {
  exitCode: number;
  signal?: number;
}

/** Options of `spawn`, as far as Loom sets them. */
export interface PtySpawnOptions {
  /** The terminal name, given to the child as TERM. */
  name?: string;
  cols?: number;
  rows?: number;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** `null`: data arrives as Buffers (node-pty's typings still say string). */
  encoding?: string | null;
}

/** A process started on a PTY. */
export interface PtyProcess {
  readonly pid: number;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  kill(signal?: string): void;
  onData(listener: (data: string) => void): PtyDisposable;
  onExit(listener: (e: PtyExit) => void): PtyDisposable;
}

/** node-pty's module, as far as Loom calls it. */
export interface PtyModule {
  spawn(file: string, args: string[], options: PtySpawnOptions): PtyProcess;
}
