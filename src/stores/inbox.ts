import { randomFillSync } from 'node:crypto';
import { join } from 'node:path';
import { isAbsent } from '../effects/fileProbe.js';
import { monotonicFactory } from 'ulid';
import { EVENT_ID_RE, WEBHOOK_SOURCE, type EventHead, type EventListing, type EventRecord, type EventStatus, type InboxPort, type StoredEvent } from '../domain/events.js';
import type { Clock } from '../domain/ports.js';
import { AppendLog, LogClosedError, type RewritePlan } from './appendLog.js';
import { quarantine, scanLog } from './inboxScan.js';
import { EventIndex } from './eventIndex.js';
import { TextCache } from './textCache.js';
import { sharedLogHandles, type LogHandles } from './logHandles.js';

/** What loading a log found (for start-up warnings and tests). */
export interface LoadReport {
  events: number;
  /** Lines that could not be used (a torn last line after a crash, or damage): moved to the quarantine file. */
  skipped: number;
  /** True when the file held more than its live events (acks, deletions, skipped lines). */
  compacted: boolean;
  /** Where skipped lines were kept (`<log>.quarantine`). */
  quarantine?: string;
}

const addLine = (e: StoredEvent): string => JSON.stringify({ op: 'add', event: e }) + '\n';

/**
 * Whether a log is absent, without letting the probe's own error out: a state folder that is a file
 * or cannot be entered is reported by the scan that follows as `cannot read <file>: …`, one line.
 */
function absentOrUnreadable(path: string): 'absent' | 'present' | 'unreadable' {
  try {
    return isAbsent(path) ? 'absent' : 'present';
  } catch {
    return 'unreadable';
  }
}

/** One agent's inbox: the log and its index (append order = id order). */
class AgentInbox {
  readonly index: EventIndex;
  readonly log: AppendLog;

  constructor(path: string, agentId: string, private readonly texts: TextCache, handles: LogHandles) {
    this.index = new EventIndex(agentId);
    this.log = new AppendLog(path, () => this.compaction(() => true, () => undefined), handles);
  }

  /** Remove the rows `gone` picks (order kept), and their cached texts. */
  remove(gone: (row: number) => boolean): void {
    this.index.remove(gone, (id) => this.texts.delete(id));
  }

  /** The whole event of a row, its text read back from the log (a small cache keeps recent ones). */
  full(row: number): EventRecord {
    const head = this.index.head(row);
    let text = this.texts.get(head.id);
    if (text === undefined) {
      const off = this.index.off(row);
      const ev = JSON.parse(this.log.read(off, this.index.len(row)).toString('utf8')) as { event?: { id?: unknown; text?: unknown } };
      if (ev.event?.id !== head.id || typeof ev.event.text !== 'string') throw new Error(`${this.log.path}: no event ${head.id} at byte ${off}`);
      text = ev.event.text;
      this.texts.set(head.id, text);
    }
    return { ...head, text };
  }

  /** A row's add line as it must read now: copied as it is, or rewritten after an ack. */
  private lineOf(row: number): Buffer {
    const raw = this.log.read(this.index.off(row), this.index.len(row));
    if (this.index.written(row) === this.index.status(row)) return raw;
    return Buffer.from(addLine({ ...this.full(row), ackedAt: this.index.ackedAt(row) }), 'utf8');
  }

  /**
   * A compaction to the rows `keep` picks: their lines copied from the current file in order (never
   * all in memory); once the new file is durable, the index points into it and `done` runs. Rows
   * do not move in between: the log runs a rewrite alone, so no append lands during it.
   */
  compaction(keep: (row: number) => boolean, done: () => void): NonNullable<RewritePlan> {
    const placed: number[] = [];
    return {
      data: (emit) => {
        let at = 0;
        for (let row = 0; row < this.index.size; row++) {
          if (!keep(row)) continue;
          const line = this.lineOf(row);
          placed.push(row, at, line.length);
          at += line.length;
          emit(line);
        }
      },
      onDurable: () => {
        for (let k = 0; k < placed.length; k += 3) this.index.place(placed[k], placed[k + 1], placed[k + 2]);
        done();
      },
    };
  }
}

/**
 * Random fractions for ULIDs from a buffer of crypto-random bytes: ulid's own generator draws one
 * `getRandomValues` call per character (16 per id), which showed up in the ingest profile.
 * A byte / 256 is uniform over ULID's 32 characters (floor(b / 256 * 32) = b >> 3).
 */
function bufferedPrng(): () => number {
  const buf = Buffer.alloc(4096);
  let i = buf.length;
  return () => {
    if (i === buf.length) {
      randomFillSync(buf);
      i = 0;
    }
    return buf[i++] / 256;
  };
}

/**
 * The event inbox (spec §2 Event; behaviour.md §9.8): per agent an append-only log
 * `<data>/agents/<id>/state/events.jsonl` with `add`, `ack` and `del` lines, and an in-memory index
 * rebuilt from it at start-up. Texts stay in the log and are read back on demand, so memory per
 * pending event is bounded. Appends cost one group-committed write whatever
 * the inbox size; the log is compacted at start-up when it holds anything else than live events,
 * and whenever `/events.clear` deletes events. A line that does not parse (a torn last line after
 * a crash, damage) is moved to `events.jsonl.quarantine` before the compaction, never dropped.
 * All index changes happen after the log change is durable. Log descriptors come from a bounded
 * pool (logHandles.ts).
 */
export class FileInbox implements InboxPort {
  private readonly inboxes = new Map<string, AgentInbox>();
  private readonly newUlid = monotonicFactory(bufferedPrng());
  private readonly texts = new TextCache();
  private stopped = false;

  constructor(private readonly dataDir: string, private readonly clock: Clock, private readonly handles: LogHandles = sharedLogHandles) {}

  /** Path of an agent's log (behaviour.md §1.1 layout). */
  logPath(agentId: string): string {
    return join(this.dataDir, 'agents', agentId, 'state', 'events.jsonl');
  }

  /** Load an agent's log into memory (compacting it when needed); a no-op when already loaded. */
  async load(agentId: string): Promise<LoadReport> {
    const loaded = this.inboxes.get(agentId);
    if (loaded) return { events: loaded.index.size, skipped: 0, compacted: false };
    // No log yet (most agents at start-up): nothing to check; the inbox is made on first touch.
    if (absentOrUnreadable(this.logPath(agentId)) === 'absent') return { events: 0, skipped: 0, compacted: false };
    const { inbox, report } = this.read(agentId);
    this.inboxes.set(agentId, inbox);
    if (report.compacted) await inbox.log.rewrite(() => inbox.compaction(() => true, () => undefined));
    return report;
  }

  private read(agentId: string): { inbox: AgentInbox; report: LoadReport } {
    const path = this.logPath(agentId);
    const inbox = new AgentInbox(path, agentId, this.texts, this.handles);
    const { index } = inbox;
    const bad: Buffer[] = [];
    let extra = false;
    scanLog(path, agentId, {
      op: (op, off, len) => {
        if (op.op === 'add') {
          if (!index.insert({ ...op.event, off, len, written: op.event.status })) extra = true;
        } else if (op.op === 'ack') {
          extra = true;
          index.markAcked(op.id, op.at);
        } else {
          extra = true;
          const gone = new Set(op.ids);
          inbox.remove((row) => gone.has(index.idOf(row)));
        }
      },
      bad: (line) => { bad.push(line); },
    });
    const report: LoadReport = { events: index.size, skipped: bad.length, compacted: extra || bad.length > 0 };
    if (bad.length > 0) report.quarantine = quarantine(path, bad);
    return { inbox, report };
  }

  /** The inbox of an agent, loaded from disk on first touch (an agent registered after start-up). */
  private of(agentId: string): AgentInbox {
    let inbox = this.inboxes.get(agentId);
    if (!inbox) {
      inbox = this.read(agentId).inbox;
      this.inboxes.set(agentId, inbox);
    }
    return inbox;
  }

  /**
   * Append a new event with the status the event machine gave it (spec §3 Event, row 1);
   * resolves once it is durable and indexed.
   */
  async add(agentId: string, text: string, status: EventStatus): Promise<EventRecord> {
    if (this.stopped) throw new LogClosedError(this.logPath(agentId));
    const inbox = this.of(agentId);
    const now = this.clock.now();
    const event: StoredEvent = {
      id: `evt_${this.newUlid(now)}`, agentId, receivedAt: new Date(now).toISOString(),
      source: WEBHOOK_SOURCE, text, status, ackedAt: null,
    };
    const line = addLine(event);
    await inbox.log.append(line, (off) => {
      inbox.index.insert({ ...event, off, len: Buffer.byteLength(line), written: status });
    });
    // Not cached here: a text held past a few young-generation collections is promoted, and a flood
    // then leaves old space full of dead texts that V8 keeps committed. Reads fill the cache.
    return { id: event.id, agentId, receivedAt: event.receivedAt, source: event.source, text, status };
  }

  /** One event, or undefined. Ids are checked against behaviour.md §1.2 before any lookup. */
  get(agentId: string, id: string): EventRecord | undefined {
    if (!EVENT_ID_RE.test(id)) return undefined;
    const inbox = this.of(agentId);
    const row = inbox.index.rowOf(id);
    return row >= 0 ? inbox.full(row) : undefined;
  }

  /** Newest first: pending only, or all; at most `limit` rows (texts read for those rows only). */
  list(agentId: string, opts: { all: boolean; limit: number }): EventListing {
    const inbox = this.of(agentId);
    const { index } = inbox;
    const rows: EventRecord[] = [];
    for (let row = index.size - 1; row >= 0 && rows.length < opts.limit; row--) {
      if (opts.all || index.status(row) === 'pending') rows.push(inbox.full(row));
    }
    const acked = index.size - index.pending;
    return { rows, matched: opts.all ? index.size : index.pending, pending: index.pending, acked };
  }

  /** Every event of the agent without its text, oldest first. */
  all(agentId: string): EventHead[] {
    const { index } = this.of(agentId);
    return Array.from({ length: index.size }, (_, row) => index.head(row));
  }

  /** Write `ack` lines for the given ids (spec §3 Event, row 2; the caller consulted the machine). */
  async ack(agentId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const inbox = this.of(agentId);
    const at = new Date(this.clock.now()).toISOString();
    const data = ids.map((id) => JSON.stringify({ op: 'ack', id, at }) + '\n').join('');
    await inbox.log.append(data, () => { for (const id of ids) inbox.index.markAcked(id, at); });
  }

  /**
   * Delete the events `deletes` picks (spec §3 Event, rows 3 and 4) by compaction; the predicate is
   * evaluated when the rewrite runs, over every durable event. Returns how many were deleted.
   */
  async clear(agentId: string, deletes: (e: EventHead) => boolean): Promise<number> {
    const inbox = this.of(agentId);
    let removed = 0;
    await inbox.log.rewrite(() => {
      const { index } = inbox;
      // One byte per row: which rows go (rows do not move until the compaction is done).
      const gone = new Uint8Array(index.size);
      for (let row = 0; row < index.size; row++) if (deletes(index.head(row))) { gone[row] = 1; removed++; }
      if (removed === 0) return null;
      return inbox.compaction((row) => gone[row] === 0, () => inbox.remove((row) => gone[row] === 1));
    });
    return removed;
  }

  /** Forget an agent's inbox (agent deletion): finish queued writes, close the log, drop the index. */
  async drop(agentId: string): Promise<void> {
    const inbox = this.inboxes.get(agentId);
    if (!inbox) return;
    this.inboxes.delete(agentId);
    await inbox.log.close();
    for (let row = 0; row < inbox.index.size; row++) this.texts.delete(inbox.index.idOf(row));
  }

  /** Close every log (shutdown). */
  async closeAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.inboxes.keys()].map((id) => this.drop(id)));
  }
}
