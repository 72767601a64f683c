import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * One GET with redirects, shared by document loading (behaviour.md §3.3) and installs (§7): node:http
 * and node:https directly, so only the headers we set are sent; one deadline for the whole exchange
 * (connect, redirects, body); each hop checked by `allow` before it is requested; an Authorization
 * header only on hops its rule accepts (a redirect to another origin never carries a token).
 */
export interface GetOptions {
  headers: Record<string, string>;
  timeoutMs: number;
  maxRedirects: number;
  /** A refusal message for a hop's URL, or null when it may be fetched. */
  allow(url: URL): string | null;
  /** `Authorization` value and the hops it may go to. */
  auth?: { value: string; to(url: URL): boolean };
  signal?: AbortSignal;
}

/** An open exchange: the final response with its body unread. */
export interface Exchange {
  res: IncomingMessage;
  url: URL;
  /** True once the deadline passed (the response stream is destroyed then). */
  timedOut(): boolean;
  /** Clear the deadline and listeners; call when done with the body. */
  close(): void;
}

/** Why a GET could not produce a response. */
export type GetFailure = { ok: false; kind: 'refused' | 'network' | 'timeout' | 'aborted'; message: string };

const REDIRECTS = [301, 302, 303, 307, 308];

function hop(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', headers, signal }, resolve);
    req.on('error', reject);
    req.end();
  });
}

/** The message of a network error, with its code when the message lacks it. */
export function networkReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (!e || typeof e.message !== 'string') return String(err);
  return e.code && !e.message.includes(e.code) ? `${e.code} ${e.message}` : e.message;
}

/** GET `start`, following redirects; never throws. */
export async function openGet(start: string, o: GetOptions): Promise<{ ok: true; ex: Exchange } | GetFailure> {
  const ctl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; ctl.abort(); }, o.timeoutMs);
  const onAbort = () => ctl.abort();
  o.signal?.addEventListener('abort', onAbort);
  if (o.signal?.aborted) ctl.abort();
  const close = () => {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
  };
  try {
    let url = new URL(start);
    for (let hops = 0; ; hops++) {
      const refused = o.allow(url);
      if (refused) {
        close();
        return { ok: false, kind: 'refused', message: refused };
      }
      const headers = o.auth?.to(url) ? { ...o.headers, Authorization: o.auth.value } : o.headers;
      const res = await hop(url, headers, ctl.signal);
      const loc = res.headers.location;
      if (REDIRECTS.includes(res.statusCode ?? 0) && loc) {
        res.resume();
        if (hops >= o.maxRedirects) {
          close();
          return { ok: false, kind: 'network', message: `more than ${o.maxRedirects} redirects` };
        }
        url = new URL(loc, url);
        continue;
      }
      return { ok: true, ex: { res, url, timedOut: () => timedOut, close } };
    }
  } catch (err) {
    close();
    if (timedOut) return { ok: false, kind: 'timeout', message: 'timed out' };
    if (o.signal?.aborted) return { ok: false, kind: 'aborted', message: 'aborted' };
    return { ok: false, kind: 'network', message: networkReason(err) };
  }
}

/** Read a response body up to `max` bytes; resolves null when the cap is exceeded (the stream is destroyed). */
export function readBody(res: IncomingMessage, max: number): Promise<Buffer | null> {
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
