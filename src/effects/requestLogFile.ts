import { closeSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { REQUEST_LOG_FILES, REQUEST_LOG_MAX_BYTES, REQUEST_LOG_NAME, type RequestLogEntry, type RequestLogSink } from '../domain/requestLog.js';

/**
 * The request log file (behaviour.md §2.13): one JSON line per request. pino formats the lines
 * (its standard `level`, then the entry's fields, `time` first: the ISO instant the entry already
 * holds, not a second clock read); this class is pino's destination.
 * Lines written during one turn of the event loop go out together in one append when the turn ends
 * (`setImmediate`): a request never waits for the disk, a busy daemon makes one write per batch, not
 * one per request, and `close()` writes what is pending synchronously, so a normal exit loses
 * nothing. Rotation is by size: past `maxBytes` the files shift (`.1` → `.2`, current → `.1`, the
 * oldest dropped) and a new file starts.
 */
export class RequestLogFile implements RequestLogSink {
  private readonly file: string;
  private logger: Logger | null = null;
  private fd: number | null = null;
  private size = 0;
  private pending: string[] = [];
  private scheduled = false;
  private closed = false;

  constructor(dir: string, private readonly opts: { maxBytes?: number; files?: number; echo?: (entry: RequestLogEntry) => void } = {}) {
    this.file = join(dir, REQUEST_LOG_NAME);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.open();
    } catch (err) {
      // No log rather than no daemon: say why once.
      process.emitWarning(`request log disabled: ${(err as Error).message}`);
    }
  }

  /** pino, made at the first line: a start that serves no request loads none of it (scripts/bundle.mjs). */
  private loggerNow(): Logger {
    const destination = { write: (line: string) => this.enqueue(line) };
    return (this.logger ??= pino({ base: null, timestamp: false, formatters: { level: (label) => ({ level: label }) } }, destination));
  }

  write(entry: RequestLogEntry): void {
    // Requests still finishing while the daemon stops are not written into a closed file.
    if (this.closed) return;
    this.loggerNow().info(entry);
    this.opts.echo?.(entry);
  }

  private open(): void {
    this.fd = openSync(this.file, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  private enqueue(line: string): void {
    if (this.fd === null) return;
    this.pending.push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Append what is pending in one write, then rotate when the file has passed the limit. */
  private flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0 || this.fd === null) return;
    const data = Buffer.from(this.pending.join(''), 'utf8');
    this.pending = [];
    try {
      for (let off = 0; off < data.length;) off += writeSync(this.fd, data, off, data.length - off);
      this.size += data.length;
      if (this.size >= (this.opts.maxBytes ?? REQUEST_LOG_MAX_BYTES)) this.rotate();
    } catch (err) {
      // Disk full, file system gone: the request was served; the log says why it has a gap.
      process.emitWarning(`request log: ${(err as Error).message}`);
    }
  }

  /** Shift the files and start a new one. */
  private rotate(): void {
    const keep = this.opts.files ?? REQUEST_LOG_FILES;
    closeSync(this.fd as number);
    this.fd = null;
    rmSync(`${this.file}.${keep - 1}`, { force: true });
    for (let i = keep - 2; i >= 1; i--) {
      if (existsSync(`${this.file}.${i}`)) renameSync(`${this.file}.${i}`, `${this.file}.${i + 1}`);
    }
    // A file removed by hand is simply started again.
    if (existsSync(this.file)) renameSync(this.file, `${this.file}.1`);
    this.open();
  }

  /** Write what is pending and close the file (daemon shutdown, tests). */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.flush();
    this.closed = true;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    return Promise.resolve();
  }
}
