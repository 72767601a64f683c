import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { closeSync } from 'node:fs';
import { Socket } from 'node:net';
import { constants, release } from 'node:os';
import type { Readable } from 'node:stream';
import { withMarker } from './daemonMarker.js';
import { loadAddon, recordNativePart } from './nativeParts.js';

/**
 * `/bin/bash -c <command>` for CLI actions (behaviour.md §4.8) and `/exec` (§8.2): its own process
 * group (session leader), stdin `/dev/null`, stdout and stderr as pipes, the given cwd and
 * environment, every signal at its default disposition.
 *
 * Why not only `child_process.spawn`: Node 20's libuv starts children with fork(), which copies the
 * page tables of the whole daemon and then costs it a copy-on-write fault per page it writes, so a
 * spawn costs in proportion to the daemon's resident memory (bench/actions, docs/architecture.md).
 * The native helper (native/spawn.cc, prebuilt in the package or built at install, effects/nativeParts.ts)
 * uses glibc's posix_spawn, i.e. clone(CLONE_VM | CLONE_VFORK): nothing is copied. Where it is
 * missing (not Linux, no prebuilt part fits and none was built, Linux before 5.3) the same child
 * comes from child_process.spawn.
 */

/** The native helper (native/spawn.cc), as spawnWith uses it. */
export interface NativeSpawn {
  /** With `confine`, the child is confined by Landlock before it executes (native/confine.h). */
  spawn(file: string, argv: string[], envp: string[], cwd: string, confine?: NativeConfine): [pid: number, stdoutFd: number, stderrFd: number];
  watch(pid: number, onExit: (code: number | null, signal: number) => void): void;
  /** Reap an ended child without waiting; true when reaped or gone (absent in helpers built before it). */
  reap?(pid: number): boolean;
  /** The kernel's Landlock ABI, 0 when it has none (absent in helpers built before it). */
  landlockAbi?(): number;
  /** "" when confined children can have their own user, mount and PID namespaces, else why not. */
  probeNamespaces?(): string;
  /** Zero the environment block /proc/<pid>/environ shows (the strings move to the heap). */
  scrubEnviron?(): number;
}

/**
 * What the native confined spawn takes: read-write (the agent's roots) and read-execute trees, the
 * ABI cap; `tcpPorts`: connects only there (null: TCP not confined); own namespaces (`netns`: an
 * empty network one). No terminal is granted.
 */
export interface NativeConfine {
  rw: string[];
  ro: string[];
  abi: number;
  tcpPorts?: number[] | null;
  namespaces?: boolean;
  netns?: boolean;
}

/** pidfd_open, which `watch` needs, came with Linux 5.3. */
function kernelHasPidfd(): boolean {
  const [major, minor] = release().split('.').map((n) => Number.parseInt(n, 10));
  return major > 5 || (major === 5 && minor >= 3);
}

function loadNative(): NativeSpawn | null {
  const off = process.platform !== 'linux' ? `not used on ${process.platform}` : process.env.LOOM_NATIVE_SPAWN === '0' ? 'turned off by LOOM_NATIVE_SPAWN=0' : !kernelHasPidfd() ? `Linux ${release()} has no pidfd_open (5.3)` : null;
  if (off !== null) {
    recordNativePart('loom_spawn', { loaded: false, reason: off });
    return null;
  }
  return loadAddon<NativeSpawn>('loom_spawn');
}

const native = loadNative();

/** The loaded native helper, or null (tests wrap it to make its calls fail on purpose). */
export function nativeHelper(): NativeSpawn | null {
  return native;
}

/** True when shells start through posix_spawn (the native helper is loaded). */
export function nativeSpawnAvailable(): boolean {
  return native !== null;
}

/**
 * The started shell, as much of ChildProcess as its callers use: `pid`, `stdout`, `stderr`, and
 * the events `error` (could not start), `exit` (code, signal name) and `close` (after `exit` and
 * the end of both pipes, which background children may hold open).
 */
export interface ShellChild extends EventEmitter {
  readonly pid: number | undefined;
  readonly stdout: Readable;
  readonly stderr: Readable;
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

/** A NUL cannot cross execve: such input goes to child_process.spawn, which refuses it as before. */
const hasNul = (s: string) => s.includes('\0');

class NativeChild extends EventEmitter implements ShellChild {
  constructor(lib: NativeSpawn, readonly pid: number, readonly stdout: Socket, readonly stderr: Socket) {
    super();
    let pending = 3;
    let result: [number | null, NodeJS.Signals | null] = [null, null];
    const step = () => {
      if (--pending === 0) this.emit('close', ...result);
    };
    this.stdout.once('close', step);
    this.stderr.once('close', step);
    lib.watch(pid, (code, signal) => {
      result = [code, signal === 0 ? null : SIGNAL_NAMES.get(signal) ?? null];
      this.emit('exit', ...result);
      step();
    });
  }
}

/** Start `/bin/bash -c <command>`; never throws (a failed start is an `error` event, as with child_process). */
export function spawnShell(command: string, opts: SpawnOptions): ShellChild {
  return spawnWith(native, command, opts);
}

/** Where and how a shell starts; `confine`: under Landlock (only through the native helper). */
export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  confine?: NativeConfine;
}

/** spawnShell with a given native helper (null: child_process); tests pass a helper that fails on purpose. */
export function spawnWith(lib: NativeSpawn | null, command: string, opts: SpawnOptions): ShellChild {
  // Fail closed: a confined command never falls back to an unconfined start.
  if (opts.confine && !lib) return failedStart(Object.assign(new Error('no native helper'), { errno: constants.errno.ENOSYS }));
  // Every child carries the daemon's marker, whatever its environment layers say (effects/daemonMarker.ts).
  const env = withMarker(opts.env);
  if (lib) {
    const envp: string[] = [];
    let nul = hasNul(command) || hasNul(opts.cwd);
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) continue;
      const pair = `${k}=${v}`;
      if (hasNul(pair)) nul = true;
      envp.push(pair);
    }
    if (nul && opts.confine) return failedStart(Object.assign(new Error('NUL in the command'), { errno: constants.errno.EINVAL }));
    if (!nul) {
      let started: [number, number, number];
      try {
        const argv = ['/bin/bash', '-c', command];
        started = opts.confine ? lib.spawn('/bin/bash', argv, envp, opts.cwd, opts.confine) : lib.spawn('/bin/bash', argv, envp, opts.cwd);
      } catch (err) {
        return failedStart(err as Error & { errno?: number });
      }
      return adopt(lib, ...started);
    }
  }
  return spawn('/bin/bash', ['-c', command], { cwd: opts.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }) as ShellChild;
}

/**
 * Take a started child: its pipes as sockets and its exit watched. If any of that fails (pidfd_open
 * out of descriptors, a socket that cannot wrap its fd), the child would run unwatched and never be
 * reaped: its group is killed, its pipes closed, it is reaped, and the start is reported failed.
 */
function adopt(lib: NativeSpawn, pid: number, outFd: number, errFd: number): ShellChild {
  const sockets: Socket[] = [];
  try {
    sockets.push(new Socket({ fd: outFd, readable: true, writable: false }));
    sockets.push(new Socket({ fd: errFd, readable: true, writable: false }));
    return new NativeChild(lib, pid, sockets[0], sockets[1]);
  } catch (err) {
    abandon(lib, pid, [outFd, errFd], sockets);
    return failedStart(err as Error & { errno?: number });
  }
}

/** Kill a child that cannot be watched, close its pipes (sockets own theirs), and reap it. */
function abandon(lib: NativeSpawn, pid: number, fds: number[], sockets: Socket[]): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') process.emitWarning(`cannot kill shell ${pid}: ${(err as Error).message}`);
  }
  for (const s of sockets) s.destroy();
  for (const fd of fds.slice(sockets.length)) {
    try {
      closeSync(fd);
    } catch (err) {
      process.emitWarning(`cannot close pipe ${fd} of shell ${pid}: ${(err as Error).message}`);
    }
  }
  reapSoon(lib, pid, 0);
}

/** Reap a killed child once it has ended (SIGKILL takes effect within milliseconds). */
function reapSoon(lib: NativeSpawn, pid: number, tries: number): void {
  if (!lib.reap || lib.reap(pid) || tries >= 200) return;
  setTimeout(() => reapSoon(lib, pid, tries + 1), 5).unref();
}

/** child_process reports a failed start (e.g. a missing cwd) as `spawn /bin/bash ENOENT`, on a later tick. */
function failedStart(err: Error & { errno?: number }): ShellChild {
  const child = new EventEmitter() as EventEmitter & { pid: undefined; stdout: Readable; stderr: Readable };
  const empty = () => { const s = new Socket(); s.destroy(); return s; };
  Object.assign(child, { pid: undefined, stdout: empty(), stderr: empty() });
  const code = Object.entries(constants.errno).find(([, n]) => n === err.errno)?.[0] ?? 'EUNKNOWN';
  const e = Object.assign(new Error(`spawn /bin/bash ${code}`), { code, errno: -(err.errno ?? 0), syscall: 'spawn /bin/bash', path: '/bin/bash' });
  process.nextTick(() => child.emit('error', e));
  return child as ShellChild;
}
