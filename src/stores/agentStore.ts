import { Low } from 'lowdb';
import { Memory } from 'lowdb';
import { join } from 'node:path';
import type { AgentRecord, AgentStore } from '../domain/ports.js';
import { AtomicJsonFile, RegistryReadError } from './jsonAdapter.js';

/** The registry file: `{version: 1, <key>: {<id>: record}}` with key `agents` (or `users` on the user wire). */
type RegistryKey = 'agents' | 'users';
type AgentsFile = { version: 1 } & Partial<Record<RegistryKey, Record<string, AgentRecord>>>;

/**
 * The agent registry `<data>/agents.json` (behaviour.md §1.1) on lowdb; the user wire keeps its users
 * in `<data>/users.json` under `users` (behaviour.md §11), so the two wires never share identities.
 * Writes are serialised through one promise chain so concurrent registrations never interleave.
 */
export class LowAgentStore implements AgentStore {
  private chain: Promise<void> = Promise.resolve();

  private constructor(private readonly db: Low<AgentsFile>, private readonly key: RegistryKey) {}

  /** Open the registry file; an unreadable file throws RegistryReadError (the daemon stops). */
  static async open(dataDir: string, file = 'agents.json', key: RegistryKey = 'agents'): Promise<LowAgentStore> {
    const db = new Low<AgentsFile>(new AtomicJsonFile<AgentsFile>(join(dataDir, file)), { version: 1, [key]: {} });
    await db.read();
    if (typeof db.data !== 'object' || db.data === null || typeof db.data[key] !== 'object' || db.data[key] === null) {
      throw new RegistryReadError(join(dataDir, file), `missing "${key}" object`);
    }
    return new LowAgentStore(db, key);
  }

  /** An in-memory registry for contract tests. */
  static memory(): LowAgentStore {
    return new LowAgentStore(new Low<AgentsFile>(new Memory<AgentsFile>(), { version: 1, agents: {} }), 'agents');
  }

  private get records(): Record<string, AgentRecord> {
    // open() refused a file without the object; memory() starts with one.
    return this.db.data[this.key] as Record<string, AgentRecord>;
  }

  list(): AgentRecord[] {
    return Object.values(this.records).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  get(id: string): AgentRecord | undefined {
    return Object.prototype.hasOwnProperty.call(this.records, id) ? this.records[id] : undefined;
  }

  put(record: AgentRecord): Promise<void> {
    this.records[record.id] = record;
    return this.persist();
  }

  async remove(id: string): Promise<boolean> {
    if (!this.get(id)) return false;
    delete this.records[id];
    await this.persist();
    return true;
  }

  private persist(): Promise<void> {
    const next = this.chain.then(() => this.db.write());
    this.chain = next.catch(() => undefined);
    return next;
  }
}
