import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { isAbsent } from '../effects/fileProbe.js';
import { EVENT_ID_RE, WEBHOOK_SOURCE, type StoredEvent } from '../domain/events.js';
import { fileErrorText, parseJsonLine, RegistryReadError } from './jsonAdapter.js';

/**
 * Reading an inbox log (behaviour.md §9.8) without holding it in memory: the file is scanned in
 * chunks, each line handed over with its byte offset and length (the inbox keeps only an index and
 * reads texts back on demand), and lines that are not valid operations are collected for the
 * quarantine file instead of being dropped by the next compaction.
 */

/** One line of `state/events.jsonl` (behaviour.md §9.8). */
export type LogOp = { op: 'add'; event: StoredEvent } | { op: 'ack'; id: string; at: string } | { op: 'del'; ids: string[] };

const CHUNK = 1 << 20;

/** Parse one log line into an operation, or null when it is not a valid one. */
export function parseOp(line: string, agentId: string): LogOp | null {
  const v = parseJsonLine(line);
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o.op === 'add') {
    const e = o.event as Record<string, unknown> | null;
    if (!e || typeof e.id !== 'string' || !EVENT_ID_RE.test(e.id) || typeof e.text !== 'string' || typeof e.receivedAt !== 'string') return null;
    if (e.status !== 'pending' && e.status !== 'acked') return null;
    // Shared strings for the fields every event of this log has in common (100 000 events are normal).
    const source = e.source === WEBHOOK_SOURCE ? WEBHOOK_SOURCE : String(e.source);
    return { op: 'add', event: { id: e.id, agentId: e.agentId === agentId ? agentId : String(e.agentId), receivedAt: e.receivedAt, source, text: e.text, status: e.status, ackedAt: typeof e.ackedAt === 'string' ? e.ackedAt : null } };
  }
  if (o.op === 'ack' && typeof o.id === 'string' && typeof o.at === 'string') return { op: 'ack', id: o.id, at: o.at };
  if (o.op === 'del' && Array.isArray(o.ids) && o.ids.every((x) => typeof x === 'string')) return { op: 'del', ids: o.ids as string[] };
  return null;
}

/** What a scan hands over per line. */
export interface ScanSink {
  op(op: LogOp, offset: number, length: number): void;
  /** A line (without its newline) that is not a valid operation, or a torn last line. */
  bad(line: Buffer): void;
}

/**
 * Scan a log line by line in 1 MiB chunks; a missing file is an empty log. A log that cannot be
 * read (a folder, no permission) throws RegistryReadError: the daemon stops with one line.
 * Returns true when the file does not end with a newline (a torn last line).
 */
export function scanLog(path: string, agentId: string, sink: ScanSink): boolean {
  let fd: number;
  try {
    if (isAbsent(path)) return false;
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new RegistryReadError(path, fileErrorText(err));
  }
  try {
    if (!fstatSync(fd).isFile()) throw new RegistryReadError(path, 'it is a directory');
    return scanFd(fd, agentId, sink);
  } finally {
    closeSync(fd);
  }
}

function scanFd(fd: number, agentId: string, sink: ScanSink): boolean {
  let carry = Buffer.alloc(0);
  let carryAt = 0;
  let pos = 0;
  const chunk = Buffer.allocUnsafe(CHUNK);
  for (;;) {
    const n = readSync(fd, chunk, 0, CHUNK, pos);
    if (n === 0) break;
    pos += n;
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      if (nl > start) line(buf.subarray(start, nl), carryAt + start, agentId, sink);
      start = nl + 1;
    }
    carry = Buffer.from(buf.subarray(start));
    carryAt += start;
  }
  if (carry.length > 0) sink.bad(carry);
  return carry.length > 0;
}

function line(bytes: Buffer, offset: number, agentId: string, sink: ScanSink): void {
  const op = parseOp(bytes.toString('utf8'), agentId);
  if (op) sink.op(op, offset, bytes.length + 1);
  else sink.bad(Buffer.from(bytes));
}

/** Append damaged lines to `<log>.quarantine` durably; returns its path. */
export function quarantine(logPath: string, lines: Buffer[]): string {
  const path = `${logPath}.quarantine`;
  const fd = openSync(path, 'a', 0o600);
  try {
    const data = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
    for (let off = 0; off < data.length;) off += writeSync(fd, data, off, data.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return path;
}
