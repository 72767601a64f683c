import { Low } from 'lowdb';
import { join } from 'node:path';
import { diedAt, type CapabilityRecord, type CapabilityRecords } from '../domain/capability.js';
import { errorMessage } from '../domain/errors.js';
import { DEAD_CAPABILITY_LISTED_MS } from '../domain/limits.js';
import { AppendLog } from './appendLog.js';
import { AtomicJsonFile, RegistryReadError } from './jsonAdapter.js';
import { journalLines, journalOps, type JournalOp } from './capabilityJournal.js';

interface CapabilitiesFile {
  version: 1;
  /** Records oldest first. */
  capabilities: CapabilityRecord[];
}

type Patch = Partial<Pick<CapabilityRecord, 'state' | 'used_at' | 'revoked_at'>>;

/** Journal operations replayed onto the snapshot before compacting: at least this many, or as many as there are records. */
const COMPACT_AFTER = 1024;

/**
 * Capability records (behaviour.md §1.1): the snapshot `<data>/capabilities.json` (lowdb with the
 * atomic adapter: temp file, fsync, rename, mode 0600) plus the journal
 * `<data>/capabilities.journal.jsonl`, where every mint and state change is one appended line made
 * durable by a group-committed fdatasync before the caller answers. An append costs the same
 * whatever the number of records, where rewriting the whole file per mint would grow with them
 * (docs/decisions/0001). The journal is folded into the snapshot at start-up and, off the
 * request path, once it holds as many lines as there are records (at least 1,024): amortised O(1).
 * Replaying is idempotent, so a crash between writing the snapshot and emptying the journal loses
 * nothing. Secrets are never given to this store: only their SHA-256 hex. Dead records older than
 * 7 days (behaviour.md §1.8) are dropped when the snapshot is written. Memory is changed only after
 * the journal line is durable (write, then apply).
 */
export class CapabilityStore implements CapabilityRecords {
  private readonly byId = new Map<string, CapabilityRecord>();
  private readonly byHash = new Map<string, string>();
  private records: CapabilityRecord[] = [];
  private journalLines = 0;
  private compacting: Promise<void> | null = null;
  /** The latest time a caller gave (prunes at compaction use it). */
  private now: number;

  private constructor(private readonly snapshot: AtomicJsonFile<CapabilitiesFile>, readonly file: string, private readonly journal: AppendLog, now: number) {
    this.now = now;
  }

  /**
   * Open (or create) the files. An unreadable or malformed snapshot, or a damaged journal line
   * before the last one, throws RegistryReadError: the daemon stops instead of resetting anything
   * (behaviour.md §1.1). A torn last journal line was never acknowledged and is left out.
   */
  static async open(dataDir: string, now: number): Promise<CapabilityStore> {
    const file = join(dataDir, 'capabilities.json');
    const snapshot = new AtomicJsonFile<CapabilitiesFile>(file);
    const db = new Low<CapabilitiesFile>(snapshot, { version: 1, capabilities: [] });
    try {
      await db.read();
    } catch (err) {
      if (err instanceof RegistryReadError) throw err;
      throw new RegistryReadError(file, errorMessage(err));
    }
    const data = db.data as unknown;
    if (typeof data !== 'object' || data === null || !Array.isArray((data as CapabilitiesFile).capabilities)) {
      throw new RegistryReadError(file, 'missing "capabilities" array');
    }
    const journalPath = join(dataDir, 'capabilities.journal.jsonl');
    const records = (data as CapabilitiesFile).capabilities;
    const lines = journalLines(journalPath);
    // Nothing to validate: a daemon without capabilities never loads zod (the schema module).
    const schema = records.length > 0 || lines.length > 0 ? await import('./capabilitySchema.js') : null;
    const bad = schema ? records.findIndex((r) => !schema.wellFormed(r)) : -1;
    if (bad >= 0) throw new RegistryReadError(file, `malformed record at index ${bad}`);
    const store = new CapabilityStore(snapshot, file, new AppendLog(journalPath, () => ''), now);
    for (const r of records) store.apply({ op: 'add', record: r });
    const replayed = schema ? journalOps(journalPath, lines, schema.parseJournalLine) : [];
    for (const op of replayed) store.apply(op);
    if (replayed.length > 0 || store.prune(now)) await store.compact();
    return store;
  }

  /** Apply one operation to memory (idempotent: replaying a journal twice gives the same records). */
  private apply(op: JournalOp): void {
    if (op.op === 'add') {
      const old = this.byId.get(op.record.token_id);
      if (old) this.records[this.records.indexOf(old)] = op.record;
      else this.records.push(op.record);
      this.byId.set(op.record.token_id, op.record);
      this.byHash.set(op.record.secret_sha256, op.record.token_id);
      return;
    }
    const r = this.byId.get(op.token_id);
    if (r) Object.assign(r, op.patch);
  }

  /** Drop dead records that died more than 7 days before `now`; true when any was dropped. */
  private prune(now: number): boolean {
    const keep = this.records.filter((r) => {
      const d = diedAt(r);
      return d === null || now - d <= DEAD_CAPABILITY_LISTED_MS;
    });
    if (keep.length === this.records.length) return false;
    const kept = new Set(keep);
    for (const r of this.records) {
      if (kept.has(r)) continue;
      this.byId.delete(r.token_id);
      this.byHash.delete(r.secret_sha256);
    }
    this.records = keep;
    return true;
  }

  /** Write the snapshot (pruned), then empty the journal; runs alone on the journal, so no line is lost in between. */
  private compact(): Promise<void> {
    return this.journal.rewrite(() => {
      this.prune(this.now);
      // Synchronous and throwing: the journal empties only once the snapshot is durable.
      this.snapshot.writeSync({ version: 1, capabilities: this.records });
      this.journalLines = 0;
      return { data: '' };
    });
  }

  /** Append one operation (memory follows once it is durable, unless already applied); a long journal is folded in afterwards. */
  private async log(op: JournalOp, applyWhenDurable = true): Promise<void> {
    await this.journal.append(JSON.stringify(op) + '\n', () => { if (applyWhenDurable) this.apply(op); });
    this.journalLines++;
    if (this.compacting === null && this.journalLines >= Math.max(COMPACT_AFTER, this.records.length)) {
      this.compacting = this.compact()
        .catch((err: unknown) => process.emitWarning(`cannot compact ${this.file}: ${errorMessage(err)}`))
        .finally(() => { this.compacting = null; });
    }
  }

  /** Every record (oldest first), dead ones within the 7-day window of `now`. */
  list(now: number): CapabilityRecord[] {
    return this.records.filter((r) => {
      const d = diedAt(r);
      return d === null || now - d <= DEAD_CAPABILITY_LISTED_MS;
    });
  }

  get(tokenId: string): CapabilityRecord | undefined {
    return this.byId.get(tokenId);
  }

  /** The token id whose stored hash equals `hashHex` (the caller confirms in constant time). */
  idForHash(hashHex: string): string | undefined {
    return this.byHash.get(hashHex);
  }

  /** Add a new record; resolves once its journal line is durable. */
  add(record: CapabilityRecord, now: number): Promise<void> {
    this.now = Math.max(this.now, now);
    return this.log({ op: 'add', record });
  }

  /**
   * Change a record's state fields (consumed, expired, revoked); resolves once durable. The record
   * follows at once: the token's actor has already reached that state, and listings must say so
   * (a consumption's 2xx still waits for this promise).
   */
  update(tokenId: string, patch: Patch, now: number): Promise<void> {
    this.now = Math.max(this.now, now);
    if (!this.byId.has(tokenId)) return Promise.resolve();
    const op: JournalOp = { op: 'set', token_id: tokenId, patch };
    this.apply(op);
    return this.log(op, false);
  }

  /** Finish queued writes and close the journal (shutdown, tests). */
  close(): Promise<void> {
    return (this.compacting ?? Promise.resolve()).then(() => this.journal.close());
  }
}
