import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { MemoryReducer, QUIET_MS, REDUCE_AFTER_GROWTH_BYTES, type GcExtension } from '../../src/effects/memoryReducer.js';

const MiB = 1024 * 1024;

/** A reducer over a pretend heap: `heap.bytes` is what V8 has committed; a reduction brings it to `heap.live`. */
function setUp() {
  const heap = { bytes: 20 * MiB, live: 16 * MiB };
  const calls: Parameters<GcExtension>[0][] = [];
  const gc: GcExtension = (options) => {
    calls.push(options);
    heap.bytes = heap.live;
  };
  return { heap, calls, reducer: new MemoryReducer(gc, () => heap.bytes) };
}

describe('MemoryReducer: one memory-reducing collection once a burst is over', () => {
  beforeEach(() => { jest.useFakeTimers(); });
  afterEach(() => { jest.useRealTimers(); });

  it('when the heap grew and a quiet spell follows, then it runs one last-resort full collection', () => {
    const { heap, calls, reducer } = setUp();
    heap.bytes += REDUCE_AFTER_GROWTH_BYTES;
    reducer.collected();
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toEqual([{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
    expect(heap.bytes).toBe(heap.live);
  });

  it('when collections keep coming (a busy daemon), then it waits; the first quiet spell reduces', () => {
    const { heap, calls, reducer } = setUp();
    heap.bytes += 2 * REDUCE_AFTER_GROWTH_BYTES;
    for (let i = 0; i < 20; i++) {
      reducer.collected();
      jest.advanceTimersByTime(QUIET_MS / 2);
    }
    expect(calls).toHaveLength(0);
    jest.advanceTimersByTime(QUIET_MS * 2);
    expect(calls).toHaveLength(1);
  });

  it('when the heap grew less than the threshold since the last reduction, then it never collects', () => {
    const { heap, calls, reducer } = setUp();
    heap.bytes += REDUCE_AFTER_GROWTH_BYTES - 1;
    reducer.collected();
    jest.advanceTimersByTime(QUIET_MS * 10);
    expect(calls).toHaveLength(0);
  });

  it('when it has reduced, then the next reduction waits for new growth above the reduced size', () => {
    const { heap, calls, reducer } = setUp();
    heap.bytes += REDUCE_AFTER_GROWTH_BYTES;
    reducer.collected();
    jest.advanceTimersByTime(QUIET_MS * 3);
    // The collection's own report arrives after it: no growth since, nothing more to do.
    reducer.collected();
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toHaveLength(1);
    heap.bytes = heap.live + REDUCE_AFTER_GROWTH_BYTES;
    reducer.collected();
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toHaveLength(2);
  });
});
