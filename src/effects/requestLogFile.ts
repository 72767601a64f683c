import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { REQUEST_LOG_FILES, REQUEST_LOG_MAX_BYTES, REQUEST_LOG_NAME, type RequestLogEntry, type RequestLogSink } from '../domain/requestLog.js';


/** Size of a file, 0 when it does not exist. */
function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}

/**
 * The request log file (behaviour.md §2.13): one JSON line per request, written by pino through
 * its asynchronous destination (sonic-boom), so a request never waits for the disk. Rotation is
 * by size: past `maxBytes` the files shift (`.1` → `.2`, current → `.1`, the oldest dropped) and
 * the destination reopens the path; writes in flight finish in the renamed file.
 */
export class RequestLogFile implements RequestLogSink {
  private readonly file: string;
  private readonly dest: ReturnType<typeof pino.destination>;
  private readonly logger: Logger;
  private size: number;
  private closed = false;
  /** A (re)open is in flight: the path may not exist yet. */
  private opening = false;

  constructor(dir: string, private readonly opts: { maxBytes?: number; files?: number; echo?: (entry: RequestLogEntry) => void } = {}) {
    this.file = join(dir, REQUEST_LOG_NAME);
    this.size = sizeOf(this.file);
    this.dest = pino.destination({ dest: this.file, sync: false, mkdir: true, mode: 0o600, minLength: 0 });
    // A log failure (disk full, folder removed) must never take the daemon down with it.
    this.dest.on('error', (err: Error) => process.emitWarning(`request log: ${err.message}`));
    const counted = { write: (line: string) => this.append(line) };
    // pino's standard line (`level`, ISO `time`) without pid and hostname; the entry's fields follow.
    this.logger = pino({ base: null, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } }, counted);
  }

  write(entry: RequestLogEntry): void {
    // Requests still finishing while the daemon stops are not written into a closed file.
    if (this.closed) return;
    // pino stamps `time` itself (the same instant, to the millisecond or so).
    const { time: _stamped, ...fields } = entry;
    this.logger.info(fields);
    this.opts.echo?.(entry);
  }

  private append(line: string): void {
    this.dest.write(line);
    this.size += Buffer.byteLength(line);
    if (this.size >= (this.opts.maxBytes ?? REQUEST_LOG_MAX_BYTES) && !this.opening) this.rotate();
  }

  /**
   * Shift the files and start a new one. The destination opens files asynchronously: until the
   * file exists (first open, or the reopen of the previous rotation) there is nothing to rename
   * yet, so rotation waits for `ready` and checks the size again.
   */
  private rotate(): void {
    if (!existsSync(this.file)) return this.afterOpen();
    try {
      const keep = this.opts.files ?? REQUEST_LOG_FILES;
      rmSync(`${this.file}.${keep - 1}`, { force: true });
      for (let i = keep - 2; i >= 1; i--) {
        if (existsSync(`${this.file}.${i}`)) renameSync(`${this.file}.${i}`, `${this.file}.${i + 1}`);
      }
      renameSync(this.file, `${this.file}.1`);
    } catch (err) {
      // Rotation failed (folder gone, permissions): keep writing where we are and say so.
      process.emitWarning(`request log rotation failed: ${(err as Error).message}`);
      this.size = 0;
      return;
    }
    this.size = 0;
    this.dest.reopen();
    this.afterOpen();
  }

  /** Hold rotation until the destination has (re)opened its file, then check the size again. */
  private afterOpen(): void {
    this.opening = true;
    this.dest.once('ready', () => {
      this.opening = false;
      if (!this.closed && this.size >= (this.opts.maxBytes ?? REQUEST_LOG_MAX_BYTES)) this.rotate();
    });
  }

  /** Flush what is buffered and close the file (daemon shutdown). */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return new Promise((resolve) => {
      this.dest.once('close', () => resolve());
      this.dest.once('error', () => resolve());
      this.dest.end();
    });
  }
}
