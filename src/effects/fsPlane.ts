import { write } from 'node:fs';
import { checkPutTarget, commitTemp, createTemp, FsRefusal, openFileAt, release, removeTemp, unlinkAt, walk, type OpenFile } from './fsResolver.js';

/**
 * The four operations of the file-system plane (spec §4.1) over the resolver: every path is
 * resolved below the agent's home with no symlink followed (behaviour.md §9.6 steps 6 and 7).
 * `segments` are the decoded, already-validated segments of the request path.
 */

const split = (segments: readonly string[]): { dirs: string[]; name: string } => {
  if (segments.length === 0) throw new FsRefusal('is_a_directory');
  return { dirs: segments.slice(0, -1), name: segments[segments.length - 1] };
};

/** GET: the opened regular file (the caller streams it and closes the fd). */
export async function openForRead(home: string, segments: readonly string[]): Promise<OpenFile> {
  const { dirs, name } = split(segments);
  const dir = await walk(home, dirs, false);
  if (!dir) throw new FsRefusal('not_found');
  try {
    return openFileAt(dir, name);
  } finally {
    dir.close();
  }
}

/** HEAD (STAT): size and mtime of a regular file. */
export async function statFile(home: string, segments: readonly string[]): Promise<{ size: number; mtimeMs: number }> {
  const f = await openForRead(home, segments);
  release(f.fd);
  return { size: f.size, mtimeMs: f.mtimeMs };
}

/** DELETE: idempotent; true when the file existed. Missing parents mean it did not. */
export async function deleteFile(home: string, segments: readonly string[]): Promise<boolean> {
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
export function writeAll(fd: number, buf: Buffer, done: (err: Error | null) => void): void {
  write(fd, buf, 0, buf.length, null, (err, n) => {
    if (err) return done(err);
    if (n < buf.length) return writeAll(fd, buf.subarray(n), done);
    done(null);
  });
}

/**
 * PUT: parents created (each checked), body written by `pump` into a temp file in the target folder,
 * then renamed over the target so a reader never sees half a file. `pump` writes the body to the fd
 * and returns the byte count, or throws (too large, client gone): the temp file is removed then.
 */
export async function putFile(home: string, segments: readonly string[], pump: (fd: number) => Promise<number>): Promise<{ created: boolean; size: number }> {
  const { dirs, name } = split(segments);
  const dir = await walk(home, dirs, true);
  if (!dir) throw new FsRefusal('not_found');
  try {
    const before = checkPutTarget(dir, name);
    const temp = await createTemp(dir);
    let size: number;
    try {
      size = await pump(temp.fd);
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
