import { createActor, type AnyStateMachine, type Actor, type InspectionEvent } from 'xstate';
import type { Clock } from '../domain/ports.js';

/** A subscriber to every actor's inspection events (state-inspector UI, trace recorder). */
export type InspectionListener = (event: InspectionEvent) => void;

/**
 * The one place actors are created (issue 2 item 11): every actor gets the shared clock and the
 * inspection observer, so the inspector and trace recording subscribe without touching machines.
 */
export class ActorFactory {
  private readonly listeners = new Set<InspectionListener>();
  /** Listeners that already failed once: one warning each, not one per inspection event. */
  private readonly warned = new WeakSet<InspectionListener>();

  constructor(readonly clock: Clock) {}

  /** Subscribe to inspection events; returns the unsubscribe function. */
  subscribe(listener: InspectionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Create (not start) an actor of `machine` with the shared clock and inspection tap. */
  create<M extends AnyStateMachine>(machine: M, input: unknown, systemId?: string): Actor<M> {
    return createActor(machine, {
      input,
      clock: this.clock,
      ...(systemId ? { systemId } : {}),
      inspect: (ev: InspectionEvent) => {
        for (const l of this.listeners) {
          try {
            l(ev);
          } catch (err) {
            // A broken observer must never break the actor it watches; say so once per observer.
            if (!this.warned.has(l)) {
              this.warned.add(l);
              process.emitWarning(`inspection listener failed: ${(err as Error).message}`);
            }
          }
        }
      },
    } as never) as Actor<M>;
  }
}
