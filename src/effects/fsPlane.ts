import { createReadStream, readSync, write } from 'node:fs';
import type { Readable } from 'node:stream';
import { FsRefusal, type FileSink, type FsOperations, type OpenFile } from '../domain/fsPlane.js';
import { checkPutTarget, commitTemp, createTemp, openFileAt, release, removeTemp, unlinkAt, walk } from './fsResolver.js';

/**
 * The four operations of the file-system plane (spec §4.1) over the resolver: every path is
 * resolved below the agent's home with no symlink followed (behaviour.md §9.6 steps 6 and 7).
 * `segments` are the decoded, already-validated segments of the request path.
 */

const split = (segments: readonly string[]): { dirs: string[]; name: string } => {
  if (segments.length === 0) throw new FsRefusal('is_a_directory');
  return { dirs: segments.slice(0, -1), name: segments[segments.length - 1] };
};

async function openForRead(home: string, segments: readonly string[]): Promise<OpenFile> {
  const { dirs, name } = split(segments);
  const dir = await walk(home, dirs, false);
  if (!dir) throw new FsRefusal('not_found');
  try {
    return openFileAt(dir, name);
  } finally {
    dir.close();
  }
}

async function statFile(home: string, segments: readonly string[]): Promise<{ size: number; mtimeMs: number }> {
  const f = await openForRead(home, segments);
  release(f.fd);
  return { size: f.size, mtimeMs: f.mtimeMs };
}

/** Missing parents mean the file did not exist (DELETE is idempotent). */
async function deleteFile(home: string, segments: readonly string[]): Promise<boolean> {
  const { dirs, name } = split(segments);
  const dir = await walk(home, dirs, false);
  if (!dir) return false;
  try {
    return await unlinkAt(dir, name);
  } finally {
    dir.close();
  }
}

/** Write a whole buffer at the current offset (a regular file may take it in several writes). */
function writeAll(fd: number, buf: Buffer, done: (err: Error | null) => void): void {
  write(fd, buf, 0, buf.length, null, (err, n) => {
    if (err) return done(err);
    if (n < buf.length) return writeAll(fd, buf.subarray(n), done);
    done(null);
  });
}

/**
 * Parents created (each checked), the body written by `pump` into a temp file in the target folder,
 * then renamed over the target so a reader never sees half a file. When `pump` throws (too large,
 * client gone) the temp file is removed. `pump` settles only with no write in flight, so closing the
 * fd afterwards is safe.
 */
async function putFile(home: string, segments: readonly string[], pump: (sink: FileSink) => Promise<number>): Promise<{ created: boolean; size: number }> {
  const { dirs, name } = split(segments);
  const dir = await walk(home, dirs, true);
  if (!dir) throw new FsRefusal('not_found');
  try {
    const before = checkPutTarget(dir, name);
    const temp = await createTemp(dir);
    let size: number;
    try {
      size = await pump({ write: (chunk, done) => writeAll(temp.fd, chunk, done) });
    } catch (err) {
      await removeTemp(dir, temp.name);
      throw err;
    } finally {
      release(temp.fd);
    }
    // rename(2) decides what happens if the target changed during the upload: a new file or a
    // symlink is replaced (inside the folder), a folder refuses (409). `created` is as checked before.
    await commitTemp(dir, temp.name, name);
    return { created: !before.exists, size };
  } finally {
    dir.close();
  }
}

/**
 * One synchronous read of a small file: a page-cache copy of microseconds, while a thread-pool round
 * trip costs far more on a busy machine. The caller keeps it for small files only.
 */
function readWhole(f: OpenFile): Buffer {
  const buf = Buffer.allocUnsafe(f.size);
  try {
    const n = f.size === 0 ? 0 : readSync(f.fd, buf, 0, f.size, 0);
    return buf.subarray(0, n);
  } finally {
    release(f.fd);
  }
}

function stream(f: OpenFile): Readable {
  return createReadStream('', { fd: f.fd, start: 0, end: Math.max(0, f.size - 1), autoClose: true });
}

/** The file-system plane port implemented over the symlink-proof resolver (docs/fs-resolver.md). */
export const fsOperations: FsOperations = { openForRead, statFile, deleteFile, putFile, readWhole, stream, release };
