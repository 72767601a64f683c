import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { writeLoadHooks } from '../helpers/loadHooks.js';

/*
 * The daemon keeps its resident memory small (docs/architecture.md, "Resident memory"): the MCP
 * SDK, zod and turndown are loaded on first use only (they stay outside the bundle that
 * scripts/bundle.mjs builds, and are imported late). A preload (`--import`) records every package
 * and dist module the daemon loads through ES module hooks.
 */

const dir = tempDir('loom-footprint-');
const loadLog = join(dir, 'loaded.txt');
let d: RunningDaemon;

function writePreload(): string {
  const hooks = writeLoadHooks(dir, loadLog, ['/node_modules/', '/dist/']);
  const preload = join(dir, 'preload.mjs');
  writeFileSync(preload, [
    "import { register, createRequire } from 'node:module';",
    "import { appendFileSync as __append } from 'node:fs';",
    // CommonJS loads (createRequire, the bundled packages' require) do not pass the ESM hooks on
    // Node 20: record the files Module._load resolves as well.
    "const Module = createRequire(import.meta.url)('node:module');",
    "const load0 = Module._load;",
    // Node's own modules, on request (SIGUSR2): the test asks after the daemon has worked a while.
    `process.on('SIGUSR2', () => __append(${JSON.stringify(loadLog)}, process.moduleLoadList.filter((m) => m.includes('undici')).map((m) => 'builtin:' + m + '\\n').join('') + 'builtins-listed\\n'));`,
    `Module._load = function (request, parent, isMain) { const m = load0.apply(this, arguments); try { const f = Module._resolveFilename(request, parent, isMain); if (f.includes('/node_modules/') || f.endsWith('.node') || f.includes('/dist/cli/lazy-') || f.endsWith('/dist/node-pty.cjs')) __append(${JSON.stringify(loadLog)}, 'cjs:' + f + '\\n'); } catch {} return m; };`,
    `register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: ${JSON.stringify(loadLog)} } });`,
  ].join('\n'));
  return preload;
}

const loaded = (): string => (existsSync(loadLog) ? readFileSync(loadLog, 'utf8') : '');

async function exec(cmd: string): Promise<string> {
  const r = await fetch(`${d.base}/exec`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Agent-Id': 'fp' }, body: JSON.stringify({ cmd, topic: 'main' }) });
  return r.text();
}

beforeAll(async () => {
  d = await startDaemon({ env: { NODE_OPTIONS: `--import=${pathToFileURL(writePreload()).href}` } });
  const reg = (await (await fetch(`${d.base}/agents`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_id: 'fp' }) })).json()) as { home: string };
  mkdirSync(reg.home, { recursive: true });
  writeFileSync(join(reg.home, 'doc.md'), '# Doc\n\n```act.hi\nCLI echo hi\n```\n');
});
afterAll(async () => { await d?.kill(); });

describe('daemon footprint (modules loaded on first use)', () => {
  it('when an agent is registered and /help has run, then the CommonMark parser, the MIME table and qs are not loaded; the first /open loads the parser', async () => {
    expect(await exec('/help')).toContain('event: done');
    const health = await fetch(`${d.base}/health?x=a&x=b`);
    expect(health.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(loaded()).toMatch(/\/dist\/cli\/daemonEntry\.js/);
    expect(loaded()).not.toMatch(/lazy-markdown\.cjs/);
    expect(loaded()).not.toMatch(/lazy-mime-types\.cjs/);
    expect(await exec('/open ~/doc.md')).toContain('Opened');
    expect(loaded()).toMatch(/cjs:.*\/dist\/cli\/lazy-markdown\.cjs/);
    expect(loaded()).not.toMatch(/lazy-qs\.cjs/);
  });

  it('when commands, documents and CLI actions have run, then the MCP SDK, zod and turndown are not loaded', async () => {
    expect(await exec('/help')).toContain('event: done');
    expect(await exec('/open ~/doc.md')).toContain('Opened');
    expect(await exec('/act.hi')).toContain('hi');
    const urls = loaded();
    // The hook works: the daemon's own modules are recorded (the bundle of scripts/bundle.mjs; the
    // packages bundled into it, Express, XState and the rest, load with it).
    expect(urls).toMatch(/\/dist\/cli\/daemonEntry\.js/);
    expect(urls).not.toMatch(/@modelcontextprotocol\/sdk/);
    expect(urls).not.toMatch(/node_modules\/zod\//);
    expect(urls).not.toMatch(/node_modules\/turndown\//);
    // The hook sees CommonJS loads too (raw-body's iconv-lite, outside the bundle).
    expect(urls).toMatch(/cjs:.*node_modules\/iconv-lite\/lib\/index\.js/);
    // Cold start: the code-page tables are never parsed for UTF-8 work, and node-pty
    // (a native addon) waits for a bash topic or /describe.
    expect(urls).not.toMatch(/node_modules\/iconv-lite\/encodings\//);
    expect(urls).not.toMatch(/node-pty/);
  });

  it('when commands have run, then fetch\'s HTTP stack (undici) has not been loaded (Node 22 and 24 load it for an ES import of node:http)', async () => {
    expect(await exec('/info')).toContain('event: done');
    d.proc.kill('SIGUSR2');
    for (let i = 0; i < 50 && !loaded().includes('builtins-listed'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(loaded()).toContain('builtins-listed');
    expect(loaded()).not.toMatch(/builtin:.*undici/);
  });

  it('when /describe is asked, then node-pty loads to answer whether bash topics get a PTY', async () => {
    const r = await fetch(`${d.base}/describe`, { headers: { 'X-Agent-Id': 'fp' } });
    expect(r.status).toBe(200);
    const caps = ((await r.json()) as { capabilities: Record<string, unknown> }).capabilities;
    expect(caps).toHaveProperty('bash-pty');
    expect(loaded()).toMatch(/cjs:.*node-pty/);
  });

  it('when the first POST /mcp arrives, then the SDK loads and answers', async () => {
    const r = await fetch(`${d.base}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Agent-Id': 'fp' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('loom');
    expect(loaded()).toMatch(/@modelcontextprotocol\/sdk/);
  });
});
