/**
 * Ports: the interfaces the actors and commands use to reach storage and the world.
 * Concrete implementations live in src/stores and src/effects and are injected by main.ts.
 */
import type { NetworkPolicy } from './networkPolicy.js';
import type { SandboxMode } from './sandbox.js';

/** Time source. Superset of XState's Clock so the same object drives machine delays (architecture.md: time is injected). */
export interface Clock {
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The wall clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** spec §2 Agent, as stored in `<data>/agents.json` (behaviour.md §1.1). */
export interface AgentRecord {
  id: string;
  home: string;
  allowedPaths: string[];
  createdAt: string;
  /** behaviour.md §15: absent on records stored before the sandbox existed (the daemon default applies). */
  sandbox?: SandboxMode;
  /** behaviour.md §15.2: stored only when the client chose one (absent: `public` when confined). */
  network?: NetworkPolicy;
  /** spec §2 Local webhook: the token is stored in the agent registry. */
  webhookToken?: string;
}

/** What POST /agents sets and GET /agents lists (spec §4.3): an agent record without its secret. */
export type AgentProfile = Omit<AgentRecord, 'webhookToken'>;

/**
 * Persistent agent registry (spec §2: agents persist across restarts). It is read once, at
 * start-up; from then on it stores what the actors decided (architecture.md "One read model").
 */
export interface AgentStore {
  /** Every stored record, sorted by id (start-up). */
  list(): AgentRecord[];
  /** Store an agent's profile; its stored webhook token, if any, is kept. */
  put(profile: AgentProfile): Promise<void>;
  /** Store the webhook token of a registered agent. */
  putWebhookToken(id: string, token: string): Promise<void>;
  /** The stored webhook token of an agent, or undefined (the only copy of its value: actors hold its fingerprint). */
  webhookToken(id: string): string | undefined;
  remove(id: string): Promise<boolean>;
}

/** An env-store scope (behaviour.md §6.3). */
export interface EnvScope {
  app?: string;
  config?: string;
}

/** One effective persistent variable with the scope it came from. */
export interface EnvEntry {
  name: string;
  value: string;
  scope: EnvScope;
}

/** Persistent variables of spec §2 / behaviour.md §6.2, per agent, outside every home. */
export interface EnvStore {
  /** The effective variables for a read cascade (config → app → global), first match per name. */
  effective(agentId: string, scope: EnvScope, opts?: { includeGlobal?: boolean }): EnvEntry[];
  /** Resolve one name through the cascade. */
  lookup(agentId: string, scope: EnvScope, name: string, opts?: { includeGlobal?: boolean }): EnvEntry | undefined;
  /** Write several names into exactly one scope (atomic file write). */
  set(agentId: string, scope: EnvScope, values: Record<string, string>): Promise<void>;
  /** Remove names from exactly one scope; returns the names that were absent (nothing removed then). */
  unset(agentId: string, scope: EnvScope, names: string[]): Promise<string[]>;
  /** Non-fatal problems to show in listings (behaviour.md §6.2). */
  warnings(agentId: string): string[];
  /** Every variable of every scope (global, apps, configs): a name may come once per scope. */
  values(agentId: string): EnvEntry[];
  /**
   * A number that changes whenever the agent's variables may have changed (set, unset, a re-read
   * file, a forgotten agent), so what is derived from them can be cached. It does not look at the
   * file unless `recheck` (a hand edit is seen at the next read of the store, or by a recheck).
   */
  revision(agentId: string, opts?: { recheck?: boolean }): number;
}

/** One package of an agent's registry `<data>/agents/<id>/state/packages.json` (behaviour.md §7.6). */
export interface PackageRecord {
  name: string;
  type: 'app' | 'tool';
  mode: 'local' | 'inplace' | 'link';
  uri: string;
  source: string;
  version?: string;
  description?: string;
  files?: number;
  installedAt: string;
  /**
   * The install that committed this record (beyond spec): start-up recovery compares it with the
   * `.old-<name>-<hex>` folder a crash left, to know whether that commit happened.
   */
  installId?: string;
}

/** Read side of the package registry that documents, hubs and /open need. */
export interface PackageRegistry {
  /** The agent's packages, sorted by name. */
  list(agentId: string): PackageRecord[];
  get(agentId: string, name: string): PackageRecord | undefined;
  /** Resolves when no commit of this agent's packages is in progress (opens wait: behaviour.md §7.6). */
  whenIdle?(agentId: string): Promise<void>;
}

/** The whole package registry: reads, writes, and the agent's package lock (behaviour.md §7.6). */
export interface PackageStore extends PackageRegistry {
  /** Add or replace a record (atomic file write; throws when the write fails, nothing changed then). */
  put(agentId: string, record: PackageRecord): void;
  /** Remove a record; false when absent. */
  remove(agentId: string, name: string): boolean;
  /** Run `fn` holding the agent's package lock (commits and uninstalls; opens wait for it). */
  withLock<T>(agentId: string, fn: () => Promise<T>): Promise<T>;
  /** Drop what is cached for an agent (its state folder was deleted). */
  forget(agentId: string): void;
}

/** Label of an env scope as printed in output (behaviour.md §6.3). */
export function scopeLabel(scope: EnvScope): string {
  if (scope.config && scope.app) return `config ${scope.app}:${scope.config}`;
  if (scope.app) return `app ${scope.app}`;
  return 'global';
}
