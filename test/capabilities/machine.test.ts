import { describe, expect, it } from '@jest/globals';
import { createActor, SimulatedClock } from 'xstate';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';
import { capabilityLogic, capabilityMachine, MAX_TIMER_MS, verdictOf, type CapabilityEvent } from '../../src/machines/capability.js';

const T0 = Date.parse('2025-06-01T10:00:00.000Z');

/** A capability's actor input with the listing fields a test does not care about. */
const capInput = (o: { tokenId: string; singleUse: boolean; expiresAt: number }) => ({
  ...o, agentId: 'leo', pathPrefix: '', verbs: ['GET' as const], ttlMs: 60_000, createdAt: new Date(T0).toISOString(),
});

/** A started capability actor on a simulated clock. */
function start(opts: { singleUse?: boolean; ttlMs?: number } = {}) {
  const clock = new SimulatedClock();
  clock.set(T0);
  const actor = createActor(capabilityLogic(clock), {
    input: capInput({ tokenId: 'cap_test', singleUse: opts.singleUse ?? false, expiresAt: T0 + (opts.ttlMs ?? 60_000) }),
    clock,
  });
  actor.start();
  return { actor, clock };
}

const verify = (requestId: string): CapabilityEvent => ({ type: 'request.verify', requestId });

describe('Capability machine (spec §3 Capability table)', () => {
  it('when minted, then the capability is live (row "(none) → live")', () => {
    const { actor } = start();
    expect(actor.getSnapshot().value).toBe('live');
    actor.stop();
  });

  type Row = { row: string; singleUse: boolean; drive: (a: ReturnType<typeof start>) => void; next: string };
  const rows: Row[] = [
    {
      row: 'live | first successful request | single_use is true | consumed',
      singleUse: true,
      drive: ({ actor }) => { actor.send(verify('r1')); actor.send({ type: 'request.success', requestId: 'r1', at: T0 + 5 }); },
      next: 'consumed',
    },
    {
      row: 'live | ttl_ms elapses | | expired',
      singleUse: false,
      drive: ({ clock }) => { clock.increment(60_000); },
      next: 'expired',
    },
    {
      row: 'live | DELETE /capabilities/{token_id} | | revoked',
      singleUse: false,
      drive: ({ actor }) => { actor.send({ type: 'capability.revoke', at: T0 + 1 }); },
      next: 'revoked',
    },
    {
      row: "live | DELETE /agents/{id} | capability targets that agent's workspace | revoked",
      singleUse: true,
      drive: ({ actor }) => { actor.send({ type: 'agent.delete', at: T0 + 1 }); },
      next: 'revoked',
    },
  ];
  it.each(rows)('row "$row"', ({ singleUse, drive, next }) => {
    const a = start({ singleUse });
    drive(a);
    expect(a.actor.getSnapshot().value).toBe(next);
    expect(a.actor.getSnapshot().status).toBe('done');
    a.actor.stop();
  });

  it('when a multi-use token succeeds, then it stays live (the single_use condition of the consumed row)', () => {
    const { actor } = start({ singleUse: false });
    for (const id of ['r1', 'r2', 'r3']) {
      actor.send(verify(id));
      expect(verdictOf(actor.getSnapshot(), id)).toEqual({ granted: true });
      actor.send({ type: 'request.success', requestId: id, at: T0 });
    }
    expect(actor.getSnapshot().value).toBe('live');
    expect(actor.getSnapshot().context.reservedBy).toBeNull();
    actor.stop();
  });

  it('when ttl_ms has not fully elapsed, then the token is still live one millisecond before', () => {
    const { actor, clock } = start({ ttlMs: 1000 });
    clock.increment(999);
    expect(actor.getSnapshot().value).toBe('live');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('expired');
  });

  it('when a 30-day ttl is longer than one Node timer, then the timer is re-armed and expiry is exact', () => {
    const ttl = 2_592_000_000;
    const { actor, clock } = start({ ttlMs: ttl });
    clock.increment(MAX_TIMER_MS);
    expect(actor.getSnapshot().value).toBe('live');
    clock.increment(ttl - MAX_TIMER_MS - 1);
    expect(actor.getSnapshot().value).toBe('live');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('expired');
  });

  it('when the clock has passed the expiry but no timer fired yet, then verification expires it (absolute time)', () => {
    const { actor, clock } = start({ ttlMs: 1000 });
    clock.set(T0 + 5000); // set() moves time without running timers
    actor.send(verify('r1'));
    expect(actor.getSnapshot().value).toBe('expired');
    expect(verdictOf(actor.getSnapshot(), 'r1')).toEqual({ granted: false, reason: 'expired' });
  });
});

describe('Capability machine: single-use reservation (behaviour.md §9.5)', () => {
  it('when a single-use token is verified, then it is reserved for that request in the same transition', () => {
    const { actor } = start({ singleUse: true });
    actor.send(verify('r1'));
    expect(actor.getSnapshot().context.reservedBy).toBe('r1');
    expect(verdictOf(actor.getSnapshot(), 'r1')).toEqual({ granted: true });
    actor.stop();
  });

  it('when a second request arrives during the reservation, then it is refused as consumed and nothing changes', () => {
    const { actor } = start({ singleUse: true });
    actor.send(verify('r1'));
    actor.send(verify('r2'));
    expect(verdictOf(actor.getSnapshot(), 'r2')).toEqual({ granted: false, reason: 'consumed' });
    expect(actor.getSnapshot().context.reservedBy).toBe('r1');
    actor.stop();
  });

  it('when the reserved request fails, then the reservation is released and the token can be used again', () => {
    const { actor } = start({ singleUse: true });
    actor.send(verify('r1'));
    actor.send({ type: 'request.failure', requestId: 'r1' });
    expect(actor.getSnapshot().context.reservedBy).toBeNull();
    actor.send(verify('r2'));
    expect(verdictOf(actor.getSnapshot(), 'r2')).toEqual({ granted: true });
    actor.send({ type: 'request.success', requestId: 'r2', at: T0 + 9 });
    expect(actor.getSnapshot().value).toBe('consumed');
    expect(actor.getSnapshot().context.usedAt).toBe(T0 + 9);
  });

  it('when a request that does not hold the reservation reports, then it is ignored', () => {
    const { actor } = start({ singleUse: true });
    actor.send(verify('r1'));
    actor.send({ type: 'request.success', requestId: 'r2', at: T0 });
    actor.send({ type: 'request.failure', requestId: 'r2' });
    expect(actor.getSnapshot().value).toBe('live');
    expect(actor.getSnapshot().context.reservedBy).toBe('r1');
    actor.stop();
  });

  it('when a token is consumed, then later verifications are refused as consumed', () => {
    const { actor } = start({ singleUse: true });
    actor.send(verify('r1'));
    actor.send({ type: 'request.success', requestId: 'r1', at: T0 });
    actor.send(verify('r2'));
    expect(verdictOf(actor.getSnapshot(), 'r2')).toEqual({ granted: false, reason: 'consumed' });
  });

  it('when a reserved token is revoked, then the holder\'s success no longer consumes it (it stays revoked)', () => {
    const { actor } = start({ singleUse: true });
    actor.send(verify('r1'));
    actor.send({ type: 'capability.revoke', at: T0 + 2 });
    actor.send({ type: 'request.success', requestId: 'r1', at: T0 + 3 });
    expect(actor.getSnapshot().value).toBe('revoked');
    expect(actor.getSnapshot().context.revokedAt).toBe(T0 + 2);
  });

  it('when N requests verify one after another, then exactly one is granted', () => {
    const { actor } = start({ singleUse: true });
    const granted = Array.from({ length: 20 }, (_, i) => {
      actor.send(verify(`r${i}`));
      return verdictOf(actor.getSnapshot(), `r${i}`).granted;
    });
    expect(granted.filter(Boolean)).toHaveLength(1);
    actor.stop();
  });
});

describe('Capability machine: path coverage (xstate/graph)', () => {
  // Time is decided by the event here: the delayed ttl event counts as "elapsed".
  const AFTER = 'xstate.after.ttlTimer.capability.live';
  const logic = capabilityMachine.provide({
    guards: { ttlElapsed: ({ event }) => (event.type as string) === AFTER },
    delays: { ttlTimer: 1000 },
  });
  const events = [
    verify('r1'), verify('r2'),
    { type: 'request.success', requestId: 'r1', at: 1 },
    { type: 'request.failure', requestId: 'r1' },
    { type: 'capability.revoke', at: 1 },
    { type: 'agent.delete', at: 1 },
    { type: AFTER },
  ] as unknown as CapabilityEvent[];
  const input = capInput({ tokenId: 'cap_g', singleUse: true, expiresAt: 0 });

  it('when every event is tried from every state, then exactly live, consumed, expired and revoked are reachable', () => {
    const paths = getShortestPaths(logic, { events, input });
    const states = new Set(paths.map((p) => String(p.state.value)));
    expect([...states].sort()).toEqual(['consumed', 'expired', 'live', 'revoked']);
  });

  it.each([
    ['consumed', ['request.verify', 'request.success']],
    ['expired', [AFTER]],
    ['revoked', ['capability.revoke']],
  ])('when the shortest path to %s is taken, then it uses %j', (state, types) => {
    const paths = getShortestPaths(logic, { events, input, toState: (s) => s.value === state });
    expect(paths.length).toBeGreaterThan(0);
    const p = paths[0];
    expect(p.steps.map((s) => s.event.type as string).filter((t) => t !== 'xstate.init')).toEqual(types);
  });

  it('when all simple paths are enumerated, then every final state is a leaf (no transition leaves a dead token)', () => {
    const paths = getSimplePaths(logic, { events, input });
    for (const p of paths) {
      const idx = p.steps.findIndex((s) => s.state.status === 'done');
      if (idx >= 0) expect(idx).toBe(p.steps.length - 1);
    }
    const finals = new Set(paths.filter((p) => p.state.status === 'done').map((p) => String(p.state.value)));
    expect([...finals].sort()).toEqual(['consumed', 'expired', 'revoked']);
  });
});
