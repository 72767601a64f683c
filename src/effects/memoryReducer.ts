import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Growth of the heap V8 has committed, since the last reduction, that makes the next quiet spell reduce it. */
export const REDUCE_AFTER_GROWTH_BYTES = 4 * 1024 * 1024;

/** A quiet spell: this long with no collection means the burst that grew the heap is over. */
export const QUIET_MS = 500;

/** V8's gc extension (`node --expose-gc`): a full collection that gives memory back is `flavor: 'last-resort'`. */
export type GcExtension = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** Bytes of heap V8 has committed now (every space). */
export const committedHeapBytes = (): number => getHeapStatistics().total_heap_size;

/**
 * V8's gc extension, turned on at run time. The flag is set now, with the daemon's other run-time
 * flags (heapTuning.ts: the compile cache is written before any flag changes); the function is taken
 * at the first reduction, from a fresh context of its own (the flag installs `gc` only in contexts
 * made after it is set), so a start pays neither node:vm nor that context and the daemon's own
 * global gets no `gc`. Undefined below Node 22, whose V8 takes no `flavor` and never reduces on request.
 */
export function gcExtension(nodeMajor: number): GcExtension | undefined {
  if (nodeMajor < 22) return undefined;
  setFlagsFromString('--expose-gc');
  let gc: ((options: Parameters<GcExtension>[0]) => void) | null | undefined;
  return (options) => {
    if (gc === undefined) {
      const fn: unknown = runInNewContext('gc');
      gc = typeof fn === 'function' ? (fn as GcExtension) : null;
    }
    gc?.(options);
  };
}

/**
 * Gives back the memory a burst of requests left committed, once the burst is over: after the
 * heap grew by {@link REDUCE_AFTER_GROWTH_BYTES}, the first {@link QUIET_MS} with no collection runs
 * one memory-reducing full collection.
 *
 * Why: V8's own memory reducer does this, but it starts only after V8's first full collection, and
 * a daemon whose live set is small never reaches one: the garbage its bursts promoted stays in the
 * old generation, committed and resident, for good. A quiet spell is judged by the collections V8
 * reports, which come every few dozen requests under load: a busy daemon never reduces, so the pause
 * (tens of milliseconds) falls where no request waits on it.
 */
export class MemoryReducer {
  private baseline: number;
  private collections = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `committed` reads the heap's committed bytes (V8's own figure unless a test gives one). */
  constructor(
    private readonly gc: GcExtension,
    private readonly committed: () => number = committedHeapBytes,
  ) {
    this.baseline = committed();
  }

  /** V8 reported one or more collections. */
  readonly collected = (): void => {
    this.collections += 1;
    if (this.timer !== undefined || this.committed() < this.baseline + REDUCE_AFTER_GROWTH_BYTES) return;
    let seen = this.collections;
    this.timer = setInterval(() => {
      if (this.collections !== seen) {
        seen = this.collections;
        return;
      }
      clearInterval(this.timer);
      this.timer = undefined;
      this.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      this.baseline = this.committed();
    }, QUIET_MS);
    // A pending reduction never keeps the process alive.
    this.timer.unref();
  };
}
