import { describe, expect, it } from '@jest/globals';
import { createActor, fromPromise, SimulatedClock, type AnyActorRef } from 'xstate';
import type { TopicRef } from '../../src/domain/topic.js';
import { agentMachine, type AgentOutcome } from '../../src/machines/agent.js';
import { capabilityLogic } from '../../src/machines/capability.js';
import { capabilityShelfMachine } from '../../src/machines/capabilityShelf.js';
import { agentShelfMachine, agentsOf } from '../../src/machines/agentShelf.js';
import { daemonMachine } from '../../src/machines/daemon.js';
import { topicQueueMachine } from '../../src/machines/topicQueue.js';

const ref = (topic: string): TopicRef => ({ topic, type: 'tab', name: topic });
const profile = (id: string, home: string) => ({ id, home, allowedPaths: [], createdAt: '2026-01-01T00:00:00.000Z' });
const topicInput = (topic: string) => ({ agentId: 'leo', ref: ref(topic), maxWaiting: 5, waitMs: 120000, now: 0 });

/** A daemon root with one agent; the cascade resolves when the test says so. */
function tree() {
  const clock = new SimulatedClock();
  const errors: string[] = [];
  let finishCascade: (counts: Record<string, number>) => void = () => undefined;
  const cascades: Array<{ agentId: string; counts: Record<string, number> }> = [];
  const topic = topicQueueMachine.provide({ actions: { runTicket: () => undefined, disposeSession: () => undefined } });
  const agent = agentMachine.provide({
    actors: {
      topic,
      capabilityShelf: capabilityShelfMachine.provide({ actors: { child: capabilityLogic(clock) } }),
      cascade: fromPromise(({ input }) => {
        cascades.push(input);
        return new Promise((resolve) => { finishCascade = (extra) => resolve({ ...input.counts, ...extra }); });
      }),
    },
    actions: { reportChildError: (_a, { childId }) => { errors.push(childId); } },
  });
  const root = createActor(daemonMachine.provide({ actors: { child: agentShelfMachine.provide({ actors: { child: agent } }) } }), { clock }).start();
  root.send({ type: 'agent.spawn', profile: profile('leo', '/h'), registered: true });
  const leo = root.system.get('agent:leo') as AnyActorRef;
  return { root, leo, clock, errors, cascades, finish: (extra: Record<string, number> = {}) => finishCascade(extra), ids: () => Object.keys(root.system.getAll()).sort() };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('agent lifecycle (machines/agent.ts table)', () => {
  it('when an agent is spawned, then it is active under the root with system id agent:<id>; spawning it again changes nothing', () => {
    const t = tree();
    t.root.send({ type: 'agent.spawn', profile: profile('leo', '/other'), registered: true });
    expect(t.leo.getSnapshot()).toMatchObject({ value: { active: 'ready' }, context: { profile: { id: 'leo', home: '/h' } } });
    expect(t.ids()).toEqual(['agent:leo']);
  });

  it('when topics, a capability and the webhook token open, then they are children with the system ids of behaviour.md §13.3 (idempotent)', () => {
    const t = tree();
    t.leo.send({ type: 'topic.wake', ref: ref('main'), input: topicInput('main') });
    t.leo.send({ type: 'topic.wake', ref: ref('main'), input: topicInput('main') });
    t.leo.send({ type: 'topic.wake', ref: ref('app:x'), input: topicInput('app:x') });
    t.leo.send({ type: 'cap.open', input: { tokenId: 'cap_a', singleUse: false, expiresAt: 60000 } });
    t.leo.send({ type: 'webhook.open', fingerprint: null });
    expect(t.ids()).toEqual(['agent:leo', 'cap:cap_a', 'topic:leo/app:x', 'topic:leo/main', 'webhook:leo']);
    // The capability sits on the shelf of its token id's first character (machines/capabilityShelf.ts).
    expect(Object.keys(t.leo.getSnapshot().children).sort()).toEqual(['caps:a', 'topic:app:x', 'topic:main', 'webhook']);
    const shelf = t.leo.getSnapshot().children['caps:a'] as AnyActorRef;
    expect(Object.keys(shelf.getSnapshot().children)).toEqual(['cap:cap_a']);
  });

  it('when a topic is opened without a command, then it is open (no actor yet) until a command wakes it with its creation time', () => {
    const t = tree();
    t.leo.send({ type: 'topic.open', ref: ref('idle'), at: 7 });
    t.leo.send({ type: 'topic.open', ref: ref('idle'), at: 9 });
    expect([...t.leo.getSnapshot().context.topics.entries()]).toEqual([['idle', { ref: ref('idle'), createdAt: 7 }]]);
    expect(t.ids()).toEqual(['agent:leo']);
    t.leo.send({ type: 'topic.wake', ref: ref('idle'), input: { ...topicInput('idle'), now: 100 } });
    expect(t.ids()).toEqual(['agent:leo', 'topic:leo/idle']);
    expect([...t.leo.getSnapshot().context.topics.keys()]).toEqual(['idle']);
    expect((t.root.system.get('topic:leo/idle') as AnyActorRef).getSnapshot().context.session.createdAt).toBe(7);
    // Opening a running topic leaves it alone.
    t.leo.send({ type: 'topic.open', ref: ref('idle'), at: 11 });
    expect(t.leo.getSnapshot().context.topics.get('idle')?.createdAt).toBe(7);
  });

  it('when a topic without an actor is closed, then it is no longer open; a prototype name is a topic like any other', () => {
    const t = tree();
    t.leo.send({ type: 'topic.open', ref: ref('constructor'), at: 1 });
    t.leo.send({ type: 'topic.open', ref: ref('b'), at: 1 });
    t.leo.send({ type: 'topic.close', topic: 'constructor', at: 2 });
    expect([...t.leo.getSnapshot().context.topics.keys()]).toEqual(['b']);
  });

  it('when a running quiet topic is closed, then its actor ends and the topic is no longer open; a busy one stays open with a fresh session', () => {
    const t = tree();
    t.leo.send({ type: 'topic.wake', ref: ref('quiet'), input: topicInput('quiet') });
    t.leo.send({ type: 'topic.wake', ref: ref('busy'), input: topicInput('busy') });
    const busy = t.root.system.get('topic:leo/busy') as AnyActorRef;
    busy.send({ type: 'command.arrive', ticket: { cmd: '/x', requestId: null, via: 'exec', queuedAt: 0, startedAt: null } });
    t.leo.send({ type: 'topic.close', topic: 'quiet', at: 3 });
    t.leo.send({ type: 'topic.close', topic: 'busy', at: 3 });
    expect([...t.leo.getSnapshot().context.topics.keys()]).toEqual(['busy']);
    expect(t.ids()).toEqual(['agent:leo', 'topic:leo/busy']);
    expect(busy.getSnapshot().context.session.createdAt).toBe(3);
  });

  it('when a child reaches a final state (a capability expires, a quiet topic closes), then it leaves the tree', () => {
    const t = tree();
    t.leo.send({ type: 'topic.wake', ref: ref('main'), input: topicInput('main') });
    t.leo.send({ type: 'cap.open', input: { tokenId: 'cap_a', singleUse: false, expiresAt: 1000 } });
    t.clock.increment(1000);
    (t.root.system.get('topic:leo/main') as AnyActorRef).send({ type: 'session.close', at: 1 });
    expect(t.ids()).toEqual(['agent:leo']);
    expect(t.leo.getSnapshot().value).toEqual({ active: 'ready' });
  });

  it('when active receives agent.delete, then it goes deleting, tells its topics and capabilities, runs the cascade, and ends deleted with its counts; the root drops it', async () => {
    const t = tree();
    t.leo.send({ type: 'topic.wake', ref: ref('main'), input: topicInput('main') });
    t.leo.send({ type: 'cap.open', input: { tokenId: 'cap_a', singleUse: false, expiresAt: 60000 } });
    t.leo.send({ type: 'webhook.open', fingerprint: 'f'.repeat(64) });
    const cap = t.root.system.get('cap:cap_a') as AnyActorRef;
    t.leo.send({ type: 'agent.delete', at: 5 });
    expect(t.leo.getSnapshot().value).toBe('deleting');
    expect(cap.getSnapshot()).toMatchObject({ value: 'revoked', context: { revokedAt: 5 } });
    expect(t.cascades).toEqual([{ agentId: 'leo', counts: { disposed_sessions: 1, revoked_capabilities: 1 } }]);
    // Topics and capabilities are gone; the webhook token waits for the agent's end.
    expect(t.ids()).toEqual(['agent:leo', 'webhook:leo']);
    t.finish({ extra: 2 });
    await flush();
    expect(t.leo.getSnapshot().status).toBe('done');
    expect(t.leo.getSnapshot().output as AgentOutcome).toEqual({ ok: true, counts: { disposed_sessions: 1, revoked_capabilities: 1, extra: 2 } });
    expect(t.ids()).toEqual([]);
    expect(agentsOf(t.root)).toEqual([]);
  });

  it('when many capabilities are live, then they spread over shelves (never the agent itself), and agent.delete revokes every one', () => {
    const t = tree();
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const tokens = Array.from({ length: 300 }, (_, i) => `cap_${alphabet[i % 64]}${String(i).padStart(11, '0')}`);
    for (const tokenId of tokens) t.leo.send({ type: 'cap.open', input: { tokenId, singleUse: false, expiresAt: 60000 } });
    const kids = t.leo.getSnapshot().children as Record<string, AnyActorRef>;
    expect(Object.keys(kids).filter((k) => k.startsWith('caps:')).length).toBe(64);
    expect(Object.keys(kids).some((k) => k.startsWith('cap:'))).toBe(false);
    expect(t.ids().filter((id) => id.startsWith('cap:'))).toHaveLength(300);
    const caps = tokens.map((id) => t.root.system.get(`cap:${id}`) as AnyActorRef);
    t.leo.send({ type: 'agent.delete', at: 9 });
    expect(caps.every((c) => c.getSnapshot().value === 'revoked')).toBe(true);
    expect(t.ids().filter((id) => id.startsWith('cap:'))).toEqual([]);
  });

  it('when many agents are spawned, then they spread over the shelves of the root (ids with one prefix too), each once, and each can be looked up', () => {
    const t = tree();
    for (let i = 0; i < 300; i++) t.root.send({ type: 'agent.spawn', profile: profile(`a${i}`, `/h${i}`), registered: true });
    t.root.send({ type: 'agent.spawn', profile: profile('a7', '/other'), registered: true });
    const shelves = Object.keys(t.root.getSnapshot().children);
    expect(shelves.length).toBeGreaterThan(32);
    expect(shelves.every((id) => id.startsWith('agents:'))).toBe(true);
    const ids = agentsOf(t.root).map(([id]) => id);
    expect(ids).toHaveLength(301);
    expect(new Set(ids).size).toBe(301);
    expect((t.root.system.get('agent:a7') as AnyActorRef).getSnapshot().context.profile.home).toBe('/h7');
  });

  it('when deleting receives agent.delete again, then nothing changes (one cascade)', () => {
    const t = tree();
    t.leo.send({ type: 'agent.delete', at: 5 });
    t.leo.send({ type: 'agent.delete', at: 6 });
    expect(t.cascades).toHaveLength(1);
  });

  it('when a child fails, then the agent reports it, stops that child and keeps working', () => {
    const t = tree();
    const broken = topicQueueMachine.provide({ actions: { runTicket: () => { throw new Error('bug'); }, disposeSession: () => undefined } });
    const agent = agentMachine.provide({ actors: { topic: broken }, actions: { reportChildError: (_a, { childId }) => { t.errors.push(childId); } } });
    const a = createActor(agent, { input: { profile: profile('solo', '/h'), registered: true } }).start();
    a.send({ type: 'topic.wake', ref: ref('main'), input: topicInput('main') });
    const child = a.getSnapshot().children['topic:main'] as AnyActorRef;
    child.send({ type: 'command.arrive', ticket: { cmd: '/x', requestId: null, via: 'exec', queuedAt: 0, startedAt: null } });
    expect(t.errors).toEqual(['topic:main']);
    expect(a.getSnapshot().value).toEqual({ active: 'ready' });
    expect(Object.keys(a.getSnapshot().children)).toEqual([]);
  });
});
