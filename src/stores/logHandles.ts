import { readFileSync } from 'node:fs';

/**
 * A bound on the descriptors that append logs keep open, so that the number of agents never
 * exhausts the process's descriptor limit (an EMFILE would fail unrelated webhooks, `/ls` and
 * `/exec`). Logs register the descriptor they hold; past `max`, the least recently used
 * idle ones are closed (a log reopens on its next use). A log is idle when no write or sync of its
 * own is in flight, so a descriptor is never closed under a pending fdatasync.
 */

/** What the pool needs of a log. */
export interface PooledLog {
  /** Close the descriptor if nothing of the log is in flight; true when it was closed. */
  closeIfIdle(): boolean;
}

/** Most log descriptors kept open at once, whatever the process may open. */
export const LOG_HANDLES_MAX = 64;

/** The soft limit on open descriptors (RLIMIT_NOFILE, from /proc on Linux), or null when unknown. */
export function descriptorLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    // Not Linux (no /proc): the fixed bound applies.
    return null;
  }
}

/**
 * The pool's bound: an eighth of what the process may open, between 8 and 64, so sockets, registry
 * writes and child processes keep most descriptors (under `ulimit -n 96` logs get 12).
 */
export function defaultLogHandles(limit = descriptorLimit()): number {
  if (limit === null) return LOG_HANDLES_MAX;
  return Math.max(8, Math.min(LOG_HANDLES_MAX, Math.floor(limit / 8)));
}

export class LogHandles {
  /** Logs holding a descriptor, least recently used first (Map insertion order). */
  private readonly open = new Map<PooledLog, true>();

  constructor(readonly max = LOG_HANDLES_MAX) {}

  /** The log used its descriptor: it becomes the most recent; idle ones past the bound are closed. */
  touch(log: PooledLog): void {
    this.open.delete(log);
    this.open.set(log, true);
    if (this.open.size <= this.max) return;
    for (const other of this.open.keys()) {
      if (this.open.size <= this.max) break;
      if (other !== log && other.closeIfIdle()) this.open.delete(other);
    }
  }

  /** The log closed its descriptor itself. */
  forget(log: PooledLog): void {
    this.open.delete(log);
  }

  /** The process ran out of descriptors (EMFILE): close every idle one; true when any was closed. */
  shed(except: PooledLog): boolean {
    let closed = false;
    for (const other of [...this.open.keys()]) {
      if (other !== except && other.closeIfIdle()) {
        this.open.delete(other);
        closed = true;
      }
    }
    return closed;
  }

  /** How many logs hold a descriptor now (tests, benchmarks). */
  get size(): number {
    return this.open.size;
  }
}

/** The pool shared by every log of the process unless one is given. */
export const sharedLogHandles = new LogHandles(defaultLogHandles());
