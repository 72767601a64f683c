import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { EnvEntry, EnvScope, EnvStore } from '../domain/ports.js';
import { readFileIfExists, writeFileAtomic } from '../effects/atomicFile.js';

/** One scope's variables. */
type Vars = Map<string, string>;

/**
 * behaviour.md §6.2 file format, held in Maps: app names, config names and variable names are user
 * text, and a plain object would answer `constructor` or `toString` with its prototype's members
 * (a lookup could then reach another agent's entry or crash the daemon).
 */
interface EnvData {
  global: Vars;
  apps: Map<string, { vars: Vars; configs: Map<string, Vars> }>;
}

interface Cached {
  /** EnvStore.revision: a new number for every new copy of the data. */
  revision: number;
  mtimeMs: number;
  data: EnvData;
  warnings: string[];
}

const empty = (): EnvData => ({ global: new Map(), apps: new Map() });

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keep only string values; anything else is ignored with a warning (behaviour.md §6.2). */
function stringsOnly(obj: unknown, where: string, warnings: string[]): Vars {
  const out: Vars = new Map();
  if (!isObject(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v === 'string') out.set(k, v);
    else warnings.push(`warning: ${where}.${k} is not a string; ignored`);
  }
  return out;
}

/** The parsed file as Maps (JSON.parse makes own properties of every key, `__proto__` included). */
function normalise(raw: unknown, warnings: string[]): EnvData {
  const data = empty();
  if (!isObject(raw)) return data;
  const r = raw as { global?: unknown; apps?: unknown };
  data.global = stringsOnly(r.global, 'global', warnings);
  for (const [app, val] of Object.entries(isObject(r.apps) ? r.apps : {})) {
    const a = (isObject(val) ? val : {}) as { vars?: unknown; configs?: unknown };
    const configs = new Map<string, Vars>();
    for (const [c, cv] of Object.entries(isObject(a.configs) ? a.configs : {})) configs.set(c, stringsOnly(cv, `apps.${app}.configs.${c}`, warnings));
    data.apps.set(app, { vars: stringsOnly(a.vars, `apps.${app}.vars`, warnings), configs });
  }
  return data;
}

/** The §6.2 JSON text; Object.fromEntries defines own properties, so no key reaches a prototype. */
function serialise(data: EnvData): string {
  const apps = [...data.apps].map(([name, a]) => [name, {
    vars: Object.fromEntries(a.vars),
    configs: Object.fromEntries([...a.configs].map(([c, v]) => [c, Object.fromEntries(v)])),
  }] as const);
  return JSON.stringify({ version: 1, global: Object.fromEntries(data.global), apps: Object.fromEntries(apps) }, null, 2) + '\n';
}

function clone(data: EnvData): EnvData {
  const apps = new Map([...data.apps].map(([n, a]) => [n, { vars: new Map(a.vars), configs: new Map([...a.configs].map(([c, v]) => [c, new Map(v)])) }]));
  return { global: new Map(data.global), apps };
}

/**
 * The per-agent persistent variable store `<data>/agents/<id>/state/env.json` (behaviour.md §6.2).
 * The human may edit the file: it is re-read whenever its mtime changes; an invalid edit keeps the
 * last good copy in use and adds a warning to listings.
 */
export class FileEnvStore implements EnvStore {
  private cache = new Map<string, Cached>();
  /** The last revision given to a copy (store-wide, so a forgotten and re-read agent never repeats one). */
  private revisions = 0;

  /** `stateRoot` is the folder under the data directory that holds `<id>/state/` (`users` on the user wire, behaviour.md §11). */
  constructor(private readonly dataDir: string, private readonly stateRoot = 'agents') {}

  /** Path of an agent's env file. */
  file(agentId: string): string {
    return join(this.dataDir, this.stateRoot, agentId, 'state', 'env.json');
  }

  private load(agentId: string): Cached {
    const path = this.file(agentId);
    let mtimeMs: number | undefined;
    try {
      // No file (no /set yet) is the common case and is looked up several times per action call:
      // throwIfNoEntry spares building an exception each time.
      mtimeMs = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
    } catch {
      // Unreadable state folder: treated as no file.
    }
    const cached = this.cache.get(agentId);
    if (mtimeMs === undefined) {
      // No file yet: an empty store (also after the agent's state folder was deleted).
      if (cached && cached.mtimeMs === -1) return cached;
      const fresh = { revision: ++this.revisions, mtimeMs: -1, data: empty(), warnings: [] };
      this.cache.set(agentId, fresh);
      return fresh;
    }
    if (cached && cached.mtimeMs === mtimeMs) return cached;
    const text = readFileIfExists(path) ?? '';
    const warnings: string[] = [];
    let next: Cached;
    try {
      next = { revision: ++this.revisions, mtimeMs, data: normalise(JSON.parse(text), warnings), warnings };
    } catch {
      next = { revision: ++this.revisions, mtimeMs, data: cached?.data ?? empty(), warnings: [`warning: ${path} is not valid JSON; using the last good copy`] };
    }
    this.cache.set(agentId, next);
    return next;
  }

  private layers(data: EnvData, scope: EnvScope, includeGlobal: boolean): Array<{ vars: Vars; scope: EnvScope }> {
    const out: Array<{ vars: Vars; scope: EnvScope }> = [];
    const app = scope.app !== undefined ? data.apps.get(scope.app) : undefined;
    const config = app && scope.config !== undefined ? app.configs.get(scope.config) : undefined;
    if (config) out.push({ vars: config, scope: { app: scope.app, config: scope.config } });
    if (app) out.push({ vars: app.vars, scope: { app: scope.app } });
    if (includeGlobal) out.push({ vars: data.global, scope: {} });
    return out;
  }

  effective(agentId: string, scope: EnvScope, opts: { includeGlobal?: boolean } = {}): EnvEntry[] {
    const seen = new Map<string, EnvEntry>();
    for (const layer of this.layers(this.load(agentId).data, scope, opts.includeGlobal ?? true)) {
      for (const [name, value] of layer.vars) if (!seen.has(name)) seen.set(name, { name, value, scope: layer.scope });
    }
    return [...seen.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  lookup(agentId: string, scope: EnvScope, name: string, opts: { includeGlobal?: boolean } = {}): EnvEntry | undefined {
    for (const layer of this.layers(this.load(agentId).data, scope, opts.includeGlobal ?? true)) {
      const value = layer.vars.get(name);
      if (value !== undefined) return { name, value, scope: layer.scope };
    }
    return undefined;
  }

  /** The variables of exactly one scope, created when missing (a write target). */
  private target(data: EnvData, scope: EnvScope): Vars {
    if (scope.app === undefined) return data.global;
    let app = data.apps.get(scope.app);
    if (!app) data.apps.set(scope.app, (app = { vars: new Map(), configs: new Map() }));
    if (scope.config === undefined) return app.vars;
    let config = app.configs.get(scope.config);
    if (!config) app.configs.set(scope.config, (config = new Map<string, string>()));
    return config;
  }

  /** Write first, then apply: a failed write leaves the cached copy as it was. */
  private save(agentId: string, data: EnvData): void {
    writeFileAtomic(this.file(agentId), serialise(data));
    this.cache.set(agentId, { revision: ++this.revisions, mtimeMs: statSync(this.file(agentId)).mtimeMs, data, warnings: [] });
  }

  async set(agentId: string, scope: EnvScope, values: Record<string, string>): Promise<void> {
    const data = clone(this.load(agentId).data);
    const vars = this.target(data, scope);
    for (const [name, value] of Object.entries(values)) vars.set(name, value);
    this.save(agentId, data);
  }

  async unset(agentId: string, scope: EnvScope, names: string[]): Promise<string[]> {
    const data = clone(this.load(agentId).data);
    const vars = this.target(data, scope);
    const absent = names.filter((n) => !vars.has(n));
    if (absent.length > 0) return absent;
    for (const n of names) vars.delete(n);
    this.save(agentId, data);
    return [];
  }

  warnings(agentId: string): string[] {
    return this.load(agentId).warnings;
  }

  values(agentId: string): EnvEntry[] {
    const { global, apps } = this.load(agentId).data;
    const out: EnvEntry[] = [...global].map(([name, value]) => ({ name, value, scope: {} }));
    for (const [app, a] of apps) {
      for (const [name, value] of a.vars) out.push({ name, value, scope: { app } });
      for (const [config, vars] of a.configs) for (const [name, value] of vars) out.push({ name, value, scope: { app, config } });
    }
    return out;
  }

  revision(agentId: string, opts?: { recheck?: boolean }): number {
    const cached = opts?.recheck ? undefined : this.cache.get(agentId);
    return (cached ?? this.load(agentId)).revision;
  }

  /** Forget the cached copy (the agent's state folder was deleted). */
  forget(agentId: string): void {
    this.cache.delete(agentId);
  }
}
