import { assign, setup } from 'xstate';
import type { CapabilityState, PublicCapability } from '../domain/capability.js';
import type { FsVerb } from '../domain/fsPath.js';

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

/** A live capability as minted (or read back at start-up): its public fields. */
export interface CapabilityInput {
  tokenId: string;
  agentId: string;
  pathPrefix: string;
  verbs: FsVerb[];
  ttlMs: number;
  /** ISO time of the mint. */
  createdAt: string;
  singleUse: boolean;
  /** Absolute expiry, ms since the epoch. */
  expiresAt: number;
}

/** The machine's context: the input plus what requests and revocations change. */
export interface CapabilityContext extends CapabilityInput {
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
  actions: {
    /** A final state was reached: record it where listings read dead capabilities (provided by src/actors). */
    archive: (_args, _params: { state: Exclude<CapabilityState, 'live'> }) => {},
  },
}).createMachine({
  id: 'capability',
  context: ({ input }) => ({ ...input, reservedBy: null, usedAt: null, revokedAt: null }),
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
    // Each end is archived in the step that reaches it, so a listing never disagrees with the actor.
    consumed: { type: 'final', entry: { type: 'archive', params: { state: 'consumed' } } },
    expired: { type: 'final', entry: { type: 'archive', params: { state: 'expired' } } },
    revoked: { type: 'final', entry: { type: 'archive', params: { state: 'revoked' } } },
  },
});

/** The machine with time read from `clock` (architecture.md: time is injected). */
export function capabilityLogic(clock: { now(): number }) {
  return capabilityMachine.provide({
    guards: { ttlElapsed: ({ context }) => clock.now() >= context.expiresAt },
    delays: { ttlTimer: ({ context }) => Math.min(MAX_TIMER_MS, Math.max(0, context.expiresAt - clock.now())) },
  });
}

/** The public record of a capability, read from its snapshot (spec §4.2 listing; never its secret). */
export function capabilityView(snapshot: { value: unknown; context: CapabilityContext }): PublicCapability {
  const c = snapshot.context;
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    token_id: c.tokenId, agent_id: c.agentId, path_prefix: c.pathPrefix, verbs: [...c.verbs], ttl_ms: c.ttlMs, single_use: c.singleUse,
    state: snapshot.value as CapabilityState, created_at: c.createdAt, expires_at: new Date(c.expiresAt).toISOString(),
    used_at: iso(c.usedAt), revoked_at: iso(c.revokedAt),
  };
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
