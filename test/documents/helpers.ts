import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PackageRecord, PackageRegistry } from '../../src/domain/ports.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

/** A package registry test double: records added by the test (the install issue fills the real one). */
export class MapPackageRegistry implements PackageRegistry {
  readonly records = new Map<string, PackageRecord>();
  list(): PackageRecord[] {
    return [...this.records.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  }
  get(_agentId: string, name: string): PackageRecord | undefined {
    return this.records.get(name);
  }
  /** Register a local package whose files are written under `<home>/packages/<name>/`. */
  addLocal(home: string, name: string, files: Record<string, string>, extra: Partial<PackageRecord> = {}): string {
    const dir = join(home, 'packages', name);
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), text);
    }
    this.records.set(name, {
      name, type: 'app', mode: 'local', uri: pathToFileURL(join(dir, 'string.md')).href, source: `~/src/${name}`,
      installedAt: '2025-06-01T10:00:00.000Z', ...extra,
    });
    return dir;
  }
}

/** One command's outcome as tests check it. */
export interface Run {
  ok: boolean;
  code: string | null;
  body: string;
  meta: { uri?: string; title?: string | null; current_block?: string | null } | null;
}

/** An in-process daemon with agent `leo` (home in a temp folder) and a test package registry. */
export interface DocsApp {
  app: TestApp;
  home: string;
  packages: MapPackageRegistry;
  run(topic: string, cmd: string): Promise<Run>;
  write(rel: string, text: string | Buffer): string;
  close(): Promise<void>;
}

/** Start a DocsApp; `allowedPaths` are registered with the agent. */
export async function docsApp(opts: { allowedPaths?: string[] } = {}): Promise<DocsApp> {
  const app = await startApp();
  const home = tempDir('loom-home-');
  const packages = new MapPackageRegistry();
  app.c.system.services.packages = packages;
  const reg = await app.client().registerAgent({ agent_id: 'leo', home, ...(opts.allowedPaths ? { allowed_paths: opts.allowedPaths } : {}) });
  if (reg.status !== 200) throw new Error(`register failed: ${JSON.stringify(reg.body)}`);
  const client = app.client('leo');
  return {
    app, home, packages,
    async run(topic, cmd) {
      const r = await client.exec(topic, cmd);
      if (!r.head) throw new Error(`no head: ${JSON.stringify(r)}`);
      return { ok: r.head.ok, code: r.head.code, body: r.body ?? '', meta: r.head.meta };
    },
    write(rel, text) {
      const p = join(home, rel);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, text);
      return p;
    },
    close: () => app.close(),
  };
}
