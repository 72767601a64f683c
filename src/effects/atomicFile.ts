import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { isAbsent } from './fileProbe.js';

/** What an atomic write puts in the file: the bytes, or a function that writes them chunk by chunk (a log rewrite). */
export type AtomicData = string | Buffer | ((write: (chunk: string | Buffer) => void) => void);

function writeAll(fd: number, chunk: string | Buffer): void {
  const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
  for (let off = 0; off < b.length;) off += writeSync(fd, b, off, b.length - off);
}

/** Remove a temp file after a failed write; the write's own error is the one reported. */
function discard(tmp: string): void {
  try {
    unlinkSync(tmp);
  } catch (err) {
    // Start-up removes leftover temp files (stores/leftovers.ts); say why this one stayed.
    process.emitWarning(`cannot remove ${tmp}: ${(err as Error).message}`);
  }
}

/**
 * The one atomic file writer: temp file in the same folder, fsync, rename, fsync of the folder
 * (behaviour.md §1.1 "Registry files are JSON, written atomically (temp file, fsync, rename), mode
 * 0600"). Registries, state and log rewrites use the defaults (0600 file, 0700 folders); files
 * written on a user's behalf pass their modes. A failed write removes its temp file. Synchronous on
 * purpose: writes are small or must not interleave, and this keeps them ordered.
 */
export function writeFileAtomic(path: string, data: AtomicData, modes: number | { mode?: number; dirMode?: number } = 0o600): void {
  const { mode = 0o600, dirMode = 0o700 } = typeof modes === 'number' ? { mode: modes } : modes;
  mkdirSync(dirname(path), { recursive: true, mode: dirMode });
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'w', mode);
  try {
    if (typeof data === 'function') data((chunk) => writeAll(fd, chunk));
    else writeAll(fd, data);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    discard(tmp);
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    discard(tmp);
    throw err;
  }
  // fsync the folder so the rename itself survives a crash.
  const dfd = openSync(dirname(path), 'r');
  try { fsyncSync(dfd); } finally { closeSync(dfd); }
}

/** Read a file as UTF-8, or undefined when it does not exist. Other errors propagate. */
export function readFileIfExists(path: string): string | undefined {
  try {
    if (isAbsent(path)) return undefined;
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
