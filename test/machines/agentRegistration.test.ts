import { describe, expect, it } from '@jest/globals';
import { createActor, fromPromise, type AnyActorRef } from 'xstate';
import { agentMachine } from '../../src/machines/agent.js';
import { unregisteredProfile, type PersistInput, type PersistOutput, type RegisteredEvent } from '../../src/machines/agentRegistration.js';
import { topicQueueMachine } from '../../src/machines/topicQueue.js';

const profile = (id: string, home: string) => ({ id, home, allowedPaths: [], createdAt: '2026-01-01T00:00:00.000Z' });
const ref = (topic: string) => ({ topic, type: 'tab' as const, name: topic });

/** An agent actor whose `persist` resolves (or fails) when the test says, recording each input. */
function agent(registered: boolean) {
  const calls: PersistInput[] = [];
  const pending: Array<{ ok: (o: PersistOutput) => void; fail: (e: Error) => void }> = [];
  const persist = fromPromise<PersistOutput, PersistInput>(({ input }) => {
    calls.push(input);
    return new Promise((ok, fail) => pending.push({ ok, fail }));
  });
  const cascades: Array<Record<string, number>> = [];
  const topic = topicQueueMachine.provide({ actions: { runTicket: () => undefined, disposeSession: () => undefined } });
  const logic = agentMachine.provide({
    actors: { persist, topic, cascade: fromPromise(async ({ input }) => { cascades.push(input.counts); return input.counts; }) },
  });
  const actor = createActor(logic, { input: registered ? { profile: profile('leo', '/h'), registered: true } : { profile: unregisteredProfile('leo'), registered: false } }).start();
  const answers: RegisteredEvent[] = [];
  actor.on('agent.registered', (ev) => { answers.push(ev); });
  const store = (home: string, closeTopics = false) => pending.shift()?.ok({ profile: profile('leo', home), closeTopics, at: 7 });
  return { actor, calls, answers, cascades, store, fail: (msg: string) => pending.shift()?.fail(new Error(msg)) };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('agent registration (machines/agent.ts table, spec §4.3)', () => {
  it('when a new agent takes two registrations at once, then it stores them one at a time, the first answers created and the second updates', async () => {
    const t = agent(false);
    expect(t.actor.getSnapshot().value).toBe('unregistered');
    t.actor.send({ type: 'agent.register', fields: { agentId: 'leo', home: '/a' } });
    t.actor.send({ type: 'agent.register', fields: { agentId: 'leo', home: '/b' } });
    expect(t.actor.getSnapshot().value).toBe('registering');
    expect(t.actor.getSnapshot().context.taken).toBe(2);
    expect(t.calls).toEqual([{ existing: null, fields: { agentId: 'leo', home: '/a' } }]);
    t.store('/a');
    await flush();
    expect(t.calls[1]).toEqual({ existing: profile('leo', '/a'), fields: { agentId: 'leo', home: '/b' } });
    expect(t.actor.getSnapshot().value).toEqual({ active: 'persisting' });
    t.store('/b');
    await flush();
    expect(t.actor.getSnapshot().value).toEqual({ active: 'ready' });
    expect(t.answers.map((a) => [a.id, a.ok, a.ok && a.created, a.ok && a.profile.home])).toEqual([['reg-1', true, true, '/a'], ['reg-2', true, false, '/b']]);
    expect(t.actor.getSnapshot().context.profile.home).toBe('/b');
  });

  it('when the first registration of a new agent fails and none waits, then it answers the error and the actor ends (the id stays unknown)', async () => {
    const t = agent(false);
    t.actor.send({ type: 'agent.register', fields: { agentId: 'leo' } });
    t.fail('disk full');
    await flush();
    expect(t.answers).toEqual([expect.objectContaining({ id: 'reg-1', ok: false, error: new Error('disk full') })]);
    expect(t.actor.getSnapshot().status).toBe('done');
    expect(t.actor.getSnapshot().value).toBe('discarded');
  });

  it('when the first registration fails while another waits, then the next one is stored and creates the agent', async () => {
    const t = agent(false);
    t.actor.send({ type: 'agent.register', fields: { agentId: 'leo', home: '/a' } });
    t.actor.send({ type: 'agent.register', fields: { agentId: 'leo', home: '/b' } });
    t.fail('no room');
    await flush();
    expect(t.calls[1]).toEqual({ existing: null, fields: { agentId: 'leo', home: '/b' } });
    t.store('/b');
    await flush();
    expect(t.answers.map((a) => [a.id, a.ok, a.ok && a.created])).toEqual([['reg-1', false, false], ['reg-2', true, true]]);
    expect(t.actor.getSnapshot().value).toEqual({ active: 'ready' });
  });

  it('when a stored registration changes the confinement, then every open topic closes', async () => {
    const t = agent(true);
    t.actor.send({ type: 'topic.open', ref: ref('main'), at: 1 });
    t.actor.send({ type: 'topic.open', ref: ref('other'), at: 1 });
    t.actor.send({ type: 'agent.register', fields: { agentId: 'leo', home: '/moved' } });
    t.store('/moved', true);
    await flush();
    expect([...t.actor.getSnapshot().context.topics.keys()]).toEqual([]);
    expect(t.answers[0]).toMatchObject({ ok: true, created: false });
  });

  it('when DELETE arrives while a registration is being stored, then it waits for that one, counts, and the queued registrations get the end', async () => {
    const t = agent(true);
    t.actor.send({ type: 'topic.open', ref: ref('main'), at: 1 });
    t.actor.send({ type: 'agent.register', fields: { agentId: 'leo', home: '/a' } });
    t.actor.send({ type: 'agent.delete', at: 3 });
    t.actor.send({ type: 'agent.register', fields: { agentId: 'leo', home: '/b' } });
    expect(t.actor.getSnapshot().value).toEqual({ active: 'persisting' });
    t.store('/a');
    await flush();
    expect(t.calls).toHaveLength(1);
    expect(t.cascades).toEqual([{ revoked_capabilities: 0, disposed_sessions: 1 }]);
    expect(t.actor.getSnapshot().status).toBe('done');
    expect(t.answers.map((a) => a.id)).toEqual(['reg-1']);
  });

  it('when a registration arrives while the agent is deleting, then it is taken (its id given) and answered by the end', () => {
    const t = agent(true);
    const held = fromPromise<Record<string, number>, { agentId: string; counts: Record<string, number> }>(() => new Promise(() => undefined));
    const a = createActor(agentMachine.provide({ actors: { cascade: held } }), { input: { profile: profile('leo', '/h'), registered: true } }).start();
    a.send({ type: 'agent.delete', at: 1 });
    a.send({ type: 'agent.register', fields: { agentId: 'leo' } });
    expect(a.getSnapshot().value).toBe('deleting');
    expect(a.getSnapshot().context.taken).toBe(1);
    expect(t.calls).toEqual([]);
    (a as AnyActorRef).stop();
  });
});
