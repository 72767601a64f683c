import type { NextFunction, Request, Response } from 'express';
import { renderError } from './errors.js';
import { admit, type Edge } from './guard.js';

/**
 * spec §4, behaviour.md §9.2 in the Express chain: the one entry check (http/guard.ts `admit`) —
 * the wire's CORS headers on every response, errors and SSE included, then the Host/Origin guard.
 */
export function entryCheck(edge: Edge) {
  return (req: Request, res: Response, next: NextFunction): void => {
    next(admit(edge, req, res) ?? undefined);
  };
}

/** spec §4: OPTIONS preflight on any path is 204 (behaviour.md §9.1 adds methods and max-age). */
export function preflight(req: Request, res: Response, next: NextFunction) {
  if (req.method !== 'OPTIONS') return next();
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE, HEAD, OPTIONS');
  res.setHeader('Access-Control-Max-Age', '600');
  res.status(204).end();
}


/** The Express end of the one error renderer (http/errors.ts). */
export function errorRenderer(err: unknown, req: Request, res: Response, _next: NextFunction) {
  renderError(req, res, err);
}
