import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, unlinkSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * The one atomic file writer: temp file in the same folder, fsync, rename, fsync of the folder
 * (behaviour.md §1.1 "Registry files are JSON, written atomically (temp file, fsync, rename), mode
 * 0600"). Registries and state use the defaults (0600 file, 0700 folders); files written on a
 * user's behalf pass their modes. Synchronous on purpose: writes are small and this keeps them ordered.
 */
export function writeFileAtomic(path: string, data: string | Buffer, modes: number | { mode?: number; dirMode?: number } = 0o600): void {
  const { mode = 0o600, dirMode = 0o700 } = typeof modes === 'number' ? { mode: modes } : modes;
  mkdirSync(dirname(path), { recursive: true, mode: dirMode });
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'w', mode);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (err) {
    unlinkSync(tmp);
    throw err;
  }
  // fsync the folder so the rename itself survives a crash.
  const dfd = openSync(dirname(path), 'r');
  try { fsyncSync(dfd); } finally { closeSync(dfd); }
}

/** Read a file as UTF-8, or undefined when it does not exist. Other errors propagate. */
export function readFileIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
