import type { NextFunction, Request, Response } from 'express';
import { LoomError, errorMessage } from '../domain/errors.js';

/** spec §4: CORS headers on every response, errors and SSE included. */
export function cors(allowHeaders: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Headers', allowHeaders);
    next();
  };
}

/** spec §4: OPTIONS preflight on any path is 204 (behaviour.md §9.1 adds methods and max-age). */
export function preflight(req: Request, res: Response, next: NextFunction) {
  if (req.method !== 'OPTIONS') return next();
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE, HEAD, OPTIONS');
  res.setHeader('Access-Control-Max-Age', '600');
  res.status(204).end();
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

/**
 * behaviour.md §9.2: Host must be loopback (403 `Forbidden host`); a foreign Origin is refused
 * (403 `Forbidden origin`) except on OPTIONS, GET /describe and GET /health.
 */
export function hostOriginGuard(allowedOrigins: string[]) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const host = req.headers.host;
    if (host !== undefined && !isLoopbackHost(host)) return next(new LoomError(403, `Forbidden host: ${host}`));
    const origin = req.headers.origin;
    if (origin === undefined || req.method === 'OPTIONS') return next();
    if (req.method === 'GET' && (req.path === '/describe' || req.path === '/health')) return next();
    if (isLoopbackOrigin(origin) || allowedOrigins.includes(origin)) return next();
    next(new LoomError(403, `Forbidden origin: ${origin}`));
  };
}

/** The one error renderer (architecture.md): `{error, message?}` JSON with the error's status. */
export function errorRenderer(err: unknown, req: Request, res: Response, _next: NextFunction) {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (err instanceof LoomError) {
    for (const [k, v] of Object.entries(err.headers ?? {})) res.setHeader(k, v);
    if (req.method === 'HEAD') {
      res.status(err.status).end();
      return;
    }
    res.status(err.status).json(err.body());
    return;
  }
  const status = (err as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    res.status(status).json({ error: errorMessage(err) });
    return;
  }
  res.status(500).json({ error: `Internal error: ${errorMessage(err)}` });
}
