import { describe, expect, it } from '@jest/globals';
import { createActor, fromPromise, type AnyStateMachine } from 'xstate';
import { getAdjacencyMap, getShortestPaths, getSimplePaths } from 'xstate/graph';
import { eventMachine, nextEventState, type EventState, type EventTrigger } from '../../src/machines/event.js';
import { webhookTokenMachine, type WebhookAnswer } from '../../src/machines/webhookToken.js';

describe('spec §3 Event table', () => {
  // One row per table line (the "pending or acked" row is two rows here).
  const rows: Array<[EventState, EventTrigger, EventState, string]> = [
    ['none', 'webhook.post', 'pending', 'POST /webhook/<token> with a valid token and body creates a pending event'],
    ['pending', 'events.ack', 'acked', '/events.ack <id> acknowledges a pending event'],
    ['acked', 'events.clear', 'deleted', '/events.clear removes an acked event'],
    ['pending', 'events.clear.all', 'deleted', '/events.clear --all removes a pending event'],
    ['acked', 'events.clear.all', 'deleted', '/events.clear --all removes an acked event'],
  ];
  it.each(rows)('when %s receives %s, then it is %s (%s)', (from, trigger, to) => {
    expect(nextEventState(from, trigger)).toBe(to);
  });

  // What the table implies by omission: only acked events are removed by /events.clear; acking twice changes nothing.
  const unchanged: Array<[EventState, EventTrigger]> = [
    ['pending', 'events.clear'],
    ['acked', 'events.ack'],
    ['pending', 'webhook.post'],
    ['deleted', 'events.ack'],
    ['deleted', 'events.clear.all'],
  ];
  it.each(unchanged)('when %s receives %s, then it stays where it is', (from, trigger) => {
    expect(nextEventState(from, trigger)).toBe(from);
  });

  it('when an actor runs the whole life, then it ends in the final deleted state', () => {
    const a = createActor(eventMachine).start();
    for (const type of ['webhook.post', 'events.ack', 'events.clear'] as const) a.send({ type });
    expect(a.getSnapshot().value).toBe('deleted');
    expect(a.getSnapshot().status).toBe('done');
  });
});

describe('spec §3 Webhook token table', () => {
  // The machine holds fingerprints (SHA-256 hex) of tokens, never tokens (behaviour.md §13.4).
  const T1 = 'a'.repeat(64);
  const T2 = 'b'.repeat(64);
  const T3 = 'c'.repeat(64);
  const flush = () => new Promise((r) => setImmediate(r));

  /** A token actor whose `save` resolves (or fails for one candidate), recording the changes it publishes and its answers (the machine names requests w1, w2, …). */
  function tokenActor(fingerprint: string | null, opts: { failFor?: string } = {}) {
    const kept: string[] = [];
    const answers: WebhookAnswer[] = [];
    const logic = webhookTokenMachine.provide({
      actors: { save: fromPromise(async ({ input }) => { if (input.fingerprint === opts.failFor) throw new Error('disk full'); }) },
    });
    const a = createActor(logic, { input: { agentId: 'leo', fingerprint } }).start();
    a.on('webhook.changed', (ev) => { kept.push(ev.fingerprint); });
    a.on('webhook.answered', (ev) => { answers.push(ev); });
    return { a, kept, answers };
  }

  const rows: Array<[string, string | null, 'webhook.get' | 'webhook.post', string, string, boolean]> = [
    ['none', null, 'webhook.get', 'exists', T2, true],
    ['exists', T1, 'webhook.get', 'exists', T1, false],
    ['exists', T1, 'webhook.post', 'exists', T2, true],
    ['none', null, 'webhook.post', 'exists', T2, true],
  ];
  it.each(rows)('when %s (token %s) receives %s, then it is %s with token %s once stored (changed: %s)', async (state, stored, type, next, token, changed) => {
    const { a, kept, answers } = tokenActor(stored);
    expect(a.getSnapshot().matches(state as 'none')).toBe(true);
    a.send({ type, fingerprint: T2 });
    await flush();
    expect(a.getSnapshot().matches(next as 'exists')).toBe(true);
    expect(a.getSnapshot().context.fingerprint).toBe(token);
    expect(kept).toEqual(changed ? [T2] : []);
    expect(answers).toEqual([{ type: 'webhook.answered', requestId: 'w1', ok: true, changed }]);
  });

  it('when a candidate is being stored, then the state has not moved yet: the old token still counts until the write is done', () => {
    const { a, kept } = tokenActor(T1);
    a.send({ type: 'webhook.post', fingerprint: T2 });
    expect(a.getSnapshot().matches({ exists: 'saving' })).toBe(true);
    expect(a.getSnapshot().context.fingerprint).toBe(T1);
    expect(kept).toEqual([]);
  });

  it('when two rotations and a GET arrive together, then the mailbox takes them one at a time, in order', async () => {
    const { a, kept, answers } = tokenActor(T1);
    a.send({ type: 'webhook.post', fingerprint: T2 });
    a.send({ type: 'webhook.post', fingerprint: T3 });
    a.send({ type: 'webhook.get', fingerprint: T1 });
    await flush();
    expect(a.getSnapshot().context).toMatchObject({ fingerprint: T3, rotations: 2, queue: [], saving: null });
    expect(kept).toEqual([T2, T3]);
    expect(answers.map((x) => [x.requestId, x.ok && x.changed])).toEqual([['w1', true], ['w2', true], ['w3', false]]);
  });

  it('when storing a candidate fails, then nothing changes, the caller hears why, and the next request is taken', async () => {
    const { a, kept, answers } = tokenActor(null, { failFor: T2 });
    a.send({ type: 'webhook.get', fingerprint: T2 });
    a.send({ type: 'webhook.get', fingerprint: T3 });
    await flush();
    expect(answers[0]).toMatchObject({ requestId: 'w1', ok: false });
    expect(answers[1]).toEqual({ type: 'webhook.answered', requestId: 'w2', ok: true, changed: true });
    expect(kept).toEqual([T3]);
    expect(a.getSnapshot().context.fingerprint).toBe(T3);
  });
});

describe('Event and webhook token machines: path coverage (xstate/graph)', () => {
  const triggers = ['webhook.post', 'events.ack', 'events.clear', 'events.clear.all'].map((type) => ({ type })) as Array<{ type: EventTrigger }>;

  it('when every trigger is tried from every event state, then all four states are reachable and the shortest paths are the table rows', () => {
    const paths = getShortestPaths(eventMachine, { events: triggers });
    const byState = new Map(paths.map((p) => [String(p.state.value), p.steps.map((s) => s.event.type as string).filter((t) => t !== 'xstate.init')]));
    expect([...byState.keys()].sort()).toEqual(['acked', 'deleted', 'none', 'pending']);
    expect(byState.get('pending')).toEqual(['webhook.post']);
    expect(byState.get('acked')).toEqual(['webhook.post', 'events.ack']);
    // `--all` removes a pending event at once: the shortest way to deleted skips the ack.
    expect(byState.get('deleted')).toEqual(['webhook.post', 'events.clear.all']);
  });

  it('when all simple paths are enumerated, then deleted is final and only ever the last step', () => {
    const paths = getSimplePaths(eventMachine, { events: triggers });
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) {
      const idx = p.steps.findIndex((s) => s.state.status === 'done');
      if (idx >= 0) expect(idx).toBe(p.steps.length - 1);
    }
    const finals = new Set(paths.filter((p) => p.state.status === 'done').map((p) => String(p.state.value)));
    expect([...finals]).toEqual(['deleted']);
  });

  it('when the token machine starts with and without a stored token, then none and exists are reachable and GET never leaves exists', () => {
    const saved = { type: 'xstate.done.actor.save', output: undefined };
    const events = [{ type: 'webhook.get', fingerprint: 'new' }, { type: 'webhook.post', fingerprint: 'new' }, saved] as never[];
    // A state is its value and fingerprint: `rotations` counts up forever and would make the graph infinite.
    // Waiting requests count as none or some: the graph would grow without end otherwise.
    const serializeState = (s: { value: unknown; context: { fingerprint: string | null; queue: unknown[] } }) => `${JSON.stringify(s.value)} ${s.context.fingerprint} ${Math.min(1, s.context.queue.length)}`;
    const opts = { events, serializeState, limit: 200 } as const;
    const top = (v: unknown) => Object.keys(v as object)[0];
    const fresh = getShortestPaths(webhookTokenMachine, { ...opts, input: { agentId: 'leo', fingerprint: null } });
    expect(new Set(fresh.map((p) => top(p.state.value)))).toEqual(new Set(['none', 'exists']));
    const stored = getShortestPaths(webhookTokenMachine, { ...opts, input: { agentId: 'leo', fingerprint: 'old' } });
    expect(new Set(stored.map((p) => top(p.state.value)))).toEqual(new Set(['exists']));
    // The graph helpers' types do not follow machines that emit events; the machine is the same.
    const adjacency = getAdjacencyMap(webhookTokenMachine as unknown as AnyStateMachine, { ...opts, input: { agentId: 'leo', fingerprint: 'old' } });
    let edges = 0;
    for (const node of Object.values(adjacency)) {
      if (JSON.stringify(node.state.value) !== '{"exists":"idle"}' || node.state.context.queue.length > 0) continue;
      for (const [key, edge] of Object.entries(node.transitions) as Array<[string, { state: { value: unknown; context: { fingerprint: string | null } } }]>) {
        if (key.includes('xstate.done')) continue;
        expect(top(edge.state.value)).toBe('exists');
        // GET returns the token unchanged at once; POST goes to saving, the token replaced only once saved.
        if (key.includes('webhook.get')) expect(edge.state.value).toEqual({ exists: 'idle' });
        else expect(edge.state.value).toEqual({ exists: 'saving' });
        expect(edge.state.context.fingerprint).toBe(node.state.context.fingerprint);
        edges++;
      }
    }
    // exists(old) and exists(new), each with a GET and a POST edge.
    expect(edges).toBe(4);
  });
});
