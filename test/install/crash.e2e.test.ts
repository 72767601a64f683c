import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient, type ExecOutcome } from '../../src/client/index.js';
import { freePort, runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { hashTree, leftovers, manifest, send, startFileServer, writeTree, type FileServer } from './support.js';

/**
 * `kill -9` of the built daemon inside every window of a commit (behaviour.md §7.6), held open by the
 * test-only LOOM_TEST_COMMIT_PAUSE_MS: after a restart the installed package is byte-identical to
 * the old one (or, once the record was written, to the new one), the registry agrees with the
 * folder, and no staging, `.old-` or `.new-` folder is left. Also a kill while files are fetched,
 * and an unreadable registry at start-up.
 */

const data = tempDir();
let d: RunningDaemon | undefined;
let srv: FileServer;
let home: string;

async function start(pause: boolean): Promise<LoomClient> {
  d = await startDaemon({ dataDir: data, env: pause ? { LOOM_TEST_COMMIT_PAUSE_MS: '600' } : {} });
  return new LoomClient(d.base, 'leo');
}
const registry = () => JSON.parse(readFileSync(join(data, 'agents/leo/state/packages.json'), 'utf8')).packages;
const pkg = () => join(home, 'packages/weather');
const entries = () => (existsSync(join(home, 'packages')) ? readdirSync(join(home, 'packages')) : []);

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

beforeAll(async () => {
  srv = await startFileServer();
  const c = await start(false);
  home = String((await c.registerAgent({ agent_id: 'leo' })).body.home);
  writeTree(join(home, 'src/v1/weather'), { 'string.md': '# Weather v1\n', 'pages/a.md': 'a1' });
  writeTree(join(home, 'src/v2/weather'), { 'string.md': '# Weather v2\n', 'pages/b.md': 'b2' });
  expect((await c.exec('main', '/install ~/src/v1/weather')).head?.ok).toBe(true);
  await d?.stop();
});
afterEach(async () => { await d?.kill(); });
afterAll(async () => {
  await d?.kill();
  await srv?.close();
});

/** After a restart: the package equals `want`, the registry names that source, nothing is left over. */
async function restartsClean(want: 'v1' | 'v2'): Promise<void> {
  const c = await start(false);
  expect(hashTree(pkg())).toBe(hashTree(join(home, `src/${want}/weather`)));
  expect(registry().weather.source).toBe(`~/src/${want}/weather`);
  expect(leftovers(home)).toEqual([]);
  expect((await c.exec('app:weather', '/open')).body?.split('\n')[2]).toBe(`# Weather ${want}`);
  if (want === 'v2') expect((await c.exec('main', '/install ~/src/v1/weather')).head?.ok).toBe(true);
  await d?.stop();
}

describe('kill -9 inside a commit (behaviour.md §7.6)', () => {
  const windows: Array<[string, 'v1' | 'v2', () => boolean]> = [
    ['after the old folder moved aside', 'v1', () => entries().some((n) => n.startsWith('.old-weather-')) && !existsSync(pkg())],
    ['after the new folder moved in, before the record', 'v1', () => entries().some((n) => n.startsWith('.old-weather-')) && existsSync(join(pkg(), 'pages/b.md')) && registry().weather.source === '~/src/v1/weather'],
    ['after the record, before the old folder was deleted', 'v2', () => entries().some((n) => n.startsWith('.old-weather-')) && registry().weather.source === '~/src/v2/weather'],
  ];

  it.each(windows)('when the daemon is killed %s, then after a restart the package is the %s one, whole', async (_w, want, inWindow) => {
    const c = await start(true);
    const pending: Promise<ExecOutcome> = c.exec('main', '/install ~/src/v2/weather').catch(() => ({}) as ExecOutcome);
    await until(inWindow);
    await d?.kill();
    await pending;
    await restartsClean(want);
  });

  it('when a first install is killed before its record, then after a restart there is no package of that name', async () => {
    writeTree(join(home, 'src/fresh'), { 'string.md': '# Fresh\n' });
    const c = await start(true);
    const pending = c.exec('main', '/install ~/src/fresh').catch(() => undefined);
    await until(() => entries().some((n) => n.startsWith('.new-fresh-')) && existsSync(join(home, 'packages/fresh')));
    await d?.kill();
    await pending;
    await start(false);
    expect(existsSync(join(home, 'packages/fresh'))).toBe(false);
    expect(registry().fresh).toBeUndefined();
    expect(leftovers(home)).toEqual([]);
    await d?.stop();
  });

  it('when the daemon is killed while files are fetched, then the staging folder is gone after a restart and the package is untouched', async () => {
    srv.routes.set('/slow.bin', (_req, res) => {
      res.writeHead(200, { 'Content-Length': 1 << 20 });
      res.write(Buffer.alloc(1024, 0x61));
    });
    srv.routes.set('/m.json', send(manifest([{ path: 'string.md', content: '# Weather v3\n' }, { path: 'slow.bin', url: srv.url('/slow.bin') }])));
    const c = await start(false);
    const pending = c.exec('main', `/install ${srv.url('/m.json')} --as weather`).catch(() => undefined);
    await until(() => entries().some((n) => n.startsWith('.staging-weather-')));
    await d?.kill();
    await pending;
    await restartsClean('v1');
  });
});

describe('an unreadable package registry at start-up (behaviour.md §1.1)', () => {
  it('when packages.json is not JSON, then the daemon exits 1 and says which file', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'agents/leo/state'), { recursive: true });
    writeFileSync(join(dir, 'agents.json'), JSON.stringify({ version: 1, agents: { leo: { id: 'leo', home: tempDir(), allowedPaths: [], createdAt: '2025-06-01T10:00:00.000Z' } } }));
    const file = join(dir, 'agents/leo/state/packages.json');
    writeFileSync(file, '{ not json');
    const r = await runCli(['daemon'], { SVC_DATA_DIR: dir, SVC_PORT: String(await freePort()) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^loom: cannot read ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
    expect(readFileSync(file, 'utf8')).toBe('{ not json');
  });
});
