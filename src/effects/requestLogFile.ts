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
 * The request log file (behaviour.md §2.13): one JSON line per request, written by pino to its
 * sonic-boom destination. Rotation is by size: past `maxBytes` the files shift and the
 * destination reopens the path.
 */
export class RequestLogFile implements RequestLogSink {
  private readonly file: string;
  private readonly dest: ReturnType<typeof pino.destination>;
  private readonly logger: Logger;
  private size: number;
  private closed = false;

  constructor(dir: string, private readonly opts: { maxBytes?: number; files?: number; echo?: (entry: RequestLogEntry) => void } = {}) {
    this.file = join(dir, REQUEST_LOG_NAME);
    this.size = sizeOf(this.file);
    // Synchronous appends: a line is on its way to the disk when the request is logged (nothing
    // lost when the process exits), and one small write per request costs microseconds, after the
    // response has gone out. (pino's asynchronous destination also throws from its exit hook when
    // the process exits before the file is open, e.g. on "port in use".)
    this.dest = pino.destination({ dest: this.file, sync: true, mkdir: true, mode: 0o600 });
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
    if (this.size >= (this.opts.maxBytes ?? REQUEST_LOG_MAX_BYTES)) this.rotate();
  }

  /** Shift the files (`.1` → `.2`, current → `.1`, the oldest dropped) and start a new one. */
  private rotate(): void {
    this.size = 0;
    try {
      const keep = this.opts.files ?? REQUEST_LOG_FILES;
      rmSync(`${this.file}.${keep - 1}`, { force: true });
      for (let i = keep - 2; i >= 1; i--) {
        if (existsSync(`${this.file}.${i}`)) renameSync(`${this.file}.${i}`, `${this.file}.${i + 1}`);
      }
      // A file removed by hand is simply started again.
      if (existsSync(this.file)) renameSync(this.file, `${this.file}.1`);
      this.dest.reopen();
    } catch (err) {
      // Rotation failed (folder gone, permissions): keep writing where we are and say so.
      process.emitWarning(`request log rotation failed: ${(err as Error).message}`);
    }
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
