import { LowSync } from 'lowdb';
import { join } from 'node:path';
import { PACKAGE_NAME_RE } from '../domain/ids.js';
import type { PackageRecord, PackageRegistry, PackageStore } from '../domain/ports.js';
import { AtomicJsonFileSync, RegistryReadError } from './jsonAdapter.js';
import { isAbsent } from '../effects/fileProbe.js';

/** A package registry with nothing installed (builds without the install feature). */
export class EmptyPackageRegistry implements PackageRegistry {
  list(): PackageRecord[] {
    return [];
  }
  get(): PackageRecord | undefined {
    return undefined;
  }
}

/** behaviour.md §7.6 file format. */
interface PackagesFile {
  version: 1;
  packages: Record<string, PackageRecord>;
}

const MODES = ['local', 'inplace', 'link'];
const TYPES = ['app', 'tool'];
const optionalString = (v: unknown) => v === undefined || typeof v === 'string';

/** True when a stored value is a record Loom can use under its key. */
function validRecord(key: string, v: unknown): v is PackageRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return r.name === key && PACKAGE_NAME_RE.test(key) && TYPES.includes(r.type as string) && MODES.includes(r.mode as string)
    && typeof r.uri === 'string' && typeof r.source === 'string' && typeof r.installedAt === 'string'
    && optionalString(r.version) && optionalString(r.description) && optionalString(r.installId)
    && (r.files === undefined || (typeof r.files === 'number' && Number.isInteger(r.files) && r.files >= 0));
}

interface Loaded {
  db: LowSync<PackagesFile>;
  /** Records by name (a Map: names come from a file a human may edit). */
  records: Map<string, PackageRecord>;
}

/**
 * The per-agent package registry `<data>/agents/<id>/state/packages.json` (behaviour.md §7.6; the
 * user wire's `<data>/users/<id>/state/packages.json`, §11: the wires never share state) on
 * lowdb (LowSync over an atomic, 0600 adapter), loaded on first use and kept in memory. A file that
 * is not JSON throws RegistryReadError (the daemon stops at start-up: §1.1); records that are not
 * usable are skipped with a warning. Holds each agent's package lock.
 */
export class FilePackageStore implements PackageStore {
  private readonly loaded = new Map<string, Loaded>();
  private readonly locks = new Map<string, Promise<void>>();

  constructor(private readonly dataDir: string, private readonly stateRoot: 'agents' | 'users' = 'agents') {}

  /** Path of an agent's registry. */
  file(agentId: string): string {
    return join(this.dataDir, this.stateRoot, agentId, 'state', 'packages.json');
  }

  /**
   * Start-up: read an agent's registry when it has one, so an unreadable file stops the daemon
   * (behaviour.md §1.1); an absent one costs nothing now and is made on first use.
   */
  check(agentId: string): void {
    let absent = false;
    try {
      absent = isAbsent(this.file(agentId));
    } catch {
      // A state folder that is a file, or one that cannot be entered: the read below says so in one line.
    }
    if (!absent) this.load(agentId);
  }

  /** Load (once) and return an agent's registry. */
  load(agentId: string): Loaded {
    const cached = this.loaded.get(agentId);
    if (cached) return cached;
    const file = this.file(agentId);
    const db = new LowSync<PackagesFile>(new AtomicJsonFileSync<PackagesFile>(file), { version: 1, packages: {} });
    db.read();
    const raw = db.data as unknown;
    const packages = typeof raw === 'object' && raw !== null ? (raw as { packages?: unknown }).packages : undefined;
    if (typeof packages !== 'object' || packages === null || Array.isArray(packages)) throw new RegistryReadError(file, 'missing "packages" object');
    const records = new Map<string, PackageRecord>();
    for (const [key, v] of Object.entries(packages)) {
      if (validRecord(key, v)) records.set(key, v);
      else process.emitWarning(`${file}: package entry ${JSON.stringify(key)} is not a valid record; ignored`);
    }
    const entry = { db, records };
    this.loaded.set(agentId, entry);
    return entry;
  }

  list(agentId: string): PackageRecord[] {
    return [...this.load(agentId).records.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  get(agentId: string, name: string): PackageRecord | undefined {
    return this.load(agentId).records.get(name);
  }

  put(agentId: string, record: PackageRecord): void {
    const { records } = this.load(agentId);
    const next = new Map(records);
    next.set(record.name, record);
    this.persist(agentId, next);
  }

  remove(agentId: string, name: string): boolean {
    const { records } = this.load(agentId);
    if (!records.has(name)) return false;
    const next = new Map(records);
    next.delete(name);
    this.persist(agentId, next);
    return true;
  }

  /** Write the new map first; only a successful write replaces what is in memory. */
  private persist(agentId: string, next: Map<string, PackageRecord>): void {
    const entry = this.load(agentId);
    const data: PackagesFile = { version: 1, packages: Object.fromEntries([...next.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) };
    entry.db.adapter.write(data);
    entry.db.data = data;
    entry.records = next;
  }

  async withLock<T>(agentId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(agentId) ?? Promise.resolve();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const tail = prev.then(() => held);
    this.locks.set(agentId, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.locks.get(agentId) === tail) this.locks.delete(agentId);
    }
  }

  whenIdle(agentId: string): Promise<void> {
    return this.locks.get(agentId) ?? Promise.resolve();
  }

  forget(agentId: string): void {
    this.loaded.delete(agentId);
  }
}
