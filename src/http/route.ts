import type { IncomingMessage } from 'node:http';
import type { Express, Request, Response } from 'express';
import { LoomError } from '../domain/errors.js';
import type { WireDescription } from '../domain/wire.js';

export type Handler = (req: Request, res: Response) => Promise<void> | void;

/**
 * Register a path with its methods; any other method is 405 `Method not allowed: <M> <path>` with
 * an `Allow` header (behaviour.md §9.1). OPTIONS never reaches here (preflight answers it).
 */
export function route(app: Express, path: string, methods: Record<string, Handler>): void {
  const allow = Object.keys(methods).join(', ');
  app.all(path, async (req, res) => {
    const h = methods[req.method];
    if (!h) throw new LoomError(405, `Method not allowed: ${req.method} ${req.path}`, { headers: { Allow: allow } });
    await h(req, res);
  });
}

/** The trimmed identity header of a wire (`X-Agent-Id`, `X-User-Id`), or undefined when absent or empty (behaviour.md §9.4). */
export function identityHeader(req: IncomingMessage, wire: Pick<WireDescription, 'header'>): string | undefined {
  const v = req.headers[wire.header.toLowerCase()];
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s ? s : undefined;
}

/** The trimmed `X-Agent-Id` header, or undefined when absent or empty (behaviour.md §9.4). */
export function agentHeader(req: IncomingMessage): string | undefined {
  return identityHeader(req, { header: 'X-Agent-Id' });
}
