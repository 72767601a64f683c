import { describe, expect, it } from '@jest/globals';
import { createActor } from 'xstate';
import { getAdjacencyMap, getShortestPaths, getSimplePaths } from 'xstate/graph';
import { eventMachine, nextEventState, type EventState, type EventTrigger } from '../../src/machines/event.js';
import { webhookTokenMachine } from '../../src/machines/webhookToken.js';

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
  const rows: Array<[string, string | null, 'webhook.get' | 'webhook.post', string, string]> = [
    ['none', null, 'webhook.get', 'exists', T2],
    ['exists', T1, 'webhook.get', 'exists', T1],
    ['exists', T1, 'webhook.post', 'exists', T2],
    ['none', null, 'webhook.post', 'exists', T2],
  ];
  it.each(rows)('when %s (token %s) receives %s, then it is %s with token %s', (state, stored, type, next, token) => {
    const a = createActor(webhookTokenMachine, { input: { fingerprint: stored } }).start();
    expect(a.getSnapshot().value).toBe(state);
    a.send({ type, fingerprint: T2 });
    expect(a.getSnapshot().value).toBe(next);
    expect(a.getSnapshot().context.fingerprint).toBe(token);
  });

  it('when a token is rotated twice, then each rotation gives the new token and counts', () => {
    const a = createActor(webhookTokenMachine, { input: { fingerprint: T1 } }).start();
    a.send({ type: 'webhook.post', fingerprint: T2 });
    a.send({ type: 'webhook.post', fingerprint: T3 });
    expect(a.getSnapshot().context).toEqual({ fingerprint: T3, rotations: 2 });
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
    const events = [{ type: 'webhook.get', fingerprint: 'new' }, { type: 'webhook.post', fingerprint: 'new' }] as const;
    // A state is its value and fingerprint: `rotations` counts up forever and would make the graph infinite.
    const serializeState = (s: { value: unknown; context: { fingerprint: string | null } }) => `${String(s.value)} ${s.context.fingerprint}`;
    const opts = { events: [...events], serializeState } as const;
    const fresh = getShortestPaths(webhookTokenMachine, { ...opts, input: { fingerprint: null } });
    expect(new Set(fresh.map((p) => String(p.state.value)))).toEqual(new Set(['none', 'exists']));
    const stored = getShortestPaths(webhookTokenMachine, { ...opts, input: { fingerprint: 'old' } });
    expect(new Set(stored.map((p) => String(p.state.value)))).toEqual(new Set(['exists']));
    const adjacency = getAdjacencyMap(webhookTokenMachine, { ...opts, input: { fingerprint: 'old' } });
    let edges = 0;
    for (const node of Object.values(adjacency)) {
      if (node.state.value !== 'exists') continue;
      for (const [key, edge] of Object.entries(node.transitions) as Array<[string, { state: { value: unknown; context: { fingerprint: string | null } } }]>) {
        expect(edge.state.value).toBe('exists');
        // GET returns the token unchanged; POST replaces it.
        if (key.includes('webhook.get')) expect(edge.state.context.fingerprint).toBe(node.state.context.fingerprint);
        else expect(edge.state.context.fingerprint).toBe('new');
        edges++;
      }
    }
    // exists(old) and exists(new), each with a GET and a POST edge.
    expect(edges).toBe(4);
  });
});
