import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { loadConfig } from '../../src/config.js';
import { closeServer, compose, listen } from '../../src/daemon.js';
import type { RequestLogEntry } from '../../src/domain/requestLog.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

/*
 * The client on either wire (it accepts --wire user or detects the wire from /describe):
 * the user wire's header, resource and fields; detection from /describe; auto mode.
 */

let user: TestApp;
let agent: TestApp;
beforeAll(async () => {
  user = await startApp({ env: { SVC_WIRE: 'user' } });
  agent = await startApp();
});
afterAll(async () => {
  await user?.close();
  await agent?.close();
});

describe('LoomClient on the user wire', () => {
  it('detectWire reads /describe', async () => {
    expect(await LoomClient.detectWire(user.base)).toBe('user');
    expect(await LoomClient.detectWire(agent.base)).toBe('agent');
  });

  it('register, identities, sessions, exec and delete speak /users, user_id and X-User-Id', async () => {
    const c = await LoomClient.connect(user.base, 'ann');
    expect(c.wire.name).toBe('user');
    const home = join(tempDir(), 'ann');
    expect((await c.register('ann', { home, allowed_paths: [] })).body).toEqual({ user_id: 'ann', home, created: true });
    expect((await c.identities()).list.map((u) => u.id)).toEqual(['ann']);
    expect((await c.openSession('ann', 'file:notes')).body).toEqual({ user_id: 'ann', topic: 'file:notes', topic_type: 'file', created: true });
    expect((await c.listSessions('ann')).body.sessions).toHaveLength(1);
    const r = await c.exec('file:notes', '/info');
    expect(r.head).toMatchObject({ ok: true, user_id: 'ann', topic_type: 'file' });
    expect((await c.health()).body).toEqual({ ok: true, users: 1, sessions: 1 });
    expect((await c.closeSession('ann', 'file:notes')).body).toEqual({ user_id: 'ann', topic: 'file:notes', deleted: true });
    expect((await c.deleteAgent('ann')).body).toEqual({ user_id: 'ann', deleted: true, disposed_sessions: 0 });
  });
});

describe("LoomClient 'auto'", () => {
  it('when the daemon serves the user wire, then the first refusal switches the client and the request is sent again in user form', async () => {
    await user.client().register('bea', { home: join(tempDir(), 'bea') });
    const c = new LoomClient(user.base, 'bea', 'auto');
    expect(c.wire.name).toBe('agent');
    const r = await c.exec('file:x', '/info');
    expect(r.status).toBe(200);
    expect(r.head).toMatchObject({ user_id: 'bea', topic: 'file:x' });
    expect(c.wire.name).toBe('user');
    expect((await c.identities()).list.map((u) => u.id)).toContain('bea');
  });

  it('on the agent wire it stays the agent wire and a refusal stays that refusal', async () => {
    await agent.client().register('leo');
    const c = new LoomClient(agent.base, 'ghost', 'auto');
    expect(await c.exec('main', '/info')).toMatchObject({ status: 401, error: { error: 'Unknown agent: ghost' } });
    expect(c.wire.name).toBe('agent');
    expect((await c.as('leo').exec('main', '/info')).head).toMatchObject({ ok: true, agent_id: 'leo' });
  });

  it('a request that succeeds costs no /describe', async () => {
    const seen: string[] = [];
    const fake: Server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end('event: head\ndata: {"ok":true}\n\nevent: content\ndata: "re: /x\\nok"\n\nevent: done\ndata: {}\n\n');
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const c = new LoomClient(`http://127.0.0.1:${(fake.address() as { port: number }).port}`, 'leo', 'auto');
      expect((await c.exec('main', '/x')).body).toBe('ok');
      expect(seen).toEqual(['POST /exec']);
    } finally {
      await new Promise<void>((resolve) => fake.close(() => resolve()));
    }
  });
});

describe('the request log on the user wire (behaviour.md §2.13 "agent" read as "user")', () => {
  it('records the X-User-Id header, or the /users/<id> path, as the identity of a request', async () => {
    const dataDir = tempDir();
    const echoed: RequestLogEntry[] = [];
    const c = await compose(loadConfig({ SVC_DATA_DIR: dataDir, SVC_PORT: '1', SVC_WIRE: 'user' }), { memory: true, requestLog: { echo: (e) => echoed.push(e) } });
    const server = await listen(c, 0);
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const client = new LoomClient(base, 'cat', 'user');
      await client.register('cat', { home: join(tempDir(), 'cat') });
      await client.exec('file:n', '/info', 'r9');
      await client.deleteAgent('cat');
      for (let i = 0; i < 50 && echoed.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
      expect(echoed.map((e) => [e.method, e.path, e.agent, e.topic, e.command, e.request_id])).toEqual([
        ['POST', '/users', 'cat', null, null, null],
        ['POST', '/exec', 'cat', 'file:n', '/info', 'r9'],
        ['DELETE', '/users/cat', 'cat', null, null, null],
      ]);
    } finally {
      await c.system.shutdown();
      await closeServer(server);
    }
  });
});
