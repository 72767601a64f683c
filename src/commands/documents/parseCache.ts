import { createHash } from 'node:crypto';
import { parseDocument } from '../../sfmd/parse.js';
import type { ActionDoc } from '../../sfmd/types.js';

/**
 * A small LRU of parsed documents keyed by the SHA-256 of their text. Parsing is a pure function
 * of the text, and documents are re-opened often (/refresh, /back, app pages, menus), while the
 * CommonMark parser is the slowest step of a load (bench/results/parse.md). Cached documents are
 * deeply frozen, so a consumer that tried to change one would fail loudly instead of corrupting
 * another topic's view.
 */
const MAX_ENTRIES = 64;
const MAX_TEXT_BYTES = 32 * 1024 * 1024;
const cache = new Map<string, { doc: ActionDoc; bytes: number }>();
let total = 0;

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as Record<string, unknown>)) deepFreeze(x);
  }
  return v;
}

/** parseDocument with the LRU in front. */
export function parseCached(text: string): ActionDoc {
  const key = createHash('sha256').update(text).digest('hex');
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.doc;
  }
  const doc = deepFreeze(parseDocument(text));
  const bytes = Buffer.byteLength(text);
  cache.set(key, { doc, bytes });
  total += bytes;
  for (const [k, e] of cache) {
    if (cache.size <= MAX_ENTRIES && total <= MAX_TEXT_BYTES) break;
    cache.delete(k);
    total -= e.bytes;
  }
  return doc;
}
