import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Raised by operations on a log that was closed (agent deleted, daemon stopping). */
export class LogClosedError extends Error {
  constructor(path: string) {
    super(`log closed: ${path}`);
  }
}

type Item =
  | { kind: 'append'; data: string; onDurable?: () => void; resolve: () => void; reject: (e: unknown) => void }
  | { kind: 'rewrite'; build: () => { data: string; onDurable?: () => void } | null; resolve: () => void; reject: (e: unknown) => void }
  | { kind: 'close'; resolve: () => void; reject: (e: unknown) => void };

/**
 * An append-only text log with group commit (behaviour.md §9.7, §9.8).
 *
 * Every operation goes through one serial queue. Consecutive appends are written together and made
 * durable by one fdatasync, so the cost of an append does not depend on the file's size or on how
 * many appends came before, and concurrent writers share the sync. `onDurable` callbacks run inside
 * the queue, in order, right after the data is on disk: the caller's in-memory index therefore
 * always equals the file, and a rewrite's `build` (compaction) sees every durable append.
 *
 * A rewrite replaces the file atomically (temp file, fsync, rename, fsync of the folder). After a
 * failed append the file may end in a partial line, so the next append first rewrites the file
 * from the caller's state (`repair`).
 */
export class AppendLog {
  private fh: FileHandle | null = null;
  private readonly queue: Item[] = [];
  private running = false;
  private closed = false;
  private broken = false;

  /** `repair` returns the full content that matches the caller's durable state. */
  constructor(readonly path: string, private readonly repair: () => string) {}

  /** Append `data` (whole lines); resolves once it is durable and `onDurable` ran. */
  append(data: string, onDurable?: () => void): Promise<void> {
    return this.enqueue((resolve, reject) => ({ kind: 'append', data, onDurable, resolve, reject }));
  }

  /** Replace the whole file with what `build` returns when the rewrite's turn comes (null: keep it). */
  rewrite(build: () => { data: string; onDurable?: () => void } | null): Promise<void> {
    return this.enqueue((resolve, reject) => ({ kind: 'rewrite', build, resolve, reject }));
  }

  /** Finish queued work, then close; later operations reject with LogClosedError. */
  close(): Promise<void> {
    return this.enqueue((resolve, reject) => ({ kind: 'close', resolve, reject }));
  }

  private enqueue(make: (resolve: () => void, reject: (e: unknown) => void) => Item): Promise<void> {
    if (this.closed) return Promise.reject(new LogClosedError(this.path));
    return new Promise<void>((resolve, reject) => {
      const item = make(resolve, reject);
      if (item.kind === 'close') this.closed = true;
      this.queue.push(item);
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const head = this.queue[0];
        if (head.kind !== 'append') {
          this.queue.shift();
          await this.settle([head], () => (head.kind === 'close' ? this.closeHandle() : this.replace(head.build)));
          continue;
        }
        const batch: Array<Extract<Item, { kind: 'append' }>> = [];
        while (this.queue.length > 0 && this.queue[0].kind === 'append') batch.push(this.queue.shift() as Extract<Item, { kind: 'append' }>);
        await this.settle(batch, async () => {
          if (this.broken) await this.replace(() => ({ data: this.repair() }));
          await this.writeDurably(batch.map((b) => b.data).join(''));
          for (const b of batch) b.onDurable?.();
        });
      }
    } finally {
      this.running = false;
    }
  }

  /** Run `work`; resolve every item when it succeeds, reject every item when it throws. */
  private async settle(items: Item[], work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      for (const it of items) it.reject(err);
      return;
    }
    for (const it of items) it.resolve();
  }

  private async writeDurably(data: string): Promise<void> {
    const fh = await this.handle();
    const buf = Buffer.from(data, 'utf8');
    try {
      let off = 0;
      while (off < buf.length) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
      await fh.datasync();
    } catch (err) {
      this.broken = true;
      throw err;
    }
  }

  private async replace(build: () => { data: string; onDurable?: () => void } | null): Promise<void> {
    const plan = build();
    if (!plan) return;
    const { data, onDurable } = plan;
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = join(dirname(this.path), `.${basename(this.path)}.${randomBytes(4).toString('hex')}.tmp`);
    const t = await open(tmp, 'w', 0o600);
    try {
      await t.writeFile(data, 'utf8');
      await t.sync();
    } finally {
      await t.close();
    }
    try {
      await rename(tmp, this.path);
    } catch (err) {
      await unlink(tmp);
      throw err;
    }
    fsyncDir(dirname(this.path));
    await this.closeHandle();
    this.broken = false;
    onDurable?.();
  }

  /** The append handle, opened on first use; a new file's folder entry is made durable too. */
  private async handle(): Promise<FileHandle> {
    if (this.fh) return this.fh;
    const dir = dirname(this.path);
    const created = mkdirSync(dir, { recursive: true, mode: 0o700 });
    const existed = existsSync(this.path);
    this.fh = await open(this.path, 'a', 0o600);
    if (!existed) {
      fsyncDir(dir);
      // Folders made just now must be durable in their parents too.
      if (created) for (let d = dir; d !== dirname(created); d = dirname(d)) fsyncDir(dirname(d));
    }
    return this.fh;
  }

  private async closeHandle(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    await fh?.close();
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
