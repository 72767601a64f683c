import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import { serveFs, type FsAnswer, type FsServiceDeps } from '../../services/fsRequests.js';
import { VERB_OF_METHOD } from '../../domain/fsPath.js';
import type { FsOperations } from '../../domain/fsPlane.js';
import { drain } from '../body.js';
import type { FastRoute } from '../context.js';
import { pump, sendFile } from '../fsTransfer.js';
import { renderError } from '../errors.js';
import { sendJson } from '../jsonAnswer.js';

/** What the /fs route needs: the /fs service's needs (the file operations send GET's file). */
export type FsRouteDeps = FsServiceDeps;

/** The raw request target split into path and query, never decoded (behaviour.md §9.6 step 4). */
export function rawTarget(url: string): { path: string; query: string } {
  // An absolute-form target (`http://host/fs/x`) keeps only its path.
  const abs = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url);
  const u = abs ? url.slice(abs[0].length) : url;
  const q = u.indexOf('?');
  return q < 0 ? { path: u, query: '' } : { path: u.slice(0, q), query: u.slice(q + 1) };
}

/** behaviour.md §9.6 step 2: `Authorization: Bearer <s>` first, else `?cap=<s>`; '' when none. */
export function presentedSecret(req: IncomingMessage, query: string): string {
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer +(\S+) *$/i.exec(auth) : null;
  if (m) return m[1];
  return new URLSearchParams(query).get('cap') ?? '';
}

/** Write what the service answered (spec §4.1 bodies and headers). */
function answer(req: IncomingMessage, res: ServerResponse, ops: FsOperations, a: FsAnswer): void {
  if (a.kind === 'file') return sendFile(res, a.file, ops);
  if (a.kind === 'json') return sendJson(req, res, a.status, a.body);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/octet-stream');
  res.setHeader('Content-Length', String(a.size));
  res.setHeader('Last-Modified', new Date(a.mtimeMs).toUTCString());
  res.end();
}

/** Handle one /fs request; never throws (refusals are rendered here). */
export async function handleFs(deps: FsRouteDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const target = rawTarget(req.url ?? '');
    const a = await serveFs(deps, {
      method: req.method ?? '', rawPath: target.path.slice('/fs'.length), secret: presentedSecret(req, target.query),
      declaredSize: Number(req.headers['content-length'] ?? 0), pump: (sink, tooLarge) => pump(req, sink, tooLarge), discard: () => drain(req, 0),
    });
    answer(req, res, deps.ops, a);
  } catch (err) {
    renderError(req, res, err);
  }
}

const FS_PATH = /^\/fs(?:\/|$)/;

/**
 * The /fs fast route (behaviour.md §9.1 rules kept): data methods on `/fs…` are answered before
 * Express; any other request (OPTIONS, other methods) is left to the app. Express costs most of a
 * small request's time, and the system plane is the daemon's hot path (bench/fs).
 */
export function fsRoute(deps: FsRouteDeps): FastRoute {
  return {
    matches: (req) => VERB_OF_METHOD[req.method ?? ''] !== undefined && FS_PATH.test(rawTarget(req.url ?? '').path),
    handle: (req, res) => handleFs(deps, req, res),
  };
}

/** Mount `/fs` and `/fs/...` (spec §4.1). The pattern is a RegExp so Express never decodes the path itself. */
export function mountFs(deps: FsRouteDeps) {
  return (app: Express): void => {
    app.all(/^\/fs(?:\/.*)?$/, (req, res) => handleFs(deps, req, res));
  };
}
