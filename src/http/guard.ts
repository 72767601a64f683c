import type { IncomingMessage } from 'node:http';
import { LoomError } from '../domain/errors.js';
import { sandboxRefusal } from './sandboxed.js';

/**
 * The CORS headers every response carries, errors, SSE and refused upgrades included, naming the
 * wire's identity header (spec §4: `X-Agent-Id`; behaviour.md §11: `X-User-Id` on the user wire).
 */
export function corsHeaders(identityHeader: string): Readonly<Record<string, string>> {
  return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': `Content-Type, ${identityHeader}` };
}

/** spec §4: the CORS headers of the agent wire. */
export const CORS_HEADERS = corsHeaders('X-Agent-Id');

/** Set CORS headers (the agent wire's unless given) on a response (node:http or Express). */
export function setCors(res: { setHeader(name: string, value: string): unknown }, headers: Readonly<Record<string, string>> = CORS_HEADERS): void {
  for (const [k, v] of entriesOf(headers)) res.setHeader(k, v);
}

/** Each header set's entries, listed once (a wire's CORS headers are fixed for the daemon's life). */
const headerEntries = new WeakMap<object, ReadonlyArray<readonly [string, string]>>();

function entriesOf(headers: Readonly<Record<string, string>>): ReadonlyArray<readonly [string, string]> {
  let list = headerEntries.get(headers);
  if (!list) {
    list = Object.entries(headers);
    headerEntries.set(headers, list);
  }
  return list;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The hostname part of a Host header value (`[::1]:3923` → `[::1]`). */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const i = h.lastIndexOf(':');
  return i < 0 ? h : h.slice(0, i);
}

/** True when the Host header names a loopback host, with or without a port (behaviour.md §9.2). */
export function isLoopbackHost(host: string): boolean {
  const name = hostName(host);
  if (!LOOPBACK_HOSTS.has(name)) return false;
  const rest = host.trim().slice(name.length);
  return rest === '' || /^:\d{1,5}$/.test(rest);
}

/** True when an Origin value is a loopback origin `http(s)://127.0.0.1|localhost|[::1][:port]`. */
export function isLoopbackOrigin(origin: string): boolean {
  return /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?$/i.test(origin);
}

/** The path of a request target, without the query (never decoded). */
function pathOf(url: string | undefined): string {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q < 0 ? u : u.slice(0, q);
}

/** The edge of the daemon every request crosses: the wire's CORS headers and the accepted origins. */
export interface Edge {
  cors: Readonly<Record<string, string>>;
  allowedOrigins: readonly string[];
  /** The wire's identity header and agent resource, for requests from inside the sandbox (behaviour.md §15.3). */
  identity: { header: string; resource: string };
}

/**
 * The one entry check of every HTTP request, whether Express or a fast path answers it: set the CORS
 * headers every response carries, then apply the Host/Origin guard and, for a request from inside
 * the sandbox, its identity rules (behaviour.md §15.3). Returns the refusal, or null.
 */
export function admit(edge: Edge, req: IncomingMessage, res: { setHeader(name: string, value: string): unknown }): LoomError | null {
  setCors(res, edge.cors);
  return hostOriginRefusal(req, edge.allowedOrigins) ?? sandboxRefusal(req, edge.identity);
}

/**
 * The one Host/Origin guard (behaviour.md §9.2), used by the Express app, the /fs fast path and the
 * HTTP `upgrade` hook: Host must be loopback (403 `Forbidden host`); a foreign Origin is refused
 * (403 `Forbidden origin`) except on OPTIONS, GET /describe and GET /health. Returns the refusal, or
 * null when the request may go on.
 */
export function hostOriginRefusal(req: IncomingMessage, allowedOrigins: readonly string[]): LoomError | null {
  // One Host header before its value is judged (400 otherwise, hostCountRefusal below).
  const count = hostCountRefusal(req);
  if (count) return count;
  const host = req.headers.host;
  if (host !== undefined && !isLoopbackHost(host)) return new LoomError(403, `Forbidden host: ${host}`);
  const origin = req.headers.origin;
  if (origin === undefined || req.method === 'OPTIONS') return null;
  if (req.method === 'GET') {
    const path = pathOf(req.url);
    if (path === '/describe' || path === '/health') return null;
  }
  if (isLoopbackOrigin(origin) || allowedOrigins.includes(origin)) return null;
  return new LoomError(403, `Forbidden origin: ${origin}`);
}

/** The refusals of a request whose Host headers are missing or repeated (behaviour.md §9.2). */
export const MISSING_HOST = 'Bad Request: missing Host header';
export const DUPLICATE_HOST = 'Bad Request: duplicate Host header';

/**
 * RFC 9112 §3.2: an HTTP/1.1 request carries exactly one Host header; HTTP/1.0 may carry none.
 * Counted in the raw headers, since node keeps only the first of repeated Host headers and a
 * loopback one first would hide a foreign one after it.
 */
export function hostCountRefusal(req: Pick<IncomingMessage, 'rawHeaders' | 'httpVersionMajor' | 'httpVersionMinor'>): LoomError | null {
  const raw = req.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') hosts++;
  if (hosts > 1) return new LoomError(400, DUPLICATE_HOST);
  if (hosts === 0 && !(req.httpVersionMajor === 1 && req.httpVersionMinor === 0)) return new LoomError(400, MISSING_HOST);
  return null;
}
