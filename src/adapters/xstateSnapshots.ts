import type { InspectedSnapshotEvent, InspectionEvent } from 'xstate';

/** The part of an XState actor system the tap uses (the daemon's, or any other). */
export interface InspectableSystem {
  inspect(observer: (event: InspectionEvent) => void): { unsubscribe(): void };
}

/** An `@xstate.snapshot` inspection event as XState makes it (before it adds `rootId` for observers). */
export type SnapshotEvent = Omit<InspectedSnapshotEvent, 'rootId'>;

/** The one internal hook of the actor system every inspection event goes through (xstate 5: createSystem). */
interface HookedSystem {
  _sendInspectionEvent?: (event: { type: string }) => void;
}

/** The listeners of each tapped system, and the hook the tap replaced. */
const taps = new WeakMap<InspectableSystem, { original: (event: { type: string }) => void; listeners: Set<(ev: SnapshotEvent) => void> }>();

/** Whether `system` has the internal hook {@link observeSnapshots} taps (a test pins it to the XState in use). */
export function hasSnapshotHook(system: InspectableSystem): boolean {
  return typeof (system as HookedSystem)._sendInspectionEvent === 'function';
}

/**
 * Every `@xstate.snapshot` event of the actor system (what the inspector's serialiser reads; the
 * other inspection events make no message). Returns the unsubscribe function.
 *
 * Why not `system.inspect`: an inspect observer makes XState copy every inspection event into a
 * new object (`{...event, rootId}`) before any observer sees it, 9 events per command of which 2
 * are snapshots, at five different shapes; the copy site goes megamorphic and costs as much per
 * command as the rest of the feed. So this wraps the system's internal
 * `_sendInspectionEvent` (called through the system object for every event, observers or not) and
 * passes snapshot events on uncopied. Without that hook (another XState) it falls back to
 * `system.inspect`, which is correct, only slower. Listeners run after XState's own observers; a
 * listener must not throw (the caller guards it).
 */
export function observeSnapshots(system: InspectableSystem, listener: (ev: SnapshotEvent) => void): () => void {
  if (!hasSnapshotHook(system)) {
    const sub = system.inspect((ev) => {
      if (ev.type === '@xstate.snapshot') listener(ev as InspectedSnapshotEvent);
    });
    return () => sub.unsubscribe();
  }
  const hooked = system as HookedSystem;
  let tap = taps.get(system);
  if (!tap) {
    const original = hooked._sendInspectionEvent as (event: { type: string }) => void;
    const listeners = new Set<(ev: SnapshotEvent) => void>();
    tap = { original, listeners };
    taps.set(system, tap);
    hooked._sendInspectionEvent = (event) => {
      original(event);
      if (event.type === '@xstate.snapshot') for (const l of listeners) l(event as SnapshotEvent);
    };
  }
  const { original, listeners } = tap;
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    // The last listener gone: the system is exactly as XState made it again.
    if (listeners.size === 0 && taps.get(system) === tap) {
      hooked._sendInspectionEvent = original;
      taps.delete(system);
    }
  };
}
