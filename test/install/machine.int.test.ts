import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createActor, fromCallback } from 'xstate';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';
import { installMachine, type InstallEvent, type InstallInput, type StageCommand, type StageReport } from '../../src/machines/install.js';
import { tempDir } from '../helpers/daemon.js';
import { hashTree, installBench, leftovers, manifest, send, startFileServer, writeTree, type FileServer, type InstallBench } from './support.js';

/**
 * spec §3 Package install, one row per test, run through the real tree (an `install:<id>` child of
 * the agent, observed through root inspection) with the real effects on a temp home; and the
 * machine's graph with xstate/graph.
 */

let b: InstallBench;
let srv: FileServer;
const v1 = { 'string.md': '---\nversion: 1.0.0\n---\n# Weather v1\n', 'pages/more.md': '# More v1\n' };
const v2 = { 'string.md': '---\nversion: 2.0.0\n---\n# Weather v2\n', 'pages/more.md': '# More v2\n', 'pages/extra.md': '# Extra\n' };

beforeAll(async () => {
  b = await installBench();
  srv = await startFileServer();
  writeTree(join(b.home, 'src/v1/weather'), v1);
  writeTree(join(b.home, 'src/v2/weather'), v2);
  expect((await b.run('main', '/install ~/src/v1/weather')).ok).toBe(true);
});
afterAll(async () => {
  await b?.close();
  await srv?.close();
});

/** Run a command and collect the state sequence of the install actors it created. */
async function watched(cmd: string): Promise<{ body: string; states: string[]; ids: string[] }> {
  const states: string[] = [];
  const ids = new Set<string>();
  const off = b.t.c.system.inspection.observe((ev) => {
    const id = (ev.actorRef as { systemId?: string }).systemId;
    if (ev.type !== '@xstate.snapshot' || !id?.startsWith('install:')) return;
    ids.add(id);
    const value = String((ev.snapshot as { value?: unknown }).value);
    if (states[states.length - 1] !== value) states.push(value);
  });
  try {
    const r = await b.run('main', cmd);
    return { body: r.body, states, ids: [...ids] };
  } finally {
    off();
  }
}

describe('spec §3 Package install table (through the actor tree)', () => {
  it('row 1: when all files are validated and written, then staging → installed and the staging folder is renamed into place', async () => {
    const before = hashTree(join(b.home, 'src/v2/weather'));
    const r = await watched('/install ~/src/v2/weather');
    expect(r.body).toBe([
      'Reinstalled app:weather (local, 3 files) from ~/src/v2/weather',
      '  was:  ~/src/v1/weather  1.0.0  local',
      '  now:  ~/src/v2/weather  2.0.0  local',
      'next: /open app:weather',
    ].join('\n'));
    expect(r.states).toEqual(['staging', 'installed']);
    expect(r.ids).toHaveLength(1);
    expect(r.ids[0]).toMatch(/^install:ins_[0-9a-f]{16}$/);
    expect(hashTree(join(b.home, 'packages/weather'))).toBe(before);
    expect(leftovers(b.home)).toEqual([]);
    // The actor left the tree when it ended.
    expect(b.t.c.system.installs('leo')).toEqual([]);
  });

  it('row 2: when a file fails after staging began, then staging → aborted, the staging folder is wiped and the installed package is untouched', async () => {
    const before = hashTree(join(b.home, 'packages/weather'));
    srv.routes.set('/m.json', send(manifest([{ path: 'string.md', content: '# broken\n' }, { path: 'a.md', url: srv.url('/missing.md') }])));
    const r = await watched(`/install ${srv.url('/m.json')} --as weather`);
    expect(r.body).toBe(`ERROR(INSTALL_FAILED): Cannot fetch ${srv.url('/missing.md')}: HTTP 404`);
    expect(r.states).toEqual(['staging', 'aborted']);
    expect(hashTree(join(b.home, 'packages/weather'))).toBe(before);
    expect(leftovers(b.home)).toEqual([]);
  });

  it('row 2: when a manifest path is bad, then staging → aborted before anything is fetched or written', async () => {
    const before = hashTree(join(b.home, 'packages/weather'));
    srv.requests.length = 0;
    srv.routes.set('/bad.json', send(manifest([{ path: 'string.md', url: srv.url('/s.md') }, { path: '../evil.md', content: 'x' }])));
    const r = await watched(`/install ${srv.url('/bad.json')} --as weather`);
    expect(r.body).toBe('ERROR(INSTALL_FAILED): Invalid manifest entry 1: path "../evil.md" contains ".."');
    expect(r.states).toEqual(['staging', 'aborted']);
    expect(srv.paths()).toEqual(['/bad.json']);
    expect(hashTree(join(b.home, 'packages/weather'))).toBe(before);
    expect(leftovers(b.home)).toEqual([]);
  });

  it('when the agent is deleted while an install runs, then the install is cancelled and nothing is committed', async () => {
    const other = await b.agent('gone');
    let release: () => void = () => undefined;
    srv.routes.set('/slow.json', (_req, res) => {
      release = () => send(manifest([{ path: 'string.md', content: '# late\n' }]))(_req, res);
    });
    const pending = b.t.client('gone').exec('main', `/install ${srv.url('/slow.json')} --as late`);
    await waitFor(() => b.t.c.system.installs('gone').length === 1);
    expect(b.t.c.system.installs('gone')[0]).toMatchObject({ state: 'staging', name: null, files_done: 0, files_total: 0, bytes: 0 });
    const del = await b.t.client().deleteAgent('gone');
    expect(del.status).toBe(200);
    release();
    const out = await pending;
    expect(out.head?.code).toBe('CONFLICT');
    expect(existsSync(join(other.home, 'packages/late'))).toBe(false);
  });
});

/** Poll until `cond` holds (no timing assertion: the jest timeout bounds it). */
async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

describe('install machine graph (xstate/graph)', () => {
  const input: InstallInput = { installId: 'ins_0123456789abcdef', agentId: 'leo', source: 'x', requestId: null, request: null };
  const outcome = { ok: true as const, record: { name: 'x', type: 'app' as const, mode: 'link' as const, uri: 'https://x', source: 'x', installedAt: '2025-06-01T10:00:00.000Z' }, reinstalled: false, symlinksSkipped: 0, display: 'x' };
  const events: InstallEvent[] = [
    { type: 'install.progress', filesDone: 1, filesTotal: 2, bytes: 10 },
    { type: 'install.written', outcome },
    { type: 'install.failed', code: 'INSTALL_FAILED', message: 'bad' },
    { type: 'install.cancel', code: 'CONFLICT', message: 'gone' },
  ];
  const machine = installMachine.provide({ actors: { stage: fromCallback<StageCommand, InstallInput, StageReport>(() => undefined) } });

  it('when every event is tried from every state, then exactly staging, installed and aborted are reachable, by the table rows', () => {
    const paths = getShortestPaths(machine, { input, events, serializeState: (s: { value: unknown }) => String(s.value) } as never);
    const byState = new Map(paths.map((p) => [String(p.state.value), p.steps.map((s: { event: { type: string } }) => s.event.type).filter((t: string) => t !== 'xstate.init')]));
    expect([...byState.keys()].sort()).toEqual(['aborted', 'installed', 'staging']);
    expect(byState.get('installed')).toEqual(['install.written']);
    expect(['install.failed', 'install.cancel']).toContain(byState.get('aborted')?.[0]);
  });

  it('when all simple paths are enumerated, then installed and aborted are final and only ever last, and progress never leaves staging', () => {
    const paths = getSimplePaths(machine, { input, events, serializeState: (s: { value: unknown }) => String(s.value) } as never);
    expect(paths.length).toBeGreaterThanOrEqual(3);
    for (const p of paths) {
      const values = p.steps.map((s: { state: { value: unknown } }) => String(s.state.value));
      const end = values.findIndex((v) => v === 'installed' || v === 'aborted');
      if (end >= 0) expect(end).toBe(values.length - 1);
      const final = String(p.state.value);
      if (final !== 'staging') expect(p.state.status).toBe('done');
    }
  });

  it('when progress arrives, then the context carries it for the inspector, and the output is the outcome', () => {
    const a = createActor(machine, { input }).start();
    a.send({ type: 'install.progress', name: 'weather', filesTotal: 5 });
    a.send({ type: 'install.progress', filesDone: 2, bytes: 10240 });
    expect(a.getSnapshot().context).toMatchObject({ name: 'weather', filesDone: 2, filesTotal: 5, bytes: 10240 });
    a.send({ type: 'install.failed', code: 'INSTALL_FAILED', message: 'boom' });
    expect(a.getSnapshot().value).toBe('aborted');
    expect(a.getSnapshot().output).toEqual({ ok: false, code: 'INSTALL_FAILED', message: 'boom' });
  });

  it('when cancelled, then the stage actor is told to abort and the install ends aborted with the cancel\'s reason once the stage has cleaned up', () => {
    const told: string[] = [];
    let report: ((r: StageReport) => void) | undefined;
    const m = installMachine.provide({
      actors: { stage: fromCallback<StageCommand, InstallInput, StageReport>(({ sendBack, receive }) => { report = sendBack; receive((c) => { told.push(c.type); }); }) },
    });
    const a = createActor(m, { input }).start();
    a.send({ type: 'install.cancel', code: 'CONFLICT', message: 'gone' });
    a.send({ type: 'install.cancel', code: 'CONFLICT', message: 'again' });
    // Still staging: the stage's folder may be in use until it reports.
    expect(a.getSnapshot().value).toBe('staging');
    expect(told).toEqual(['install.abort']);
    report?.({ type: 'install.failed', code: 'INSTALL_FAILED', message: 'Install cancelled' });
    expect(a.getSnapshot().value).toBe('aborted');
    expect(a.getSnapshot().output).toEqual({ ok: false, code: 'CONFLICT', message: 'gone' });
    const ok = createActor(m, { input }).start();
    ok.send({ type: 'install.written', outcome });
    expect(ok.getSnapshot().output).toEqual(outcome);
  });
});

// A local folder with a nested tree copies to the same hash (used by row 1 above as well).
describe('tree hash helper', () => {
  it('when a tree is copied, then the hash is equal; when one byte changes, then it differs', () => {
    const a = writeTree(join(tempDir(), 'a'), { 'x.md': 'one', 'd/y.md': 'two' });
    const c = join(tempDir(), 'c');
    cpSync(a, c, { recursive: true });
    expect(hashTree(c)).toBe(hashTree(a));
    writeTree(c, { 'd/y.md': 'twO' });
    expect(hashTree(c)).not.toBe(hashTree(a));
  });
});
