import { closeSync, constants as C, fstatSync, lstatSync, mkdirSync, openSync, realpathSync, writeSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/**
 * The writer behind a trace's `file` steps (behaviour.md §14.2 "write a file under the agent home").
 * The trace is the untrusted part: its `~/…` path was checked as text (domain/trace.ts), but the home
 * holds whatever the agent's commands left there, and mkdir/writeFile follow symlinks. So the walk
 * goes one name at a time from the home's real path, refuses any symlink on the way (lstat), creates
 * missing folders one by one, and opens the file itself with O_NOFOLLOW: nothing is created or written
 * outside the home.
 *
 * Limit: the walk is by names, so a process running in the home that swaps a folder for a symlink
 * between the lstat and the next step could still redirect it. The /fs resolver closes that race with
 * held directory fds (docs/fs-resolver.md); this writer does not, because such a process (an agent's
 * shell) already runs as the same user and can write wherever the redirected write would go.
 */

/** Folders a file step creates: owner only, as the daemon creates its own folders. */
const DIR_MODE = 0o700;
/** A written file: owner only (its content may hold a value put in from `${env:NAME}`). */
const FILE_MODE = 0o600;
/**
 * O_NOFOLLOW: a symlink planted at the last name fails the open (ELOOP) instead of being written
 * through. O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader forever; fstat
 * then refuses anything that is not a regular file.
 */
const FILE_FLAGS = C.O_WRONLY | C.O_CREAT | C.O_TRUNC | C.O_NOFOLLOW | C.O_NONBLOCK;

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

function lstatOrAbsent(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/** The folder `name` inside `dir`, created (0700) when missing; refused when it is a symlink or a file. */
function enterFolder(dir: string, name: string, shown: string): string {
  const path = join(dir, name);
  let st = lstatOrAbsent(path);
  if (!st) {
    try {
      mkdirSync(path, { mode: DIR_MODE });
    } catch (err) {
      // Created by someone else in between: judged below like any existing name.
      if (errno(err) !== 'EEXIST') throw err;
    }
    st = lstatSync(path);
  }
  if (st.isSymbolicLink()) throw new Error(`refusing to write through a symlink (${shown})`);
  if (!st.isDirectory()) throw new Error(`${shown} is not a folder`);
  return path;
}

function openFile(path: string, shown: string): number {
  try {
    return openSync(path, FILE_FLAGS, FILE_MODE);
  } catch (err) {
    const code = errno(err);
    // Linux says ELOOP for O_NOFOLLOW on a symlink; some BSDs say EMLINK.
    if (code === 'ELOOP' || code === 'EMLINK') throw new Error(`refusing to write through a symlink (${shown})`);
    if (code === 'EISDIR') throw new Error(`${shown} is a folder`);
    if (code === 'ENXIO') throw new Error(`${shown} is not a regular file`);
    throw err;
  }
}

/**
 * Write `content` to `path` (`~/a/b.md`, already checked as text) under `home`, which may itself be a
 * symlink (its real path is the root of the walk). Throws an Error whose message is one line: a
 * symlink below the home, a file where a folder should be, a folder or special file at the end, or
 * the file system's own refusal (`EACCES: permission denied, open '…'`). The caller turns it into a
 * failed step: a hostile trace fails that step, never the replay.
 */
export function writeHomeFile(home: string, path: string, content: string): void {
  const names = path.slice(2).split('/');
  let dir = realpathSync(home);
  for (let i = 0; i < names.length - 1; i++) dir = enterFolder(dir, names[i], `~/${names.slice(0, i + 1).join('/')}`);
  const fd = openFile(join(dir, names[names.length - 1]), path);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${path} is not a regular file`);
    const bytes = Buffer.from(content, 'utf8');
    for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off);
  } finally {
    closeSync(fd);
  }
}
