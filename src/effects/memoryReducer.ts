import { constants as perfConstants, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Growth of the heap V8 has committed, since the last full collection that shrank it, that makes a burst's end reduce it. */
export const REDUCE_AFTER_GROWTH_BYTES = 4 * 1024 * 1024;

/** A quiet spell: this long with no collection means the burst that grew the heap is over. */
export const QUIET_MS = 500;

/**
 * Full collections of V8's own a burst may have run and still be reduced at its end: a burst that
 * reaches the old generation's first limit runs one.
 */
export const BURST_FULL_COLLECTIONS = 1;

/** V8's gc extension (`node --expose-gc`): a full collection that gives memory back is `flavor: 'last-resort'`. */
export type GcExtension = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** Whether a `gc` performance entry is a full collection (mark-compact). */
export const isFullCollection = (entry: PerformanceEntry): boolean =>
  ((entry as { detail?: unknown }).detail as { kind?: number } | null | undefined)?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR;

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
    if (!gc) return;
    setFlagsFromString('--no-flush-bytecode');
    try {
      gc(options);
    } finally {
      setFlagsFromString('--flush-bytecode');
    }
  };
}

/**
 * Gives back the memory a burst left committed: at the end of a burst that grew the heap by
 * {@link REDUCE_AFTER_GROWTH_BYTES} (since the last full collection that shrank it) and in which V8
 * ran at most {@link BURST_FULL_COLLECTIONS} full collections of its own, one memory-reducing full
 * collection. A burst ends with the first {@link QUIET_MS} in which V8 reports no collection (they
 * come every few dozen requests under load), so the pause (tens of milliseconds) falls where no
 * request waits on it.
 *
 * Why: a burst of registrations or sessions runs mostly scavenges, since the daemon's live set is
 * small; what it promoted and then dropped stays in the old generation, committed and resident, and
 * V8's own memory reducer, which waits for long idle spells after a full collection, does not come.
 * Why not after a longer load, one in which V8 collected its old generation again and again: a
 * memory-reducing collection lets V8 drop the object shapes no live object uses, and the code a
 * long load optimized for them is thrown away and optimized again when the load comes back.
 */
export class MemoryReducer {
  private baseline: number;
  private collections = 0;
  private fullInBurst = 0;
  private timer: NodeJS.Timeout | undefined;
  /** When this reducer's own last collection ran (performance time, ms): V8 reports it as its own. */
  private own = { from: Number.NaN, to: Number.NaN };
  private stopped = false;

  /**
   * `committed` reads the heap's committed bytes and `now` the performance clock (V8's own figure
   * and `performance.now` unless a test gives others).
   */
  constructor(
    private readonly gc: GcExtension,
    private readonly committed: () => number = committedHeapBytes,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.baseline = committed();
  }

  /** V8 reported collections; `fullAt` holds the start times of the full ones (performance time, ms). */
  readonly collected = (fullAt: readonly number[]): void => {
    if (this.stopped) return;
    this.collections += 1;
    for (const at of fullAt) if (!(at >= this.own.from && at <= this.own.to)) this.fullInBurst += 1;
    if (this.timer !== undefined) return;
    let seen = this.collections;
    this.timer = setInterval(() => {
      if (this.collections !== seen) {
        seen = this.collections;
        return;
      }
      clearInterval(this.timer);
      this.timer = undefined;
      try {
        this.burstOver();
      } catch (err) {
        // Memory tuning must never end the daemon: say so once and stop reducing.
        this.stopped = true;
        process.emitWarning(`memory reducer stopped: ${err instanceof Error ? err.message : String(err)}`);
      }
    }, QUIET_MS);
    // Waiting for a quiet spell never keeps the process alive.
    this.timer.unref();
  };

  private burstOver(): void {
    const committed = this.committed();
    const full = this.fullInBurst;
    this.fullInBurst = 0;
    // A full collection of V8's own may have shrunk the heap: growth counts from the lowest point.
    this.baseline = Math.min(this.baseline, committed);
    if (committed < this.baseline + REDUCE_AFTER_GROWTH_BYTES) return;
    if (full > BURST_FULL_COLLECTIONS) {
      this.baseline = committed;
      return;
    }
    const from = this.now();
    this.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    this.own = { from, to: this.now() };
    this.baseline = this.committed();
  }
}
