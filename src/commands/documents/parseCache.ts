import { createHash } from 'node:crypto';
import { createParsePool, type ParsePool } from '../../effects/parsePool.js';
import { parseDocument } from '../../sfmd/parse.js';
import type { ActionDoc } from '../../sfmd/types.js';

/**
 * Parsed documents, cached and parsed off the event loop. Parsing is a pure function of the text,
 * and documents are re-opened often (/refresh, /back, app pages, menus), while the CommonMark
 * parser is the slowest step of a load (bench/results/parse.*.md): a small LRU keyed by the SHA-256
 * of the text answers repeats, and a text of PARSE_OFFLOAD_BYTES or more is parsed in a worker
 * thread (effects/parsePool.ts), so one topic opening a large document never stalls another
 * topic's mailbox (bench/isolation). The waiting topic stays `executing`; its queue works as always.
 * Cached documents are deeply frozen, so a consumer that tried to change one would fail loudly
 * instead of corrupting another topic's view.
 */
const MAX_ENTRIES = 64;
const MAX_TEXT_BYTES = 32 * 1024 * 1024;
/**
 * Texts of at least this many characters are parsed in a worker; shorter ones cost less than the
 * hand-over. Characters, not bytes: measuring a large text's UTF-8 length is itself a full scan.
 */
export const PARSE_OFFLOAD_CHARS = 16 * 1024;
const cache = new Map<string, { doc: ActionDoc; bytes: number }>();
const inFlight = new Map<string, Promise<ActionDoc>>();
let total = 0;
let pool: ParsePool | null = null;

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as Record<string, unknown>)) deepFreeze(x);
  }
  return v;
}

const keyOf = (text: string) => createHash('sha256').update(text).digest('hex');

function hit(key: string): ActionDoc | undefined {
  const e = cache.get(key);
  if (!e) return undefined;
  cache.delete(key);
  cache.set(key, e);
  return e.doc;
}

function store(key: string, text: string, doc: ActionDoc): ActionDoc {
  // UTF-16 size in memory: what the cache holds on to.
  const bytes = text.length * 2;
  cache.set(key, { doc: deepFreeze(doc), bytes });
  total += bytes;
  for (const [k, e] of cache) {
    if (cache.size <= MAX_ENTRIES && total <= MAX_TEXT_BYTES) break;
    cache.delete(k);
    total -= e.bytes;
  }
  return doc;
}

/** parseDocument with the LRU in front, on the calling thread (small texts, synchronous callers). */
export function parseCached(text: string): ActionDoc {
  const key = keyOf(text);
  return hit(key) ?? store(key, text, parseDocument(text));
}

/**
 * parseDocument with the LRU in front; a large text is parsed in the worker pool (a failed worker
 * falls back to parsing here). Concurrent parses of the same text share one run.
 */
export function parseOffLoop(text: string): Promise<ActionDoc> {
  if (text.length < PARSE_OFFLOAD_CHARS) return Promise.resolve(parseCached(text));
  const key = keyOf(text);
  const cached = hit(key);
  if (cached) return Promise.resolve(cached);
  let running = inFlight.get(key);
  if (!running) {
    pool ??= createParsePool();
    running = pool.parse(text)
      .catch((err: unknown) => {
        process.emitWarning(`document parse worker failed (${err instanceof Error ? err.message : String(err)}); parsing on the main thread`);
        return parseDocument(text);
      })
      .then((doc) => store(key, text, doc))
      .finally(() => inFlight.delete(key));
    inFlight.set(key, running);
  }
  return running;
}

/** End the parse workers (daemon shutdown). */
export async function closeParsePool(): Promise<void> {
  const p = pool;
  pool = null;
  await p?.close();
}
