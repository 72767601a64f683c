import { Low } from 'lowdb';
import { join } from 'node:path';
import { diedAt, type CapabilityRecord, type CapabilityRecords } from '../domain/capability.js';
import { errorMessage } from '../domain/errors.js';
import { DEAD_CAPABILITY_LISTED_MS } from '../domain/limits.js';
import { AtomicJsonFile, RegistryReadError } from './jsonAdapter.js';

interface CapabilitiesFile {
  version: 1;
  /** Records oldest first. */
  capabilities: CapabilityRecord[];
}

const STATES = new Set(['live', 'consumed', 'expired', 'revoked']);

/** A record as read from disk is usable (a hand-edited or damaged entry must stop the daemon, not pass silently). */
function wellFormed(r: unknown): r is CapabilityRecord {
  if (typeof r !== 'object' || r === null) return false;
  const x = r as Record<string, unknown>;
  return typeof x.token_id === 'string' && typeof x.agent_id === 'string' && typeof x.path_prefix === 'string'
    && Array.isArray(x.verbs) && typeof x.ttl_ms === 'number' && typeof x.single_use === 'boolean'
    && typeof x.state === 'string' && STATES.has(x.state) && typeof x.created_at === 'string' && typeof x.expires_at === 'string'
    && typeof x.secret_sha256 === 'string' && /^[0-9a-f]{64}$/.test(x.secret_sha256);
}

/**
 * Capability records in `<data>/capabilities.json` (behaviour.md §1.1) on lowdb with the atomic
 * adapter (temp file, fsync, rename, mode 0600). Secrets are never given to this store: only their
 * SHA-256 hex. Dead records older than 7 days (behaviour.md §1.8) are dropped on open and on write.
 *
 * Writes happen synchronously inside `write()` (the adapter's body has no await before the file is
 * renamed into place), so the file order always equals the call order without a promise chain.
 */
export class CapabilityStore implements CapabilityRecords {
  private readonly byId = new Map<string, CapabilityRecord>();
  private readonly byHash = new Map<string, string>();

  private constructor(private readonly db: Low<CapabilitiesFile>, readonly file: string) {
    for (const r of db.data.capabilities) this.index(r);
  }

  /**
   * Open (or create) the file. An unreadable or malformed file throws RegistryReadError: the daemon
   * stops instead of resetting it (behaviour.md §1.1).
   */
  static async open(dataDir: string, now: number): Promise<CapabilityStore> {
    const file = join(dataDir, 'capabilities.json');
    const db = new Low<CapabilitiesFile>(new AtomicJsonFile<CapabilitiesFile>(file), { version: 1, capabilities: [] });
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
    const bad = (data as CapabilitiesFile).capabilities.findIndex((r) => !wellFormed(r));
    if (bad >= 0) throw new RegistryReadError(file, `malformed record at index ${bad}`);
    const store = new CapabilityStore(db, file);
    if (store.prune(now) > 0) await store.write();
    return store;
  }

  private index(r: CapabilityRecord): void {
    this.byId.set(r.token_id, r);
    this.byHash.set(r.secret_sha256, r.token_id);
  }

  /** Drop dead records that died more than 7 days before `now`; returns how many. */
  private prune(now: number): number {
    const keep = this.db.data.capabilities.filter((r) => {
      const d = diedAt(r);
      return d === null || now - d <= DEAD_CAPABILITY_LISTED_MS;
    });
    const dropped = this.db.data.capabilities.length - keep.length;
    if (dropped > 0) {
      for (const r of this.db.data.capabilities) {
        if (!keep.includes(r)) {
          this.byId.delete(r.token_id);
          this.byHash.delete(r.secret_sha256);
        }
      }
      this.db.data.capabilities = keep;
    }
    return dropped;
  }

  private write(): Promise<void> {
    return this.db.write();
  }

  /** Every record (oldest first), dead ones within the 7-day window of `now`. */
  list(now: number): CapabilityRecord[] {
    return this.db.data.capabilities.filter((r) => {
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

  /** Add a new record and persist. */
  add(record: CapabilityRecord, now: number): Promise<void> {
    this.db.data.capabilities.push(record);
    this.index(record);
    this.prune(now);
    return this.write();
  }

  /** Change a record's state fields and persist (consumed, expired, revoked). */
  update(tokenId: string, patch: Partial<Pick<CapabilityRecord, 'state' | 'used_at' | 'revoked_at'>>, now: number): Promise<void> {
    const r = this.byId.get(tokenId);
    if (!r) return Promise.resolve();
    Object.assign(r, patch);
    this.prune(now);
    return this.write();
  }
}
