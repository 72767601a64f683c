import { describe, expect, it } from '@jest/globals';
import { createActor, SimulatedClock } from 'xstate';
import { getAdjacencyMap, getShortestPaths } from 'xstate/graph';
import type { SessionChange, SessionEvent, SessionState } from '../../src/domain/session.js';
import type { CommandEvent, ExecResult, Ticket } from '../../src/domain/ticket.js';
import { expiryId, lastTicketId, topicQueueMachine, type NewTicket, type TopicQueueEvent } from '../../src/machines/topicQueue.js';

const REF = { topic: 'main', type: 'tab' as const, name: 'main' };
const result = (body: string): ExecResult => ({ ok: true, code: null, body, meta: null, topic: 'main', topicType: 'tab' });

/** A topic actor whose commands finish only when the test says so; records its emitted events and effects. */
function harness(opts: { max?: number; waitMs?: number } = {}) {
  const emitted: CommandEvent[] = [];
  const sessionEvents: SessionEvent[] = [];
  const ran: Array<{ ticket: string; session: SessionState }> = [];
  const disposed: SessionState[] = [];
  const clock = new SimulatedClock();
  const machine = topicQueueMachine.provide({
    actions: {
      runTicket: (_a, { ticket, session }) => { ran.push({ ticket: ticket.id, session }); },
      disposeSession: (_a, { session }) => { disposed.push(session); },
    },
  });
  const actor = createActor(machine, { input: { agentId: 'leo', ref: REF, maxWaiting: opts.max ?? 5, waitMs: opts.waitMs ?? 120000, now: 0 }, clock });
  actor.on('*', (e) => { if ('ticket' in e) emitted.push(e); else sessionEvents.push(e); });
  actor.start();
  const ticket = (cmd: string, via: 'exec' | 'mcp' = 'exec'): NewTicket => ({ cmd, requestId: null, via, queuedAt: clock.now(), startedAt: null });
  /** The topic names each ticket as it takes it; the caller reads the name back. */
  const sent = () => lastTicketId(actor.getSnapshot().context);
  const of = (type: CommandEvent['type']) => emitted.filter((e) => e.type === type).map((e) => e.ticket.cmd);
  return {
    actor, emitted, sessionEvents, ran, disposed, clock, of,
    change: (change: SessionChange, sessionId = actor.getSnapshot().context.session.id) => actor.send({ type: 'session.change', sessionId, change, at: clock.now() }),
    arrive: (cmd: string) => { actor.send({ type: 'command.arrive', ticket: ticket(cmd) }); return sent(); },
    tryRun: (cmd: string) => { actor.send({ type: 'command.try', ticket: ticket(cmd, 'mcp') }); return sent(); },
    leave: (id: string) => actor.send({ type: 'command.leave', ticketId: id }),
    finish: (id: string, body = 'ok') => actor.send({ type: 'command.done', ticketId: id, result: result(body), at: clock.now() }),
    state: () => actor.getSnapshot().value,
    waiting: () => actor.getSnapshot().context.waiting.map((t) => t.cmd),
    refusals: () => emitted.filter((e) => e.type === 'command.refused').map((e) => [e.ticket.cmd, e.type === 'command.refused' ? e.reason : '']),
  };
}

describe('spec §3 topic command queue', () => {
  it('when a command arrives at an idle topic, then it starts executing (started emitted, the command run in the session)', () => {
    const h = harness();
    const id = h.arrive('/a');
    expect(h.state()).toBe('executing');
    expect(h.of('command.started')).toEqual(['/a']);
    expect(h.ran.map((r) => r.ticket)).toEqual([id]);
    expect(h.ran[0].session).toBe(h.actor.getSnapshot().context.session);
    expect(h.actor.getSnapshot().context.running).toMatchObject({ id: 't1', cmd: '/a', via: 'exec', startedAt: 0 });
  });

  it.each([0, 1, 2, 3, 4])('when a command arrives while executing with %i waiting, then the queue grows and it is queued', (n) => {
    const h = harness();
    h.arrive('/run');
    for (let i = 0; i < n; i++) h.arrive(`/w${i}`);
    h.arrive('/new');
    expect(h.state()).toBe('executing');
    expect(h.waiting()).toHaveLength(n + 1);
    expect(h.of('command.queued')).toHaveLength(n + 1);
    expect(h.refusals()).toEqual([]);
  });

  it('when 5 commands are queued, then the next gets QUEUE_FULL (with the limits) and the state is unchanged', () => {
    const h = harness();
    h.arrive('/run');
    for (let i = 0; i < 5; i++) h.arrive(`/w${i}`);
    h.arrive('/sixth');
    expect(h.refusals()).toEqual([['/sixth', 'QUEUE_FULL']]);
    expect(h.emitted.find((e) => e.type === 'command.refused')).toMatchObject({ agentId: 'leo', topic: 'main', limits: { max: 5, waitMs: 120000 } });
    expect(h.waiting()).toEqual(['/w0', '/w1', '/w2', '/w3', '/w4']);
    expect(h.state()).toBe('executing');
  });

  it('when a queued command waits more than 120000 ms, then it is removed with QUEUE_TIMEOUT', () => {
    const h = harness();
    h.arrive('/run');
    h.arrive('/q');
    h.clock.increment(119999);
    expect(h.refusals()).toEqual([]);
    h.clock.increment(1);
    expect(h.refusals()).toEqual([['/q', 'QUEUE_TIMEOUT']]);
    expect(h.emitted.at(-1)?.at).toBe(120000);
    expect(h.waiting()).toEqual([]);
  });

  it('when a queued client disconnects, then it is removed and no response is emitted', () => {
    const h = harness();
    h.arrive('/run');
    const q1 = h.arrive('/q1');
    h.arrive('/q2');
    h.leave(q1);
    expect(h.waiting()).toEqual(['/q2']);
    h.clock.increment(200000);
    // q1 never gets a refusal (no response); q2 times out normally.
    expect(h.refusals()).toEqual([['/q2', 'QUEUE_TIMEOUT']]);
  });

  it('when the running command finishes, then finished carries its output and the oldest waiting one starts (FIFO) with its expiry cancelled', () => {
    const h = harness();
    const a = h.arrive('/a');
    h.arrive('/b');
    h.arrive('/c');
    h.clock.increment(10);
    h.finish(a, 'done a');
    const fin = h.emitted.find((e) => e.type === 'command.finished');
    expect(fin).toMatchObject({ type: 'command.finished', ticket: { id: a }, output: { head: { ok: true, cmd: '/a', agent_id: 'leo', topic: 'main' }, content: 're: /a\ndone a' } });
    expect(h.of('command.started')).toEqual(['/a', '/b']);
    expect(h.actor.getSnapshot().context.running?.startedAt).toBe(10);
    expect(h.waiting()).toEqual(['/c']);
    h.clock.increment(120000);
    // b left the queue before its deadline: only c expires.
    expect(h.refusals()).toEqual([['/c', 'QUEUE_TIMEOUT']]);
    h.finish(h.actor.getSnapshot().context.running?.id as string);
    expect(h.state()).toBe('idle');
  });

  it('when a result arrives for a ticket that is not running, then nothing changes', () => {
    const h = harness();
    h.arrive('/a');
    h.finish('t99');
    expect(h.state()).toBe('executing');
    expect(h.of('command.finished')).toEqual([]);
  });

  it('when an MCP call tries an idle topic, then it runs (spec §4.8)', () => {
    const h = harness();
    h.tryRun('/m');
    expect(h.of('command.started')).toEqual(['/m']);
  });

  it('when an MCP call tries an executing topic, then it gets BUSY and is not queued', () => {
    const h = harness();
    h.arrive('/a');
    h.tryRun('/m');
    expect(h.refusals()).toEqual([['/m', 'BUSY']]);
    expect(h.waiting()).toEqual([]);
  });

  it('ticket ids are counted per topic, refused ones included', () => {
    const h = harness({ max: 1 });
    expect([h.arrive('/a'), h.arrive('/b'), h.arrive('/c'), h.tryRun('/d')]).toEqual(['t1', 't2', 't3', 't4']);
    expect(h.actor.getSnapshot().context.issued).toBe(4);
  });

  it('the expiry id of a ticket is stable', () => {
    expect(expiryId('t1')).toBe('expire:t1');
  });
});

describe('sessions of a topic (behaviour.md §1.3)', () => {
  it('when the session of an idle topic is closed, then it is disposed and the topic ends', () => {
    const h = harness();
    const s = h.actor.getSnapshot().context.session;
    h.actor.send({ type: 'session.close', at: 5 });
    expect(h.disposed).toEqual([s]);
    expect(h.actor.getSnapshot().status).toBe('done');
  });

  it('when the session of an executing topic is closed, then it is disposed, a fresh one replaces it and the queue goes on', () => {
    const h = harness();
    const a = h.arrive('/a');
    h.arrive('/b');
    const old = h.actor.getSnapshot().context.session;
    h.actor.send({ type: 'session.close', at: 5 });
    const fresh = h.actor.getSnapshot().context.session;
    expect(h.disposed).toEqual([old]);
    expect(fresh).not.toBe(old);
    expect(fresh.createdAt).toBe(5);
    h.finish(a);
    // The queued command runs later on the fresh, empty session.
    expect(h.ran.at(-1)?.session).toBe(fresh);
    expect(h.state()).toBe('executing');
  });

  it('when the agent is deleted, then the running and every waiting ticket are answered CONFLICT, the session disposed, and the topic ends', () => {
    const h = harness();
    h.arrive('/a');
    h.arrive('/b');
    h.actor.send({ type: 'agent.delete', at: 9 });
    const fins = h.emitted.filter((e) => e.type === 'command.finished');
    expect(fins.map((e) => (e.type === 'command.finished' ? e.output.content : ''))).toEqual([
      're: /a\nERROR(CONFLICT): Topic main was closed while this command ran',
      're: /b\nERROR(CONFLICT): Agent leo was deleted while this command waited',
    ]);
    expect(h.disposed).toHaveLength(1);
    expect(h.actor.getSnapshot().status).toBe('done');
    // The waiting ticket's expiry was cancelled with it.
    h.clock.increment(200000);
    expect(h.refusals()).toEqual([]);
  });
});

describe('session changes are events of the topic (architecture.md "One read model")', () => {
  it('when a command reports /open, /nav, /set and /close changes, then the topic applies them in order, each a new session, and emits each', () => {
    const h = harness();
    const id = h.arrive('/open a.md');
    const first = h.actor.getSnapshot().context.session;
    const doc = { uri: 'file:///h/a.md', title: 'A', currentBlock: null, display: '~/a.md' };
    h.change({ type: 'session.opened', doc, pageShortcuts: new Map([['next', 'b.md']]), baseDir: '/h' });
    h.change({ type: 'session.navigated', block: '#intro' });
    h.change({ type: 'session.set', scope: 'session', values: [['city', 'Seoul']] });
    h.finish(id);
    const s = h.actor.getSnapshot().context.session;
    expect(s).not.toBe(first);
    expect(first.doc).toBeNull();
    expect(first.vars.size).toBe(0);
    expect(s.doc).toEqual({ ...doc, currentBlock: '#intro' });
    expect([...s.vars]).toEqual([['city', 'Seoul']]);
    expect(s.baseDir).toBe('/h');
    h.change({ type: 'session.cleared', scope: 'session', names: ['city'] });
    h.change({ type: 'session.closed' });
    expect(h.sessionEvents.map((e) => e.type)).toEqual(['session.opened', 'session.navigated', 'session.set', 'session.cleared', 'session.closed']);
    expect(h.sessionEvents.every((e) => e.agentId === 'leo' && e.topic === 'main' && e.sessionId === s.id)).toBe(true);
    const end = h.actor.getSnapshot().context.session;
    expect(end.doc).toBeNull();
    expect(end.vars.size).toBe(0);
    expect(end.baseDir).toBeNull();
  });

  it('when a change arrives for a session that was renewed meanwhile, then it is dropped and nothing is emitted', () => {
    const h = harness();
    h.arrive('/set {a}=1');
    const old = h.actor.getSnapshot().context.session.id;
    h.actor.send({ type: 'session.close', at: 1 });
    h.change({ type: 'session.set', scope: 'session', values: [['a', '1']] }, old);
    expect(h.actor.getSnapshot().context.session.id).not.toBe(old);
    expect(h.actor.getSnapshot().context.session.vars.size).toBe(0);
    expect(h.sessionEvents).toEqual([]);
  });
});

describe('topic queue graph (xstate/graph)', () => {
  const t = (id: string, via: 'exec' | 'mcp' = 'exec'): Ticket => ({ id, cmd: '/x', requestId: null, via, queuedAt: 0, startedAt: null });
  const input = (waitMs: number) => ({ agentId: 'leo', ref: REF, maxWaiting: 5, waitMs, now: 0 });
  const events = (s: { context: { running: Ticket | null; issued: number } }): TopicQueueEvent[] => [
    { type: 'command.arrive', ticket: t(`t${s.context.issued + 1}`) },
    { type: 'command.try', ticket: t(`t${s.context.issued + 1}`, 'mcp') },
    { type: 'command.leave', ticketId: `t${s.context.issued}` },
    { type: 'command.done', ticketId: s.context.running?.id ?? 'none', result: result('ok'), at: 0 },
  ];
  const serialize = (s: { value: unknown; context: { waiting: unknown[] } }) => `${JSON.stringify(s.value)}|${s.context.waiting.length}`;

  it('reaches idle and executing, and every queue length 0..5', () => {
    const paths = getShortestPaths(topicQueueMachine, { input: input(120000), events: events as never, serializeState: (s) => serialize(s as never) });
    const reached = new Set(paths.map((p) => serialize(p.state as never)));
    expect(reached).toEqual(new Set(['"idle"|0', ...[0, 1, 2, 3, 4, 5].map((n) => `"executing"|${n}`)]));
  });

  it('every transition from executing to idle is a command completion, and no state holds more than 5 waiting', () => {
    const map = getAdjacencyMap(topicQueueMachine as typeof topicQueueMachine & never, { input: input(1000), events: events as never, serializeState: (s) => serialize(s as never) });
    let toIdle = 0;
    for (const node of Object.values(map)) {
      expect((node.state.context as { waiting: unknown[] }).waiting.length).toBeLessThanOrEqual(5);
      for (const edge of Object.values(node.transitions) as Array<{ event: TopicQueueEvent; state: { value: unknown } }>) {
        if (node.state.value === 'executing' && edge.state.value === 'idle') {
          toIdle++;
          expect(edge.event.type).toBe('command.done');
        }
      }
    }
    expect(toIdle).toBe(1);
  });
});
