import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { BURST_FULL_COLLECTIONS, MemoryReducer, QUIET_MS, REDUCE_AFTER_GROWTH_BYTES, type GcExtension } from '../../src/effects/memoryReducer.js';

const MiB = 1024 * 1024;

/** A reducer over a pretend heap: `heap.bytes` is what V8 has committed; a reduction brings it to `heap.live`. */
function setUp() {
  const heap = { bytes: 20 * MiB, live: 16 * MiB };
  const clock = { t: 1000 };
  const calls: Parameters<GcExtension>[0][] = [];
  const gc: GcExtension = (options) => {
    calls.push(options);
    heap.bytes = heap.live;
    // The collection takes a while on the clock.
    clock.t += 20;
  };
  return { heap, calls, clock, reducer: new MemoryReducer(gc, () => heap.bytes, () => clock.t) };
}

describe('MemoryReducer: one memory-reducing collection once a burst is over', () => {
  beforeEach(() => { jest.useFakeTimers(); });
  afterEach(() => { jest.useRealTimers(); });

  it('when the heap grew and a quiet spell follows, then it runs one last-resort full collection', () => {
    const { heap, calls, reducer } = setUp();
    heap.bytes += REDUCE_AFTER_GROWTH_BYTES;
    reducer.collected([]);
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toEqual([{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
    expect(heap.bytes).toBe(heap.live);
  });

  it('when collections keep coming (a busy daemon), then it waits; the first quiet spell reduces', () => {
    const { heap, calls, reducer } = setUp();
    heap.bytes += 2 * REDUCE_AFTER_GROWTH_BYTES;
    for (let i = 0; i < 20; i++) {
      reducer.collected([]);
      jest.advanceTimersByTime(QUIET_MS / 2);
    }
    expect(calls).toHaveLength(0);
    jest.advanceTimersByTime(QUIET_MS * 2);
    expect(calls).toHaveLength(1);
  });

  it('when the heap grew less than the threshold since the last reduction, then it never collects', () => {
    const { heap, calls, reducer } = setUp();
    heap.bytes += REDUCE_AFTER_GROWTH_BYTES - 1;
    reducer.collected([]);
    jest.advanceTimersByTime(QUIET_MS * 10);
    expect(calls).toHaveLength(0);
  });

  it('when a load ran more full collections of V8\'s own than a burst does, then its end is not reduced, and growth counts from there', () => {
    const { heap, calls, clock, reducer } = setUp();
    heap.bytes += 3 * REDUCE_AFTER_GROWTH_BYTES;
    for (let i = 0; i <= BURST_FULL_COLLECTIONS; i++) {
      reducer.collected([clock.t]);
      jest.advanceTimersByTime(QUIET_MS / 2);
    }
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toHaveLength(0);
    // The next burst runs no full collection; it is measured from the load's end.
    heap.bytes += REDUCE_AFTER_GROWTH_BYTES - 1;
    reducer.collected([]);
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toHaveLength(0);
    heap.bytes += 1;
    reducer.collected([]);
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toHaveLength(1);
  });

  it('when a burst ran one full collection (the old generation\'s first limit), then its end is still reduced', () => {
    const { heap, calls, clock, reducer } = setUp();
    heap.bytes += REDUCE_AFTER_GROWTH_BYTES;
    reducer.collected([clock.t]);
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toHaveLength(1);
  });

  it('when its own collection is reported, then it does not count against the burst that follows', () => {
    const { heap, calls, clock, reducer } = setUp();
    heap.bytes += REDUCE_AFTER_GROWTH_BYTES;
    reducer.collected([]);
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toHaveLength(1);
    // V8 reports the reduction's own two full collections (within its time on the clock) as the next burst starts.
    const ranAt = clock.t - 20;
    heap.bytes = heap.live + REDUCE_AFTER_GROWTH_BYTES;
    reducer.collected([ranAt, ranAt + 10]);
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toHaveLength(2);
  });

  it('when V8 shrank the heap on its own, then growth counts from the smaller size', () => {
    const { heap, calls, reducer } = setUp();
    heap.bytes -= 2 * REDUCE_AFTER_GROWTH_BYTES;
    reducer.collected([]);
    jest.advanceTimersByTime(QUIET_MS * 3);
    heap.bytes += REDUCE_AFTER_GROWTH_BYTES;
    reducer.collected([]);
    jest.advanceTimersByTime(QUIET_MS * 3);
    expect(calls).toHaveLength(1);
  });

  it('when the collection throws, then the timer does not throw: it warns once and reduces no more', () => {
    const heap = { bytes: 20 * MiB };
    let calls = 0;
    const reducer = new MemoryReducer(() => { calls += 1; throw new Error('no gc here'); }, () => heap.bytes, () => 0);
    const emit = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    let warnings: unknown[] = [];
    try {
      heap.bytes += REDUCE_AFTER_GROWTH_BYTES;
      reducer.collected([]);
      expect(() => jest.advanceTimersByTime(QUIET_MS * 3)).not.toThrow();
      heap.bytes += 2 * REDUCE_AFTER_GROWTH_BYTES;
      reducer.collected([]);
      jest.advanceTimersByTime(QUIET_MS * 3);
      warnings = emit.mock.calls.map((c) => c[0]);
    } finally {
      emit.mockRestore();
    }
    expect(calls).toBe(1);
    expect(warnings).toEqual(['memory reducer stopped: no gc here']);
  });
});
