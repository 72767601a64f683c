import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { writeLoadHooks } from '../helpers/loadHooks.js';
import { loom } from './support.js';

/*
 * An agent host runs `loom <topic> <command…>` once per tool call, so that form loads only the
 * entry's own bundle (dist/cli/main.js): not the command tree (dist/cli/full.js and its chunks) and
 * not fetch's HTTP stack (undici). A preload (`--import`) records every dist module the CLI loads
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

beforeAll(async () => {
  preload = writePreload();
  d = await startDaemon();
  const reg = await fetch(`${d.base}/agents`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_id: 'fp' }) });
  expect(reg.status).toBe(200);
});
afterAll(async () => { await d?.kill(); });

describe('CLI footprint (what one call loads)', () => {
  it('when the one-command form runs, then only the entry bundle loads: no command tree, no chunk, no undici, not util.parseArgs (read for `loom daemon` only)', async () => {
    const r = await traced(['--agent', 'fp', 'main', '/help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Loom commands\n/);
    expect(r.loaded).toMatch(/\/dist\/cli\/main\.js\n/);
    expect(r.loaded).toMatch(/exited\n$/);
    expect(r.loaded).not.toMatch(/\/dist\/cli\/full\.js/);
    expect(r.loaded).not.toMatch(/\/dist\/cli\/bundle-/);
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

  it('when --version asks the daemon, then it loads the entry bundle alone too', async () => {
    const r = await traced(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^loom \S+ \(CLI\)\ndaemon: loom /);
    expect(r.loaded).not.toMatch(/\/dist\/cli\/full\.js|\/dist\/cli\/bundle-|undici/);
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
