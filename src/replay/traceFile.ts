import { closeSync, constants as C, fstatSync, openSync, readSync } from 'node:fs';
import { TRACE_FILE_MAX_BYTES } from '../domain/limits.js';
import { TRACE_LINE_MAX_BYTES, TraceFormatError } from '../domain/trace.js';

/**
 * Reading a trace for `loom replay` (behaviour.md §14.2, §16): opened without blocking and checked
 * through its descriptor (a FIFO or `/dev/zero` is refused, never read), read in chunks with every
 * line bounded, so a huge line is reported after 16 MiB instead of being read, parsed and quoted whole.
 */

/** A trace file that cannot be replayed at all (not a regular file, too large, unreadable). */
export class TraceFileError extends Error {}

/**
 * The reader's flags without O_NOFOLLOW: the user names this file on the command line and a symlink
 * to a trace is fine; what it leads to is checked by fstat.
 */
const OPEN_FLAGS = C.O_RDONLY | C.O_NONBLOCK | C.O_NOCTTY;
const CHUNK = 1024 * 1024;
const MIB = 1024 * 1024;

/** The lines of a trace file (split at `\n`), each at most TRACE_LINE_MAX_BYTES bytes. */
export function readTraceLines(file: string): string[] {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (err) {
    throw new TraceFileError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new TraceFileError(`${file} is not a regular file`);
    if (st.size > TRACE_FILE_MAX_BYTES) throw new TraceFileError(`${file} is larger than ${TRACE_FILE_MAX_BYTES / MIB} MiB`);
    return splitBounded(fd, file);
  } finally {
    closeSync(fd);
  }
}


function splitBounded(fd: number, file: string): string[] {
  const lines: string[] = [];
  const buf = Buffer.allocUnsafe(CHUNK);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let total = 0;
  const finish = (piece: Buffer) => {
    lines.push(Buffer.concat([...pending, piece]).toString('utf8'));
    pending = [];
    pendingBytes = 0;
  };
  for (;;) {
    const n = readSync(fd, buf, 0, CHUNK, null);
    if (n === 0) break;
    total += n;
    // A file growing while read is cut at the limit like any other.
    if (total > TRACE_FILE_MAX_BYTES) throw new TraceFileError(`${file} is larger than ${TRACE_FILE_MAX_BYTES / MIB} MiB`);
    const chunk = buf.subarray(0, n);
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      if (pendingBytes + nl - start > TRACE_LINE_MAX_BYTES) throw tooLong(lines.length + 1);
      finish(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < n) {
      pendingBytes += n - start;
      if (pendingBytes > TRACE_LINE_MAX_BYTES) throw tooLong(lines.length + 1);
      pending.push(Buffer.from(chunk.subarray(start)));
    }
  }
  finish(Buffer.alloc(0));
  return lines;
}

const tooLong = (line: number) => new TraceFormatError(line, `line is longer than ${TRACE_LINE_MAX_BYTES / MIB} MiB`);
