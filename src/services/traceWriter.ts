import { open, type FileHandle } from 'node:fs/promises';
import { errorMessage } from '../domain/errors.js';
import { TRACE_FLUSH_MS } from '../domain/limits.js';
import type { LineParts } from '../domain/traceLines.js';

/** At most this many buffers per writev call (IOV_MAX is 1024 on Linux). */
const WRITEV_MAX = 1024;

/**
 * Write every buffer at the handle's position (a file opened for appending, or truncated and only
 * appended to since), in order, through short writes: writev may write less than it was given.
 */
export async function writeAll(handle: Pick<FileHandle, 'writev'>, buffers: Buffer[]): Promise<void> {
  let rest = buffers;
  while (rest.length > 0) {
    const batch = rest.slice(0, WRITEV_MAX);
    const total = batch.reduce((n, b) => n + b.length, 0);
    let { bytesWritten } = await handle.writev(batch);
    rest = rest.slice(batch.length);
    if (bytesWritten === total) continue;
    // A short write: put back what is left of the batch, from the first buffer not fully written.
    const left: Buffer[] = [];
    for (const b of batch) {
      if (bytesWritten >= b.length) bytesWritten -= b.length;
      else {
        left.push(bytesWritten > 0 ? b.subarray(bytesWritten) : b);
        bytesWritten = 0;
      }
    }
    rest = [...left, ...rest];
  }
}

/**
 * The buffered appender of one trace file (behaviour.md §14.1: steps are appended as they finish).
 * Lines collect in memory and reach the file at most TRACE_FLUSH_MS after the first of them, and on
 * `flush()`/`close()`, so a recorded command costs a string push, not a write. Writes are chained,
 * so lines land in the order they were appended. A failed write is reported once through `onError`;
 * the writer then drops what it is given.
 */
export class TraceWriter {
  /**
   * Lines already encoded, written with one writev per flush. Encoding each line as it comes gives
   * its byte count for free, and at a few thousand steps a second it took half the main-thread time
   * of joining the lines into one string and handing that to appendFile (bench/traces).
   */
  private buffer: Buffer[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void>;
  private handle: FileHandle | undefined;
  private failed = false;
  /** Bytes appended so far (written or still buffered). */
  bytes = 0;

  constructor(readonly path: string, opts: { truncate: boolean; onError: (message: string) => void; beforeFlush?: () => void }) {
    this.onError = opts.onError;
    this.beforeFlush = opts.beforeFlush ?? (() => undefined);
    this.chain = open(path, opts.truncate ? 'w' : 'a', 0o600).then((h) => { this.handle = h; }, (err: unknown) => this.fail(err));
  }

  private readonly onError: (message: string) => void;
  /** Called right before buffered lines are written (the recorder turns its pending steps into lines). */
  private readonly beforeFlush: () => void;

  private fail(err: unknown): void {
    if (!this.failed) this.onError(errorMessage(err));
    this.failed = true;
  }

  /** Add one line (without its newline) to the buffer; `schedule()` or `flush()` writes it. */
  append(line: string): void {
    if (this.failed) return;
    const bytes = Buffer.from(`${line}\n`);
    this.buffer.push(bytes);
    this.bytes += bytes.length;
  }

  /**
   * Add one line given as pieces (StepLines.parts): `content` is written as it is, and may be the
   * same Buffer for many lines (never changed after it is handed over).
   */
  appendParts({ head, content, tail }: LineParts): void {
    if (this.failed) return;
    const a = Buffer.from(head);
    const b = Buffer.from(`${tail}\n`);
    this.buffer.push(a, content, b);
    this.bytes += a.length + content.length + b.length;
  }

  /** Ask for a flush within TRACE_FLUSH_MS (once per window, however many steps arrive). */
  schedule(): void {
    if (this.timer || this.failed) return;
    this.timer = setTimeout(() => void this.flush(), TRACE_FLUSH_MS);
    this.timer.unref();
  }

  /** Write everything buffered; resolves once it is in the file. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.beforeFlush();
    if (this.buffer.length === 0) return this.chain;
    const lines = this.buffer;
    this.buffer = [];
    this.chain = this.chain.then(async () => {
      if (!this.handle || this.failed) return;
      try {
        await writeAll(this.handle, lines);
      } catch (err) {
        this.fail(err);
      }
    });
    return this.chain;
  }

  /** Flush and close the file. */
  async close(): Promise<void> {
    await this.flush();
    const h = this.handle;
    this.handle = undefined;
    await h?.close().catch((err: unknown) => this.fail(err));
  }
}
