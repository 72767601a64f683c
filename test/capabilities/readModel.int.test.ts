import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SimulatedClock } from 'xstate';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { addAgent, mint } from './helpers.js';

/**
 * architecture.md "One read model": a capability listing is read from the actors (and the archive
 * written in the same step as a final transition), so at no moment can it say `live` for an actor
 * that is already `expired`, `consumed` or `revoked`.
 */
const T0 = Date.parse('2025-06-01T10:00:00.000Z');
let app: TestApp;
let clock: SimulatedClock;

beforeAll(async () => {
  clock = new SimulatedClock();
  clock.set(T0);
  app = await startApp({ clock });
  await addAgent(app.base, 'leo');
});
afterAll(async () => { await app.close(); });

describe('capability listing and actor agree (architecture.md "One read model")', () => {
  it('when a capability expires, then in the very step the actor reaches expired the listing says expired, and after it too', async () => {
    const cap = await mint(app.base, { agent_id: 'leo', verbs: ['GET'], ttl_ms: 1000 });
    const list = () => app.c.system.services.capabilities!.listForAgent('leo').find((c) => c.token_id === cap.token_id)?.state;
    const seen: Array<[string, string | undefined]> = [];
    const stop = app.c.system.inspection.observe((ev) => {
      if (ev.type !== '@xstate.snapshot' || (ev.actorRef as { systemId?: string }).systemId !== `cap:${cap.token_id}`) return;
      // Read the listing inside the actor's own snapshot notification: nothing may lag behind it.
      seen.push([String((ev.snapshot as unknown as { value: unknown }).value), list()]);
    });
    try {
      expect(list()).toBe('live');
      clock.increment(999);
      expect(list()).toBe('live');
      clock.increment(1);
    } finally {
      stop();
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const [actorState, listed] of seen) expect(listed).toBe(actorState);
    expect(seen.at(-1)?.[0]).toBe('expired');
    const r = await call(app.base, 'GET', '/capabilities?agent_id=leo');
    expect(r.body.capabilities.find((c: { token_id: string }) => c.token_id === cap.token_id).state).toBe('expired');
  });

  it('when a capability is revoked, then the listing says revoked as soon as the actor does', async () => {
    const cap = await mint(app.base, { agent_id: 'leo', verbs: ['GET'], ttl_ms: 60_000 });
    const seen: Array<[string, string | undefined]> = [];
    const stop = app.c.system.inspection.observe((ev) => {
      if (ev.type !== '@xstate.snapshot' || (ev.actorRef as { systemId?: string }).systemId !== `cap:${cap.token_id}`) return;
      seen.push([String((ev.snapshot as unknown as { value: unknown }).value), app.c.system.services.capabilities!.listForAgent('leo').find((c) => c.token_id === cap.token_id)?.state]);
    });
    try {
      const r = await call(app.base, 'DELETE', `/capabilities/${cap.token_id}`);
      expect(r.status).toBe(200);
    } finally {
      stop();
    }
    expect(seen.map(([s]) => s)).toContain('revoked');
    for (const [actorState, listed] of seen) expect(listed).toBe(actorState);
  });
});
