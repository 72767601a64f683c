import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { InspectorMessage } from '../../src/services/inspection.js';
import { expectSameBytes, recordBothForms } from '../helpers/objectSerialiser.js';
import { installBench, manifest, send, startFileServer, type FileServer, type InstallBench } from './support.js';
import { watchLiveMessages } from '../helpers/liveMessages.js';

/**
 * Install actors in the inspector's data (behaviour.md §13.2 `installs`, §13.3 system id
 * `install:<install_id>` and `{"type":"install", …}` messages): read from the live actor.
 */

let b: InstallBench;
let srv: FileServer;
beforeAll(async () => {
  b = await installBench();
  srv = await startFileServer();
});
afterAll(async () => {
  await b?.close();
  await srv?.close();
});

describe('install actors in the inspection feed and registry', () => {
  it('when an install runs, then the registry shows its progress and the feed carries created, install progress, the transition and stopped', async () => {
    let finish: () => void = () => undefined;
    srv.routes.set('/part.bin', (_req, res) => {
      res.writeHead(200, { 'Content-Length': 8192 });
      res.write(Buffer.alloc(4096, 0x61));
      finish = () => res.end(Buffer.alloc(4096, 0x62));
    });
    srv.routes.set('/m.json', send(manifest([{ path: 'string.md', content: '# Inspected\n' }, { path: 'part.bin', url: srv.url('/part.bin') }])));
    const msgs: InspectorMessage[] = [];
    const off = watchLiveMessages(b.t.c.system, msgs);
    // Beside it, the frames a page gets, against the object form (test/services/inspectionSerialiser.int.test.ts): install progress included.
    const both = recordBothForms(b.t.c.system);
    const pending = b.t.client('leo').exec('main', `/install ${srv.url('/m.json')} --as inspected`);
    const live = () => b.t.c.system.inspection.liveActors(Date.now()).filter((a) => a.machine === 'install');
    while (!live().some((a) => (a.detail.bytes as number) > 0)) await new Promise((r) => setTimeout(r, 10));
    const [actor] = live();
    expect(actor.actor).toMatch(/^install:ins_[0-9a-f]{16}$/);
    expect(actor.state).toBe('staging');
    expect(actor.detail).toMatchObject({ agent_id: 'leo', name: 'inspected', source: srv.url('/m.json'), files_total: 2 });
    finish();
    expect((await pending).head?.ok).toBe(true);
    off();
    expect(expectSameBytes(both.stop())).toContain('install:');
    const mine = msgs.filter((m) => 'actor' in m && m.actor === actor.actor);
    expect(mine[0]).toMatchObject({ type: 'actor', event: 'created', machine: 'install' });
    expect(mine.find((m) => m.type === 'transition')).toMatchObject({ from: 'staging', to: 'installed', event: 'install.written' });
    // The parent reports the child stopped while the child's last snapshot is being published: order them by kind, not position.
    expect(mine.filter((m) => m.type === 'actor' && m.event === 'stopped')).toHaveLength(1);
    const progress = mine.filter((m): m is Extract<InspectorMessage, { type: 'install' }> => m.type === 'install');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[progress.length - 1]).toMatchObject({ state: 'installed', name: 'inspected', files_done: 2, files_total: 2, bytes: Buffer.byteLength('# Inspected\n') + 8192 });
    // Progress only ever grows.
    for (let i = 1; i < progress.length; i++) expect(progress[i].bytes).toBeGreaterThanOrEqual(progress[i - 1].bytes);
  });
});
