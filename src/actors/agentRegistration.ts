import type { AgentInput } from '../domain/agentInput.js';
import { registrationId, type RegisteredEvent, type RegistrationFields } from '../machines/agentRegistration.js';
import type { AgentProfile } from '../domain/ports.js';
import { ask } from './ask.js';
import type { AgentActor } from './tree.js';

/** What the agent actor answered a registration: the stored profile, and whether it created the agent. */
export interface Stored {
  profile: AgentProfile;
  created: boolean;
}

/** The answer of a registration whose agent ended (was deleted) before taking its turn: send it again. */
const AGAIN = Symbol('again');

/** How many agents a registration may see end under it before it gives up (each needs a DELETE in between). */
const MAX_ROUNDS = 8;

/** The fields of a validated POST /agents input that the actor stores (the raw body stays here). */
function fieldsOf(input: AgentInput): RegistrationFields {
  const { agentId, home, allowedPaths, sandbox, network } = input;
  return {
    agentId,
    ...(home !== undefined ? { home } : {}),
    ...(allowedPaths !== undefined ? { allowedPaths } : {}),
    ...(sandbox !== undefined ? { sandbox } : {}),
    ...(network !== undefined ? { network } : {}),
  };
}

/**
 * Send a registration to its agent's actor and wait for the answer in its turn (spec §4.3). When
 * that agent is deleted before the registration's turn, the registration goes to the agent that
 * replaces it: a registration after a DELETE creates the agent again.
 */
export async function registerWithAgent(registrant: (agentId: string) => AgentActor, input: AgentInput): Promise<Stored> {
  const event = { type: 'agent.register' as const, fields: fieldsOf(input) };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const answer = await ask<AgentActor, Stored | typeof AGAIN>(registrant(input.agentId), event, {
      id: (snap) => registrationId(snap.context.taken),
      on: 'agent.registered',
      answer: (ev, id) => {
        const r = ev as RegisteredEvent;
        if (r.id !== id) return undefined;
        if (!r.ok) return r.error instanceof Error ? r.error : new Error(String(r.error));
        return { profile: r.profile, created: r.created };
      },
      ended: () => AGAIN,
    });
    if (answer !== AGAIN) return answer;
  }
  throw new Error(`agent ${input.agentId} was deleted ${MAX_ROUNDS} times while a registration waited`);
}
