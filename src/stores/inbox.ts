import { randomFillSync } from 'node:crypto';
import { join } from 'node:path';
import { monotonicFactory } from 'ulid';
import { EVENT_ID_RE, WEBHOOK_SOURCE, type EventListing, type EventRecord, type EventStatus, type InboxPort, type StoredEvent } from '../domain/events.js';
import type { Clock } from '../domain/ports.js';
import { AppendLog, LogClosedError } from './appendLog.js';
import { readFileIfExists } from '../effects/atomicFile.js';

/** One line of `state/events.jsonl` (behaviour.md §9.8). */
type LogOp = { op: 'add'; event: StoredEvent } | { op: 'ack'; id: string; at: string } | { op: 'del'; ids: string[] };

/** What loading a log found (for start-up warnings and tests). */
export interface LoadReport {
  events: number;
  /** Lines that could not be used: a torn last line after a crash, or damage. */
  skipped: number;
  /** True when the file held more than its live events (acks, deletions, skipped lines). */
  compacted: boolean;
}

/** One agent's inbox: the log and its in-memory index (append order = id order). */
class AgentInbox {
  order: StoredEvent[] = [];
  byId = new Map<string, StoredEvent>();
  pending = 0;
  readonly log: AppendLog;

  constructor(path: string) {
    this.log = new AppendLog(path, () => this.snapshot());
  }

  /** The compact log content: one `add` line per live event. */
  snapshot(): string {
    return this.order.map((e) => addLine(e)).join('');
  }

  insert(e: StoredEvent): void {
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

  /** Split the events into those `removes` picks and the rest (order kept). */
  partition(removes: (e: StoredEvent) => boolean): { kept: StoredEvent[]; removed: StoredEvent[] } {
    const kept: StoredEvent[] = [];
    const removed: StoredEvent[] = [];
    for (const e of this.order) (removes(e) ? removed : kept).push(e);
    return { kept, removed };
  }

  /** Apply a partition: removed entries leave the map one by one (no new 100 000-entry map). */
  apply({ kept, removed }: { kept: StoredEvent[]; removed: StoredEvent[] }): void {
    for (const e of removed) {
      this.byId.delete(e.id);
      if (e.status === 'pending') this.pending--;
    }
    this.order = kept;
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

const addLine = (e: StoredEvent): string => JSON.stringify({ op: 'add', event: e }) + '\n';

/** Parse one log line into an operation, or null when it is not a valid one. */
function parseOp(line: string, agentId: string): LogOp | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
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

/**
 * The event inbox (spec §2 Event; behaviour.md §9.8): per agent an append-only log
 * `<data>/agents/<id>/state/events.jsonl` with `add`, `ack` and `del` lines, and an in-memory index
 * rebuilt from it at start-up. Appends cost one group-committed write whatever the inbox size;
 * the log is compacted (rewritten with only live events) at start-up when it holds anything else,
 * and whenever `/events.clear` deletes events. A line that does not parse (a torn last line after
 * a crash) is skipped, never fatal. All index changes happen after the log change is durable.
 */
export class FileInbox implements InboxPort {
  private readonly inboxes = new Map<string, AgentInbox>();
  private readonly newUlid = monotonicFactory(bufferedPrng());
  private stopped = false;

  constructor(private readonly dataDir: string, private readonly clock: Clock) {}

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
    if (report.compacted) await inbox.log.rewrite(() => ({ data: inbox.snapshot() }));
    return report;
  }

  private read(agentId: string): { inbox: AgentInbox; report: LoadReport } {
    const inbox = new AgentInbox(this.logPath(agentId));
    const text = readFileIfExists(this.logPath(agentId)) ?? '';
    const lines = text.split('\n');
    let skipped = 0;
    let extra = !text.endsWith('\n') && text !== '';
    for (const line of lines) {
      if (line === '') continue;
      const op = parseOp(line, agentId);
      if (!op) {
        skipped++;
        continue;
      }
      if (op.op === 'add') {
        if (inbox.byId.has(op.event.id)) extra = true;
        inbox.insert(op.event);
      } else if (op.op === 'ack') {
        extra = true;
        inbox.markAcked(op.id, op.at);
      } else {
        extra = true;
        const gone = new Set(op.ids);
        inbox.apply(inbox.partition((e) => gone.has(e.id)));
      }
    }
    return { inbox, report: { events: inbox.order.length, skipped, compacted: extra || skipped > 0 } };
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
    await inbox.log.append(addLine(event), () => inbox.insert(event));
    return publicEvent(event);
  }

  /** One event, or undefined. Ids are checked against behaviour.md §1.2 before any lookup. */
  get(agentId: string, id: string): EventRecord | undefined {
    if (!EVENT_ID_RE.test(id)) return undefined;
    const e = this.of(agentId).byId.get(id);
    return e ? publicEvent(e) : undefined;
  }

  /** Newest first: pending only, or all; at most `limit` rows. */
  list(agentId: string, opts: { all: boolean; limit: number }): EventListing {
    const inbox = this.of(agentId);
    const rows: EventRecord[] = [];
    for (let i = inbox.order.length - 1; i >= 0 && rows.length < opts.limit; i--) {
      const e = inbox.order[i];
      if (opts.all || e.status === 'pending') rows.push(publicEvent(e));
    }
    const acked = inbox.order.length - inbox.pending;
    return { rows, matched: opts.all ? inbox.order.length : inbox.pending, pending: inbox.pending, acked };
  }

  /** Every event of the agent, oldest first. */
  all(agentId: string): EventRecord[] {
    return this.of(agentId).order.map(publicEvent);
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
  async clear(agentId: string, deletes: (e: EventRecord) => boolean): Promise<number> {
    const inbox = this.of(agentId);
    let removed = 0;
    await inbox.log.rewrite(() => {
      const split = inbox.partition(deletes);
      removed = split.removed.length;
      if (removed === 0) return null;
      return { data: split.kept.map((e) => addLine(e)).join(''), onDurable: () => inbox.apply(split) };
    });
    return removed;
  }

  /** Forget an agent's inbox (agent deletion): finish queued writes, close the log, drop the index. */
  async drop(agentId: string): Promise<void> {
    const inbox = this.inboxes.get(agentId);
    if (!inbox) return;
    this.inboxes.delete(agentId);
    await inbox.log.close();
  }

  /** Close every log (shutdown). */
  async closeAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.inboxes.keys()].map((id) => this.drop(id)));
  }
}

/** The six spec fields of an event (no `ackedAt`). */
function publicEvent(e: StoredEvent): EventRecord {
  return { id: e.id, agentId: e.agentId, receivedAt: e.receivedAt, source: e.source, text: e.text, status: e.status };
}
