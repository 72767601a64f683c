import { createReadStream, read } from 'node:fs';
import type { Express, Request, Response } from 'express';
import type { Grant, Verification } from '../../actors/capabilities.js';
import { LoomError } from '../../domain/errors.js';
import { displayFsPath, insidePrefix, parseFsPath, VERB_OF_METHOD } from '../../domain/fsPath.js';
import { FS_MAX_BYTES } from '../../domain/limits.js';
import { deleteFile, openForRead, putFile, statFile, writeAll } from '../../effects/fsPlane.js';
import { FsRefusal, release, type FsRefusalKind, type OpenFile } from '../../effects/fsResolver.js';
import { drain } from '../body.js';

/** What the /fs route needs from the running system. */
export interface FsRouteDeps {
  /** behaviour.md §9.6 step 3 (reserves a single-use token). */
  verify(secret: string): Verification;
  /** The home of an agent, or undefined when it no longer exists. */
  home(agentId: string): string | undefined;
}

const ALLOW = 'PUT, GET, DELETE, HEAD';
/** Files up to this size are read in one call and sent with `res.end`; larger ones stream. */
const SMALL_FILE = 64 * 1024;

/** An /fs refusal with its `reason` (behaviour.md §9.1: error bodies add `reason` on /fs). */
const fsError = (status: number, error: string, reason: string, headers?: Record<string, string>) =>
  new LoomError(status, error, { extra: { reason }, headers });

const REFUSALS: Record<FsRefusalKind, [number, string, string]> = {
  symlink: [403, 'Symlink refused', 'symlink'],
  not_a_directory: [409, 'Not a directory', 'not_a_directory'],
  is_a_directory: [409, 'Is a directory', 'is_a_directory'],
  not_found: [404, 'Not found', 'not_found'],
  not_regular: [403, 'Not a regular file', 'not_a_regular_file'],
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
export function presentedSecret(req: Request, query: string): string {
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer +(\S+) *$/i.exec(auth) : null;
  if (m) return m[1];
  return new URLSearchParams(query).get('cap') ?? '';
}

/**
 * Stream the request body into `fd`, counting bytes: past FS_MAX_BYTES the rest is drained (not
 * buffered) and 413 is thrown; a client that goes away rejects. Returns the size. The promise settles
 * only when no write is in flight, so the caller may close the fd (a write still queued on the thread
 * pool could otherwise land in whatever file reuses the fd number).
 */
function pump(req: Request, fd: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let size = 0;
    let writing = false;
    let outcome: { err: Error | null } | null = null;
    const settle = () => {
      if (writing || !outcome) return;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onError);
      if (outcome.err) reject(outcome.err);
      else resolve(size);
    };
    const finish = (err: Error | null) => {
      if (outcome) return;
      outcome = { err };
      if (err) drain(req, size);
      settle();
    };
    const onData = (chunk: Buffer) => {
      if (outcome) return;
      size += chunk.length;
      if (size > FS_MAX_BYTES) return finish(tooLarge());
      req.pause();
      writing = true;
      writeAll(fd, chunk, (err) => {
        writing = false;
        if (err) finish(err);
        else if (!outcome) req.resume();
        settle();
      });
    };
    // 'end' may come while the last chunk is still being written: settle() waits for it.
    const onEnd = () => finish(null);
    const onClose = () => { if (!req.complete) finish(new Error('client closed the upload')); };
    const onError = (err: Error) => finish(err);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.on('error', onError);
  });
}

/** Send an opened file (GET): small files in one write, larger ones streamed; the fd is closed. */
function sendFile(res: Response, f: OpenFile): void {
  res.status(200).setHeader('Content-Type', 'application/octet-stream');
  res.setHeader('Last-Modified', new Date(f.mtimeMs).toUTCString());
  if (f.size <= SMALL_FILE) {
    const buf = Buffer.allocUnsafe(f.size);
    read(f.fd, buf, 0, f.size, 0, (err, n) => {
      release(f.fd);
      if (err) return void res.destroy(err);
      res.setHeader('Content-Length', n);
      res.end(buf.subarray(0, n));
    });
    return;
  }
  res.setHeader('Content-Length', f.size);
  const stream = createReadStream('', { fd: f.fd, start: 0, end: f.size - 1, autoClose: true });
  let sent = 0;
  stream.on('data', (c) => { sent += c.length; });
  stream.on('error', (err) => res.destroy(err));
  // A file truncated by someone else mid-read must not leave the client waiting for missing bytes.
  stream.on('end', () => { if (sent < f.size) res.destroy(); });
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

/** The operation of one verified request (behaviour.md §9.6 step 7). */
async function operate(req: Request, res: Response, home: string, segments: string[], grant: Grant): Promise<void> {
  const path = displayFsPath(segments);
  switch (req.method) {
    case 'GET': {
      const f = await openForRead(home, segments);
      await grant.succeed().catch((err) => { release(f.fd); throw err; });
      sendFile(res, f);
      return;
    }
    case 'HEAD': {
      const st = await statFile(home, segments);
      await grant.succeed();
      res.status(200).set({ 'Content-Type': 'application/octet-stream', 'Content-Length': String(st.size), 'Last-Modified': new Date(st.mtimeMs).toUTCString() }).end();
      return;
    }
    case 'DELETE': {
      const existed = await deleteFile(home, segments);
      await grant.succeed();
      res.status(200).json({ ok: true, path, existed });
      return;
    }
    default: {
      if (Number(req.headers['content-length'] ?? 0) > FS_MAX_BYTES) {
        drain(req, 0);
        throw tooLarge();
      }
      const r = await putFile(home, segments, (fd) => pump(req, fd));
      await grant.succeed();
      res.status(r.created ? 201 : 200).json({ ok: true, path, size: r.size, created: r.created });
    }
  }
}

/** Handle one /fs request in the check order of behaviour.md §9.6. */
async function handle(deps: FsRouteDeps, req: Request, res: Response): Promise<void> {
  const verb = VERB_OF_METHOD[req.method];
  if (!verb) throw new LoomError(405, `Method not on the system plane: ${req.method}`, { headers: { Allow: ALLOW } });
  const target = rawTarget(req.originalUrl);
  const secret = presentedSecret(req, target.query);
  if (secret === '') throw fsError(401, 'Capability required', 'missing');
  const v = deps.verify(secret);
  if (!v.ok) throw fsError(401, `Capability refused: ${v.reason}`, v.reason);
  const { grant } = v;
  try {
    const rawPath = target.path.slice('/fs'.length);
    const segments = parseFsPath(rawPath);
    if (segments === null) throw fsError(400, `Illegal path: ${rawPath.replace(/^\//, '')}`, 'invalid_path');
    if (!grant.cap.verbs.includes(verb)) throw fsError(403, `Verb not granted: ${verb}`, 'verb_not_allowed');
    const path = displayFsPath(segments);
    if (!insidePrefix(segments, grant.cap.path_prefix)) throw fsError(403, `Path outside the capability scope: ${path}`, 'path_outside_scope');
    const home = deps.home(grant.cap.agent_id);
    // The agent is gone but the cascade has not reached this token yet: it is as good as revoked.
    if (home === undefined) throw fsError(401, 'Capability refused: revoked', 'revoked');
    try {
      await operate(req, res, home, segments, grant);
    } catch (err) {
      if (!(err instanceof FsRefusal)) throw err;
      const [status, text, reason] = REFUSALS[err.kind];
      throw fsError(status, `${text}: ${path}`, reason);
    }
  } catch (err) {
    grant.fail();
    throw err;
  }
}

/** Mount `/fs` and `/fs/...` (spec §4.1). The pattern is a RegExp so Express never decodes the path itself. */
export function mountFs(deps: FsRouteDeps) {
  return (app: Express): void => {
    app.all(/^\/fs(?:\/.*)?$/, (req, res) => handle(deps, req, res));
  };
}
