import { describe, expect, it } from '@jest/globals';
import { EventIndex, type IndexEntry } from '../../src/stores/eventIndex.js';

/** A ULID-shaped id from a number (ascending numbers give ascending ids). */
const id = (n: number) => `evt_01J${String(n).padStart(23, '0')}`;
const entry = (n: number, over: Partial<IndexEntry> = {}): IndexEntry => ({
  id: id(n), agentId: 'leo', receivedAt: new Date(1_700_000_000_000 + n).toISOString(), source: 'local-webhook',
  status: 'pending', ackedAt: null, off: n * 100, len: 99, written: 'pending', ...over,
});

describe('EventIndex: the columnar inbox index', () => {
  it('finds every row by id, refuses a duplicate, and gives back each head exactly as inserted', () => {
    const x = new EventIndex('leo');
    for (let n = 0; n < 500; n++) expect(x.insert(entry(n))).toBe(true);
    expect(x.insert(entry(250))).toBe(false);
    expect(x.size).toBe(500);
    expect(x.pending).toBe(500);
    for (const n of [0, 1, 249, 250, 499]) {
      const row = x.rowOf(id(n));
      expect(row).toBe(n);
      expect(x.head(row)).toEqual({ id: id(n), agentId: 'leo', receivedAt: entry(n).receivedAt, source: 'local-webhook', status: 'pending' });
      expect([x.off(row), x.len(row)]).toEqual([n * 100, 99]);
    }
    expect(x.rowOf(id(500))).toBe(-1);
    expect(x.rowOf('evt_short')).toBe(-1);
    expect(x.rowOf('__proto__')).toBe(-1);
    expect(x.rowOf('constructor')).toBe(-1);
  });

  it('keeps values the columns cannot hold exactly (odd time text, other agent or source) per id', () => {
    const x = new EventIndex('leo');
    x.insert(entry(1, { receivedAt: '2026-01-01T00:00:00Z', agentId: 'other', source: 'mail', status: 'acked', ackedAt: 'yesterday', written: 'acked' }));
    expect(x.head(0)).toEqual({ id: id(1), agentId: 'other', receivedAt: '2026-01-01T00:00:00Z', source: 'mail', status: 'acked' });
    expect(x.ackedAt(0)).toBe('yesterday');
    expect(x.pending).toBe(0);
  });

  it('when ids arrive out of order (a clock set back), it still finds each one, before and after removals', () => {
    const x = new EventIndex('leo');
    for (const n of [10, 20, 5, 30, 1]) x.insert(entry(n));
    expect(x.insert(entry(5))).toBe(false);
    for (const n of [10, 20, 5, 30, 1]) expect(x.head(x.rowOf(id(n))).id).toBe(id(n));
    const dropped: string[] = [];
    x.remove((row) => x.idOf(row) === id(20) || x.idOf(row) === id(1), (d) => dropped.push(d));
    expect(dropped).toEqual([id(20), id(1)]);
    expect([10, 5, 30].map((n) => x.rowOf(id(n)))).toEqual([0, 1, 2]);
    expect(x.rowOf(id(20))).toBe(-1);
    expect(x.size).toBe(3);
  });

  it('acks, compaction places and removals keep counts and columns in step', () => {
    const x = new EventIndex('leo');
    for (let n = 0; n < 100; n++) x.insert(entry(n));
    x.markAcked(id(3), '2026-02-02T02:02:02.002Z');
    x.markAcked(id(3), '2026-03-03T03:03:03.003Z');
    x.markAcked(id(999), '2026-02-02T02:02:02.002Z');
    expect(x.pending).toBe(99);
    expect(x.status(3)).toBe('acked');
    expect(x.written(3)).toBe('pending');
    expect(x.ackedAt(3)).toBe('2026-02-02T02:02:02.002Z');
    x.place(3, 7, 8);
    expect([x.off(3), x.len(3), x.written(3)]).toEqual([7, 8, 'acked']);
    x.remove((row) => row % 2 === 0, () => undefined);
    expect(x.size).toBe(50);
    expect(x.pending).toBe(49);
    expect(x.rowOf(id(3))).toBe(1);
    expect(x.ackedAt(1)).toBe('2026-02-02T02:02:02.002Z');
    expect(x.rowOf(id(99))).toBe(49);
    expect(x.rowOf(id(98))).toBe(-1);
    // Still ascending: appends after a removal are found by binary search.
    x.insert(entry(200));
    expect(x.rowOf(id(200))).toBe(50);
  });
});
