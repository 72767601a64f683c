import { expect } from '@jest/globals';
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecOutcome } from '../../src/client/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { copyWritable, FIXTURE_APPS } from '../helpers/fixtures.js';
import { startStub, type Stub } from './stub.js';

/**
 * Shared set-up of the real-apps end-to-end tests: the corpus apps copied into the agent's home
 * (never edited in place), every `https://<host>` origin rewritten to a loopback stub as
 * `http://127.0.0.1:<port>/<host>`, fake external tools first on PATH, one in-process daemon.
 */

/** Where the corpus lives: the repository's copy (test/fixtures/apps), never edited in place. */
export const CORPUS = FIXTURE_APPS;
/** The fake executables. */
export const FAKE_BIN = join(process.cwd(), 'test', 'actions', 'apps', 'bin');

/** A running real-apps world. */
export interface AppsWorld {
  app: TestApp;
  stub: Stub;
  home: string;
  log: string;
  /** POST /exec as agent leo; returns the outcome. */
  exec(topic: string, cmd: string): Promise<ExecOutcome>;
  /** /exec expecting success; returns the body. */
  ok(topic: string, cmd: string): Promise<string>;
  /** `/open ~/apps/<rel>` expecting `Opened ~/apps/<rel>` as the system line; returns the body. */
  open(topic: string, rel: string): Promise<string>;
  /** `/act.<id> --help` expecting the call interface (behaviour.md §5.5); returns the body. */
  help(topic: string, id: string): Promise<string>;
  /** The fake tool calls logged since the last `calls()` (each: tool name and argv). */
  calls(): string[][];
  close(): Promise<void>;
}

/** Rewrite the https origin of every HTTP action target line of the Markdown files under `dir`. */
function rewriteOrigins(dir: string, origin: string): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) { rewriteOrigins(p, origin); continue; }
    if (!name.endsWith('.md')) continue;
    const text = readFileSync(p, 'utf8');
    writeFileSync(p, text.replace(/^(GET|POST|PUT|PATCH|DELETE)(\s+)https:\/\/([A-Za-z0-9.-]+)/gm, `$1$2${origin}/$3`));
  }
}

/** Start the world with the given corpus folders copied to `~/apps/<name>`. */
export async function startAppsWorld(apps: Record<string, string>): Promise<AppsWorld> {
  const stub = await startStub();
  const saved = { PATH: process.env.PATH, FAKE_LOG: process.env.FAKE_LOG };
  const log = join(tempDir('loom-fake-log-'), 'calls.log');
  writeFileSync(log, '');
  process.env.PATH = `${FAKE_BIN}:${process.env.PATH}`;
  process.env.FAKE_LOG = log;
  const restoreEnv = () => {
    process.env.PATH = saved.PATH;
    if (saved.FAKE_LOG === undefined) delete process.env.FAKE_LOG; else process.env.FAKE_LOG = saved.FAKE_LOG;
  };
  let app: TestApp | undefined;
  let home: string;
  try {
    app = await startApp();
    const reg = await app.client().registerAgent({ agent_id: 'leo' });
    home = String(reg.body.home);
    for (const [name, src] of Object.entries(apps)) {
      const dest = join(home, 'apps', name);
      copyWritable(join(CORPUS, src), dest);
      rewriteOrigins(dest, stub.origin);
    }
    if (existsSync(join(home, 'apps', 'gh-kanban'))) copyFileSync(join(process.cwd(), 'test', 'actions', 'apps', 'kanban'), join(home, 'apps', 'gh-kanban', 'kanban'));
  } catch (e) {
    // A failed set-up must not leave a server or the patched environment behind (jest would hang).
    await app?.close();
    await stub.close();
    restoreEnv();
    throw e;
  }
  let seen = 0;
  const client = app.client('leo');
  const w: AppsWorld = {
    app, stub, home, log,
    exec: (topic, cmd) => client.exec(topic, cmd),
    async ok(topic, cmd) {
      const r = await client.exec(topic, cmd);
      expect({ cmd, ok: r.head?.ok, body: r.body }).toEqual({ cmd, ok: true, body: r.body });
      return r.body ?? '';
    },
    async open(topic, rel) {
      const body = await w.ok(topic, `/open ~/apps/${rel}`);
      expect(body.split('\n').slice(0, 2)).toEqual([`Opened ~/apps/${rel}`, '---']);
      return body;
    },
    async help(topic, id) {
      const body = await w.ok(topic, `/act.${id} --help`);
      expect(body.split('\n').slice(0, 3)).toEqual([`Action: ${id}`, '---', expect.stringMatching(new RegExp(`^Usage: /act\\.${id}( |$)`))]);
      return body;
    },
    calls() {
      const all = readFileSync(log, 'utf8').split('\u001e').filter((s) => s !== '');
      const fresh = all.slice(seen);
      seen = all.length;
      return fresh.map((c) => c.split('\0').slice(0, -1));
    },
    async close() {
      await app.close();
      await stub.close();
      restoreEnv();
    },
  };
  return w;
}

/** The part of an /open answer after the default-action rule (`\n\n---\n\n`), or ''. */
export function afterRule(openBody: string): string {
  const i = openBody.lastIndexOf('\n\n---\n\n');
  return i < 0 ? '' : openBody.slice(i + 7);
}
