import { closeSync, constants as C, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { open as openAsync, type FileHandle } from 'node:fs/promises';
import type { AgentFileRead, AgentFileRefusal } from '../domain/agentFile.js';

/**
 * The one reader of agent-controlled paths (behaviour.md §16). The open never blocks: O_NONBLOCK
 * makes opening a FIFO return at once (a blocking open waits for a writer, with the event loop
 * stopped for every agent), O_NOCTTY keeps a terminal from becoming the daemon's, and O_NOFOLLOW
 * refuses a final symlink (callers pass a path they already resolved). The descriptor is then
 * fstat-checked, so the check and the read are about the same file, and at most limit + 1 bytes are
 * read from it: a file growing while read is refused as too large, never read without end.
 */

/** The open flags of every read of an agent-controlled path (the /fs resolver opens with these too). */
export const READ_FLAGS = C.O_RDONLY | C.O_NONBLOCK | C.O_NOCTTY | C.O_NOFOLLOW;
/** Bytes requested per read(2) once the size from fstat is used up. */
const CHUNK = 65536;

const codeOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

/** A regular file held open: read it from `fd` (never by name again), then closeSync(fd). */
export interface OpenAgentFile {
  fd: number;
  size: number;
  mode: number;
}

/**
 * The refusal an open failure means, or the error itself when it is not one: a missing file or
 * parent; ELOOP, a symlink swapped in after the caller resolved the path, not the file it checked;
 * ENXIO, a socket or a device with nothing behind it.
 */
function openRefusal(err: unknown): { refused: 'missing' | 'not_regular' } {
  const code = codeOf(err);
  if (code === 'ENOENT' || code === 'ENOTDIR') return { refused: 'missing' };
  if (code === 'ELOOP' || code === 'ENXIO') return { refused: 'not_regular' };
  throw err;
}

/**
 * Open a regular file without blocking and check it through its descriptor. Absent (ENOENT,
 * ENOTDIR), folders and anything but a regular file come back as refusals; other errors (EACCES,
 * EIO) are thrown.
 */
export function openAgentFile(abs: string): OpenAgentFile | Exclude<AgentFileRefusal, { refused: 'too_large' }> {
  let fd: number;
  try {
    fd = openSync(abs, READ_FLAGS);
  } catch (err) {
    return openRefusal(err);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory() || !st.isFile()) {
      closeSync(fd);
      return { refused: st.isDirectory() ? 'directory' : 'not_regular' };
    }
    return { fd, size: st.size, mode: st.mode & 0o7777 };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * Read a regular file of at most `limit` bytes (openAgentFile's refusals, plus too_large for a file
 * over the limit when opened or while it was read).
 */
export function readAgentFile(abs: string, limit: number): AgentFileRead {
  const f = openAgentFile(abs);
  if ('refused' in f) return f;
  try {
    if (f.size > limit) return { refused: 'too_large', size: f.size };
    const data = readBounded(f.fd, f.size, limit);
    if (data.length > limit) return { refused: 'too_large', size: data.length };
    return { data, mode: f.mode };
  } finally {
    closeSync(f.fd);
  }
}

/**
 * The buffer for the next read: `buf` while it has room, else a bigger copy of its first `len` bytes
 * (at most `cap`), or null once `cap` bytes are read.
 */
function roomFor(buf: Buffer, len: number, cap: number): Buffer | null {
  if (len < buf.length) return buf;
  if (len >= cap) return null;
  const bigger = Buffer.allocUnsafe(Math.min(cap, len + CHUNK));
  buf.copy(bigger, 0, 0, len);
  return bigger;
}

/** Up to limit + 1 bytes from `fd`, starting with the size fstat gave (the common case: one read). */
function readBounded(fd: number, size: number, limit: number): Buffer {
  const cap = limit + 1;
  let buf: Buffer = Buffer.allocUnsafe(Math.min(cap, size + 1));
  let len = 0;
  for (let room: Buffer | null = buf; room; room = roomFor(buf, len, cap)) {
    buf = room;
    const n = readSync(fd, buf, len, buf.length - len, null);
    if (n === 0) break;
    len += n;
  }
  return buf.subarray(0, len);
}

/**
 * What stands at `abs` before a write replaces it (lstat: a final symlink is not followed): absent,
 * a regular file, a folder, or something else. Writers refuse the last two; rename(2) never opens
 * the target, so this check is about the result, not about blocking.
 */
export function writeTargetKind(abs: string): 'absent' | 'file' | 'directory' | 'other' {
  let st;
  try {
    st = lstatSync(abs);
  } catch (err) {
    const code = codeOf(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'absent';
    throw err;
  }
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'directory';
  return 'other';
}

/**
 * The same bounded read on the thread pool, for callers already asynchronous (installs, traces): a
 * slow disk stalls a pool thread, never the event loop. Same flags, same checks, same outcomes.
 */
export async function readAgentFileAsync(abs: string, limit: number): Promise<AgentFileRead> {
  let fh: FileHandle;
  try {
    fh = await openAsync(abs, READ_FLAGS);
  } catch (err) {
    return openRefusal(err);
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) return { refused: 'directory' };
    if (!st.isFile()) return { refused: 'not_regular' };
    if (st.size > limit) return { refused: 'too_large', size: st.size };
    const cap = limit + 1;
    let buf: Buffer = Buffer.allocUnsafe(Math.min(cap, st.size + 1));
    let len = 0;
    for (let room: Buffer | null = buf; room; room = roomFor(buf, len, cap)) {
      buf = room;
      const { bytesRead } = await fh.read(buf, len, buf.length - len, null);
      if (bytesRead === 0) break;
      len += bytesRead;
    }
    if (len > limit) return { refused: 'too_large', size: len };
    return { data: buf.subarray(0, len), mode: st.mode & 0o7777 };
  } finally {
    await fh.close();
  }
}
