import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { writeLoadHooks } from '../helpers/loadHooks.js';

/*
 * A cold start reaches its ready line without what only a request needs (docs/architecture.md,
 * "Start-up"): the Express app and Express itself (dist/cli/lazy-express.cjs, scripts/bundle.mjs)
 * are made after the ready line, or by the first request that needs them; nothing is read from
 * node_modules before it (the bundle holds what a start runs). A preload records every ES module
 * (hooks) and CommonJS file (Module._load) the daemon loads, and writes `ready` into the same log
 * when the daemon writes its ready line, so the log says what came before it.
 */

const dir = tempDir('loom-footprint-start-');
const loadLog = join(dir, 'loaded.txt');
let d: RunningDaemon;

function writePreload(): string {
  const hooks = writeLoadHooks(dir, loadLog, ['/node_modules/', '/dist/']);
  const preload = join(dir, 'preload.mjs');
  writeFileSync(preload, [
    "import { register, createRequire } from 'node:module';",
    "import { appendFileSync as __append } from 'node:fs';",
    "const Module = createRequire(import.meta.url)('node:module');",
    'const load0 = Module._load;',
    `Module._load = function (request, parent, isMain) { const m = load0.apply(this, arguments); try { const f = Module._resolveFilename(request, parent, isMain); if (f.startsWith('/')) __append(${JSON.stringify(loadLog)}, 'cjs:' + f + '\\n'); } catch {} return m; };`,
    'const write0 = process.stdout.write;',
    // At the ready line, the Node modules loaded so far (Node's own list), on one line before `ready`.
    `process.stdout.write = function (chunk, ...rest) { if (String(chunk).includes('loom listening')) __append(${JSON.stringify(loadLog)}, 'builtins: ' + process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(' ') + '\\nready\\n'); return write0.call(this, chunk, ...rest); };`,
    `register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: ${JSON.stringify(loadLog)} } });`,
  ].join('\n'));
  return preload;
}

/** The log in two parts: what loaded before the ready line, and after it. */
function split(): { before: string; after: string } {
  const log = existsSync(loadLog) ? readFileSync(loadLog, 'utf8') : '';
  const at = log.indexOf('ready\n');
  return at < 0 ? { before: log, after: '' } : { before: log.slice(0, at), after: log.slice(at + 'ready\n'.length) };
}

beforeAll(async () => {
  d = await startDaemon({ env: { NODE_OPTIONS: `--import=${pathToFileURL(writePreload()).href}` } });
});
afterAll(async () => { await d?.kill(); });

describe('cold start footprint (what the ready line does not wait for)', () => {
  it('when the daemon prints its ready line, then it has loaded its bundle and no Express, no command tree and nothing from node_modules', () => {
    const { before } = split();
    expect(before).toMatch(/\/dist\/cli\/daemonEntry\.js\n/);
    expect(before).toMatch(/cjs:.*\/dist\/cli\/main\.cjs\n/);
    expect(before).not.toMatch(/lazy-express\.cjs/);
    expect(before).not.toMatch(/\/node_modules\//);
    expect(before).not.toMatch(/\/dist\/cli\/full\.js/);
    expect(before).not.toMatch(/lazy-(mime-types|markdown|qs|pino)\.cjs/);
  });

  it('when the daemon prints its ready line, then it has loaded none of the Node modules only a request needs (TLS, crypto, zlib, the request log formatter\'s)', () => {
    const line = /^builtins: (.*)$/m.exec(split().before);
    expect(line).not.toBeNull();
    const loaded = new Set((line as RegExpExecArray)[1].split(' '));
    // What reaching the ready line needs is there (the list is read right).
    expect(loaded.has('http')).toBe(true);
    for (const name of ['crypto', 'tls', 'https', 'zlib', 'assert', 'perf_hooks', 'v8', 'vm', 'fs/promises']) expect([name, loaded.has(name)]).toEqual([name, false]);
  });

  it('when the first requests arrive, then Express is there (made after the ready line) and answers every route as before', async () => {
    const health = await fetch(`${d.base}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });
    const missing = await fetch(`${d.base}/no-such-route`);
    expect(missing.status).toBe(404);
    const reg = await fetch(`${d.base}/agents`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_id: 'fs1' }) });
    expect(reg.status).toBe(200);
    const { after } = split();
    expect(after).toMatch(/cjs:.*\/dist\/cli\/lazy-express\.cjs\n/);
    // The request log's formatter is loaded by the first line it writes.
    expect(after).toMatch(/cjs:.*\/dist\/cli\/lazy-pino\.cjs\n/);
    // Express's own lazy parts stay lazy inside it: the MIME table and qs are not loaded by it.
    expect(after).not.toMatch(/lazy-(mime-types|qs)\.cjs/);
  });
});
