import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { ManualClock, StreamReader, agentWithWebhook, postWebhook } from './helpers.js';

let app: TestApp;
const clock = new ManualClock();
const readers: StreamReader[] = [];
const open = async (agent?: string) => {
  const r = await StreamReader.open(app.port, agent);
  readers.push(r);
  return r;
};
beforeAll(async () => { app = await startApp({ clock }); });
afterAll(async () => {
  for (const r of readers) r.close();
  await app.close();
});

describe('GET /events/stream (spec §4.5, §6; behaviour.md §9.8)', () => {
  it('when X-Agent-Id is missing or blank, then 400 X-Agent-Id header required', async () => {
    for (const h of [undefined, '   ']) {
      const r = await open(h);
      await r.waitEnd();
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body)).toEqual({ error: 'X-Agent-Id header required' });
    }
  });

  it.each(['nobody', '..', 'bad id!'])('when the agent %p is not registered, then 401 Unknown agent: <id>', async (id) => {
    const r = await open(id);
    await r.waitEnd();
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body)).toEqual({ error: `Unknown agent: ${id}` });
  });

  it('when a stream opens, then 200 SSE headers and a ready event with agent_id come first', async () => {
    await agentWithWebhook(app.base, 's1');
    const r = await open('s1');
    await r.count('ready', 1);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers['x-accel-buffering']).toBe('no');
    expect(r.headers['access-control-allow-origin']).toBe('*');
    expect(r.events[0]).toEqual({ event: 'ready', data: JSON.stringify({ agent_id: 's1' }) });
    expect(r.body.startsWith('event: ready\ndata: {"agent_id":"s1"}\n\n')).toBe(true);
  });

  it('when events are posted before and after the stream opens, then only the later ones arrive, with exactly the six fields', async () => {
    const { path } = await agentWithWebhook(app.base, 's2');
    const before = await postWebhook(app.base, path, 'before the stream');
    const r = await open('s2');
    await r.count('ready', 1);
    const after = await postWebhook(app.base, path, 'after the stream\nsecond line');
    const [ev] = await r.count('event', 1);
    expect(Object.keys(ev).sort()).toEqual(['agentId', 'id', 'receivedAt', 'source', 'status', 'text']);
    expect(ev).toEqual({ id: after.body.event_id, agentId: 's2', receivedAt: '2025-06-01T10:00:00.000Z', source: 'local-webhook', text: 'after the stream\nsecond line', status: 'pending' });
    expect(r.named('event').map((e) => e.id)).not.toContain(before.body.event_id);
  });

  it('when two streams are open, then both receive each event, in order; other agents see nothing', async () => {
    const { path } = await agentWithWebhook(app.base, 's3');
    await agentWithWebhook(app.base, 's3other');
    const a = await open('s3');
    const b = await open('s3');
    const other = await open('s3other');
    await Promise.all([a.count('ready', 1), b.count('ready', 1), other.count('ready', 1)]);
    const ids: string[] = [];
    for (const t of ['one', 'two', 'three']) ids.push((await postWebhook(app.base, path, t)).body.event_id);
    expect((await a.count('event', 3)).map((e) => e.id)).toEqual(ids);
    expect((await b.count('event', 3)).map((e) => e.id)).toEqual(ids);
    expect(other.named('event')).toEqual([]);
  });

  it('when an event is delivered on a stream, then it is still pending (delivery never acknowledges)', async () => {
    const { path } = await agentWithWebhook(app.base, 's4');
    const r = await open('s4');
    await r.count('ready', 1);
    const id = (await postWebhook(app.base, path, 'notify only')).body.event_id;
    await r.count('event', 1);
    const read = await app.client('s4').exec('event', `/events.read ${id}`);
    expect(read.body).toContain('status: pending');
  });

  it('when 15 s pass on the clock, then every open stream gets a ping {t}', async () => {
    await agentWithWebhook(app.base, 's5');
    const r = await open('s5');
    await r.count('ready', 1);
    clock.advance(14999);
    clock.advance(1);
    const [p1] = await r.count('ping', 1);
    expect(p1).toEqual({ t: new Date(clock.now()).toISOString() });
    clock.advance(15000);
    const pings = await r.count('ping', 2);
    expect(pings[1]).toEqual({ t: new Date(clock.now()).toISOString() });
  });

  it('when 16 streams are open, then the 17th gets 429 and a slot frees when one closes', async () => {
    await agentWithWebhook(app.base, 's6');
    const sixteen = await Promise.all(Array.from({ length: 16 }, () => open('s6')));
    await Promise.all(sixteen.map((r) => r.count('ready', 1)));
    const extra = await open('s6');
    await extra.waitEnd();
    expect(extra.status).toBe(429);
    expect(JSON.parse(extra.body)).toEqual({ error: 'Too many event streams for agent s6 (max 16)' });
    sixteen[0].close();
    let again: StreamReader;
    for (;;) {
      again = await open('s6');
      if (again.status === 200) break;
      await again.waitEnd(); // the server may not have seen the close yet
    }
    await again.count('ready', 1);
  });

  it('when the agent is deleted, then its open streams end and the timers stop', async () => {
    await agentWithWebhook(app.base, 's7');
    const a = await open('s7');
    const b = await open('s7');
    await Promise.all([a.count('ready', 1), b.count('ready', 1)]);
    const timers = clock.pending();
    await call(app.base, 'DELETE', '/agents/s7');
    await Promise.all([a.waitEnd(), b.waitEnd()]);
    expect(clock.pending()).toBe(timers - 2);
  });
});

describe('shutdown (behaviour.md §1.1: streams end)', () => {
  it('when the daemon shuts down, then open streams end', async () => {
    const own = await startApp();
    await agentWithWebhook(own.base, 'bye');
    const r = await StreamReader.open(own.port, 'bye');
    await r.count('ready', 1);
    await own.close();
    await r.waitEnd();
    expect(r.ended).toBe(true);
  });
});
