import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { directWrite, ptyMasterFd } from '../adapters/nodePty.js';
import type { PtyModule, PtyProcess } from '../adapters/ptyTypes.js';
import { errorMessage } from '../domain/errors.js';
import type { ConfinePlan } from '../domain/sandbox.js';
import { withMarker } from './daemonMarker.js';
import { setCloexec } from './nativeFd.js';
import { loadPtyLibrary, nativePartStatus, recordNativePart } from './nativeParts.js';
import { wrapperArgs } from './sandbox.js';

/**
 * The byte channel of a persistent shell (behaviour.md §8.3): `/bin/bash --noprofile --norc` on a
 * 200×50 PTY (node-pty), or, when no PTY can be opened, the same bash on pipes (`-i`, so it stays
 * interactive: aliases, SIGINT handling). The shell is a session leader either way, so its pid is
 * its process group and the whole group can be signalled.
 */

/** How a shell is connected. */
export type TransportKind = 'pty' | 'pipe';

/** A started shell's channel: raw bytes out, text in, its exit. */
export interface ShellTransport {
  readonly kind: TransportKind;
  readonly pid: number;
  write(data: string): void;
  /** SIGINT to what runs in the foreground: ^C on a PTY, a signal to the group on pipes. */
  interrupt(): void;
  onData(listener: (chunk: Buffer) => void): void;
  /** Called once: exit status, or 128 + signal. */
  onExit(listener: (code: number) => void): void;
}

/** behaviour.md §8.3: the PTY size. */
export const PTY_COLS = 200;
export const PTY_ROWS = 50;

let ptyModule: PtyModule | null | undefined;

/**
 * node-pty, loaded on the first shell (not at start: most daemons never open one) from Loom's
 * prebuilt parts or its own package (effects/nativeParts.ts); null when neither loads or LOOM_PTY=0.
 */
function loadPty(): PtyModule | null {
  if (ptyModule !== undefined) return ptyModule;
  if (process.env.LOOM_PTY === '0') {
    recordNativePart('node-pty', { loaded: false, reason: 'turned off by LOOM_PTY=0' });
    return (ptyModule = null);
  }
  ptyModule = loadPtyLibrary();
  if (ptyModule === null) {
    const s = nativePartStatus('node-pty');
    process.emitWarning(`Loom's native part node-pty is missing, bash topics use pipes: ${s && !s.loaded ? s.reason : 'not loaded'}`);
  }
  return ptyModule;
}

/** True when a PTY library is loaded or loadable (for /describe; loads it). */
export function ptyAvailable(): boolean {
  return loadPty() !== null;
}

const SHELL = '/bin/bash';
const PTY_ARGS = ['--noprofile', '--norc'];
/** Interactive on pipes too: without `-i` bash would not expand aliases and would die on SIGINT. */
const PIPE_ARGS = ['--noprofile', '--norc', '-i'];

function ptyTransport(pty: PtyModule, cwd: string, env: NodeJS.ProcessEnv, confine?: ConfinePlan): ShellTransport {
  const { file, args } = command(PTY_ARGS, confine);
  const p: PtyProcess = pty.spawn(file, args, { name: env.TERM ?? 'dumb', cols: PTY_COLS, rows: PTY_ROWS, cwd, env, encoding: null });
  // forkpty leaves the master inheritable (see native/fd.cc): no other child may hold it.
  const fd = ptyMasterFd(p);
  if (fd !== null) setCloexec(fd);
  const write = fd !== null ? directWrite(p, fd) : (data: string) => p.write(data);
  return {
    kind: 'pty',
    pid: p.pid,
    write,
    interrupt: () => write('\x03'),
    // With `encoding: null` node-pty hands out Buffers; its typings say string.
    onData: (listener) => { p.onData((d) => listener(d as unknown as Buffer)); },
    onExit: (listener) => { p.onExit(({ exitCode, signal }) => listener(signal ? 128 + signal : exitCode)); },
  };
}

/** The shell's program and arguments: bash itself, or the sandbox wrapper that confines and then executes it. */
function command(args: string[], confine?: ConfinePlan): { file: string; args: string[] } {
  return confine ? wrapperArgs(confine, SHELL, args) : { file: SHELL, args };
}

function pipeTransport(cwd: string, env: NodeJS.ProcessEnv, confine?: ConfinePlan): ShellTransport {
  const { file, args } = command(PIPE_ARGS, confine);
  const child = spawn(file, args, { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  // A failed start is also an `error` event; unheard, it would throw out of the event loop.
  child.on('error', () => undefined);
  if (child.pid === undefined) throw new Error(`cannot start ${SHELL} in ${cwd}`);
  const pid = child.pid;
  // Until the shell runs `exec 2>&1` (its first input), stderr carries only its start-up notes.
  child.stderr.resume();
  child.stdin.on('error', () => undefined);
  return {
    kind: 'pipe',
    pid,
    write: (data) => { if (child.stdin.writable) child.stdin.write(data); },
    interrupt: () => {
      try { process.kill(-pid, 'SIGINT'); } catch { /* the group is gone: the exit is reported */ }
    },
    onData: (listener) => { child.stdout.on('data', listener); },
    onExit: (listener) => { child.once('exit', (code, sig) => listener(code ?? 128 + (sig ? constants.signals[sig] ?? 0 : 0))); },
  };
}

/**
 * Start `/bin/bash --noprofile --norc` in `cwd` with `env`: on a PTY when one can be opened, else on
 * pipes (behaviour.md §8.3, beyond spec; `pipes` forces them). Throws when neither starts.
 */
export function startTransport(cwd: string, given: NodeJS.ProcessEnv, opts: { pipes?: boolean; confine?: ConfinePlan | undefined } = {}): ShellTransport {
  // The shell and its jobs carry the daemon's marker, whatever its environment layers say.
  const env = withMarker(given);
  const pty = opts.pipes ? null : loadPty();
  if (pty) {
    try {
      return ptyTransport(pty, cwd, env, opts.confine);
    } catch (err) {
      process.emitWarning(`cannot open a PTY, this shell uses pipes: ${errorMessage(err)}`);
    }
  }
  return pipeTransport(cwd, env, opts.confine);
}
