import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/**
 * The HTTP transport of actions (behaviour.md §4.7). Built on node:http/https `request`, which sends
 * only the headers it is given plus what HTTP needs (`Host`, `Connection`, `Content-Length`);
 * fetch/undici add headers of their own and are not used.
 */

/** One request to send. */
export interface HttpActionRequest {
  method: string;
  /** Absolute http(s) URL. */
  url: string;
  /** Declared headers after substitution, in declaration order. */
  headers: Array<[string, string]>;
  body?: Buffer;
  /** Whole-exchange time limit (redirects included). */
  timeoutMs: number;
  /** Response body cap in bytes. */
  maxBytes: number;
  /** GET only: redirect hops to follow. */
  maxRedirects: number;
  signal?: AbortSignal;
  /** Refuse a hop (redirect targets included) with a message, e.g. a remote document calling the daemon. */
  checkHop?(url: URL): string | null;
}

/** What came back. */
export type HttpActionOutcome =
  | { kind: 'response'; status: number; headers: IncomingHttpHeaders; body: Buffer; url: string }
  | { kind: 'timeout' }
  | { kind: 'tooLarge' }
  | { kind: 'aborted' }
  | { kind: 'refused'; message: string }
  | { kind: 'network'; reason: string };

let agents: { http: HttpAgent; https: HttpsAgent } | undefined;
/** The keep-alive agents, made at the first action call: a start loads no TLS (scripts/bundle.mjs). */
const agentsNow = (): { http: HttpAgent; https: HttpsAgent } => (agents ??= { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) });
const REDIRECTS = [301, 302, 303, 307, 308];

class Stop extends Error {
  constructor(readonly outcome: HttpActionOutcome) { super(outcome.kind); }
}

/** Decode a content-encoding the server applied anyway (Loom sends no Accept-Encoding). */
function decode(body: Buffer, encoding: string | undefined, maxBytes: number): Buffer {
  const opts = { maxOutputLength: maxBytes + 1 };
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'gzip': case 'x-gzip': return gunzipSync(body, opts);
    case 'deflate': return inflateSync(body, opts);
    case 'br': return brotliDecompressSync(body, opts);
    default: return body;
  }
}

/** Send one request (one hop) and collect the body up to the cap. */
function exchange(url: URL, req: HttpActionRequest, sameOrigin: boolean, abort: AbortSignal): Promise<{ res: IncomingMessage; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const r = send(url, { method: req.method, agent: url.protocol === 'https:' ? agentsNow().https : agentsNow().http, signal: abort });
    if (sameOrigin) {
      for (const [name, value] of req.headers) {
        const prev = r.getHeader(name);
        r.setHeader(name, prev === undefined ? value : [...(Array.isArray(prev) ? prev : [String(prev)]), value]);
      }
    }
    if (req.body !== undefined) r.setHeader('Content-Length', String(req.body.length));
    r.on('error', reject);
    r.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > req.maxBytes) { res.destroy(); reject(new Stop({ kind: 'tooLarge' })); return; }
        chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
    });
    r.end(req.body);
  });
}

/**
 * Run an HTTP action request (behaviour.md §4.7): GET follows at most `maxRedirects` redirects,
 * re-sending declared headers only to the same origin; other methods return a 3xx as is.
 */
export async function sendHttpAction(req: HttpActionRequest): Promise<HttpActionOutcome> {
  const ctl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; ctl.abort(); }, req.timeoutMs);
  const onAbort = () => ctl.abort();
  req.signal?.addEventListener('abort', onAbort, { once: true });
  const origin = new URL(req.url).origin;
  let url = new URL(req.url);
  try {
    for (let hop = 0; ; hop++) {
      const refused = req.checkHop?.(url);
      if (refused) return { kind: 'refused', message: refused };
      const { res, body } = await exchange(url, req, url.origin === origin, ctl.signal);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (req.method === 'GET' && REDIRECTS.includes(status) && location && hop < req.maxRedirects) {
        const next = new URL(location, url);
        if (next.protocol === 'http:' || next.protocol === 'https:') { url = next; continue; }
      }
      let decoded: Buffer;
      try {
        decoded = decode(body, res.headers['content-encoding'], req.maxBytes);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return { kind: 'tooLarge' };
        return { kind: 'network', reason: `cannot decode ${res.headers['content-encoding']} body: ${(err as Error).message}` };
      }
      if (decoded.length > req.maxBytes) return { kind: 'tooLarge' };
      return { kind: 'response', status, headers: res.headers, body: decoded, url: url.href };
    }
  } catch (err) {
    if (err instanceof Stop) return err.outcome;
    if (timedOut) return { kind: 'timeout' };
    if (req.signal?.aborted) return { kind: 'aborted' };
    return { kind: 'network', reason: (err as Error).message };
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onAbort);
  }
}
