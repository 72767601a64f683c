import { closeSync } from 'node:fs';
import { checkPutTarget, commitTemp, createTemp, FsRefusal, openFileAt, removeTemp, unlinkAt, walk, type OpenFile } from './fsResolver.js';

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
export function openForRead(home: string, segments: readonly string[]): OpenFile {
  const { dirs, name } = split(segments);
  const dir = walk(home, dirs, false);
  if (!dir) throw new FsRefusal('not_found');
  try {
    return openFileAt(dir, name);
  } finally {
    dir.close();
  }
}

/** HEAD (STAT): size and mtime of a regular file. */
export function statFile(home: string, segments: readonly string[]): { size: number; mtimeMs: number } {
  const f = openForRead(home, segments);
  closeSync(f.fd);
  return { size: f.size, mtimeMs: f.mtimeMs };
}

/** DELETE: idempotent; true when the file existed. Missing parents mean it did not. */
export function deleteFile(home: string, segments: readonly string[]): boolean {
  const { dirs, name } = split(segments);
  const dir = walk(home, dirs, false);
  if (!dir) return false;
  try {
    return unlinkAt(dir, name);
  } finally {
    dir.close();
  }
}

/**
 * PUT: parents created (each checked), body written by `pump` into a temp file in the target folder,
 * then renamed over the target so a reader never sees half a file. `pump` writes the body to the fd
 * and returns the byte count, or throws (too large, client gone): the temp file is removed then.
 */
export async function putFile(home: string, segments: readonly string[], pump: (fd: number) => Promise<number>): Promise<{ created: boolean; size: number }> {
  const { dirs, name } = split(segments);
  const dir = walk(home, dirs, true);
  if (!dir) throw new FsRefusal('not_found');
  try {
    checkPutTarget(dir, name);
    const temp = createTemp(dir);
    let size: number;
    try {
      size = await pump(temp.fd);
    } catch (err) {
      removeTemp(dir, temp.name);
      throw err;
    } finally {
      closeSync(temp.fd);
    }
    // Checked again after the upload: the target may have changed meanwhile; `created` is decided now.
    let existed: boolean;
    try {
      existed = checkPutTarget(dir, name).exists;
    } catch (err) {
      removeTemp(dir, temp.name);
      throw err;
    }
    commitTemp(dir, temp.name, name);
    return { created: !existed, size };
  } finally {
    dir.close();
  }
}
