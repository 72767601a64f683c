import { EVENT_ID_RE, WEBHOOK_SOURCE, type EventHead, type EventStatus } from '../domain/events.js';

/**
 * The in-memory index of one agent's inbox (behaviour.md §9.8: memory per pending event is
 * bounded, index only), kept in columns rather than one object per event (docs/decisions/0003):
 * an object per event with its id and time strings and a Map entry costs an order of magnitude
 * more heap than a row here, which holds the 26 ULID characters of its id, its times as epoch ms,
 * its status and its place in the log.
 *
 * Rows are in append order. Ids are looked up by binary search while they are in ascending order,
 * which ULIDs from one clock are; an out-of-order id (a clock set back between two runs, an
 * edited log) switches the index to a Map from id to row. Values the columns cannot hold exactly
 * (a time not in toISOString form, another agent id or source) are kept per id on the side.
 */

/** What a row holds, as the log's `add` line gives it, plus where that line is. */
export interface IndexEntry {
  id: string;
  agentId: string;
  receivedAt: string;
  source: string;
  status: EventStatus;
  ackedAt: string | null;
  /** Byte offset and length of the event's `add` line in the log. */
  off: number;
  len: number;
  /** The status written in that line (an ack is a later line until compaction). */
  written: EventStatus;
}

const ULID = 26;
const PREFIX = 'evt_';
const ACKED = 1;
const code = (s: EventStatus): number => (s === 'acked' ? ACKED : 0);
const statusOf = (c: number): EventStatus => (c === ACKED ? 'acked' : 'pending');

/** Epoch ms of a time string when toISOString gives it back exactly, else NaN. */
function exactMs(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) && new Date(ms).toISOString() === iso ? ms : Number.NaN;
}

/** Sparse side values by id (a Map: an id never reaches an object's prototype). */
type Side = Map<string, string>;

export class EventIndex {
  private n = 0;
  private cap = 0;
  private idBytes = Buffer.alloc(0);
  private received = new Float64Array(0);
  private acked = new Float64Array(0);
  private offs = new Float64Array(0);
  private lens = new Uint32Array(0);
  private statuses = new Uint8Array(0);
  private writtens = new Uint8Array(0);
  /** id → row, only once ids stopped being in ascending order. */
  private byId: Map<string, number> | null = null;
  /** Values the columns cannot hold exactly, by id. */
  private readonly oddReceived: Side = new Map();
  private readonly oddAcked: Side = new Map();
  private readonly oddAgent: Side = new Map();
  private readonly oddSource: Side = new Map();
  /** Number of pending rows. */
  pending = 0;

  constructor(private readonly agentId: string) {}

  /** Number of rows. */
  get size(): number {
    return this.n;
  }

  /** The row of an id, or -1. */
  rowOf(id: string): number {
    if (!EVENT_ID_RE.test(id)) return -1;
    if (this.byId) return this.byId.get(id) ?? -1;
    const key = Buffer.from(id.slice(PREFIX.length), 'latin1');
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.idBytes.compare(key, 0, ULID, mid * ULID, mid * ULID + ULID);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Add a row at the end; false (nothing added) when the id is already there. */
  insert(e: IndexEntry): boolean {
    if (this.rowOf(e.id) >= 0) return false;
    if (this.n === this.cap) this.grow();
    const row = this.n;
    const at = row * ULID;
    this.idBytes.write(e.id.slice(PREFIX.length), at, ULID, 'latin1');
    // The previous id compared with this one: not below it means out of order.
    if (!this.byId && row > 0 && this.idBytes.compare(this.idBytes, at, at + ULID, at - ULID, at) >= 0) {
      // Out of order: from now on a Map (rare: see the class comment).
      this.byId = new Map();
      for (let r = 0; r < row; r++) this.byId.set(this.idOf(r), r);
    }
    this.byId?.set(e.id, row);
    this.received[row] = exactMs(e.receivedAt);
    if (Number.isNaN(this.received[row])) this.oddReceived.set(e.id, e.receivedAt);
    this.acked[row] = e.ackedAt === null ? Number.NaN : exactMs(e.ackedAt);
    if (e.ackedAt !== null && Number.isNaN(this.acked[row])) this.oddAcked.set(e.id, e.ackedAt);
    if (e.agentId !== this.agentId) this.oddAgent.set(e.id, e.agentId);
    if (e.source !== WEBHOOK_SOURCE) this.oddSource.set(e.id, e.source);
    this.offs[row] = e.off;
    this.lens[row] = e.len;
    this.statuses[row] = code(e.status);
    this.writtens[row] = code(e.written);
    if (e.status === 'pending') this.pending++;
    this.n++;
    return true;
  }

  private grow(): void {
    // Small at first: most agents hold a handful of events (1,000 agents are a normal daemon).
    const cap = Math.max(8, this.cap * 2);
    const idBytes = Buffer.alloc(cap * ULID);
    this.idBytes.copy(idBytes, 0, 0, this.n * ULID);
    this.idBytes = idBytes;
    const widen = <T extends Float64Array | Uint32Array | Uint8Array>(old: T, make: (c: number) => T): T => {
      const next = make(cap);
      next.set(old.subarray(0, this.n));
      return next;
    };
    this.received = widen(this.received, (c) => new Float64Array(c));
    this.acked = widen(this.acked, (c) => new Float64Array(c));
    this.offs = widen(this.offs, (c) => new Float64Array(c));
    this.lens = widen(this.lens, (c) => new Uint32Array(c));
    this.statuses = widen(this.statuses, (c) => new Uint8Array(c));
    this.writtens = widen(this.writtens, (c) => new Uint8Array(c));
    this.cap = cap;
  }

  /** The event id of a row. */
  idOf(row: number): string {
    return PREFIX + this.idBytes.toString('latin1', row * ULID, row * ULID + ULID);
  }

  status(row: number): EventStatus {
    return statusOf(this.statuses[row]);
  }

  written(row: number): EventStatus {
    return statusOf(this.writtens[row]);
  }

  off(row: number): number {
    return this.offs[row];
  }

  len(row: number): number {
    return this.lens[row];
  }

  ackedAt(row: number): string | null {
    const ms = this.acked[row];
    if (!Number.isNaN(ms)) return new Date(ms).toISOString();
    return this.oddAcked.get(this.idOf(row)) ?? null;
  }

  /** The row as the event's head (everything but its text). */
  head(row: number): EventHead {
    const id = this.idOf(row);
    const ms = this.received[row];
    return {
      id,
      agentId: this.oddAgent.get(id) ?? this.agentId,
      receivedAt: Number.isNaN(ms) ? (this.oddReceived.get(id) as string) : new Date(ms).toISOString(),
      source: this.oddSource.get(id) ?? WEBHOOK_SOURCE,
      status: this.status(row),
    };
  }

  /** A pending event becomes acked at `at` (an `ack` line, replayed or just written); unknown ids are ignored. */
  markAcked(id: string, at: string): void {
    const row = this.rowOf(id);
    if (row < 0 || this.statuses[row] === ACKED) return;
    this.statuses[row] = ACKED;
    this.acked[row] = exactMs(at);
    if (Number.isNaN(this.acked[row])) this.oddAcked.set(id, at);
    this.pending--;
  }

  /** Where a row's line is after a compaction, which wrote it with its current status. */
  place(row: number, off: number, len: number): void {
    this.offs[row] = off;
    this.lens[row] = len;
    this.writtens[row] = this.statuses[row];
  }

  /**
   * Remove the rows `gone` picks, keeping the order of the others (in place: no second copy of a
   * 100,000-row index); `dropped` hears each removed id.
   */
  remove(gone: (row: number) => boolean, dropped: (id: string) => void): void {
    let w = 0;
    for (let r = 0; r < this.n; r++) {
      if (gone(r)) {
        const id = this.idOf(r);
        dropped(id);
        this.byId?.delete(id);
        for (const side of [this.oddReceived, this.oddAcked, this.oddAgent, this.oddSource]) side.delete(id);
        if (this.statuses[r] !== ACKED) this.pending--;
        continue;
      }
      if (w !== r) {
        this.idBytes.copy(this.idBytes, w * ULID, r * ULID, r * ULID + ULID);
        this.received[w] = this.received[r];
        this.acked[w] = this.acked[r];
        this.offs[w] = this.offs[r];
        this.lens[w] = this.lens[r];
        this.statuses[w] = this.statuses[r];
        this.writtens[w] = this.writtens[r];
        this.byId?.set(this.idOf(w), w);
      }
      w++;
    }
    this.n = w;
  }
}
