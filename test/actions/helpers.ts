import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { FileEnvStore } from '../../src/stores/envStore.js';
import { newSession, SessionDraft } from '../../src/domain/session.js';
import { parseTopic } from '../../src/domain/topic.js';
import type { CommandContext, Services } from '../../src/commands/types.js';
import type { LoadedDocument, DocOrigin } from '../../src/commands/docContract.js';
import type { ActionDef, ActionDoc, FieldDef, FieldType, HttpMethod } from '../../src/sfmd/types.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Builders for action documents and command contexts, so the actions side can be driven without
 * the documents parser.
 */

/** A field: `f('query', 'string', { required: true, alias: 'q' })`. */
export function f(name: string, type: FieldType = 'string', opts: Partial<FieldDef> = {}): FieldDef {
  return { name, type, required: false, hints: [], line: 1, ...opts };
}

/** A required field. */
export function req(name: string, type: FieldType = 'string', opts: Partial<FieldDef> = {}): FieldDef {
  return f(name, type, { ...opts, required: true });
}

/** An HTTP action. */
export function http(id: string, method: HttpMethod, url: string, fields: FieldDef[] = [], opts: Partial<ActionDef> & { template?: string[] } = {}): ActionDef {
  const { template, ...rest } = opts;
  return { id, kind: 'http', method, url, headers: [], fields, line: 1, ...(template ? { response: { lines: template, line: 10 } } : {}), ...rest };
}

/** A CLI action. */
export function cli(id: string, command: string, fields: FieldDef[] = [], opts: Partial<ActionDef> & { template?: string[] } = {}): ActionDef {
  const { template, ...rest } = opts;
  return { id, kind: 'cli', command, headers: [], fields, line: 1, ...(template ? { response: { lines: template, line: 10 } } : {}), ...rest };
}

/** A document holding the given actions. */
export function doc(actions: ActionDef[], extra: Partial<ActionDoc> = {}): ActionDoc {
  return {
    frontmatter: {}, title: null, env: [], requires: [], actions, headings: [], blocks: [], directives: [], shortcuts: [],
    warnings: [], rendered: '', source: '', ...extra,
  };
}

/** A loaded document in a folder (local by default). */
export function loaded(d: ActionDoc, opts: { dir?: string; origin?: DocOrigin; display?: string; requirements?: string } = {}): LoadedDocument {
  const dir = opts.dir ?? tempDir('loom-doc-');
  return {
    doc: d,
    origin: opts.origin ?? 'local',
    uri: opts.origin && opts.origin !== 'local' ? 'https://example.test/doc.md' : `file://${dir}/string.md`,
    display: opts.display ?? `${dir}/string.md`,
    path: join(dir, 'string.md'),
    dir,
    ...(opts.requirements ? { requirements: opts.requirements } : {}),
  };
}

/** A test world: an agent home, an env store and a port for the daemon-self check. */
export interface World {
  home: string;
  dataDir: string;
  env: FileEnvStore;
  port: number;
  ext: Map<string, unknown>;
}

/** Make a fresh world (real env store in a temp data dir). */
export function world(port = 1): World {
  const dataDir = realpathSync(tempDir('loom-data-'));
  const home = join(dataDir, 'home');
  mkdirSync(home, { recursive: true });
  return { home, dataDir, env: new FileEnvStore(dataDir), port, ext: new Map() };
}

/** A command context in `topic` for agent `leo` of the world. */
export function context(w: World, topic = 'main', opts: { signal?: AbortSignal } = {}): CommandContext {
  const ref = parseTopic(topic);
  if (!ref) throw new Error(`bad topic ${topic}`);
  const services = {
    info: { version: 'test', role: 'agent-host', label: 'loom', wire: 'agent', startedAt: 0, port: () => w.port, dataDir: w.dataDir },
    env: w.env,
    ext: w.ext,
  } as unknown as Services;
  const draft = new SessionDraft(newSession('leo', ref, 0));
  return {
    agent: { id: 'leo', home: w.home, allowedPaths: [], createdAt: '2025-01-01T00:00:00.000Z' },
    get session() { return draft.current; },
    change: (c) => draft.change(c),
    services,
    word: 'act', sub: null, args: '', body: '', header: '/act',
    signal: opts.signal ?? new AbortController().signal,
  };
}

/** A new context sharing the session of `base` (several calls in one topic). */
export function again(base: CommandContext): CommandContext {
  return Object.create(base) as CommandContext;
}

/** Set session variables in a test context as `/set {name}=value` does. */
export function setVars(c: CommandContext, vars: Record<string, string>): void {
  c.change({ type: 'session.set', scope: 'session', values: Object.entries(vars) });
}
