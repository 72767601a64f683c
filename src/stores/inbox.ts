import { randomFillSync } from 'node:crypto';
import { join } from 'node:path';
import { monotonicFactory } from 'ulid';
import { EVENT_ID_RE, WEBHOOK_SOURCE, type EventHead, type EventListing, type EventRecord, type EventStatus, type InboxPort, type StoredEvent } from '../domain/events.js';
import type { Clock } from '../domain/ports.js';
import { AppendLog, LogClosedError, type RewritePlan } from './appendLog.js';
import { quarantine, scanLog } from './inboxScan.js';
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

/** An event in memory: everything but its text, which stays in the log at `off` (issue 12, defect 12). */
interface Indexed extends Omit<StoredEvent, 'text'> {
  off: number;
  len: number;
  /** The status written in the event's add line (an ack is a later line until compaction). */
  written: EventStatus;
}

const addLine = (e: StoredEvent): string => JSON.stringify({ op: 'add', event: e }) + '\n';
const head = (e: Indexed): EventHead => ({ id: e.id, agentId: e.agentId, receivedAt: e.receivedAt, source: e.source, status: e.status });

/** One agent's inbox: the log and its index (append order = id order). */
class AgentInbox {
  order: Indexed[] = [];
  byId = new Map<string, Indexed>();
  pending = 0;
  readonly log: AppendLog;

  constructor(path: string, private readonly texts: TextCache, handles: LogHandles) {
    this.log = new AppendLog(path, () => this.compaction(this.order, () => undefined), handles);
  }

  insert(e: Indexed): void {
    if (this.byId.has(e.id)) return;
    this.order.push(e);
    this.byId.set(e.id, e);
    if (e.status === 'pending') this.pending++;
  }

  /** Replay or apply an `ack` line: the event (if still there) becomes acked. */
  markAcked(id: string, at: string): void {
    const e = this.byId.get(id);
    if (!e || e.status === 'acked') return;
    e.status = 'acked';
    e.ackedAt = at;
    this.pending--;
  }

  /** Remove events (order kept); entries leave the map one by one (no new 100 000-entry map). */
  remove(gone: (e: Indexed) => boolean): void {
    const kept: Indexed[] = [];
    for (const e of this.order) {
      if (!gone(e)) { kept.push(e); continue; }
      this.byId.delete(e.id);
      this.texts.delete(e.id);
      if (e.status === 'pending') this.pending--;
    }
    this.order = kept;
  }

  /** The whole event, its text read back from the log (a small cache keeps recent ones). */
  full(e: Indexed): EventRecord {
    let text = this.texts.get(e.id);
    if (text === undefined) {
      const ev = JSON.parse(this.log.read(e.off, e.len).toString('utf8')) as { event?: { id?: unknown; text?: unknown } };
      if (ev.event?.id !== e.id || typeof ev.event.text !== 'string') throw new Error(`${this.log.path}: no event ${e.id} at byte ${e.off}`);
      text = ev.event.text;
      this.texts.set(e.id, text);
    }
    return { ...head(e), text };
  }

  /** An event's add line as it must read now: copied as it is, or rewritten after an ack. */
  private lineOf(e: Indexed): Buffer {
    const raw = this.log.read(e.off, e.len);
    if (e.written === e.status) return raw;
    return Buffer.from(addLine({ ...this.full(e), ackedAt: e.ackedAt }), 'utf8');
  }

  /**
   * A compaction to `kept`: their lines copied from the current file in order (never all in
   * memory); once the new file is durable, the index points into it and `done` runs.
   */
  compaction(kept: Indexed[], done: () => void): NonNullable<RewritePlan> {
    const placed: Array<{ off: number; len: number }> = [];
    return {
      data: (emit) => {
        let at = 0;
        for (const e of kept) {
          const line = this.lineOf(e);
          placed.push({ off: at, len: line.length });
          at += line.length;
          emit(line);
        }
      },
      onDurable: () => {
        kept.forEach((e, k) => { e.off = placed[k].off; e.len = placed[k].len; e.written = e.status; });
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
 * rebuilt from it at start-up. Texts stay in the log and are read back on demand (memory per
 * pending event is bounded: issue 12, defect 12). Appends cost one group-committed write whatever
 * the inbox size; the log is compacted at start-up when it holds anything else than live events,
 * and whenever `/events.clear` deletes events. A line that does not parse (a torn last line after
 * a crash, damage) is moved to `events.jsonl.quarantine` before the compaction, never dropped.
 * All index changes happen after the log change is durable. Log descriptors come from a bounded
 * pool (defect 5).
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
    if (loaded) return { events: loaded.order.length, skipped: 0, compacted: false };
    const { inbox, report } = this.read(agentId);
    this.inboxes.set(agentId, inbox);
    if (report.compacted) await inbox.log.rewrite(() => inbox.compaction(inbox.order, () => undefined));
    return report;
  }

  private read(agentId: string): { inbox: AgentInbox; report: LoadReport } {
    const path = this.logPath(agentId);
    const inbox = new AgentInbox(path, this.texts, this.handles);
    const bad: Buffer[] = [];
    let extra = false;
    scanLog(path, agentId, {
      op: (op, off, len) => {
        if (op.op === 'add') {
          if (inbox.byId.has(op.event.id)) extra = true;
          const { text: _text, ...rest } = op.event;
          inbox.insert({ ...rest, off, len, written: op.event.status });
        } else if (op.op === 'ack') {
          extra = true;
          inbox.markAcked(op.id, op.at);
        } else {
          extra = true;
          const gone = new Set(op.ids);
          inbox.remove((e) => gone.has(e.id));
        }
      },
      bad: (line) => { bad.push(line); },
    });
    const report: LoadReport = { events: inbox.order.length, skipped: bad.length, compacted: extra || bad.length > 0 };
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
      const { text: _text, ...rest } = event;
      inbox.insert({ ...rest, off, len: Buffer.byteLength(line), written: status });
    });
    this.texts.set(event.id, text);
    return { id: event.id, agentId, receivedAt: event.receivedAt, source: event.source, text, status };
  }

  /** One event, or undefined. Ids are checked against behaviour.md §1.2 before any lookup. */
  get(agentId: string, id: string): EventRecord | undefined {
    if (!EVENT_ID_RE.test(id)) return undefined;
    const inbox = this.of(agentId);
    const e = inbox.byId.get(id);
    return e ? inbox.full(e) : undefined;
  }

  /** Newest first: pending only, or all; at most `limit` rows (texts read for those rows only). */
  list(agentId: string, opts: { all: boolean; limit: number }): EventListing {
    const inbox = this.of(agentId);
    const rows: EventRecord[] = [];
    for (let i = inbox.order.length - 1; i >= 0 && rows.length < opts.limit; i--) {
      const e = inbox.order[i];
      if (opts.all || e.status === 'pending') rows.push(inbox.full(e));
    }
    const acked = inbox.order.length - inbox.pending;
    return { rows, matched: opts.all ? inbox.order.length : inbox.pending, pending: inbox.pending, acked };
  }

  /** Every event of the agent without its text, oldest first. */
  all(agentId: string): EventHead[] {
    return this.of(agentId).order.map(head);
  }

  /** Write `ack` lines for the given ids (spec §3 Event, row 2; the caller consulted the machine). */
  async ack(agentId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const inbox = this.of(agentId);
    const at = new Date(this.clock.now()).toISOString();
    const data = ids.map((id) => JSON.stringify({ op: 'ack', id, at }) + '\n').join('');
    await inbox.log.append(data, () => { for (const id of ids) inbox.markAcked(id, at); });
  }

  /**
   * Delete the events `deletes` picks (spec §3 Event, rows 3 and 4) by compaction; the predicate is
   * evaluated when the rewrite runs, over every durable event. Returns how many were deleted.
   */
  async clear(agentId: string, deletes: (e: EventHead) => boolean): Promise<number> {
    const inbox = this.of(agentId);
    let removed = 0;
    await inbox.log.rewrite(() => {
      const gone = new Set<Indexed>(inbox.order.filter((e) => deletes(head(e))));
      removed = gone.size;
      if (removed === 0) return null;
      return inbox.compaction(inbox.order.filter((e) => !gone.has(e)), () => inbox.remove((e) => gone.has(e)));
    });
    return removed;
  }

  /** Forget an agent's inbox (agent deletion): finish queued writes, close the log, drop the index. */
  async drop(agentId: string): Promise<void> {
    const inbox = this.inboxes.get(agentId);
    if (!inbox) return;
    this.inboxes.delete(agentId);
    await inbox.log.close();
    for (const e of inbox.order) this.texts.delete(e.id);
  }

  /** Close every log (shutdown). */
  async closeAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.inboxes.keys()].map((id) => this.drop(id)));
  }
}
