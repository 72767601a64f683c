import type { AnyActorRef } from 'xstate';

/**
 * What every parent machine of the tree (daemon, agent shelf, agent, capability shelf) does with its children's
 * ends: XState tells a parent with `xstate.done.actor.<child id>` (a final state: a deleted agent, a
 * closed topic, a dead capability) or `xstate.error.actor.<child id>` (a bug below). The parent
 * stops that child, so it leaves the tree; an error is reported first, and the siblings go on.
 */

/** An actor's current children by child id (XState keeps them on the snapshot). */
export function childrenOf(ref: AnyActorRef): Record<string, AnyActorRef> {
  return (ref.getSnapshot() as { children?: Record<string, AnyActorRef> }).children ?? {};
}

/** XState's events about a child's end, as a parent machine receives them. */
export type ChildEndEvent =
  | { type: `xstate.done.actor.${string}`; output?: unknown }
  | { type: `xstate.error.actor.${string}`; error: unknown };

/** XState's event types of a child's end, before the child id. */
export const DONE_PREFIX = 'xstate.done.actor.';
export const ERROR_PREFIX = 'xstate.error.actor.';

/** The child id such an event names. */
export function endedChild(eventType: string): string {
  return eventType.slice(eventType.startsWith(DONE_PREFIX) ? DONE_PREFIX.length : ERROR_PREFIX.length);
}

/** The `reportChildError` parameters of an `xstate.error.actor.*` event. */
export function childFailure(event: { type: string; error?: unknown }): { childId: string; error: unknown } {
  return { childId: endedChild(event.type), error: 'error' in event ? event.error : undefined };
}
