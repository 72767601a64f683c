import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * GET of a remote document (behaviour.md §3.3): node:http/https directly so only the headers we
 * set are sent; an overall deadline; a byte cap; up to `maxRedirects` redirects, each hop checked
 * by `allow` (the plain-http-only-for-loopback rule).
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

const REDIRECTS = [301, 302, 303, 307, 308];

/** One hop: resolves with the response (body not read) or rejects with the request error. */
function hop(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', headers, signal }, resolve);
    req.on('error', reject);
    req.end();
  });
}

/** Read a response body up to `max` bytes; resolves null when the cap is exceeded. */
function readBody(res: IncomingMessage, max: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      res.destroy();
      resolve(null);
      return;
    }
    const chunks: Buffer[] = [];
    let n = 0;
    res.on('data', (c: Buffer) => {
      n += c.length;
      if (n > max) {
        res.destroy();
        resolve(null);
        return;
      }
      chunks.push(c);
    });
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
  });
}

/** Fetch `start` following redirects; never throws. */
export async function fetchDocument(start: string, o: FetchOptions): Promise<FetchResult> {
  const ctl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; ctl.abort(); }, o.timeoutMs);
  const onAbort = () => ctl.abort();
  o.signal?.addEventListener('abort', onAbort);
  try {
    let url = new URL(start);
    for (let hops = 0; ; hops++) {
      const refused = o.allow(url);
      if (refused) return { ok: false, kind: 'refused', message: refused };
      const res = await hop(url, o.headers, ctl.signal);
      const loc = res.headers.location;
      if (REDIRECTS.includes(res.statusCode ?? 0) && loc) {
        res.resume();
        if (hops >= o.maxRedirects) return { ok: false, kind: 'network', message: `more than ${o.maxRedirects} redirects` };
        url = new URL(loc, url);
        continue;
      }
      const body = await readBody(res, o.maxBytes);
      if (body === null) return { ok: false, kind: 'too-large', message: `over ${o.maxBytes} bytes` };
      return { ok: true, status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body, url: url.href };
    }
  } catch (err) {
    if (timedOut) return { ok: false, kind: 'timeout', message: 'timed out' };
    const e = err as NodeJS.ErrnoException;
    return { ok: false, kind: 'network', message: e.code && !e.message.includes(e.code) ? `${e.code} ${e.message}` : e.message };
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
  }
}
