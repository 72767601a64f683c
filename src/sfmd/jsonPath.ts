/**
 * Paths into JSON values (behaviour.md §4.10): segments separated by `.`; `[N]` or `.N` index
 * arrays (`.N` on an object is the key `N`).
 */
import { plural } from '../domain/text.js';

/** A JSON value as parsed. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** One path segment: a key, or an explicit `[N]` index. */
export type Segment = { key: string } | { index: number };

/** Split a path such as `a.b[0].c.2` into segments; null when malformed. */
export function parsePath(path: string): Segment[] | null {
  return parsePathRaw(path)?.segs ?? null;
}

/** Like parsePath, also returning each segment as written (with its `.` or brackets) for messages. */
export function parsePathRaw(path: string): { segs: Segment[]; raws: string[] } | null {
  const segs: Segment[] = [];
  const raws: string[] = [];
  if (path === '') return { segs, raws };
  let sep = '';
  let i = 0;
  let expectKey = true;
  while (i < path.length) {
    if (path[i] === '[') {
      const end = path.indexOf(']', i);
      if (end < 0) return null;
      const n = path.slice(i + 1, end);
      if (!/^\d+$/.test(n)) return null;
      segs.push({ index: Number(n) });
      raws.push(sep + path.slice(i, end + 1));
      sep = '';
      i = end + 1;
      expectKey = false;
      continue;
    }
    if (path[i] === '.') {
      if (expectKey) return null;
      i++;
      sep = '.';
      expectKey = true;
      continue;
    }
    if (!expectKey) return null;
    let j = i;
    while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
    if (j === i) return null;
    segs.push({ key: path.slice(i, j) });
    raws.push(sep + path.slice(i, j));
    sep = '';
    i = j;
    expectKey = false;
  }
  return expectKey && segs.length > 0 ? null : { segs, raws };
}

/** One step into a value; undefined when absent. */
export function step(v: Json | undefined, s: Segment): Json | undefined {
  if (v === undefined || v === null || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) {
    const n = 'index' in s ? s.index : /^\d+$/.test(s.key) ? Number(s.key) : NaN;
    return Number.isInteger(n) && n < v.length ? v[n] : undefined;
  }
  const key = 'index' in s ? String(s.index) : s.key;
  return Object.prototype.hasOwnProperty.call(v, key) ? v[key] : undefined;
}

/** Resolve segments; returns the value, or the number of segments that did resolve. */
export function resolvePath(root: Json | undefined, segs: Segment[]): { found: true; value: Json } | { found: false; depth: number; at: Json | undefined } {
  let cur: Json | undefined = root;
  for (let k = 0; k < segs.length; k++) {
    const next = step(cur, segs[k]);
    if (next === undefined) return { found: false, depth: k, at: cur };
    cur = next;
  }
  return cur === undefined ? { found: false, depth: 0, at: undefined } : { found: true, value: cur };
}

/** `object`, `array`, `string`, … as warnings name them. */
export function jsonType(v: Json | undefined): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** What a value exposes (behaviour.md §4.10 warning tails): keys, array size or scalar type. */
export function describeValue(v: Json | undefined): string {
  if (v === null) return 'is null';
  if (Array.isArray(v)) return `is an array of ${plural(v.length, 'item')}`;
  if (typeof v === 'object') {
    const keys = Object.keys(v);
    return keys.length === 0 ? 'has no keys' : `has keys: ${keys.slice(0, 20).join(', ')}`;
  }
  return `is a ${typeof v}`;
}

/** Render a value into template output: strings as is, null empty, others as compact JSON. */
export function renderJson(v: Json | undefined): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** Parse text as JSON, or undefined. */
export function tryParseJson(text: string): Json | undefined {
  const t = text.trim();
  // A JSON text starts with one of these; checking first spares the thrown SyntaxError (and its
  // stack trace) on every plain-text result, the common case of CLI actions.
  if (!/^[[{"\-0-9tfn]/.test(t)) return undefined;
  try {
    return JSON.parse(t) as Json;
  } catch {
    // Not JSON: callers treat the body as text (behaviour.md §4.9).
    return undefined;
  }
}
