import { describe, expect, it } from '@jest/globals';
import { HISTORY_MAX } from '../../src/domain/limits.js';
import { applySessionChange, newSession, type HistoryRef, type SessionChange, type SessionState } from '../../src/domain/session.js';
import { deepFreeze } from '../helpers/deepFreeze.js';

/**
 * `SessionState` has no mutable field (architecture.md "One read model"): checked by the compiler
 * (every property read-only, every collection a read-only view, no function, down to the leaves)
 * and at run time (every change applied to a deeply frozen session: `applySessionChange` never
 * writes its input).
 */

/** True when A and B are the same type, read-only modifiers included. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
/** True when every property of T is read-only. */
type AllReadonly<T> = Same<T, Readonly<T>>;
/** True when T and all it holds are data that cannot be written through its type. */
type DeepReadonly<T> =
  unknown extends T ? true // opaque data of a layer (`doc.data`, `json`): frozen by the run-time check
    : T extends string | number | boolean | null | undefined ? true
      : T extends (...args: never[]) => unknown ? false
        : T extends ReadonlyMap<unknown, unknown> | ReadonlySet<unknown> | readonly unknown[] ? ReadonlyCollection<T>
          : AllReadonly<T> extends true ? (false extends { [K in keyof T]-?: DeepReadonly<T[K]> }[keyof T] ? false : true) : false;
/** A collection is read-only when its type has no writer and its elements are read-only. */
type ReadonlyCollection<T> =
  T extends { set: unknown } | { add: unknown } | { push: unknown } ? false
    : T extends ReadonlyMap<infer K, infer V> ? (DeepReadonly<K> extends true ? DeepReadonly<V> : false)
      : T extends ReadonlySet<infer E> ? DeepReadonly<E>
        : T extends readonly (infer E)[] ? DeepReadonly<E> : false;

const sessionIsReadonly: DeepReadonly<SessionState> = true;
// The checker bites: a writable field, a mutable map or array, or a function is refused.
const mutableField: DeepReadonly<{ a: string }> = false;
const mutableMap: DeepReadonly<{ readonly m: Map<string, string> }> = false;
const mutableArray: DeepReadonly<{ readonly l: string[] }> = false;
const fn: DeepReadonly<{ readonly f: () => void }> = false;
const nested: DeepReadonly<{ readonly o: { x: number } }> = false;

const ref = { topic: 'main', type: 'main' } as never;
const doc = (uri: string) => ({ uri, title: null, currentBlock: null, display: uri });
const entry = (uri: string): HistoryRef => ({ uri, anchor: null, source: { kind: 'file', path: uri, display: uri } });

/** One change of every kind, in an order that exercises each. */
const everyChange: SessionChange[] = [
  { type: 'session.opened', doc: doc('file:///a'), pageShortcuts: new Map([['n', 'b']]), baseDir: '/h', read: { path: '/h/a', hash: 'h1' } },
  { type: 'session.opened', doc: doc('file:///b'), pageShortcuts: new Map(), baseDir: '/h', push: entry('file:///a') },
  { type: 'session.navigated', block: '#x' },
  { type: 'session.based', baseDir: '/h/sub' },
  { type: 'session.set', scope: 'session', values: [['k', 'v']] },
  { type: 'session.shortcuts', valueShortcuts: new Map([['card-1', ['1', 'x']]]) },
  { type: 'session.read', path: '/h/f', hash: 'r1' },
  { type: 'session.edited', path: '/h/f', hash: 'r2', undo: { path: '/h/f', display: '~/f', command: '/write', afterHash: 'r2', copy: '/d/undo/1/c' } },
  { type: 'session.edited', path: '/h/g', hash: 'g1', undo: { path: '/h/g', display: '~/g', command: '/write', afterHash: 'g1', copy: null } },
  { type: 'session.responded', response: { action: 'go', kind: 'http', status: 200, body: '{}', json: {} } },
  { type: 'session.undone', path: '/h/g', hash: null },
  { type: 'session.opened', doc: doc('file:///a'), pageShortcuts: new Map(), baseDir: '/h', pop: true },
  { type: 'session.cleared', scope: 'session', names: ['k'] },
  { type: 'session.closed' },
];

describe('SessionState has no mutable field', () => {
  it('when its type is checked, then every field down to the leaves is read-only and holds no function', () => {
    expect([sessionIsReadonly, mutableField, mutableMap, mutableArray, fn, nested]).toEqual([true, false, false, false, false, false]);
  });

  it('when every kind of change is applied to deeply frozen sessions, then none throws and each input is left as it was', () => {
    let s: SessionState = newSession('leo', ref, 0);
    expect(deepFreeze(s)).toEqual([]);
    for (const c of everyChange) {
      const before = structuredClone(s);
      const next = applySessionChange(s, c);
      expect(s).toEqual(before);
      expect(deepFreeze(next)).toEqual([]);
      s = next;
    }
    expect(s.reads).toEqual(new Map([['/h/a', 'h1'], ['/h/f', 'r2']]));
    expect(s.undo.map((u) => u.path)).toEqual(['/h/f']);
    expect(s.lastResponse?.action).toBe('go');
    expect([s.doc, s.history, s.vars.size, s.valueShortcuts.size]).toEqual([null, [], 0, 1]);
  });
});

describe('one history (behaviour.md §3.6)', () => {
  const opened = (uri: string, push?: HistoryRef): SessionChange => ({ type: 'session.opened', doc: doc(uri), pageShortcuts: new Map(), baseDir: null, ...(push ? { push } : {}) });

  it('when more than 50 documents are pushed, then the oldest are dropped and /back pops the newest, with its source', () => {
    let s = newSession('leo', ref, 0);
    for (let i = 0; i <= HISTORY_MAX + 2; i++) s = applySessionChange(s, opened(`file:///${i + 1}`, i === 0 ? undefined : entry(`file:///${i}`)));
    expect(s.history).toHaveLength(HISTORY_MAX);
    expect(s.history[0].uri).toBe('file:///3');
    expect(s.history.at(-1)).toEqual(entry(`file:///${HISTORY_MAX + 2}`));
    s = applySessionChange(s, { type: 'session.opened', doc: doc(`file:///${HISTORY_MAX + 2}`), pageShortcuts: new Map(), baseDir: null, pop: true });
    expect(s.history).toHaveLength(HISTORY_MAX - 1);
    expect(s.history.at(-1)?.uri).toBe(`file:///${HISTORY_MAX + 1}`);
  });

  it('when an undo record is replaced, then the file has one record, moved to the end', () => {
    const rec = (path: string, copy: string) => ({ path, display: path, command: '/write', afterHash: 'h', copy });
    let s = newSession('leo', ref, 0);
    for (const [path, copy] of [['/a', 'c1'], ['/b', 'c2'], ['/a', 'c3']]) s = applySessionChange(s, { type: 'session.edited', path, hash: 'h', undo: rec(path, copy) });
    expect(s.undo.map((u) => u.copy)).toEqual(['c2', 'c3']);
    s = applySessionChange(s, { type: 'session.edited', path: '/b', hash: 'h2', undo: null });
    expect(s.undo.map((u) => u.path)).toEqual(['/a']);
    expect(s.reads.get('/b')).toBe('h2');
  });
});
