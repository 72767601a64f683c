import { openGet, readBody } from './httpGet.js';

/**
 * GET of a remote document (behaviour.md §3.3) through the shared GET (effects/httpGet.ts): an
 * overall deadline; a byte cap; up to `maxRedirects` redirects, each hop checked by `allow` (the
 * plain-http-only-for-loopback rule).
 */
export interface FetchOptions {
  headers: Record<string, string>;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** A refusal message for a hop's URL, or null when it may be fetched. */
  allow(url: URL): string | null;
  signal?: AbortSignal;
}

/** What a fetch produced. */
export type FetchResult =
  | { ok: true; status: number; contentType: string; body: Buffer; url: string }
  | { ok: false; kind: 'timeout' | 'network' | 'too-large' | 'refused'; message: string };

/** Fetch `start` following redirects; never throws. */
export async function fetchDocument(start: string, o: FetchOptions): Promise<FetchResult> {
  const opened = await openGet(start, o);
  if (!opened.ok) return { ok: false, kind: opened.kind === 'aborted' ? 'network' : opened.kind, message: opened.message };
  const { ex } = opened;
  try {
    const body = await readBody(ex.res, o.maxBytes);
    if (body === null) return { ok: false, kind: 'too-large', message: `over ${o.maxBytes} bytes` };
    return { ok: true, status: ex.res.statusCode ?? 0, contentType: String(ex.res.headers['content-type'] ?? ''), body, url: ex.url.href };
  } catch (err) {
    if (ex.timedOut()) return { ok: false, kind: 'timeout', message: 'timed out' };
    const e = err as NodeJS.ErrnoException;
    return { ok: false, kind: 'network', message: e.code && !e.message.includes(e.code) ? `${e.code} ${e.message}` : e.message };
  } finally {
    ex.close();
  }
}
