import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { EnvEntry, EnvScope, EnvStore } from '../domain/ports.js';
import { readFileIfExists, writeFileAtomic } from '../effects/atomicFile.js';

/** behaviour.md §6.2 file format. */
interface EnvFile {
  version: 1;
  global: Record<string, string>;
  apps: Record<string, { vars: Record<string, string>; configs: Record<string, Record<string, string>> }>;
}

interface Cached {
  mtimeMs: number;
  data: EnvFile;
  warnings: string[];
}

const empty = (): EnvFile => ({ version: 1, global: {}, apps: {} });

/** Keep only string values; anything else is ignored with a warning (behaviour.md §6.2). */
function stringsOnly(obj: unknown, where: string, warnings: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof obj !== 'object' || obj === null) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v === 'string') out[k] = v;
    else warnings.push(`warning: ${where}.${k} is not a string; ignored`);
  }
  return out;
}

function normalise(raw: unknown, warnings: string[]): EnvFile {
  const data = empty();
  if (typeof raw !== 'object' || raw === null) return data;
  const r = raw as Record<string, unknown>;
  data.global = stringsOnly(r.global, 'global', warnings);
  const apps = typeof r.apps === 'object' && r.apps !== null ? (r.apps as Record<string, unknown>) : {};
  for (const [app, val] of Object.entries(apps)) {
    const a = (typeof val === 'object' && val !== null ? val : {}) as Record<string, unknown>;
    const configs: Record<string, Record<string, string>> = {};
    const rawConfigs = typeof a.configs === 'object' && a.configs !== null ? (a.configs as Record<string, unknown>) : {};
    for (const [c, cv] of Object.entries(rawConfigs)) configs[c] = stringsOnly(cv, `apps.${app}.configs.${c}`, warnings);
    data.apps[app] = { vars: stringsOnly(a.vars, `apps.${app}.vars`, warnings), configs };
  }
  return data;
}

/**
 * The per-agent persistent variable store `<data>/agents/<id>/state/env.json` (behaviour.md §6.2).
 * The human may edit the file: it is re-read whenever its mtime changes; an invalid edit keeps the
 * last good copy in use and adds a warning to listings.
 */
export class FileEnvStore implements EnvStore {
  private cache = new Map<string, Cached>();

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
    if (mtimeMs === undefined) {
      // No file yet: an empty store (also after the agent's state folder was deleted).
      const fresh = { mtimeMs: -1, data: empty(), warnings: [] };
      this.cache.set(agentId, fresh);
      return fresh;
    }
    const cached = this.cache.get(agentId);
    if (cached && cached.mtimeMs === mtimeMs) return cached;
    const text = readFileIfExists(path) ?? '';
    const warnings: string[] = [];
    let next: Cached;
    try {
      next = { mtimeMs, data: normalise(JSON.parse(text), warnings), warnings };
    } catch {
      next = { mtimeMs, data: cached?.data ?? empty(), warnings: [`warning: ${path} is not valid JSON; using the last good copy`] };
    }
    this.cache.set(agentId, next);
    return next;
  }

  private layers(data: EnvFile, scope: EnvScope, includeGlobal: boolean): Array<{ vars: Record<string, string>; scope: EnvScope }> {
    const out: Array<{ vars: Record<string, string>; scope: EnvScope }> = [];
    const app = scope.app ? data.apps[scope.app] : undefined;
    if (scope.app && scope.config && app?.configs[scope.config]) out.push({ vars: app.configs[scope.config], scope: { app: scope.app, config: scope.config } });
    if (scope.app && app) out.push({ vars: app.vars, scope: { app: scope.app } });
    if (includeGlobal) out.push({ vars: data.global, scope: {} });
    return out;
  }

  effective(agentId: string, scope: EnvScope, opts: { includeGlobal?: boolean } = {}): EnvEntry[] {
    const seen = new Map<string, EnvEntry>();
    for (const layer of this.layers(this.load(agentId).data, scope, opts.includeGlobal ?? true)) {
      for (const [name, value] of Object.entries(layer.vars)) if (!seen.has(name)) seen.set(name, { name, value, scope: layer.scope });
    }
    return [...seen.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  lookup(agentId: string, scope: EnvScope, name: string, opts: { includeGlobal?: boolean } = {}): EnvEntry | undefined {
    for (const layer of this.layers(this.load(agentId).data, scope, opts.includeGlobal ?? true)) {
      if (Object.prototype.hasOwnProperty.call(layer.vars, name)) return { name, value: layer.vars[name], scope: layer.scope };
    }
    return undefined;
  }

  private target(data: EnvFile, scope: EnvScope): Record<string, string> {
    if (!scope.app) return data.global;
    data.apps[scope.app] ??= { vars: {}, configs: {} };
    const app = data.apps[scope.app];
    if (!scope.config) return app.vars;
    app.configs[scope.config] ??= {};
    return app.configs[scope.config];
  }

  private save(agentId: string, data: EnvFile): void {
    writeFileAtomic(this.file(agentId), JSON.stringify(data, null, 2) + '\n');
    this.cache.set(agentId, { mtimeMs: statSync(this.file(agentId)).mtimeMs, data, warnings: [] });
  }

  async set(agentId: string, scope: EnvScope, values: Record<string, string>): Promise<void> {
    const data = structuredClone(this.load(agentId).data);
    Object.assign(this.target(data, scope), values);
    this.save(agentId, data);
  }

  async unset(agentId: string, scope: EnvScope, names: string[]): Promise<string[]> {
    const data = structuredClone(this.load(agentId).data);
    const vars = this.target(data, scope);
    const absent = names.filter((n) => !Object.prototype.hasOwnProperty.call(vars, n));
    if (absent.length > 0) return absent;
    for (const n of names) delete vars[n];
    this.save(agentId, data);
    return [];
  }

  warnings(agentId: string): string[] {
    return this.load(agentId).warnings;
  }

  /** Forget the cached copy (the agent's state folder was deleted). */
  forget(agentId: string): void {
    this.cache.delete(agentId);
  }
}
