import type { LoomError } from '../domain/errors.js';
import { displayFsPath } from '../domain/fsPath.js';
import { FS_MAX_BYTES } from '../domain/limits.js';
import { FsRefusal, type FileSink, type FsOperations, type FsRefusalKind, type OpenFile } from '../domain/fsPlane.js';
import { authorizeFs, fsError, type FsAccessDeps } from './fsAccess.js';
import type { Grant } from './capabilities.js';

/** What the /fs service needs from the running system: the access checks' needs and the file operations. */
export interface FsServiceDeps extends FsAccessDeps {
  /** The file operations (src/effects/fsPlane.ts). */
  ops: FsOperations;
}

/** One /fs request as the route read it: nothing decoded, the body still on the wire. */
export interface FsRequest {
  method: string;
  /** The raw path after `/fs`. */
  rawPath: string;
  /** The presented capability secret ('' when none). */
  secret: string;
  /** Content-Length of a PUT (0 when absent). */
  declaredSize: number;
  /** Write the PUT body into the sink, refusing with `tooLarge` past fs.max_bytes; resolves with its size. */
  pump(sink: FileSink, tooLarge: () => LoomError): Promise<number>;
  /** Read and drop the body of a refused PUT, so the connection can answer. */
  discard(): void;
}

/** What the route writes: the opened file (GET), its metadata (HEAD) or a JSON body. */
export type FsAnswer =
  | { kind: 'file'; file: OpenFile }
  | { kind: 'stat'; size: number; mtimeMs: number }
  | { kind: 'json'; status: number; body: Record<string, unknown> };

const REFUSALS: Record<FsRefusalKind, [number, string, string]> = {
  symlink: [403, 'Symlink refused', 'symlink'],
  not_a_directory: [409, 'Not a directory', 'not_a_directory'],
  is_a_directory: [409, 'Is a directory', 'is_a_directory'],
  not_found: [404, 'Not found', 'not_found'],
  not_regular: [400, 'Not a regular file', 'not_a_regular_file'],
};

const tooLarge = () => fsError(413, `Body exceeds fs.max_bytes (${FS_MAX_BYTES})`, 'too_large', { Connection: 'close' });

/**
 * The operation of one verified request (behaviour.md §9.6 step 7). A single-use grant is consumed
 * once the operation succeeded and before the answer goes out.
 */
async function operate(ops: FsOperations, at: { home: string; segments: string[] }, grant: Grant, r: FsRequest): Promise<FsAnswer> {
  const { home, segments } = at;
  const path = displayFsPath(segments);
  switch (r.method) {
    case 'GET': {
      const file = await ops.openForRead(home, segments);
      await grant.succeed().catch((err) => { ops.release(file.fd); throw err; });
      return { kind: 'file', file };
    }
    case 'HEAD': {
      const st = await ops.statFile(home, segments);
      await grant.succeed();
      return { kind: 'stat', size: st.size, mtimeMs: st.mtimeMs };
    }
    case 'DELETE': {
      const existed = await ops.deleteFile(home, segments);
      await grant.succeed();
      return { kind: 'json', status: 200, body: { ok: true, path, existed } };
    }
    default: {
      if (r.declaredSize > FS_MAX_BYTES) {
        r.discard();
        throw tooLarge();
      }
      const put = await ops.putFile(home, segments, (sink) => r.pump(sink, tooLarge));
      await grant.succeed();
      return { kind: 'json', status: put.created ? 201 : 200, body: { ok: true, path, size: put.size, created: put.created } };
    }
  }
}

/**
 * One /fs request (spec §4.1): the checks of behaviour.md §9.6 (services/fsAccess.ts), then the
 * operation; a grant reserved by the checks is released when the operation fails. Throws the
 * refusal as a LoomError with its `reason`.
 */
export async function serveFs(deps: FsServiceDeps, r: FsRequest): Promise<FsAnswer> {
  const access = authorizeFs(deps, r.method, r.rawPath, r.secret);
  try {
    return await operate(deps.ops, access, access.grant, r);
  } catch (err) {
    access.grant.fail();
    if (!(err instanceof FsRefusal)) throw err;
    const [status, text, reason] = REFUSALS[err.kind];
    throw fsError(status, `${text}: ${displayFsPath(access.segments)}`, reason);
  }
}
