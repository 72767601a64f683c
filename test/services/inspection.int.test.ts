import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { InspectionEvent } from 'xstate';
import type { InspectorMessage, LiveActor } from '../../src/services/inspection.js';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { watchLiveMessages } from '../helpers/liveMessages.js';

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t?.close(); });

const systemIdOf = (e: InspectionEvent) => (e.actorRef as { systemId?: string }).systemId;
const until = async (ok: () => boolean) => { for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10)); };

describe('root-level inspection (architecture.md, behaviour.md §13)', () => {
  it('when an observer subscribes at the root, then it sees agent and topic actors and their queue events without touching machines', async () => {
    const seen: InspectionEvent[] = [];
    const off = t.c.system.inspection.observe((e) => seen.push(e));
    await call(t.base, 'POST', '/agents', { body: { agent_id: 'spy' } });
    await t.client('spy').exec('watched', '/help');
    off();
    const ids = new Set(seen.map(systemIdOf).filter(Boolean));
    expect(ids).toContain('agent:spy');
    expect(ids).toContain('topic:spy/watched');
    const eventTypes = seen.filter((e) => e.type === '@xstate.event').map((e) => (e as { event: { type: string } }).event.type);
    expect(eventTypes).toEqual(expect.arrayContaining(['agent.spawn', 'topic.wake', 'command.arrive', 'command.done']));
    const count = seen.length;
    await t.client('spy').exec('watched', '/help');
    expect(seen.length).toBe(count);
  });

  it('a throwing observer never breaks the actor it watches, and is reported once (not per event)', async () => {
    // The warning is captured, not printed: npm test output stays clean.
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      let calls = 0;
      const off = t.c.system.inspection.observe(() => { calls++; throw new Error('observer bug'); });
      const r = await t.client('spy').exec('watched', '/info');
      await t.client('spy').exec('watched', '/info');
      off();
      expect(r.head?.ok).toBe(true);
      expect(calls).toBeGreaterThan(1);
      expect(warn.mock.calls).toEqual([['inspection observer failed: observer bug']]);
    } finally {
      warn.mockRestore();
    }
  });
});

describe('the registry of live actors (behaviour.md §13.2 system ids)', () => {
  it('when two agents have topics, capabilities and webhooks, then the whole tree is read from the registry: ids, states, queue contents', async () => {
    const caps: string[] = [];
    for (const id of ['ann', 'bob']) {
      const r = await call(t.base, 'POST', '/agents', { body: { agent_id: id, webhook: true, capability: { verbs: ['GET'], ttl_ms: 600000 } } });
      caps.push(r.body.capability.token_id);
      await t.client(id).exec('main', '/info');
    }
    const running = t.client('ann').exec('work', '/exec sleep 30');
    await until(() => t.c.system.topicStatuses('ann').some((s) => s.session.ref.topic === 'work' && s.executing));
    const waiting = t.client('ann').exec('work', '/set {note} = "second line hidden"\n{more} = "body text"');
    await until(() => t.c.system.topicStatuses('ann').some((s) => s.queueLength === 1));

    const live = t.c.system.inspection.liveActors(Date.now());
    const byId = new Map<string, LiveActor>(live.map((a) => [a.actor, a]));
    expect([...byId.keys()]).toEqual(expect.arrayContaining([
      'agent:ann', 'agent:bob', 'topic:ann/main', 'topic:ann/work', 'topic:bob/main',
      `cap:${caps[0]}`, `cap:${caps[1]}`, 'webhook:ann', 'webhook:bob',
    ]));
    expect(byId.get('agent:ann')).toMatchObject({ machine: 'agent', state: { active: 'ready' }, detail: { agent_id: 'ann' } });
    expect(byId.get(`cap:${caps[1]}`)).toMatchObject({ machine: 'capability', state: 'live', detail: { token_id: caps[1] } });
    expect(byId.get('webhook:bob')).toMatchObject({ machine: 'webhookToken', state: { exists: 'idle' } });
    expect(byId.get('topic:bob/main')).toMatchObject({ machine: 'topicQueue', state: 'idle', detail: { running: null, waiting: [] } });
    const work = byId.get('topic:ann/work') as LiveActor;
    expect(work.state).toBe('executing');
    expect(work.detail.running).toMatchObject({ ticket: 't1', cmd: '/exec sleep 30', via: 'exec', request_id: null });
    expect(work.detail.waiting).toEqual([expect.objectContaining({ ticket: 't2', cmd: '/set {note} = "se…"', via: 'exec' })]);
    expect(JSON.stringify(live)).not.toContain('hidden');
    expect(JSON.stringify(live)).not.toContain('body text');

    expect((await call(t.base, 'DELETE', '/sessions/ann/work')).status).toBe(200);
    expect((await running).head?.code).toBe('CONFLICT');
    expect((await waiting).head?.ok).toBe(true);
  });

  it('when an agent is deleted, then its subtree leaves the registry', async () => {
    await call(t.base, 'DELETE', '/agents/bob');
    const ids = t.c.system.inspection.liveActors(Date.now()).map((a) => a.actor);
    expect(ids.filter((id) => id.includes('bob'))).toEqual([]);
    expect(ids).toContain('agent:ann');
  });
});

describe('the redacting serialiser (behaviour.md §13.3–13.4)', () => {
  it('when a session mints a capability, rotates a webhook and sets secrets, then no message carries any of them', async () => {
    const messages: InspectorMessage[] = [];
    const off = watchLiveMessages(t.c.system, messages);
    const reg = await call(t.base, 'POST', '/agents', { body: { agent_id: 'sec', webhook: true } });
    const minted = await call(t.base, 'POST', '/capabilities', { body: { agent_id: 'sec', verbs: ['GET', 'PUT'], ttl_ms: 60000 } });
    const rotated = await call(t.base, 'POST', '/agents/sec/webhook');
    const c = t.client('sec');
    await c.exec('main', '/set $X = "s3cret"');
    await c.exec('main', '/set {v} = "sess-value-77"');
    await c.exec('main', '/webhook');
    await c.exec('main', '/write ~/note.txt\nbody-secret-88');
    const hook = await fetch(rotated.body.webhook_url, { method: 'POST', body: 'event-text-99' });
    expect(hook.status).toBe(202);
    await c.exec('main', '/events');
    await call(t.base, 'DELETE', `/capabilities/${minted.body.token_id}`);
    off();

    const text = JSON.stringify(messages);
    const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
    for (const secret of [minted.body.secret, tokenOf(reg.body.webhook_url), tokenOf(rotated.body.webhook_url), 's3cret', 'sess-value-77', 'body-secret-88', 'event-text-99', '/webhook/wh_']) {
      expect(text).not.toContain(secret);
    }
    // The feed did carry the session: actors, transitions and commands with their (masked) first lines.
    expect(messages.some((m) => m.type === 'actor' && m.actor === 'agent:sec' && m.event === 'created')).toBe(true);
    expect(messages.some((m) => m.type === 'actor' && m.actor === `cap:${minted.body.token_id}` && m.event === 'stopped')).toBe(true);
    expect(messages.some((m) => m.type === 'transition' && m.actor === `cap:${minted.body.token_id}` && m.to === 'revoked' && m.event === 'capability.revoke')).toBe(true);
    const cmds = messages.filter((m): m is Extract<InspectorMessage, { type: 'command' }> => m.type === 'command');
    expect(cmds.filter((m) => m.phase === 'finished').map((m) => m.cmd)).toEqual([
      '/set $X = "s3…"', '/set {v} = "se…"', '/webhook', '/write ~/note.txt', '/events',
    ]);
    expect(cmds.find((m) => m.phase === 'finished')).toMatchObject({ agent_id: 'sec', topic: 'main', via: 'exec', ok: true, code: null });
  });
});
