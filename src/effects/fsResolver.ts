import {
  closeSync, constants as C, fstatSync, lstatSync, mkdir as mkdirCb, open as openCb, openSync, readlinkSync, rename as renameCb,
  unlink as unlinkCb, type Stats,
} from 'node:fs';
import { promisify } from 'node:util';
import { READ_FLAGS } from './agentFile.js';
import { FsRefusal, type OpenFile } from '../domain/fsPlane.js';

/**
 * The /fs resolver (spec §4.1 "refuses symlinks anywhere on the path and never follows one";
 * behaviour.md §9.6 step 6). See docs/fs-resolver.md for the approach and its limits.
 *
 * Node has no openat(2), so every lookup goes through the magic link `/proc/self/fd/<dirfd>/<name>`:
 * the kernel resolves `/proc/self/fd/<dirfd>` to exactly the directory that fd holds (not by walking
 * names again), so opening `<name>` there is an openat(dirfd, name). Every component is opened with
 * O_NOFOLLOW, directories also with O_DIRECTORY: a symlink anywhere fails the open instead of being
 * followed, whatever another process swaps in between two steps. Before a file is read, created,
 * renamed or removed, the held directory's real path (readlink of its /proc entry) must still equal
 * the lexical path; a folder renamed or replaced during the walk is refused.
 *
 * Threading: lookups (open of an existing name, lstat, fstat, readlink, close) are synchronous: they
 * take microseconds and no directory lock, while a thread-pool round trip costs far more on a busy
 * machine. Calls that change a directory (mkdir, creating the temp file, rename, unlink) take its
 * lock exclusively, and on ext4 a rename over an existing file flushes data under that lock, so
 * they run on the thread pool and a busy directory stalls a pool thread, never the event loop.
 */

const mkdir = promisify(mkdirCb);
const openAsync = promisify(openCb);
const rename = promisify(renameCb);
const unlink = promisify(unlinkCb);

const PROC_FD = '/proc/self/fd/';
const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
/** The flags of every agent file read (O_NONBLOCK: opening a FIFO never hangs; fstat then refuses anything not regular). */
const FILE_FLAGS = READ_FLAGS;

/** The path of `name` inside the directory held by `fd` (an openat emulation). */
export const at = (fd: number, name: string): string => `${PROC_FD}${fd}/${name}`;

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

/**
 * ENOENT from a call inside a held folder means the folder itself was removed or replaced while the
 * request held it (another process renamed something over it): the path changed under the request,
 * which is refused like a swapped-in symlink (403), never reported as an internal error.
 */
const vanished = (err: unknown): unknown => (code(err) === 'ENOENT' ? new FsRefusal('symlink') : err);

/** Close an fd; a failure is reported, never thrown (the request is already decided). */
export function release(fd: number): void {
  try {
    closeSync(fd);
  } catch (err) {
    process.emitWarning(`close(${fd}) failed: ${(err as Error).message}`);
  }
}

/** lstat inside a held directory, or undefined when absent. */
function lstatAt(dirFd: number, name: string): Stats | undefined {
  try {
    return lstatSync(at(dirFd, name));
  } catch (err) {
    if (code(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/** A directory held open during one operation; `close()` exactly once. */
export interface HeldDir {
  fd: number;
  /** The lexical absolute path it must have (home realpath + segments). */
  path: string;
  close(): void;
}

/**
 * Open the agent's home and walk `dirs` below it without following any symlink. Missing folders
 * are created when `create` is true (PUT: "parents created, each checked"); otherwise the walk
 * returns null at the first missing one. Throws FsRefusal for a symlink or a file in the way.
 */
export async function walk(home: string, dirs: readonly string[], create: boolean): Promise<HeldDir | null> {
  let fd: number;
  try {
    // The home's own path may contain symlinks (behaviour.md §9.6: resolution starts at its realpath).
    fd = openSync(home, C.O_RDONLY | C.O_DIRECTORY);
  } catch (err) {
    if (code(err) === 'ENOENT') return null;
    throw err;
  }
  let path: string;
  try {
    path = readlinkSync(`${PROC_FD}${fd}`);
    for (const name of dirs) {
      const next = await openDirAt(fd, name, create);
      release(fd);
      fd = -1;
      if (next === null) return null;
      fd = next;
      path = path === '/' ? `/${name}` : `${path}/${name}`;
    }
  } catch (err) {
    if (fd >= 0) release(fd);
    throw err;
  }
  const held = fd;
  return { fd: held, path, close: () => release(held) };
}

/** Open (or create, then open) the folder `name` inside `dirFd` with O_NOFOLLOW|O_DIRECTORY. */
async function openDirAt(dirFd: number, name: string, create: boolean): Promise<number | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return openSync(at(dirFd, name), DIR_FLAGS);
    } catch (err) {
      const c = code(err);
      if (c === 'ENOTDIR' || c === 'ELOOP') throw notADir(dirFd, name);
      if (c !== 'ENOENT') throw err;
      if (!create) return null;
    }
    try {
      // mkdir never follows a final symlink: an existing one gives EEXIST and the next open refuses it.
      await mkdir(at(dirFd, name));
    } catch (err) {
      if (code(err) !== 'EEXIST') throw vanished(err);
    }
  }
  // Created and removed again three times by someone else: give up as a refusal.
  throw new FsRefusal('symlink');
}

/** Classify why `name` could not be opened as a directory: a symlink, or something else in the way. */
function notADir(dirFd: number, name: string): FsRefusal {
  const st = lstatAt(dirFd, name);
  if (st && !st.isSymbolicLink() && !st.isDirectory()) return new FsRefusal('not_a_directory');
  // A symlink, or it changed under us (swapped back, removed): refuse as the symlink it was.
  return new FsRefusal('symlink');
}

/** The held folder must still be where the lexical path says (not renamed or swapped during the walk). */
export function verifyDir(dir: HeldDir): void {
  if (readlinkSync(`${PROC_FD}${dir.fd}`) !== dir.path) throw new FsRefusal('symlink');
}

/** Open the final component for reading (GET, HEAD): O_NOFOLLOW inside the held folder, then verified. */
export function openFileAt(dir: HeldDir, name: string): OpenFile {
  let fd: number;
  try {
    fd = openSync(at(dir.fd, name), FILE_FLAGS);
  } catch (err) {
    const c = code(err);
    if (c === 'ENOENT') throw new FsRefusal('not_found');
    if (c === 'ELOOP') throw new FsRefusal('symlink');
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new FsRefusal('is_a_directory');
    if (!st.isFile()) throw new FsRefusal('not_regular');
    // After the open: a folder renamed away during the walk is refused before any byte is read.
    verifyDir(dir);
    return { fd, size: st.size, mtimeMs: st.mtimeMs };
  } catch (err) {
    release(fd);
    throw err;
  }
}

/** What stands at `name` before a PUT: absent, a regular file (overwrite), or a refusal. */
export function checkPutTarget(dir: HeldDir, name: string): { exists: boolean } {
  const st = lstatAt(dir.fd, name);
  if (!st) return { exists: false };
  if (st.isSymbolicLink()) throw new FsRefusal('symlink');
  if (st.isDirectory()) throw new FsRefusal('is_a_directory');
  if (!st.isFile()) throw new FsRefusal('not_regular');
  return { exists: true };
}

/** Distinguishes temp files of this process; O_EXCL refuses any name that exists anyway. */
let tempSeq = 0;

/** A fresh temp file in the verified target folder (PUT writes there, then renames). */
export async function createTemp(dir: HeldDir): Promise<{ fd: number; name: string }> {
  verifyDir(dir);
  for (let attempt = 0; ; attempt++) {
    const name = `.loom-put-${process.pid}-${(tempSeq++).toString(36)}.tmp`;
    try {
      const fd = await openAsync(at(dir.fd, name), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o666);
      return { fd, name };
    } catch (err) {
      // A leftover of an earlier process with the same pid: take the next name.
      if (code(err) !== 'EEXIST' || attempt >= 8) throw vanished(err);
    }
  }
}

/**
 * Rename the temp file over `name` inside the same held folder. rename(2) never follows the final
 * component: a symlink swapped in at the last moment is replaced itself, its target is untouched.
 */
export async function commitTemp(dir: HeldDir, temp: string, name: string): Promise<void> {
  try {
    verifyDir(dir);
    await rename(at(dir.fd, temp), at(dir.fd, name));
  } catch (err) {
    await removeTemp(dir, temp);
    const c = code(err);
    if (c === 'EISDIR' || c === 'ENOTEMPTY' || c === 'EEXIST') throw new FsRefusal('is_a_directory');
    throw vanished(err);
  }
}

/** Remove a temp file after a failed PUT (best effort: it is inside the workspace either way). */
export async function removeTemp(dir: HeldDir, temp: string): Promise<void> {
  try {
    await unlink(at(dir.fd, temp));
  } catch (err) {
    if (code(err) !== 'ENOENT') process.emitWarning(`cannot remove ${temp}: ${(err as Error).message}`);
  }
}

/**
 * DELETE of `name` inside the verified folder: false when absent. unlink(2) never follows the final
 * component either; a folder is 409 (is_a_directory), a symlink 403.
 */
export async function unlinkAt(dir: HeldDir, name: string): Promise<boolean> {
  const st = lstatAt(dir.fd, name);
  if (!st) return false;
  if (st.isSymbolicLink()) throw new FsRefusal('symlink');
  if (st.isDirectory()) throw new FsRefusal('is_a_directory');
  verifyDir(dir);
  try {
    await unlink(at(dir.fd, name));
    return true;
  } catch (err) {
    const c = code(err);
    if (c === 'ENOENT') return false;
    if (c === 'EISDIR' || c === 'EPERM') throw new FsRefusal('is_a_directory');
    throw err;
  }
}
