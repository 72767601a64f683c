import { accessSync, closeSync, constants, ftruncateSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import type { ConfinePlan } from '../domain/sandbox.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXEC_OUTPUT_BYTES } from '../domain/limits.js';
import { errorMessage } from '../domain/errors.js';
import { HeadTailCapture } from './captures.js';
import { shellFolderPrefix } from './daemonMarker.js';
import { track } from './processes.js';
import { failLine, freshHex, initLine, recoveryLine, runLine, SentinelScanner, sentinelTag, type SentinelReport } from './shellProtocol.js';
import { openCommandChannel, type CommandChannel } from './shellInput.js';
import { startTransport, type ShellTransport, type TransportKind } from './shellTransport.js';

/**
 * One persistent shell process and its completion protocol (behaviour.md §8.3). It runs one command
 * at a time and reports through hooks; when and why to run, interrupt or end is the shell machine's
 * decision (machines/shell.ts). Output is only kept while a command runs: what the shell prints
 * between commands (a background job, the rest of an interrupted command) is dropped, so it never
 * reaches the next command.
 */

/** A command's output as kept (behaviour.md §8.1 cap: first and last 65536 bytes). */
export interface CapturedOutput {
  output: Buffer;
  omitted: number;
}

/** What a shell process reports. */
export interface ShellHooks {
  /** The shell answered its first sentinel: it takes commands now. */
  ready(info: { pid: number; transport: TransportKind; cwd: string }): void;
  /** The running command's sentinel came. */
  done(r: SentinelReport & CapturedOutput): void;
  /** After an interrupt, the shell listens again; the output is what had come before the interrupt. */
  interrupted(r: { cwd: string } & CapturedOutput): void;
  /** The shell ended (by itself, by a signal, or killed); the output is the running command's, if any. */
  exited(r: { code: number; startup: string } & CapturedOutput): void;
}

/** behaviour.md §8.3: SIGKILL follows SIGHUP after this long when a shell is ended. */
export const SHELL_KILL_GRACE_MS = 2000;
/** Start-up output kept for the error message of a shell that dies while starting. */
const STARTUP_BYTES = 4096;

type Mode =
  | { name: 'starting'; scanner: SentinelScanner }
  | { name: 'idle' }
  | { name: 'running'; scanner: SentinelScanner; capture: HeadTailCapture }
  | { name: 'interrupting'; scanner: SentinelScanner; kept: CapturedOutput }
  | { name: 'exited' };

const live = new Set<ShellProcess>();

let scriptBase: string | undefined;

/**
 * Where shells' private folders go: a memory file system when there is one ($XDG_RUNTIME_DIR, then
 * /dev/shm), else the temp folder. Each command's script is written there; on a disk, rewriting it
 * frees and allocates blocks every command (with `discard` mounts, a TRIM each time, far slower
 * than the same write on tmpfs).
 */
export function scriptFolderBase(): string {
  if (scriptBase !== undefined) return scriptBase;
  for (const dir of [process.env.XDG_RUNTIME_DIR, '/dev/shm']) {
    if (!dir) continue;
    try {
      if (!statSync(dir).isDirectory()) continue;
      accessSync(dir, constants.W_OK | constants.X_OK);
      return (scriptBase = dir);
    } catch {
      continue; // missing or not writable: try the next
    }
  }
  return (scriptBase = tmpdir());
}

/** End every shell (daemon shutdown) and wait until their process groups are gone. */
export async function endAllShells(): Promise<void> {
  const all = [...live];
  for (const s of all) s.end();
  await Promise.all(all.map((s) => s.gone));
}

/** Send a signal to a process group; false when the group is empty. Never throws (it runs in actor clean-ups). */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    // EPERM: a member changed its user (a setuid program); it exists, Loom cannot signal it.
    if (code !== 'EPERM') process.emitWarning(`signal ${signal} to process group ${pgid}: ${errorMessage(err)}`);
    return true;
  }
}

export class ShellProcess {
  readonly pid: number;
  readonly transport: TransportKind;
  /** Resolves when the shell has exited and its process group is empty or was killed. */
  readonly gone: Promise<void>;
  private mode: Mode;
  private readonly dir: string;
  private readonly script: string;
  /** The script file, open for the shell's whole life (see writeScript). */
  private readonly scriptFd: number;
  /** The script file's length since the last writeScript (what a shorter script must cut off). */
  private scriptBytes = 0;
  private readonly io: ShellTransport;
  /** The command pipe (effects/shellInput.ts); null: commands are typed on the terminal (no FIFO could be made). */
  private readonly input: CommandChannel | null;
  private startup = '';
  private exitedFlag = false;
  private ending = false;
  private killTimer: NodeJS.Timeout | undefined;
  private markGone!: () => void;

  /** Start `/bin/bash` in `cwd` (behaviour.md §8.3); throws when no shell can be started. */
  constructor(opts: { cwd: string; env: NodeJS.ProcessEnv; hooks: ShellHooks; pipes?: boolean; confine?: ConfinePlan }) {
    if (!statSync(opts.cwd).isDirectory()) throw new Error(`${opts.cwd} is not a folder`);
    this.dir = mkdtempSync(join(scriptFolderBase(), shellFolderPrefix()));
    this.script = join(this.dir, 'command.sh');
    try {
      this.scriptFd = openSync(this.script, 'w', 0o600);
    } catch (err) {
      rmSync(this.dir, { recursive: true, force: true });
      throw err;
    }
    this.input = openCommandChannel(this.dir);
    try {
      // A confined shell reads its script folder and nothing else of the daemon's.
      const confine = opts.confine ? { ...opts.confine, ro: [...opts.confine.ro, this.dir] } : undefined;
      this.io = startTransport(opts.cwd, opts.env, { pipes: opts.pipes, confine });
    } catch (err) {
      this.input?.close();
      closeSync(this.scriptFd);
      rmSync(this.dir, { recursive: true, force: true });
      throw err;
    }
    this.pid = this.io.pid;
    this.transport = this.io.kind;
    this.gone = new Promise((resolve) => { this.markGone = resolve; });
    live.add(this);
    // The shell's group is killed at shutdown with every other child group (effects/processes.ts).
    track({ pid: this.pid, once: (_ev, listener) => this.gone.then(listener) });
    const hex = freshHex();
    this.mode = {
      name: 'starting',
      scanner: new SentinelScanner(sentinelTag(hex), (b) => {
        if (this.startup.length < STARTUP_BYTES) this.startup += b.toString('utf8');
      }),
    };
    this.io.onData((chunk) => this.onData(chunk, opts.hooks));
    this.io.onExit((code) => this.onExit(code, opts.hooks));
    this.io.write(initLine(hex, this.io.kind === 'pty', this.input?.path));
  }

  /**
   * Hand the shell one line. Through the command pipe, a line the pipe cannot take whole means
   * something else writes into it: the shell's input is no longer Loom's, so the shell is killed
   * (the running command answers that the shell ended, and the next /exec gets a fresh shell).
   */
  private send(line: string): void {
    if (!this.input) return this.io.write(line);
    if (!this.input.write(line)) this.kill();
  }

  /** Run a script (the shell must be idle): written to the private temp file, then sourced. */
  run(text: string): void {
    if (this.mode.name !== 'idle') throw new Error(`shell ${this.pid} is ${this.mode.name}`);
    const hex = freshHex();
    const capture = new HeadTailCapture(EXEC_OUTPUT_BYTES / 2);
    const scanner = new SentinelScanner(sentinelTag(hex), (b) => capture.push('stdout', b));
    this.mode = { name: 'running', capture, scanner };
    let line: string;
    try {
      this.writeScript(text);
      line = runLine(this.script, hex);
    } catch (err) {
      // A script that cannot be written still ends with its sentinel (status 1, the reason as output).
      line = failLine(`loom: cannot write the script: ${errorMessage(err)}`, hex);
    }
    this.send(line);
  }

  /**
   * Replace the script file's content. The file stays open (when the folder is on ext4, truncating by
   * opening the file again makes its close flush it, auto_da_alloc): pwrite from offset 0 on the open
   * descriptor, then ftruncate only when the new script is shorter than the last one (a repeated or
   * longer command is one system call, not two). Synchronous on purpose: bodies are
   * capped at 10 MiB (spec §8) and a trip through the thread pool costs more than it saves.
   */
  private writeScript(text: string): void {
    const bytes = Buffer.from(text);
    // An upper bound first: a write that fails half way must not leave bytes the next cut would miss.
    const before = this.scriptBytes;
    this.scriptBytes = Math.max(before, bytes.length);
    for (let at = 0; at < bytes.length;) at += writeSync(this.scriptFd, bytes, at, bytes.length - at, at);
    if (bytes.length < before) ftruncateSync(this.scriptFd, bytes.length);
    this.scriptBytes = bytes.length;
  }

  /**
   * Timeout (behaviour.md §8.3): keep the output so far, SIGINT (^C), then a sentinel that says the shell
   * listens again; everything up to that sentinel is dropped. Returns the kept output.
   */
  interrupt(): CapturedOutput {
    if (this.mode.name === 'interrupting') return this.mode.kept;
    if (this.mode.name !== 'running') return { output: Buffer.alloc(0), omitted: 0 };
    const hex = freshHex();
    this.mode.scanner.flush();
    const kept = this.mode.capture.result();
    this.mode = { name: 'interrupting', kept, scanner: new SentinelScanner(sentinelTag(hex), () => undefined) };
    // With the command pipe, SIGINT goes to the group at once: it is pending before the recovery line
    // can be read, so it cannot cut that line short (^C on the terminal is delivered later).
    if (this.input) signalGroup(this.pid, 'SIGINT');
    else this.io.interrupt();
    this.send(recoveryLine(hex));
    return kept;
  }

  /** Kill the shell's process group now (an interrupt that was not answered). */
  kill(): void {
    if (!this.exitedFlag) signalGroup(this.pid, 'SIGKILL');
  }

  /** End the shell: SIGHUP to its group, SIGKILL 2 s later unless the group is gone by then. */
  end(): void {
    if (this.ending) return;
    this.ending = true;
    if (this.exitedFlag && !signalGroup(this.pid, 0)) return this.finish();
    signalGroup(this.pid, 'SIGHUP');
    this.killTimer = setTimeout(() => {
      signalGroup(this.pid, 'SIGKILL');
      this.finish();
    }, SHELL_KILL_GRACE_MS);
  }

  private onData(chunk: Buffer, hooks: ShellHooks): void {
    const m = this.mode;
    if (m.name === 'idle' || m.name === 'exited') return;
    const report = m.scanner.push(chunk);
    if (!report) return;
    this.mode = { name: 'idle' };
    if (m.name === 'starting') hooks.ready({ pid: this.pid, transport: this.transport, cwd: report.cwd });
    else if (m.name === 'running') hooks.done({ ...report, ...m.capture.result() });
    else hooks.interrupted({ cwd: report.cwd, ...m.kept });
  }

  private onExit(code: number, hooks: ShellHooks): void {
    const m = this.mode;
    this.mode = { name: 'exited' };
    this.exitedFlag = true;
    let kept: CapturedOutput = { output: Buffer.alloc(0), omitted: 0 };
    if (m.name === 'running') {
      m.scanner.flush();
      kept = m.capture.result();
    } else if (m.name === 'interrupting') {
      kept = m.kept;
    }
    if (this.ending && !signalGroup(this.pid, 0)) this.finish();
    hooks.exited({ code, startup: this.startup, ...kept });
  }

  private finish(): void {
    clearTimeout(this.killTimer);
    if (!live.delete(this)) return;
    closeSync(this.scriptFd);
    this.input?.close();
    rmSync(this.dir, { recursive: true, force: true });
    this.markGone();
  }
}
