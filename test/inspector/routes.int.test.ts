import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { topicQueueMachine } from '../../src/machines/topicQueue.js';
import { shellMachine } from '../../src/machines/shell.js';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => { t = await startApp({ queue: { max: 1, waitMs: 120000 } }); });
afterAll(async () => { await t?.close(); });

const until = async (ok: () => boolean) => { for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10)); };

describe('GET /inspect and its assets (behaviour.md §13.1)', () => {
  it('when the page is fetched, then it is HTML that loads only its own assets, under a CSP that forbids other origins', async () => {
    const r = await raw(t.port, { path: '/inspect' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['content-security-policy']).toContain("default-src 'none'");
    expect(r.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(r.headers['access-control-allow-origin']).toBe('*');
    const refs = [...r.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    // Its own assets, and the link that downloads its bundle (behaviour.md §13.8): nothing of another origin.
    expect(refs).toEqual(['data:,', '/inspect/assets/style.css', '/inspect/assets/app.js', '/inspect/export']);
  });

  it.each([
    ['app.js', 'text/javascript; charset=utf-8', 'connect()'],
    ['style.css', 'text/css; charset=utf-8', '.topic'],
    ['diagram.js', 'text/javascript; charset=utf-8', "from '/inspect/assets/vendor/dagre.js'"],
    ['vendor/dagre.js', 'text/javascript; charset=utf-8', 'layout'],
  ])('when /inspect/assets/%s is fetched, then it is served as %s from the package', async (name, type, contains) => {
    const r = await raw(t.port, { path: `/inspect/assets/${name}` });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe(type);
    expect(r.body).toContain(contains);
  });

  it('the page and its scripts name no other host: nothing is fetched from a CDN or the network', async () => {
    for (const name of ['app.js', 'model.js', 'view.js', 'diagram.js', 'dom.js', 'timeline.js', 'style.css']) {
      const body = (await raw(t.port, { path: `/inspect/assets/${name}` })).body;
      // The SVG namespace is an identifier, not a request.
      expect(body.replaceAll('http://www.w3.org/2000/svg', '')).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    }
  });

  it.each([
    ['/inspect/assets/nope.js'],
    ['/inspect/assets/..%2F..%2Fpackage.json'],
    ['/inspect/assets/vendor/../../../package.json'],
    ['/inspect/assets/index.html'],
  ])('when %s is asked for, then 404 Not found (only the files of the page are served)', async (path) => {
    const r = await raw(t.port, { path });
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body).error).toMatch(/^Not found: GET \/inspect\/assets\//);
  });

  it.each(['/inspect', '/inspect/state', '/inspect/machines', '/inspect/assets/app.js'])('when POST %s, then 405 with Allow: GET', async (path) => {
    const r = await call(t.base, 'POST', path);
    expect(r.status).toBe(405);
    expect(r.body).toEqual({ error: `Method not allowed: POST ${path}` });
    expect(r.headers.get('allow')).toBe('GET');
  });
});

describe('Host/Origin guard on the inspector routes (behaviour.md §9.2, §13.1)', () => {
  it.each(['/inspect', '/inspect/state', '/inspect/machines', '/inspect/assets/app.js'])('when %s is asked with a foreign Host or Origin, then 403 and no data', async (path) => {
    const host = await raw(t.port, { path, headers: { Host: 'evil.example:3923' } });
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body)).toEqual({ error: 'Forbidden host: evil.example:3923' });
    const origin = await raw(t.port, { path, headers: { Origin: 'http://evil.example' } });
    expect(origin.status).toBe(403);
    expect(JSON.parse(origin.body)).toEqual({ error: 'Forbidden origin: http://evil.example' });
    const ok = await raw(t.port, { path, headers: { Host: `localhost:${t.port}`, Origin: `http://localhost:${t.port}` } });
    expect(ok.status).toBe(200);
  });
});

describe('GET /describe (behaviour.md §13.1)', () => {
  it('advertises the inspector with its WebSocket and state paths', async () => {
    const r = await call(t.base, 'GET', '/describe');
    expect(r.body.capabilities.inspector).toEqual({ ws: '/inspect/ws', state: '/inspect/state' });
  });
});

describe('GET /inspect/state (behaviour.md §13.2)', () => {
  it('when a topic runs one command, one waits and one is refused, then the snapshot shows each where it is', async () => {
    const reg = await call(t.base, 'POST', '/agents', { body: { agent_id: 'leo', webhook: true, capability: { verbs: ['GET'], ttl_ms: 600000, path_prefix: 'docs' } } });
    await t.client('leo').exec('main', '/info');
    const running = t.client('leo').exec('work', '/exec sleep 30', 'r-run');
    await until(() => t.c.system.topicStatuses('leo').some((s) => s.session.ref.topic === 'work' && s.executing));
    const waiting = t.client('leo').exec('work', '/set {v} = "value-hidden"\nbody-hidden');
    await until(() => t.c.system.topicStatuses('leo').some((s) => s.queueLength === 1));
    const full = await t.client('leo').exec('work', '/info');
    expect(full.status).toBe(429);

    const r = await call(t.base, 'GET', '/inspect/state');
    expect(r.status).toBe(200);
    const s = r.body;
    expect(Object.keys(s)).toEqual(['at', 'version', 'uptime_ms', 'agents']);
    expect(s.version).toBe(t.c.system.services.info.version);
    expect(Number.isNaN(Date.parse(s.at))).toBe(false);
    const leo = s.agents.find((a: { agent_id: string }) => a.agent_id === 'leo');
    expect(leo).toMatchObject({
      agent_id: 'leo', home: t.c.system.agentHome('leo'), webhook: true, events: { pending: 0, acked: 0, streams: 0 },
      capabilities: [{ token_id: reg.body.capability.token_id, path_prefix: 'docs', verbs: ['GET'], state: 'live', single_use: false, expires_at: reg.body.capability.expires_at }],
      installs: [],
    });
    expect(leo.topics.map((x: { topic: string }) => x.topic)).toEqual(['main', 'work']);
    const [main, work] = leo.topics;
    expect(main).toMatchObject({ topic: 'main', topic_type: 'tab', state: 'idle', running: null, waiting: [], shell: null, doc: null });
    expect(main.recent).toEqual([expect.objectContaining({ ticket: 't1', cmd: '/info', via: 'exec', ok: true, code: null, queued_ms: 0 })]);
    expect(work.state).toBe('executing');
    expect(work.running).toMatchObject({ ticket: 't1', cmd: '/exec sleep 30', request_id: 'r-run', via: 'exec' });
    expect(work.running.elapsed_ms).toBeGreaterThanOrEqual(0);
    expect(work.waiting).toEqual([expect.objectContaining({ ticket: 't2', cmd: '/set {v} = "va…"', request_id: null, via: 'exec' })]);
    expect(work.waiting[0].waited_ms + work.waiting[0].expires_in_ms).toBe(120000);
    expect(work.recent).toEqual([expect.objectContaining({ ticket: 't3', cmd: '/info', ok: false, code: 'QUEUE_FULL', duration_ms: 0 })]);
    expect(r.body).not.toHaveProperty('secret');
    expect(JSON.stringify(s)).not.toContain('hidden');
    expect(JSON.stringify(s)).not.toContain(reg.body.capability.secret);

    expect((await call(t.base, 'DELETE', '/sessions/leo/work')).status).toBe(200);
    await running;
    await waiting;
  });
});

describe('GET /inspect/state: shells (behaviour.md §13.2)', () => {
  it('when a bash topic has a shell, then its topic shows state, pid and cwd; a tab topic shows null', async () => {
    await call(t.base, 'POST', '/agents', { body: { agent_id: 'sam' } });
    const c = t.client('sam');
    await c.exec('bash:b', '/exec cd /tmp');
    const pid = Number((await c.exec('bash:b', '/exec echo $$')).body?.split('\n').pop());
    await c.exec('main', '/info');
    const r = await call(t.base, 'GET', '/inspect/state');
    const sam = r.body.agents.find((a: { agent_id: string }) => a.agent_id === 'sam');
    const topic = (name: string) => sam.topics.find((x: { topic: string }) => x.topic === name);
    expect(topic('bash:b').shell).toEqual({ state: 'ready', pid, cwd: '/tmp' });
    expect(topic('main').shell).toBeNull();
  });
});

describe('GET /inspect/machines (behaviour.md §13.1)', () => {
  it('lists every machine of the tree with the states and transitions of its definition', async () => {
    const r = await call(t.base, 'GET', '/inspect/machines');
    expect(r.status).toBe(200);
    // `install` and `shell` come from the install and bash features.
    expect(Object.keys(r.body).sort()).toEqual(['agent', 'capability', 'install', 'shell', 'topicQueue', 'webhookToken']);
    const q = r.body.topicQueue;
    // Read from the definition: the same states the machine declares, no hand-kept list.
    expect(q.states.map((s: { id: string }) => s.id)).toEqual(Object.keys(topicQueueMachine.root.states));
    expect(q.initial).toBe('idle');
    expect(q.states.find((s: { id: string }) => s.id === 'closed').type).toBe('final');
    expect(q.transitions).toEqual(expect.arrayContaining([
      { source: 'idle', targets: ['executing'], event: 'command.arrive', guard: null },
      { source: 'executing', targets: ['idle'], event: 'command.done', guard: 'isRunning' },
      { source: 'executing', targets: [], event: 'command.arrive', guard: 'queueHasRoom' },
      { source: null, targets: ['closed'], event: 'agent.delete', guard: null },
    ]));
    expect(r.body.capability.transitions).toEqual(expect.arrayContaining([
      { source: 'live', targets: ['expired'], event: 'after ttlTimer', guard: 'ttlElapsed' },
      { source: 'live', targets: ['revoked'], event: 'capability.revoke', guard: null },
    ]));
    expect(r.body.webhookToken.transitions).toEqual(expect.arrayContaining([{ source: 'restore', targets: ['exists'], event: 'always', guard: 'hasToken' }]));
    expect(r.body.agent.states.map((s: { id: string }) => s.id)).toEqual(['boot', 'unregistered', 'registering', 'discarded', 'active', 'active.ready', 'active.persisting', 'deleting', 'deleted']);
    expect(r.body.shell.states.map((s: { id: string }) => s.id)).toEqual(Object.keys(shellMachine.root.states));
    expect(r.body.shell.initial).toBe('starting');
    expect(r.body.shell.transitions).toEqual(expect.arrayContaining([
      { source: 'ready', targets: ['running'], event: 'shell.run', guard: null },
      { source: 'running', targets: ['interrupting'], event: 'after execTimeout', guard: null },
      { source: null, targets: ['ended'], event: 'shell.close', guard: null },
    ]));
  });
});
