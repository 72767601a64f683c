import { assign, setup } from 'xstate';

/**
 * The Capability table of spec §3:
 *
 * | State  | Trigger                          | Condition                    | Next     | Also                       |
 * | (none) | POST /capabilities, POST /agents | valid spec                   | live     | secret returned once       |
 * | live   | first successful request         | single_use is true           | consumed | consumption is atomic      |
 * | live   | ttl_ms elapses                   |                              | expired  |                            |
 * | live   | DELETE /capabilities/{token_id}  |                              | revoked  | immediate                  |
 * | live   | DELETE /agents/{id}              | targets that agent's workspace | revoked | all die together          |
 *
 * Single-use atomicity (behaviour.md §9.5): `request.verify` checks liveness and reserves the token
 * for one request in the same transition; `request.success` (a 2xx) consumes it; `request.failure`
 * releases it. While reserved, another `request.verify` is refused (the caller answers 401 consumed).
 *
 * Time: the guard `ttlElapsed` and the delay `ttlTimer` read the injected clock; src/actors provides
 * both through `capabilityLogic(clock)`. Expiry is by absolute time (`expiresAt`), so a late timer
 * or a restart never extends a lifetime. Timers are chunked below the 2^31-1 ms setTimeout limit
 * (ttl_ms may be 30 days) and re-armed until the absolute expiry passes.
 */

/** The largest delay a Node timer accepts; longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface CapabilityContext {
  tokenId: string;
  singleUse: boolean;
  /** Absolute expiry, ms since the epoch. */
  expiresAt: number;
  /** The request holding the single-use reservation, or null. */
  reservedBy: string | null;
  usedAt: number | null;
  revokedAt: number | null;
}

export type CapabilityEvent =
  | { type: 'request.verify'; requestId: string }
  | { type: 'request.success'; requestId: string; at: number }
  | { type: 'request.failure'; requestId: string }
  | { type: 'capability.revoke'; at: number }
  | { type: 'agent.delete'; at: number };

export interface CapabilityInput {
  tokenId: string;
  singleUse: boolean;
  expiresAt: number;
}

const holds = (context: CapabilityContext, event: CapabilityEvent): boolean =>
  'requestId' in event && context.reservedBy !== null && context.reservedBy === event.requestId;

export const capabilityMachine = setup({
  types: {
    context: {} as CapabilityContext,
    events: {} as CapabilityEvent,
    input: {} as CapabilityInput,
  },
  guards: {
    // Wall-clock defaults; the actors layer provides the injected clock (capabilityLogic).
    ttlElapsed: ({ context }) => Date.now() >= context.expiresAt,
    isReserved: ({ context }) => context.reservedBy !== null,
    isSingleUse: ({ context }) => context.singleUse,
    holdsReservation: ({ context, event }) => holds(context, event),
  },
  delays: {
    ttlTimer: ({ context }) => Math.min(MAX_TIMER_MS, Math.max(0, context.expiresAt - Date.now())),
  },
}).createMachine({
  id: 'capability',
  context: ({ input }) => ({ tokenId: input.tokenId, singleUse: input.singleUse, expiresAt: input.expiresAt, reservedBy: null, usedAt: null, revokedAt: null }),
  initial: 'live',
  states: {
    live: {
      after: {
        // spec §3 row "live | ttl_ms elapses | expired"; a chunk that ends early re-arms the timer.
        ttlTimer: [{ guard: 'ttlElapsed', target: 'expired' }, { target: 'live', reenter: true }],
      },
      on: {
        'request.verify': [
          // Absolute time decides even if the timer has not fired yet.
          { guard: 'ttlElapsed', target: 'expired' },
          // Another request holds the single-use reservation: refused (401 consumed), no change.
          { guard: 'isReserved' },
          // Check and reserve in one transition (spec §3 "consumption is atomic").
          { guard: 'isSingleUse', actions: assign({ reservedBy: ({ event }) => event.requestId }) },
          // A multi-use token: granted, nothing to record.
          {},
        ],
        'request.success': {
          guard: 'holdsReservation',
          target: 'consumed',
          actions: assign({ usedAt: ({ event }) => event.at, reservedBy: null }),
        },
        'request.failure': { guard: 'holdsReservation', actions: assign({ reservedBy: null }) },
        'capability.revoke': { target: 'revoked', actions: assign({ revokedAt: ({ event }) => event.at, reservedBy: null }) },
        'agent.delete': { target: 'revoked', actions: assign({ revokedAt: ({ event }) => event.at, reservedBy: null }) },
      },
    },
    consumed: { type: 'final' },
    expired: { type: 'final' },
    revoked: { type: 'final' },
  },
});

/** The machine with time read from `clock` (architecture.md: time is injected). */
export function capabilityLogic(clock: { now(): number }) {
  return capabilityMachine.provide({
    guards: { ttlElapsed: ({ context }) => clock.now() >= context.expiresAt },
    delays: { ttlTimer: ({ context }) => Math.min(MAX_TIMER_MS, Math.max(0, context.expiresAt - clock.now())) },
  });
}

/** What a verification decided, read from the snapshot right after `request.verify`. */
export type Verdict = { granted: true } | { granted: false; reason: 'consumed' | 'expired' | 'revoked' };

/** Interpret the snapshot after `request.verify` for request `requestId`. */
export function verdictOf(snapshot: { value: unknown; context: CapabilityContext }, requestId: string): Verdict {
  const state = snapshot.value as string;
  if (state !== 'live') return { granted: false, reason: state as 'consumed' | 'expired' | 'revoked' };
  if (snapshot.context.singleUse && snapshot.context.reservedBy !== requestId) return { granted: false, reason: 'consumed' };
  return { granted: true };
}
