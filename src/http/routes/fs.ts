import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { Grant } from '../../services/capabilities.js';
import { authorizeFs, fsError, type FsAccessDeps } from '../../services/fsAccess.js';
import { displayFsPath, VERB_OF_METHOD } from '../../domain/fsPath.js';
import { FS_MAX_BYTES } from '../../domain/limits.js';
import { FsRefusal, type FsOperations, type FsRefusalKind } from '../../domain/fsPlane.js';
import { drain } from '../body.js';
import type { FastRoute } from '../context.js';
import { pump, sendFile } from '../fsTransfer.js';
import { renderError } from '../errors.js';
import { sendJson } from '../jsonAnswer.js';

/** What the /fs route needs from the running system: the access checks' needs and the file operations. */
export interface FsRouteDeps extends FsAccessDeps {
  /** The file operations (src/effects/fsPlane.ts). */
  ops: FsOperations;
}

const REFUSALS: Record<FsRefusalKind, [number, string, string]> = {
  symlink: [403, 'Symlink refused', 'symlink'],
  not_a_directory: [409, 'Not a directory', 'not_a_directory'],
  is_a_directory: [409, 'Is a directory', 'is_a_directory'],
  not_found: [404, 'Not found', 'not_found'],
  not_regular: [400, 'Not a regular file', 'not_a_regular_file'],
};

const tooLarge = () => fsError(413, `Body exceeds fs.max_bytes (${FS_MAX_BYTES})`, 'too_large', { Connection: 'close' });

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

/** The operation of one verified request (behaviour.md §9.6 step 7). */
async function operate(req: IncomingMessage, res: ServerResponse, target: { ops: FsOperations; home: string; segments: string[] }, grant: Grant): Promise<void> {
  const { ops, home, segments } = target;
  const path = displayFsPath(segments);
  switch (req.method) {
    case 'GET': {
      const f = await ops.openForRead(home, segments);
      await grant.succeed().catch((err) => { ops.release(f.fd); throw err; });
      sendFile(res, f, ops);
      return;
    }
    case 'HEAD': {
      const st = await ops.statFile(home, segments);
      await grant.succeed();
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/octet-stream');
      res.setHeader('Content-Length', String(st.size));
      res.setHeader('Last-Modified', new Date(st.mtimeMs).toUTCString());
      res.end();
      return;
    }
    case 'DELETE': {
      const existed = await ops.deleteFile(home, segments);
      await grant.succeed();
      sendJson(req, res, 200, { ok: true, path, existed });
      return;
    }
    default: {
      if (Number(req.headers['content-length'] ?? 0) > FS_MAX_BYTES) {
        drain(req, 0);
        throw tooLarge();
      }
      const r = await ops.putFile(home, segments, (sink) => pump(req, sink, tooLarge));
      await grant.succeed();
      sendJson(req, res, r.created ? 201 : 200, { ok: true, path, size: r.size, created: r.created });
    }
  }
}

/** One /fs request: the checks of behaviour.md §9.6 (services/fsAccess.ts), then the operation; throws LoomError for refusals. */
async function check(deps: FsRouteDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const target = rawTarget(req.url ?? '');
  const access = authorizeFs(deps, req.method ?? '', target.path.slice('/fs'.length), presentedSecret(req, target.query));
  try {
    await operate(req, res, { ops: deps.ops, home: access.home, segments: access.segments }, access.grant);
  } catch (err) {
    access.grant.fail();
    if (!(err instanceof FsRefusal)) throw err;
    const [status, text, reason] = REFUSALS[err.kind];
    throw fsError(status, `${text}: ${displayFsPath(access.segments)}`, reason);
  }
}

/** Handle one /fs request; never throws (refusals are rendered here). */
export async function handleFs(deps: FsRouteDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    await check(deps, req, res);
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
