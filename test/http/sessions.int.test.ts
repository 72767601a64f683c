import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
  await call(t.base, 'POST', '/agents', { body: { agent_id: 'leo' } });
});
afterAll(async () => { await t.close(); });

describe('POST /sessions (spec §4.6; behaviour.md §9.9)', () => {
  it.each([
    [{}, 400, 'agent_id required'],
    [{ topic: 'main' }, 400, 'agent_id required'],
    [{ agent_id: 'ghost', topic: 'main' }, 401, 'Unknown agent: ghost'],
    [{ agent_id: '../x', topic: 'main' }, 401, 'Unknown agent: ../x'],
    [{ agent_id: 'leo' }, 400, 'topic required'],
    [{ agent_id: 'leo', topic: 'a b' }, 400, 'Invalid topic: a b'],
    [{ agent_id: 'leo', topic: 'app:' }, 400, 'Invalid topic: app:'],
  ])('when the body is %j, then %i %s', async (body, status, error) => {
    const r = await call(t.base, 'POST', '/sessions', { body });
    expect(r.status).toBe(status);
    expect(r.body).toEqual({ error });
  });

  it('when a session is opened, then created is true once and false after; the topic is canonical (trimmed)', async () => {
    const a = await call(t.base, 'POST', '/sessions', { body: { agent_id: 'leo', topic: '  app:weather:seoul ' } });
    expect(a.body).toEqual({ agent_id: 'leo', topic: 'app:weather:seoul', topic_type: 'app', created: true });
    const b = await call(t.base, 'POST', '/sessions', { body: { agent_id: 'leo', topic: 'app:weather:seoul' } });
    expect(b.body.created).toBe(false);
  });

  it.each([['main', 'tab'], ['event', 'hub'], ['bash:build', 'bash'], ['System', 'tab'], ['research.v2', 'tab']])('topic %s has topic_type %s', async (topic, type) => {
    const r = await call(t.base, 'POST', '/sessions', { body: { agent_id: 'leo', topic } });
    expect(r.body.topic_type).toBe(type);
  });
});

describe('GET /sessions', () => {
  it('lists sessions with exactly the spec fields, sorted, and filters by agent_id', async () => {
    const r = await call(t.base, 'GET', '/sessions?agent_id=leo');
    expect(r.status).toBe(200);
    const topics = r.body.sessions.map((s: { topic: string }) => s.topic);
    expect(topics).toEqual([...topics].sort());
    for (const s of r.body.sessions) {
      expect(Object.keys(s).sort()).toEqual(['agent_id', 'doc', 'executing', 'queue_length', 'topic', 'topic_type']);
      expect(s).toMatchObject({ agent_id: 'leo', executing: false, queue_length: 0, doc: null });
    }
    expect((await call(t.base, 'GET', '/sessions?agent_id=nobody')).body).toEqual({ sessions: [] });
    expect((await call(t.base, 'GET', '/sessions')).body.sessions.length).toBe(r.body.sessions.length);
  });
});

describe('DELETE /sessions/{agent_id}/{topic}', () => {
  it('when the path has no topic part, then 400 Expected /sessions/:agent_id/:topic', async () => {
    const r = await call(t.base, 'DELETE', '/sessions/leo');
    expect(r).toMatchObject({ status: 400, body: { error: 'Expected /sessions/:agent_id/:topic' } });
  });

  it('when the topic does not parse, then 400 Invalid topic', async () => {
    const r = await call(t.base, 'DELETE', '/sessions/leo/a%20b');
    expect(r).toMatchObject({ status: 400, body: { error: 'Invalid topic: a b' } });
  });

  it('when the session exists (percent-encoded topic), then deleted true, and false the second time', async () => {
    const r = await call(t.base, 'DELETE', '/sessions/leo/app%3Aweather%3Aseoul');
    expect(r.body).toEqual({ agent_id: 'leo', topic: 'app:weather:seoul', deleted: true });
    const again = await call(t.base, 'DELETE', '/sessions/leo/app:weather:seoul');
    expect(again.body).toEqual({ agent_id: 'leo', topic: 'app:weather:seoul', deleted: false });
  });

  it('when the agent is unknown, then deleted false', async () => {
    expect((await call(t.base, 'DELETE', '/sessions/ghost/main')).body).toEqual({ agent_id: 'ghost', topic: 'main', deleted: false });
  });

  it('when a session is deleted, then its variables are gone and /health counts drop', async () => {
    const c = t.client('leo');
    await c.exec('scratch', '/set {a} = "1"');
    const before = (await call(t.base, 'GET', '/health')).body.sessions;
    await call(t.base, 'DELETE', '/sessions/leo/scratch');
    expect((await call(t.base, 'GET', '/health')).body.sessions).toBe(before - 1);
    expect((await c.exec('scratch', '/set')).body).toContain('No variables in scope.');
  });
});
