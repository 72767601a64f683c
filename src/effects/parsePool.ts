import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ActionDoc } from '../sfmd/types.js';

/**
 * A small pool of worker threads that parse action documents (architecture.md "heavy pure work off
 * the event loop"): while one topic waits for a 1 MiB document, every other topic's mailbox goes
 * on. Workers start on first use and end after `idleMs` without work, so a daemon that never opens a
 * large document carries none. Jobs run in arrival order, one per worker at a time.
 */
export interface ParsePool {
  /** Parse `text` in a worker; rejects when the worker fails (the caller may parse inline instead). */
  parse(text: string): Promise<ActionDoc>;
  /** End every worker (shutdown); waiting and running jobs are rejected. */
  close(): Promise<void>;
  /** Live worker threads (0 while idle for longer than `idleMs`). */
  workers(): number;
}

interface Job {
  id: number;
  text: string;
  resolve(doc: ActionDoc): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  idle: NodeJS.Timeout | null;
}

/**
 * The worker script: the compiled `dist/effects/parseWorker.js`. The path goes up one folder so it
 * holds both for tsc's output (this module in dist/effects/) and for the bundle (dist/cli/, one level
 * below dist too: scripts/bundle.mjs). Under ts-jest this module runs from src/ (TypeScript); the
 * worker then runs the build output in dist/ (`npm test` builds first).
 */
function workerUrl(): URL {
  const here = import.meta.url;
  const from = here.endsWith('.ts') ? here.replace('/src/', '/dist/').replace(/\.ts$/, '.js') : here;
  return new URL('../effects/parseWorker.js', from);
}

/** A pool of up to `size` workers (default: the cores but one, at least one). */
export function createParsePool(opts: { size?: number; idleMs?: number } = {}): ParsePool {
  const size = opts.size ?? Math.max(1, availableParallelism() - 1);
  const idleMs = opts.idleMs ?? 30000;
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let seq = 0;
  let closed = false;

  const retire = (slot: Slot) => {
    const i = slots.indexOf(slot);
    if (i >= 0) slots.splice(i, 1);
    if (slot.idle) clearTimeout(slot.idle);
    void slot.worker.terminate();
  };
  const fail = (slot: Slot, err: Error) => {
    const job = slot.job;
    slot.job = null;
    retire(slot);
    job?.reject(err);
    pump();
  };
  const start = (): Slot => {
    const slot: Slot = { worker: new Worker(workerUrl()), job: null, idle: null };
    // Workers never keep the daemon alive on their own.
    slot.worker.unref();
    slot.worker.on('message', (m: { id: number; doc?: Omit<ActionDoc, 'source'>; error?: string }) => {
      const job = slot.job;
      if (!job || job.id !== m.id) return;
      slot.job = null;
      if (m.doc) job.resolve({ ...m.doc, source: job.text } as ActionDoc);
      else job.reject(new Error(m.error ?? 'parse failed'));
      pump();
    });
    slot.worker.on('error', (err) => fail(slot, err));
    slot.worker.on('exit', (code) => { if (slots.includes(slot)) fail(slot, new Error(`parse worker exited with code ${code}`)); });
    slots.push(slot);
    return slot;
  };
  const pump = () => {
    while (queue.length > 0 && !closed) {
      const slot = slots.find((s) => s.job === null) ?? (slots.length < size ? start() : undefined);
      if (!slot) return;
      const job = queue.shift() as Job;
      if (slot.idle) clearTimeout(slot.idle);
      slot.idle = null;
      slot.job = job;
      slot.worker.postMessage({ id: job.id, text: job.text });
    }
    for (const s of slots) {
      if (s.job === null && s.idle === null) {
        s.idle = setTimeout(() => retire(s), idleMs);
        s.idle.unref();
      }
    }
  };
  return {
    parse(text) {
      if (closed) return Promise.reject(new Error('parse pool closed'));
      return new Promise<ActionDoc>((resolve, reject) => {
        queue.push({ id: ++seq, text, resolve, reject });
        pump();
      });
    },
    workers: () => slots.length,
    async close() {
      closed = true;
      for (const j of queue.splice(0)) j.reject(new Error('parse pool closed'));
      await Promise.all(slots.splice(0).map(async (s) => {
        if (s.idle) clearTimeout(s.idle);
        s.job?.reject(new Error('parse pool closed'));
        await s.worker.terminate();
      }));
    },
  };
}
