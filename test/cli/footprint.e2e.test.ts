import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { writeLoadHooks } from '../helpers/loadHooks.js';
import { loom } from './support.js';

/*
 * An agent host runs `loom <topic> <command…>` once per tool call, so that form, run as the `loom`
 * command (bin/loom.js), loads what a bare node:http client sending the same request loads and
 * nothing else: the entry's own CommonJS bundle (dist/cli/main.cjs), none of Node's ES module
 * loader, not the command tree (dist/cli/full.js and its chunks), not fetch's HTTP stack (undici),
 * not node:os. A CommonJS preload (`--require`) records Node's module list and the CommonJS files
 * at exit. Other calls are traced by a preload (`--import`) recording every dist module loaded
 * through ES module hooks, and Node's own undici and util.parseArgs modules at exit.
 */

const dir = tempDir('loom-cli-footprint-');
const loadLog = join(dir, 'loaded.txt');
let preload: string;
let d: RunningDaemon;

function writePreload(): string {
  const hooks = writeLoadHooks(dir, loadLog, ['/dist/']);
  const file = join(dir, 'preload.mjs');
  writeFileSync(file, [
    "import { register } from 'node:module';",
    "import { appendFileSync } from 'node:fs';",
    `process.on('exit', () => appendFileSync(${JSON.stringify(loadLog)}, process.moduleLoadList.filter((m) => m.includes('undici') || m.includes('parse_args')).map((m) => 'builtin:' + m + '\\n').join('') + 'exited\\n'));`,
    `register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: ${JSON.stringify(loadLog)} } });`,
  ].join('\n'));
  return file;
}

/** Run loom under the preload; what it loaded, with its result. */
async function traced(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; loaded: string }> {
  rmSync(loadLog, { force: true });
  const r = await loom(d, args, { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` });
  return { ...r, loaded: existsSync(loadLog) ? readFileSync(loadLog, 'utf8') : '' };
}

/** A bare node:http client: one POST /exec as the one-command form sends it, its content printed. */
function writeBareClient(): string {
  const file = join(dir, 'bare-client.cjs');
  writeFileSync(file, [
    "const { request } = require('node:http');",
    'const [port, agent, topic, cmd] = process.argv.slice(2);',
    'const body = JSON.stringify({ cmd, topic });',
    "const req = request({ host: '127.0.0.1', port: Number(port), method: 'POST', path: '/exec', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Accept: 'text/event-stream', 'X-Agent-Id': agent } }, (res) => {",
    "  let text = ''; res.setEncoding('utf8'); res.on('data', (c) => { text += c; });",
    "  res.on('end', () => { const m = /event: content\\ndata: (.*)\\n/.exec(text); const c = m ? JSON.parse(m[1]) : text; process.stdout.write(c.slice(c.indexOf('\\n') + 1) + '\\n'); });",
    '});',
    'req.end(body);',
  ].join('\n'));
  return file;
}

/** A CommonJS preload that writes, at exit, Node's module list and the CommonJS files loaded, one a line. */
function writeListPreload(): string {
  const file = join(dir, 'list.cjs');
  writeFileSync(file, [
    'process.on(\'exit\', () => {',
    '  const builtins = process.moduleLoadList.map((m) => \'builtin:\' + m);',
    "  const files = Object.keys(require('node:module')._cache).map((f) => 'file:' + f);",
    "  require('node:fs').writeFileSync(process.env.LOOM_TEST_LIST, [...builtins, ...files].join('\\n') + '\\n');",
    '});',
  ].join('\n'));
  return file;
}

/** Run a script under the list preload; its exit code, output and what it loaded. */
function listed(args: string[], unset: string[] = []): Promise<{ code: number | null; stdout: string; loaded: string[] }> {
  const out = join(dir, `list-${Math.random().toString(36).slice(2)}.txt`);
  const env: Record<string, string | undefined> = { ...process.env, SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, LOOM_AGENT_ID: '', NODE_OPTIONS: '', LOOM_TEST_LIST: out };
  for (const k of unset) delete env[k];
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--require', listPreload, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    p.stdout.on('data', (c: Buffer) => { stdout += String(c); });
    p.on('exit', (code) => resolve({ code, stdout, loaded: existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n') : [] }));
  });
}

const bin = join(process.cwd(), 'bin', 'loom.js');
let listPreload: string;
let bareClient: string;

beforeAll(async () => {
  preload = writePreload();
  listPreload = writeListPreload();
  bareClient = writeBareClient();
  d = await startDaemon();
  const reg = await fetch(`${d.base}/agents`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_id: 'fp' }) });
  expect(reg.status).toBe(200);
});
afterAll(async () => { await d?.kill(); });

describe('CLI footprint (what one call loads)', () => {
  it('when the one-command form runs as the loom command, then it loads no Node module a bare node:http client does not, and no file but the entry bundle', async () => {
    const bare = await listed([bareClient, String(d.port), 'fp', 'main', '/help']);
    const r = await listed([bin, '--agent', 'fp', 'main', '/help']);
    expect(bare.code).toBe(0);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Loom commands\n/);
    expect(r.stdout).toBe(bare.stdout);
    const builtins = (l: string[]) => l.filter((m) => m.startsWith('builtin:'));
    expect(builtins(r.loaded).length).toBeGreaterThan(50);
    expect(builtins(r.loaded).filter((m) => !builtins(bare.loaded).includes(m))).toEqual([]);
    // What the bare client's list covers, named: none of the ES module loader, node:os, util.parseArgs,
    // undici — unless Node loads it for a bare CommonJS client too (Node 24's require starts the ES loader).
    expect(r.loaded.filter((m) => /esm\/loader|NativeModule os$|parse_args|undici/.test(m) && !bare.loaded.includes(m))).toEqual([]);
    expect(r.loaded.filter((m) => m.startsWith('file:') && !m.endsWith('/list.cjs'))).toEqual([`file:${bin}`, `file:${join(process.cwd(), 'dist', 'cli', 'main.cjs')}`]);
  });

  it('when HOME is unset, then the one-command form asks node:os for the home folder (loaded then) and answers', async () => {
    const r = await listed([bin, '--agent', 'fp', 'main', '/help'], ['HOME']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Loom commands\n/);
    expect(r.loaded).toContain('builtin:NativeModule os');
  });

  it('when the ES module path runs the one-command form (dist/cli/main.js, as an alias may name it), then it runs the same CommonJS bundle and loads no ES bundle', async () => {
    const r = await traced(['--agent', 'fp', 'main', '/help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Loom commands\n/);
    expect(r.loaded).toMatch(/\/dist\/cli\/main\.js\n/);
    expect(r.loaded).toMatch(/exited\n$/);
    expect(r.loaded).not.toMatch(/\/dist\/cli\/full\.js/);
    expect(r.loaded).not.toMatch(/\/dist\/cli\/bundle-/);
    expect(r.loaded).not.toMatch(/\/dist\/cli\/daemonEntry\.js/);
    expect(r.loaded).not.toMatch(/undici/);
    expect(r.loaded).not.toMatch(/parse_args/);
  });

  it('when `loom daemon` starts (the line of loom start), then the daemon loads without the command tree; `loom daemon --help` loads the tree', async () => {
    const port = await freePort();
    const r = await traced(['--port', String(port), 'daemon', '--quiet', '--exit-with-stdin']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`loom listening on http://127.0.0.1:${port}`);
    expect(r.loaded).toMatch(/\/dist\/cli\/daemonEntry\.js\n/);
    expect(r.loaded).not.toMatch(/\/dist\/cli\/full\.js/);
    expect(r.loaded).toMatch(/builtin:.*parse_args/);
    const help = await traced(['daemon', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: loom daemon/);
    expect(help.loaded).toMatch(/\/dist\/cli\/full\.js\n/);
    expect(help.loaded).not.toMatch(/\/dist\/cli\/daemonEntry\.js/);
  });

  it('when --version asks the daemon, then it loads the entry bundle alone too, and nothing a bare client does not', async () => {
    const bare = await listed([bareClient, String(d.port), 'fp', 'main', '/help']);
    const r = await listed([bin, '--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^loom \S+ \(CLI\)\ndaemon: loom /);
    expect(r.loaded.filter((m) => m.startsWith('builtin:') && !bare.loaded.includes(m))).toEqual([]);
    expect(r.loaded.filter((m) => m.startsWith('file:') && !m.endsWith('/list.cjs'))).toEqual([`file:${bin}`, `file:${join(process.cwd(), 'dist', 'cli', 'main.cjs')}`]);
  });

  it('when a subcommand runs, then the command tree loads (and still no undici)', async () => {
    const r = await traced(['agent', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('fp');
    expect(r.loaded).toMatch(/\/dist\/cli\/main\.js\n/);
    expect(r.loaded).toMatch(/\/dist\/cli\/full\.js\n/);
    expect(r.loaded).not.toMatch(/undici/);
  });
});
