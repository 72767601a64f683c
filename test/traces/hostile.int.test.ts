import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { FileStepBudget, TraceRecording } from '../../src/services/traceRecording.js';
import type { CommandEvent } from '../../src/domain/ticket.js';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';
import type { WireJson } from '../helpers/json.js';
import { tempDir } from '../helpers/daemon.js';

/*
 * Hostile cases of the recorder: files outside the home must not reach traces through symlinks, a
 * document title must not keep a secret, one command must not make the recorder hold unbounded
 * memory, and a client leaving GET /traces/<id> must not keep its file descriptor open.
 */

async function traceLines(app: TestApp, id: string): Promise<Array<Record<string, WireJson>>> {
  const r = await raw(app.port, { path: `/traces/${id}` });
  expect(r.status).toBe(200);
  return r.body.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describe('the recorder reads only what the commands may read', () => {
  let app: TestApp;
  let home: string;
  const outside = tempDir('loom-outside-');
  beforeAll(async () => {
    app = await startApp();
    await app.client().registerAgent({ agent_id: 'leo' });
    home = app.c.system.agentHome('leo') as string;
    writeFileSync(join(outside, 'secret.md'), 'OUTSIDE-FILE-CONTENT-42\n');
    symlinkSync(join(outside, 'secret.md'), join(home, 'lnk.md'));
    symlinkSync(outside, join(home, 'lnkdir'));
    symlinkSync('/proc/self/environ', join(home, 'env.txt'));
  });
  afterAll(async () => { await app?.close(); });

  it('when a command names a link to a file outside the home, then the trace holds no file step for it', async () => {
    const id = (await call(app.base, 'POST', '/traces', { body: { agent_id: 'leo' } })).body.trace_id as string;
    const leo = app.client('leo');
    expect((await leo.exec('main', '/open ~/lnk.md')).content).toContain('outside the workspace');
    // /exec could cat them (a shell runs as the user); these commands only name them.
    await leo.exec('main', '/help ~/env.txt ~/lnkdir/secret.md');
    await leo.exec('main', '/ls ~/lnkdir');
    await call(app.base, 'DELETE', `/traces/${id}`);
    const text = JSON.stringify(await traceLines(app, id));
    expect(text).not.toContain('OUTSIDE-FILE-CONTENT-42');
    expect(text).not.toContain('PATH=');
    expect((await traceLines(app, id)).filter((s) => s.kind === 'file')).toEqual([]);
  });

  it('when a document inside the home is opened, then it still becomes a file step, with its title scrubbed', async () => {
    await app.client('leo').exec('main', '/set $TITLE_SECRET = "s3cret-title-77"');
    writeFileSync(join(home, 'doc.md'), '# s3cret-title-77\n\nbody\n');
    const id = (await call(app.base, 'POST', '/traces', { body: { agent_id: 'leo' } })).body.trace_id as string;
    await app.client('leo').exec('main', '/open ~/doc.md');
    await call(app.base, 'DELETE', `/traces/${id}`);
    const steps = await traceLines(app, id);
    expect(steps.filter((s) => s.kind === 'file').map((s) => s.path)).toEqual(['~/doc.md']);
    const open = steps.find((s) => s.kind === 'exec' && s.cmd === '/open ~/doc.md');
    expect(open?.expect.head.meta.title).toBe('${env:TITLE_SECRET}');
    expect(JSON.stringify(steps)).not.toContain('s3cret-title-77');
  });
});

describe('file steps waiting to be written have a budget', () => {
  it('when a command names more file bytes than the budget, then the rest is left out with a warning and the budget comes back', async () => {
    const home = tempDir('loom-budget-');
    for (const n of ['a', 'b', 'c', 'd']) writeFileSync(join(home, `${n}.txt`), n.repeat(600));
    const warnings: string[] = [];
    const budget = new FileStepBudget(1500);
    const rec = new TraceRecording('trc_budget', { agentId: null, topic: null, note: null, startedAt: 0 }, {
      home: () => home, openDocument: () => undefined, shellCwd: () => undefined, env: () => [], port: () => 1, version: 't', now: () => 1, warn: (m) => warnings.push(m), fileBytes: budget,
    }, { path: join(tempDir('loom-budget-out-'), 't.jsonl'), truncate: true });
    const ticket = { id: 't1', cmd: '/exec cat ~/a.txt ~/b.txt ~/c.txt ~/d.txt', requestId: null, via: 'exec' as const, queuedAt: 1, startedAt: 1 };
    const started = { type: 'command.started', agentId: 'leo', topic: 'main', ticket, at: 1 } as unknown as CommandEvent;
    rec.onStarted(started);
    // c and d are both left out; it is said once.
    expect(warnings).toEqual(['trace trc_budget: ~/c.txt left out: more than 1500 bytes of files wait to be written']);
    expect(budget.take(301)).toBe(false);
    await rec.stop();
    // Nothing is held any more: the whole budget is free again.
    expect(budget.take(1500)).toBe(true);
  });
});

describe('GET /traces/<id> and clients that leave', () => {
  it('when clients leave mid-file, then the daemon keeps no descriptor of the trace file open', async () => {
    const app = await startApp();
    try {
      await app.client().registerAgent({ agent_id: 'big' });
      const id = (await call(app.base, 'POST', '/traces', { body: { agent_id: 'big' } })).body.trace_id as string;
      const hook = await app.client().webhook('big');
      const text = 'x'.repeat(60000);
      for (let i = 0; i < 60; i++) await app.client('big').postWebhook(hook.body.webhook_url, text);
      await call(app.base, 'DELETE', `/traces/${id}`);
      const fds = () => readdirSync('/proc/self/fd').length;
      const before = fds();
      for (let i = 0; i < 20; i++) {
        await new Promise<void>((resolve) => {
          const s = connect(app.port, '127.0.0.1', () => s.write(`GET /traces/${id} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
          s.once('data', () => { s.destroy(); resolve(); });
        });
      }
      await new Promise((r) => setTimeout(r, 300));
      expect(fds()).toBeLessThanOrEqual(before + 2);
    } finally {
      await app.close();
    }
  });
});
