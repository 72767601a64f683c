import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { installMachine } from '../../src/machines/install.js';
import { call } from '../helpers/app.js';
import { installBench, manifest, send, startFileServer, type FileServer, type InstallBench } from '../install/support.js';

/**
 * Installs in the inspector (behaviour.md §13.1–13.2): a running install is an entry of its agent's
 * `installs` in GET /inspect/state with exactly the public fields of §13.2, and the install machine
 * is one of GET /inspect/machines, read from its definition.
 */
let b: InstallBench | undefined;
let srv: FileServer | undefined;
beforeAll(async () => {
  b = await installBench();
  srv = await startFileServer();
});
afterAll(async () => {
  await b?.close();
  await srv?.close();
});

describe('installs in the inspector (behaviour.md §13.2)', () => {
  it('when an install is half-way, then /inspect/state shows it under its agent with its progress and nothing else', async () => {
    const t = (b as InstallBench).t;
    const s = srv as FileServer;
    let finish: () => void = () => undefined;
    s.routes.set('/slow.bin', (_req, res) => {
      res.writeHead(200, { 'Content-Length': 8192 });
      res.write(Buffer.alloc(4096, 0x61));
      finish = () => res.end(Buffer.alloc(4096, 0x62));
    });
    s.routes.set('/m.json', send(manifest([{ path: 'string.md', content: '# Halfway\n' }, { path: 'slow.bin', url: s.url('/slow.bin') }])));
    const pending = t.client('leo').exec('main', `/install ${s.url('/m.json')} --as halfway`);
    let entry: Record<string, unknown> | undefined;
    for (let i = 0; i < 500 && !(entry && (entry.bytes as number) > 0); i++) {
      await new Promise((r) => setTimeout(r, 10));
      const state = await call(t.base, 'GET', '/inspect/state');
      entry = state.body.agents.find((a: { agent_id: string }) => a.agent_id === 'leo').installs[0];
    }
    expect(entry).toEqual({
      install_id: expect.stringMatching(/^ins_[0-9a-f]{16}$/), name: 'halfway', source: s.url('/m.json'), state: 'staging',
      files_done: expect.any(Number), files_total: 2, bytes: expect.any(Number),
    });
    expect(Object.keys(entry as object)).toEqual(['install_id', 'name', 'source', 'state', 'files_done', 'files_total', 'bytes']);
    finish();
    expect((await pending).head?.ok).toBe(true);
    const after = await call(t.base, 'GET', '/inspect/state');
    expect(after.body.agents.find((a: { agent_id: string }) => a.agent_id === 'leo').installs).toEqual([]);
  });

  it('GET /inspect/machines includes the install machine, read from its definition', async () => {
    const r = await call((b as InstallBench).t.base, 'GET', '/inspect/machines');
    expect(r.body.install.states.map((s: { id: string }) => s.id)).toEqual(Object.keys(installMachine.root.states));
    expect(r.body.install.initial).toBe(installMachine.config.initial);
  });
});
