import { loadAddon } from './nativeParts.js';

/**
 * The small native helper native/fd.cc (prebuilt or built at install, Linux only; effects/nativeParts.ts):
 * descriptor and process calls Node does not expose. Each function here returns a "could not" value
 * when the helper is missing, so callers keep a fallback.
 */
interface FdModule {
  cloexec(fd: number): void;
  mkfifo(path: string, mode: number): void;
  signalIfStarted(pid: number, startTicks: number, signal: number): boolean;
}

let fdModule: Partial<FdModule> | null | undefined;

function load(): Partial<FdModule> | null {
  if (fdModule === undefined) fdModule = process.platform === 'linux' ? loadAddon<Partial<FdModule>>('loom_fd') : null;
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

/** True when the helper is loaded (asks for it once). */
export function fdHelperLoaded(): boolean {
  return load() !== null;
}
