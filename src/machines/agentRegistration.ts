import { fromPromise } from 'xstate';
import type { AgentProfile } from '../domain/ports.js';
import type { NetworkPolicy } from '../domain/networkPolicy.js';
import type { SandboxMode } from '../domain/sandbox.js';

/**
 * POST /agents as the agent actor's own event (spec §4.3: one agent per id; only provided fields
 * change). The agent machine takes each `agent.register` into a queue in its context and persists
 * them one at a time (the `persist` actor: home folder, real paths, registry); the answer is
 * emitted as `agent.registered` with the correlation id the machine gave the request. So two
 * registrations of one id never interleave, whatever order their HTTP requests arrive in.
 */

/** What a registration asks for: the validated POST /agents fields that become the profile. */
export interface RegistrationFields {
  agentId: string;
  home?: string;
  allowedPaths?: string[];
  sandbox?: SandboxMode;
  network?: NetworkPolicy;
}

/** One registration waiting in the agent's queue, with the correlation id the machine gave it. */
export interface PendingRegistration {
  id: string;
  fields: RegistrationFields;
}

/** What `persist` resolves with: the stored profile, and whether the agent's sessions must close (§9.5). */
export interface PersistOutput {
  profile: AgentProfile;
  closeTopics: boolean;
  /** When it was stored (the time its closed sessions end). */
  at: number;
}

/** The input of `persist`: the profile before this registration (none for a new agent) and the request. */
export interface PersistInput {
  existing: AgentProfile | null;
  fields: RegistrationFields;
}

/** The `persist` actor's logic (provided by src/actors with the folder and registry I/O). */
export type PersistLogic = ReturnType<typeof fromPromise<PersistOutput, PersistInput>>;

/** Without a provided `persist`, a registration stores nothing and keeps what it was given (machine tests). */
export const keepAsGiven: PersistLogic = fromPromise<PersistOutput, PersistInput>(async ({ input }) => ({
  profile: {
    ...(input.existing ?? { createdAt: new Date(0).toISOString() }),
    id: input.fields.agentId,
    home: input.fields.home ?? input.existing?.home ?? '',
    allowedPaths: input.fields.allowedPaths ?? input.existing?.allowedPaths ?? [],
  },
  closeTopics: false,
  at: 0,
}));

/** The event a registration is: validated fields (the raw body stays with the caller). */
export type RegisterEvent = { type: 'agent.register'; fields: RegistrationFields };

/** What the agent emits for each registration it took. */
export type RegisteredEvent =
  | { type: 'agent.registered'; id: string; ok: true; profile: AgentProfile; created: boolean }
  | { type: 'agent.registered'; id: string; ok: false; error: unknown };

/** The correlation id of the n-th registration an agent actor took. */
export const registrationId = (n: number): string => `reg-${n}`;

/** The placeholder profile of an agent actor whose first registration is being stored (never read: readers see `registering`). */
export function unregisteredProfile(agentId: string): AgentProfile {
  return { id: agentId, home: '', allowedPaths: [], createdAt: '' };
}
