import { closeSync, existsSync, fdatasync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../effects/atomicFile.js';
import { sharedLogHandles, type LogHandles, type PooledLog } from './logHandles.js';

/** Raised by operations on a log that was closed (agent deleted, daemon stopping). */
export class LogClosedError extends Error {
  constructor(path: string) {
    super(`log closed: ${path}`);
  }
}

/** File content: a string, or a writer that emits it in pieces (a compaction copies lines from the old file). */
export type Content = string | ((emit: (chunk: string | Buffer) => void) => void);

/** A rewrite's plan: the new content and what to do once it is durable; null keeps the file. */
export type RewritePlan = { data: Content; onDurable?: () => void } | null;

type Settle = { resolve: () => void; reject: (e: unknown) => void };
type AppendItem = Settle & { kind: 'append'; data: string; onDurable?: (offset: number) => void; offset?: number };
type Item = AppendItem | (Settle & { kind: 'rewrite'; build: () => RewritePlan }) | (Settle & { kind: 'close' });

/**
 * fdatasyncs allowed in flight at once. A batch written while one sync runs gets its own sync
 * at once instead of waiting for the first to return, which under disk contention gives more
 * appends per second than strictly one-at-a-time syncs.
 */
const SYNCS_IN_FLIGHT = 2;

/**
 * An append-only text log with group commit (behaviour.md §9.7, §9.8).
 *
 * All appends queued while the log is busy are written together and made durable by one
 * fdatasync, so an append costs the same whatever the file's size, and concurrent writers share
 * the sync. `onDurable` callbacks get the byte offset their data starts at and run in append order
 * right after it is on disk, before the append's promise resolves: the caller's in-memory index is
 * only ever changed after the change is durable, and a rewrite's `build` (compaction) sees every
 * durable append. `read` gives back bytes at an offset (the inbox keeps texts on disk).
 *
 * A fdatasync makes everything written before it was called durable, so when any sync returns,
 * every batch written before it started is settled, in order. Rewrites and close wait for the
 * syncs in flight and run alone. A rewrite replaces the file atomically (temp file, fsync, rename,
 * fsync of the folder). After a failed write or sync the file may end in a partial line, so the
 * next append first rewrites the file from the caller's state (`repair`). The descriptor belongs
 * to a bounded pool (LogHandles): an idle log may lose it and reopens on its next use.
 */
export class AppendLog implements PooledLog {
  private fd: number | null = null;
  /** Bytes in the file while the descriptor is open (the log is its only writer). */
  private size = 0;
  private readonly queue: Item[] = [];
  private readonly unsynced: Array<{ seq: number; batch: AppendItem[] }> = [];
  private seq = 0;
  private syncing = 0;
  private exclusive = false;
  private closed = false;
  private broken = false;

  /** `repair` returns the full content that matches the caller's durable state (or a plan with what to do once it is durable). */
  constructor(readonly path: string, private readonly repair: () => Content | NonNullable<RewritePlan>, private readonly handles: LogHandles = sharedLogHandles) {}

  /** Append `data` (whole lines); resolves once it is durable and `onDurable(offset)` ran. */
  append(data: string, onDurable?: (offset: number) => void): Promise<void> {
    return this.enqueue((s) => ({ ...s, kind: 'append', data, onDurable }));
  }

  /** Replace the whole file with what `build` returns when the rewrite's turn comes. */
  rewrite(build: () => RewritePlan): Promise<void> {
    return this.enqueue((s) => ({ ...s, kind: 'rewrite', build }));
  }

  /** Finish queued work, then close; later operations reject with LogClosedError. */
  close(): Promise<void> {
    const p = this.enqueue((s) => ({ ...s, kind: 'close' }));
    this.closed = true;
    return p;
  }

  /** `length` bytes from `offset` of the file (durable data the caller indexed). */
  read(offset: number, length: number): Buffer {
    const fd = this.openFd();
    const buf = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, buf, got, length - got, offset + got);
      if (n === 0) throw new Error(`${this.path}: ${length} bytes at ${offset} are past the end of the file`);
      got += n;
    }
    return buf;
  }

  /** LogHandles: give the descriptor back when nothing of this log is in flight. */
  closeIfIdle(): boolean {
    if (this.fd === null || this.syncing > 0 || this.exclusive) return false;
    this.dropFd();
    return true;
  }

  private enqueue(make: (s: Settle) => Item): Promise<void> {
    if (this.closed) return Promise.reject(new LogClosedError(this.path));
    return new Promise<void>((resolve, reject) => {
      this.queue.push(make({ resolve, reject }));
      this.pump();
    });
  }

  /** Start whatever the queue head allows now; completions call pump again. */
  private pump(): void {
    while (this.queue.length > 0 && !this.exclusive) {
      const head = this.queue[0];
      if (head.kind !== 'append' || this.broken) {
        if (this.syncing > 0) return;
        if (head.kind === 'append') this.runAlone(this.takeBatch(), async (batch) => this.repairThenAppend(batch));
        else this.runAlone([this.queue.shift() as Item], async () => (head.kind === 'close' ? this.dropFd() : this.replace(head.build)));
        return;
      }
      if (this.syncing >= SYNCS_IN_FLIGHT) return;
      const batch = this.takeBatch();
      let offsets: number[];
      try {
        offsets = this.writeBatch(batch);
      } catch (err) {
        this.broken = true;
        for (const b of batch) b.reject(err);
        continue;
      }
      const seq = ++this.seq;
      batch.forEach((b, k) => { b.offset = offsets[k]; });
      this.unsynced.push({ seq, batch });
      this.syncing++;
      fdatasync(this.fd as number, (err) => {
        this.syncing--;
        this.settleUpTo(seq, err);
        this.pump();
      });
    }
  }

  private takeBatch(): AppendItem[] {
    const batch: AppendItem[] = [];
    while (this.queue.length > 0 && this.queue[0].kind === 'append') batch.push(this.queue.shift() as AppendItem);
    return batch;
  }

  /** Every batch written before sync `seq` started is durable (or failed with it). */
  private settleUpTo(seq: number, err: Error | null): void {
    if (err) this.broken = true;
    while (this.unsynced.length > 0 && this.unsynced[0].seq <= seq) {
      const { batch } = this.unsynced.shift() as { batch: AppendItem[] };
      if (err) {
        for (const b of batch) b.reject(err);
        continue;
      }
      for (const b of batch) b.onDurable?.(b.offset as number);
      for (const b of batch) b.resolve();
    }
  }

  /** Run `work` with nothing else in progress; settle `items` by its outcome. */
  private runAlone<T extends Item>(items: T[], work: (items: T[]) => Promise<void>): void {
    this.exclusive = true;
    work(items).then(
      () => { for (const it of items) it.resolve(); },
      (err: unknown) => { for (const it of items) it.reject(err); },
    ).finally(() => {
      this.exclusive = false;
      this.pump();
    });
  }

  private async repairThenAppend(batch: AppendItem[]): Promise<void> {
    this.replace(() => {
      const r = this.repair();
      return typeof r === 'string' || typeof r === 'function' ? { data: r } : r;
    });
    const offsets = this.writeBatch(batch);
    const fd = this.fd as number;
    await new Promise<void>((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
    batch.forEach((b, k) => b.onDurable?.(offsets[k]));
  }

  /** Copy a batch into the page cache inline (microseconds); returns where each item starts. */
  private writeBatch(batch: AppendItem[]): number[] {
    const fd = this.openFd();
    const offsets: number[] = [];
    const bufs = batch.map((b) => Buffer.from(b.data, 'utf8'));
    let at = this.size;
    for (const b of bufs) { offsets.push(at); at += b.length; }
    const all = bufs.length === 1 ? bufs[0] : Buffer.concat(bufs);
    let off = 0;
    try {
      while (off < all.length) off += writeSync(fd, all, off, all.length - off);
    } finally {
      this.size += off;
    }
    return offsets;
  }

  /** Write the plan over the log with the one atomic writer (synchronous: nothing interleaves). */
  private replace(build: () => RewritePlan): void {
    const plan = build();
    if (!plan) return;
    writeFileAtomic(this.path, plan.data);
    this.dropFd();
    this.broken = false;
    plan.onDurable?.();
  }

  /** The descriptor, opened on first use (read and append); a new file's folder entries are made durable too. */
  private openFd(): number {
    if (this.fd !== null) {
      this.handles.touch(this);
      return this.fd;
    }
    const dir = dirname(this.path);
    const created = mkdirSync(dir, { recursive: true, mode: 0o700 });
    const existed = existsSync(this.path);
    this.fd = this.openWithRetry();
    this.size = fstatSync(this.fd).size;
    this.handles.touch(this);
    if (!existed) {
      fsyncDir(dir);
      // Folders made just now must be durable in their parents too.
      if (created) for (let d = dir; d !== dirname(created); d = dirname(d)) fsyncDir(dirname(d));
    }
    return this.fd;
  }

  /** Out of descriptors: close the idle logs' ones and try once more. */
  private openWithRetry(): number {
    try {
      return openSync(this.path, 'a+', 0o600);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === 'EMFILE' || code === 'ENFILE') && this.handles.shed(this)) return openSync(this.path, 'a+', 0o600);
      throw err;
    }
  }

  private dropFd(): void {
    const fd = this.fd;
    this.fd = null;
    this.handles.forget(this);
    if (fd === null) return;
    try {
      closeSync(fd);
    } catch (err) {
      // Only reachable after a failed write (the descriptor is already unusable). Everything durable
      // went through fdatasync or a rewrite, so losing this descriptor loses no data.
      if (!this.broken) throw err;
    }
  }
}

/** fsync a folder so renames and new entries in it survive a crash. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
