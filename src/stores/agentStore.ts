import { Low, Memory } from 'lowdb';
import { realpathSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { LoomError } from '../domain/errors.js';
import { WEBHOOK_TOKEN_RE } from '../domain/events.js';
import { isAgentId } from '../domain/ids.js';
import { isSandboxMode } from '../domain/sandbox.js';
import { parseNetworkPolicy } from '../domain/networkPolicy.js';
import type { AgentProfile, AgentRecord, AgentStore } from '../domain/ports.js';
import { checkAgentRoots } from '../effects/homePolicy.js';
import { AtomicJsonFile, RegistryReadError } from './jsonAdapter.js';
import type { StateFolders } from './leftovers.js';

/** The registry file: `{version: 1, <key>: {<id>: record}}` with key `agents` (or `users` on the user wire). */
type RegistryKey = 'agents' | 'users';
type AgentsFile = { version: 1 } & Partial<Record<RegistryKey, Record<string, AgentRecord>>>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const absolute = (v: unknown): v is string => typeof v === 'string' && isAbsolute(v) && !v.includes('\0');

/**
 * Why a stored record cannot be used, or null: a malformed record is refused at load, not
 * accepted to make every command of the agent fail later. The home policy applies to stored homes too.
 */
function recordProblem(key: string, r: unknown, dataDir: string, dataReal: string, registry: RegistryKey, plainFolder: boolean): string | null {
  if (!isAgentId(key)) return `not a valid ${registry === 'agents' ? 'agent' : 'user'} id`;
  if (!isObject(r)) return 'not an object';
  if (r.id !== key) return `id must be "${key}"`;
  if (!absolute(r.home)) return 'home must be an absolute path';
  if (!Array.isArray(r.allowedPaths) || !r.allowedPaths.every(absolute)) return 'allowedPaths must be a list of absolute paths';
  if (typeof r.createdAt !== 'string') return 'createdAt must be a timestamp';
  if (r.sandbox !== undefined && !isSandboxMode(r.sandbox)) return 'sandbox must be "none" or "workspace"';
  if (r.network !== undefined) {
    try {
      parseNetworkPolicy(r.network);
    } catch {
      return 'network must be "public", "none", "open" or {"allow": [hosts]}';
    }
  }
  if (r.webhookToken !== undefined && (typeof r.webhookToken !== 'string' || !WEBHOOK_TOKEN_RE.test(r.webhookToken))) return 'webhookToken is malformed';
  try {
    // The user wire has no default homes (behaviour.md §11): no stored user home inside the data directory.
    checkAgentRoots({ dataDir, dataReal, agentId: key, home: r.home, allowedPaths: r.allowedPaths as string[], defaultHomes: registry === 'agents', storedDefaultHome: plainFolder });
  } catch (err) {
    if (err instanceof LoomError) return err.detail ?? err.error;
    throw err;
  }
  return null;
}

/** A change to the registry waiting for its write: true when it changed anything. */
interface QueuedChange {
  change: (next: Map<string, AgentRecord>) => boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * The agent registry `<data>/agents.json` (behaviour.md §1.1) on lowdb; the user wire keeps its users
 * in `<data>/users.json` under `users` (behaviour.md §11), so the two wires never share identities. Held in a Map (agent ids
 * such as `constructor` are user text). Every change is write-then-apply (docs/decisions/0004): the
 * next file content is built from a copy, written atomically, and only then becomes the registry,
 * so a failed write (EMFILE, ENOSPC) changes nothing in memory. Changes are serialised through one
 * promise chain, each built from the state the previous one left.
 */
export class LowAgentStore implements AgentStore {
  private agents: Map<string, AgentRecord>;
  private chain: Promise<void> = Promise.resolve();
  private readonly queued: QueuedChange[] = [];

  private constructor(private readonly db: Low<AgentsFile>, private readonly key: RegistryKey, records: Record<string, AgentRecord>) {
    this.agents = new Map(Object.entries(records));
  }

  /**
   * Open the registry file; an unreadable file or a malformed record throws RegistryReadError (the
   * daemon stops). `layout` is the start-up listing of the data directory, when there is one.
   */
  static async open(dataDir: string, file = 'agents.json', key: RegistryKey = 'agents', layout?: Pick<StateFolders, 'plainAgentFolder'>): Promise<LowAgentStore> {
    const path = join(dataDir, file);
    const db = new Low<AgentsFile>(new AtomicJsonFile<AgentsFile>(path), { version: 1, [key]: {} });
    await db.read();
    const records = isObject(db.data) ? db.data[key] : undefined;
    if (!isObject(records)) throw new RegistryReadError(path, `"${key}" must be an object`);
    const dataReal = realpathSync.native(dataDir);
    for (const [id, r] of Object.entries(records)) {
      const problem = recordProblem(id, r, dataDir, dataReal, key, layout?.plainAgentFolder(id) === true);
      if (problem) throw new RegistryReadError(path, `${key === 'agents' ? 'agent' : 'user'} "${id}": ${problem}`);
    }
    return new LowAgentStore(db, key, records);
  }

  /** An in-memory registry for contract tests. */
  static memory(): LowAgentStore {
    return new LowAgentStore(new Low<AgentsFile>(new Memory<AgentsFile>(), { version: 1, agents: {} }), 'agents', {});
  }

  list(): AgentRecord[] {
    return [...this.agents.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  put(profile: AgentProfile): Promise<void> {
    return this.commit((next) => {
      const token = next.get(profile.id)?.webhookToken;
      next.set(profile.id, token === undefined ? { ...profile } : { ...profile, webhookToken: token });
      return true;
    });
  }

  putWebhookToken(id: string, token: string): Promise<void> {
    return this.commit((next) => {
      const rec = next.get(id);
      if (!rec) throw new Error(`unknown agent ${id}`);
      next.set(id, { ...rec, webhookToken: token });
      return true;
    });
  }

  webhookToken(id: string): string | undefined {
    return this.agents.get(id)?.webhookToken;
  }

  async remove(id: string): Promise<boolean> {
    let existed = false;
    await this.commit((next) => (existed = next.delete(id)));
    return existed;
  }

  /**
   * Queue a change; resolves once a write that holds it is on disk. The changes queued while the
   * event loop serves one turn of requests share one write (group commit): each write stores the
   * whole registry, so one write per change made a burst of registrations quadratic in bytes built
   * and written. Write-then-apply still holds for every change; a failed write fails its whole group.
   */
  private commit(change: (next: Map<string, AgentRecord>) => boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ change, resolve, reject });
      if (this.queued.length > 1) return;
      // setImmediate runs after the poll phase: every request whose body arrived in this turn joins the group.
      this.chain = this.chain.then(() => new Promise<void>((r) => setImmediate(r))).then(() => this.writeQueued()).catch(() => undefined);
    });
  }

  /** Build the next registry from the current one with every queued change, write it, then make it current. */
  private async writeQueued(): Promise<void> {
    const group = this.queued.splice(0);
    const next = new Map(this.agents);
    const applied: QueuedChange[] = [];
    let changed = false;
    for (const q of group) {
      try {
        if (q.change(next)) changed = true;
        applied.push(q);
      } catch (err) {
        // A refused change (an unknown agent) changes nothing; the others of the group go on.
        q.reject(err);
      }
    }
    try {
      if (changed) await this.db.adapter.write({ version: 1, [this.key]: Object.fromEntries(next) });
    } catch (err) {
      for (const q of applied) q.reject(err);
      return;
    }
    this.agents = next;
    for (const q of applied) q.resolve();
  }
}
