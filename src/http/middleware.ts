import type { NextFunction, Request, Response } from 'express';
import { renderError } from './errors.js';
import { hostOriginRefusal, setCors } from './guard.js';

/** spec §4: CORS headers on every response, errors and SSE included. */
export function cors(_req: Request, res: Response, next: NextFunction): void {
  setCors(res);
  next();
}

/** CORS headers of a given wire on every response (behaviour.md §11: `X-User-Id` on the user wire). */
export function corsWith(headers: Readonly<Record<string, string>>) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    setCors(res, headers);
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

/** behaviour.md §9.2 in the Express chain: the one guard (http/guard.ts). */
export function hostOriginGuard(allowedOrigins: readonly string[]) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const refusal = hostOriginRefusal(req, allowedOrigins);
    next(refusal ?? undefined);
  };
}

/** The Express end of the one error renderer (http/errors.ts). */
export function errorRenderer(err: unknown, req: Request, res: Response, _next: NextFunction) {
  renderError(req, res, err);
}
