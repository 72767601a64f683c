import { Low } from 'lowdb';
import { Memory } from 'lowdb';
import { join } from 'node:path';
import type { AgentRecord, AgentStore } from '../domain/ports.js';
import { AtomicJsonFile, RegistryReadError } from './jsonAdapter.js';

interface AgentsFile {
  version: 1;
  agents: Record<string, AgentRecord>;
}

/**
 * The agent registry `<data>/agents.json` (behaviour.md §1.1) on lowdb.
 * Writes are serialised through one promise chain so concurrent registrations never interleave.
 */
export class LowAgentStore implements AgentStore {
  private chain: Promise<void> = Promise.resolve();

  private constructor(private readonly db: Low<AgentsFile>) {}

  /** Open the registry file; an unreadable file throws RegistryReadError (the daemon stops). */
  static async open(dataDir: string, file = 'agents.json'): Promise<LowAgentStore> {
    const db = new Low<AgentsFile>(new AtomicJsonFile<AgentsFile>(join(dataDir, file)), { version: 1, agents: {} });
    await db.read();
    if (typeof db.data !== 'object' || db.data === null || typeof db.data.agents !== 'object' || db.data.agents === null) {
      throw new RegistryReadError(join(dataDir, file), 'missing "agents" object');
    }
    return new LowAgentStore(db);
  }

  /** An in-memory registry for contract tests. */
  static memory(): LowAgentStore {
    return new LowAgentStore(new Low<AgentsFile>(new Memory<AgentsFile>(), { version: 1, agents: {} }));
  }

  list(): AgentRecord[] {
    return Object.values(this.db.data.agents).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  get(id: string): AgentRecord | undefined {
    return Object.prototype.hasOwnProperty.call(this.db.data.agents, id) ? this.db.data.agents[id] : undefined;
  }

  put(record: AgentRecord): Promise<void> {
    this.db.data.agents[record.id] = record;
    return this.persist();
  }

  async remove(id: string): Promise<boolean> {
    if (!this.get(id)) return false;
    delete this.db.data.agents[id];
    await this.persist();
    return true;
  }

  private persist(): Promise<void> {
    const next = this.chain.then(() => this.db.write());
    this.chain = next.catch(() => undefined);
    return next;
  }
}
