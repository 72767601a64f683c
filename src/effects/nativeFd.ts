import { createRequire } from 'node:module';

/**
 * The small native helper native/fd.cc (built at install by node-gyp, Linux only): descriptor and
 * process calls Node does not expose. Each function here returns a "could not" value when the helper
 * is not built, so callers keep a fallback.
 */
interface FdModule {
  cloexec(fd: number): void;
  mkfifo(path: string, mode: number): void;
  signalIfStarted(pid: number, startTicks: number, signal: number): boolean;
}

let fdModule: Partial<FdModule> | null | undefined;

function load(): Partial<FdModule> | null {
  if (fdModule === undefined) {
    try {
      fdModule = createRequire(import.meta.url)('../../build/Release/loom_fd.node') as Partial<FdModule>;
    } catch {
      fdModule = null;
    }
  }
  return fdModule;
}

/** Mark a descriptor close-on-exec; false when the helper is not built. */
export function setCloexec(fd: number): boolean {
  const m = load();
  if (!m?.cloexec) return false;
  m.cloexec(fd);
  return true;
}

/** Create a named pipe; false when the helper is not built (throws when mkfifo itself fails). */
export function makeFifo(path: string, mode: number): boolean {
  const m = load();
  if (!m?.mkfifo) return false;
  m.mkfifo(path, mode);
  return true;
}

/**
 * Signal `pid` only if it is the process that started at `startTicks`, with no window for a reused
 * pid (one pidfd for the check and the signal). true: signalled; false: gone or another process;
 * null: the helper is not built (or the kernel has no pidfd), the caller decides.
 */
export function signalIfStarted(pid: number, startTicks: number, signal: number): boolean | null {
  const m = load();
  if (!m?.signalIfStarted) return null;
  try {
    return m.signalIfStarted(pid, startTicks, signal);
  } catch (err) {
    // ENOSYS: a kernel before pidfd_open (5.3).
    if ((err as { errno?: number }).errno === 38) return null;
    throw err;
  }
}
