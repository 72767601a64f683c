import { describe, expect, it } from '@jest/globals';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { getAdjacencyMap, getShortestPaths } from 'xstate/graph';
import { expiryId, topicQueueMachine, type QueueTicket, type RefusalReason, type TopicQueueEvent } from '../../src/machines/topicQueue.js';

/** A queue actor whose runs finish only when the test says so. */
function harness(opts: { max?: number; waitMs?: number } = {}) {
  const started: string[] = [];
  const refused: Array<{ id: string; reason: RefusalReason }> = [];
  const finishers = new Map<string, () => void>();
  const clock = new SimulatedClock();
  const machine = topicQueueMachine.provide({
    actions: {
      startTicket: (_a, { ticket }) => { started.push(ticket.id); },
      refuseTicket: (_a, { ticket, reason }) => { refused.push({ id: ticket.id, reason }); },
    },
    actors: {
      runCommand: fromPromise<void, { ticket: QueueTicket }>(({ input }) => new Promise<void>((resolve) => finishers.set(input.ticket.id, resolve))),
    },
  });
  const actor = createActor(machine, { input: { maxWaiting: opts.max ?? 5, waitMs: opts.waitMs ?? 120000 }, clock });
  actor.start();
  const flush = () => new Promise((r) => setImmediate(r));
  return {
    actor, started, refused, clock, flush,
    arrive: (id: string) => actor.send({ type: 'command.arrive', ticket: { id } }),
    tryRun: (id: string) => actor.send({ type: 'command.try', ticket: { id } }),
    leave: (id: string) => actor.send({ type: 'command.leave', ticketId: id }),
    async finish(id: string) { finishers.get(id)?.(); await flush(); },
    state: () => actor.getSnapshot().value,
    waiting: () => actor.getSnapshot().context.waiting.map((t) => t.id),
  };
}

describe('spec §3 topic command queue', () => {
  it('when a command arrives at an idle topic, then it starts executing', () => {
    const h = harness();
    h.arrive('a');
    expect(h.state()).toBe('executing');
    expect(h.started).toEqual(['a']);
  });

  it.each([0, 1, 2, 3, 4])('when a command arrives while executing with %i waiting, then the queue grows', (n) => {
    const h = harness();
    h.arrive('run');
    for (let i = 0; i < n; i++) h.arrive(`w${i}`);
    h.arrive('new');
    expect(h.state()).toBe('executing');
    expect(h.waiting()).toHaveLength(n + 1);
    expect(h.refused).toEqual([]);
  });

  it('when 5 commands are queued, then the next gets QUEUE_FULL and the state is unchanged', () => {
    const h = harness();
    h.arrive('run');
    for (let i = 0; i < 5; i++) h.arrive(`w${i}`);
    h.arrive('sixth');
    expect(h.refused).toEqual([{ id: 'sixth', reason: 'QUEUE_FULL' }]);
    expect(h.waiting()).toEqual(['w0', 'w1', 'w2', 'w3', 'w4']);
    expect(h.state()).toBe('executing');
  });

  it('when a queued command waits more than 120000 ms, then it is removed with QUEUE_TIMEOUT', () => {
    const h = harness();
    h.arrive('run');
    h.arrive('q');
    h.clock.increment(119999);
    expect(h.refused).toEqual([]);
    h.clock.increment(1);
    expect(h.refused).toEqual([{ id: 'q', reason: 'QUEUE_TIMEOUT' }]);
    expect(h.waiting()).toEqual([]);
  });

  it('when a queued client disconnects, then it is removed and no response is sent', () => {
    const h = harness();
    h.arrive('run');
    h.arrive('q1');
    h.arrive('q2');
    h.leave('q1');
    expect(h.waiting()).toEqual(['q2']);
    h.clock.increment(200000);
    // q1 never gets a refusal (no response); q2 times out normally.
    expect(h.refused).toEqual([{ id: 'q2', reason: 'QUEUE_TIMEOUT' }]);
  });

  it('when the running command finishes, then the oldest waiting one starts (FIFO) and its expiry is cancelled', async () => {
    const h = harness();
    h.arrive('a');
    h.arrive('b');
    h.arrive('c');
    await h.finish('a');
    expect(h.started).toEqual(['a', 'b']);
    expect(h.waiting()).toEqual(['c']);
    h.clock.increment(120000);
    // b left the queue before its deadline: only c expires.
    expect(h.refused).toEqual([{ id: 'c', reason: 'QUEUE_TIMEOUT' }]);
    await h.finish('b');
    expect(h.state()).toBe('idle');
  });

  it('when the last command finishes, then the topic is idle', async () => {
    const h = harness();
    h.arrive('a');
    await h.finish('a');
    expect(h.state()).toBe('idle');
    expect(h.actor.getSnapshot().context.running).toBeNull();
  });

  it('when an MCP call tries an idle topic, then it runs (spec §4.8)', () => {
    const h = harness();
    h.tryRun('m');
    expect(h.started).toEqual(['m']);
  });

  it('when an MCP call tries an executing topic, then it gets BUSY and is not queued', () => {
    const h = harness();
    h.arrive('a');
    h.tryRun('m');
    expect(h.refused).toEqual([{ id: 'm', reason: 'BUSY' }]);
    expect(h.waiting()).toEqual([]);
  });

  it('the expiry id of a ticket is stable', () => {
    expect(expiryId('t1')).toBe('expire:t1');
  });
});

describe('topic queue graph (xstate/graph)', () => {
  const events: TopicQueueEvent[] = [
    { type: 'command.arrive', ticket: { id: 'x' } },
    { type: 'command.try', ticket: { id: 'm' } },
    { type: 'command.leave', ticketId: 'x' },
  ];
  const done = { type: 'xstate.done.actor.runCommand', output: undefined } as unknown as TopicQueueEvent;
  const serialize = (s: { value: unknown; context: { waiting: unknown[] } }) => `${JSON.stringify(s.value)}|${s.context.waiting.length}`;

  it('reaches idle and executing, and every queue length 0..5', () => {
    const paths = getShortestPaths(topicQueueMachine, {
      input: { maxWaiting: 5, waitMs: 120000 },
      events: [...events, done],
      serializeState: (s) => serialize(s as never),
    });
    const reached = new Set(paths.map((p) => serialize(p.state as never)));
    expect(reached).toEqual(new Set(['"idle"|0', ...[0, 1, 2, 3, 4, 5].map((n) => `"executing"|${n}`)]));
  });

  it('every transition from executing to idle is a command completion, and no state holds more than 5 waiting', () => {
    const map = getAdjacencyMap(topicQueueMachine, {
      input: { maxWaiting: 5, waitMs: 1000 },
      events: [...events, done],
      serializeState: (s) => serialize(s as never),
    });
    let toIdle = 0;
    for (const node of Object.values(map)) {
      expect((node.state.context as { waiting: unknown[] }).waiting.length).toBeLessThanOrEqual(5);
      for (const edge of Object.values(node.transitions) as Array<{ event: TopicQueueEvent; state: { value: unknown } }>) {
        if (node.state.value === 'executing' && edge.state.value === 'idle') {
          toIdle++;
          expect(edge.event.type as string).toBe('xstate.done.actor.runCommand');
        }
      }
    }
    expect(toIdle).toBe(1);
  });
});
