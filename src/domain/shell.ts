/**
 * Persistent shells of `bash:<name>` topics (behaviour.md §8.3): what a command's run ends with,
 * and the public view of a shell that /topics, the bash hub and the inspector show.
 */

/** The output a command left, capped as behaviour.md §8.1 says (first and last 65536 bytes). */
export interface ShellOutput {
  output: Buffer;
  /** Bytes dropped from the middle. */
  omitted: number;
}

/** How one command in a persistent shell ended. */
export type ShellRunOutcome =
  /** Its sentinel came: exit status and the shell's cwd after it. */
  | ({ kind: 'done'; exitCode: number; cwd: string } & ShellOutput)
  /** The time limit passed; `ended` when the shell did not answer ^C within 5 s and was killed. */
  | ({ kind: 'timeout'; cwd: string; ended: boolean } & ShellOutput)
  /** The shell ended while the command ran (`exit`, a signal): status and the last cwd it reported. */
  | ({ kind: 'ended'; exitCode: number; cwd: string } & ShellOutput)
  /** The session was closed while the command ran (DELETE /sessions, agent deletion, shutdown). */
  | { kind: 'closed' }
  /** No shell could be started. */
  | { kind: 'failed'; message: string };

/** How a shell is connected: a PTY, or pipes when no PTY could be opened. */
export type ShellTransportKind = 'pty' | 'pipe';

/** States of the shell machine (machines/shell.ts). */
export type ShellStateName = 'starting' | 'ready' | 'running' | 'interrupting' | 'ended';

/** A shell as /topics, the bash hub and the inspector show it (absolute cwd; callers display it). */
export interface ShellView {
  state: ShellStateName;
  pid: number | null;
  cwd: string;
  transport: ShellTransportKind | null;
  /** First line of the last command's shell text, or null. */
  lastCommand: string | null;
}
