import { enqueueActions, setup, type AnyActorLogic, type AnyActorRef, type EventObject } from 'xstate';
import { childFailure, childrenOf, DONE_PREFIX, endedChild, ERROR_PREFIX, type ChildEndEvent } from './children.js';

/**
 * A shelf: a container of actors in the tree (architecture.md, "The actor tree"), not a spec table.
 * XState copies a parent's whole `children` object on every spawn and stop, so a parent with
 * thousands of direct children pays for all of them on each change; spreading them over shelves
 * bounds that copy. The daemon root is a shelf of agent shelves, an agent shelf holds agents, a
 * capability shelf holds one agent's live capabilities.
 *
 * A shelf has one state. On its `open` event it spawns the child the event names (once: an id that
 * is already a child is kept as it is), and with `forward` hands the event on to that child (a shelf
 * of shelves). `broadcast` events go to every child. A child that reaches a final state leaves the
 * shelf; one that fails is reported (`reportChildError`, provided by src/actors) and stopped, and its
 * siblings go on. Shelves have no system id; what they hold keeps its own.
 */
export interface ShelfOptions<TOpen extends EventObject> {
  /** The machine id (GET /inspect/machines never lists shelves: they mirror no spec table). */
  id: string;
  /** What the shelf holds (provided again by src/actors with its effects). */
  child: AnyActorLogic;
  /** The event that opens a child. */
  open: TOpen['type'];
  /** The child the event names: its id on this shelf, its system id, its input. */
  place(event: TOpen): { id: string; systemId?: string; input?: unknown };
  /** Hand the open event on to the child after spawning it (a shelf of shelves). */
  forward?: boolean;
  /** Events sent on to every child. */
  broadcast?: readonly string[];
}

/** A shelf machine (see {@link ShelfOptions}); its child logic is the actor `child`. */
export function shelfMachine<TOpen extends EventObject, TBroadcast extends EventObject = never>(o: ShelfOptions<TOpen>) {
  const broadcast = new Set(o.broadcast ?? []);
  return setup({
    types: { events: {} as TOpen | TBroadcast | ChildEndEvent },
    actors: { child: o.child },
    actions: {
      /** A child failed (a bug below): said by src/actors; the child is stopped, its siblings go on. */
      reportChildError: (_args, _params: { childId: string; error: unknown }) => {},
    },
  }).createMachine({
    id: o.id,
    on: {
      // One handler: the open and broadcast events are the options', and a child's end is XState's
      // `xstate.done.actor.<id>` (a final state: it leaves the shelf) or `xstate.error.actor.<id>`.
      '*': {
        actions: enqueueActions(({ enqueue, event, self }) => {
          if (event.type === o.open) {
            const at = o.place(event as TOpen);
            // Object.hasOwn: an id such as `toString` is not a child because a plain object inherits it.
            if (!Object.hasOwn(childrenOf(self), at.id)) {
              enqueue.spawnChild('child', { id: at.id, ...(at.systemId !== undefined ? { systemId: at.systemId } : {}), input: at.input as never });
            }
            if (o.forward) enqueue.sendTo(at.id, event);
          } else if (broadcast.has(event.type)) {
            for (const child of Object.values(childrenOf(self))) enqueue.sendTo(child, event);
          } else if (event.type.startsWith(DONE_PREFIX)) {
            enqueue.stopChild(endedChild(event.type));
          } else if (event.type.startsWith(ERROR_PREFIX)) {
            enqueue({ type: 'reportChildError', params: childFailure(event as ChildEndEvent) });
            enqueue.stopChild(endedChild(event.type));
          }
        }),
      },
    },
  });
}

/** Every child of the shelves of `parent` whose ids start with `prefix`, as [child id on its shelf, actor]. */
export function onShelves(parent: AnyActorRef, prefix: string): Array<[string, AnyActorRef]> {
  const out: Array<[string, AnyActorRef]> = [];
  for (const [id, shelf] of Object.entries(childrenOf(parent))) {
    if (!shelf || !id.startsWith(prefix)) continue;
    for (const [childId, child] of Object.entries(childrenOf(shelf))) if (child) out.push([childId, child]);
  }
  return out;
}
