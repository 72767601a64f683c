import type { AnyActorRef } from 'xstate';
import { capabilityMachine, type CapabilityInput } from './capability.js';
import { childrenOf } from './children.js';
import { shelfMachine } from './shelf.js';

/**
 * The capability shelves of one agent (machines/shelf.ts says why shelves): an agent's live
 * capabilities are spread over up to 64 shelves by the first character of their token id, so a mint
 * copies one shelf's ~n/64 children and the agent's few, not all n. Capabilities keep their system
 * ids (`cap:<token_id>`, behaviour.md §13.3).
 */

export type CapabilityOpenEvent = { type: 'cap.open'; input: CapabilityInput };

/** Child-id prefix of an agent's capability shelves: token ids are `cap_` + base64url, so one of 64. */
export const SHELF_PREFIX = 'caps:';

/** The shelf (child id under the agent) that holds a token. */
export const shelfChildId = (tokenId: string): string => `${SHELF_PREFIX}${tokenId.charAt(4) || '_'}`;

/** Child id of a capability on its shelf. */
export const capChildId = (tokenId: string): string => `cap:${tokenId}`;
/** behaviour.md §13.3 system id of a capability actor. */
export const capSystemId = (tokenId: string): string => `cap:${tokenId}`;

/** The live capabilities on an agent's shelves, given the agent's children. */
export function liveOnShelves(agentChildren: Record<string, AnyActorRef | undefined>): number {
  let n = 0;
  for (const [id, shelf] of Object.entries(agentChildren)) if (shelf && id.startsWith(SHELF_PREFIX)) n += Object.keys(childrenOf(shelf)).length;
  return n;
}

/** One shelf of capabilities; `agent.delete` revokes every one (spec §3 Capability, last row). */
export const capabilityShelfMachine = shelfMachine<CapabilityOpenEvent, { type: 'agent.delete'; at: number }>({
  id: 'capabilityShelf',
  child: capabilityMachine,
  open: 'cap.open',
  place: (e) => ({ id: capChildId(e.input.tokenId), systemId: capSystemId(e.input.tokenId), input: e.input }),
  broadcast: ['agent.delete'],
});
