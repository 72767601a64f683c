import type { AnyActorRef, EventObject, Snapshot, SnapshotFrom } from 'xstate';

/** The actor's snapshot, typed by its logic (`AnyActorRef` gives it untyped). */
const snapshotOf = <A extends AnyActorRef>(actor: A): SnapshotFrom<A> => actor.getSnapshot() as SnapshotFrom<A>;

/**
 * How a request sent to an actor is answered. The machine gives each request its correlation id
 * (a counter in its context, read back by `id` right after the send), so no caller predicts it.
 * The answer is either one of the actor's emitted events (`answer` picks this request's out of
 * them), or the actor's end (`ended`, also what a request gets when the actor stops before it is
 * answered: the agent was deleted).
 */
export interface Reply<A extends AnyActorRef, T> {
  /** The correlation id the machine gave the request just sent, from its snapshot. */
  id?: (snapshot: SnapshotFrom<A>) => string;
  /** Emitted event type that carries answers (all types when absent). */
  on?: string;
  /** This request's answer in an emitted event, or undefined when the event is not its answer. */
  answer?: (event: EventObject, id: string) => T | Error | undefined;
  /** The answer when the actor ends (or has ended) before `answer` gave one. */
  ended: (snapshot: SnapshotFrom<A>) => T | Error;
}

/** What may cut a request short: an abort signal and a deadline, each with the answer it gives. */
export interface AskOptions<T> {
  signal?: AbortSignal;
  /** What the request answers when `signal` aborts; undefined keeps waiting (the abort sent the actor an event). */
  onAbort?: () => T | Error | undefined;
  timeoutMs?: number;
  /** What the request answers at the deadline. */
  onTimeout?: () => T | Error;
}

/**
 * Send `event` and return the correlation id the machine gave it, with the events it emitted
 * while taking it (an answer may be given in the same step). The actor must take the event now:
 * a request sent from inside the actor's own step would wait in its mailbox with no id yet, and
 * that is a bug of the caller, said at once rather than answered with another request's id.
 */
export function sendForId<A extends AnyActorRef>(actor: A, event: Parameters<A['send']>[0], id: (snapshot: SnapshotFrom<A>) => string, on = '*'): { id: string; emitted: EventObject[] } {
  const before = id(snapshotOf(actor));
  const emitted: EventObject[] = [];
  const sub = actor.on(on, (ev: EventObject) => { emitted.push(ev); });
  try {
    actor.send(event);
  } finally {
    sub.unsubscribe();
  }
  const after = id(snapshotOf(actor));
  if (after === before) throw new Error(`${actor.id} did not take ${(event as EventObject).type} in this step (sent from inside its own step, or it has ended)`);
  return { id: after, emitted };
}

/**
 * Send `event` (none: only wait) to `actor` and resolve with its answer (see Reply); an Error
 * answer rejects. The one place that waits for an actor: every service and actor that asks uses it.
 */
export function ask<A extends AnyActorRef, T>(actor: A, event: Parameters<A['send']>[0] | null, reply: Reply<A, T>, options: AskOptions<T> = {}): Promise<T> {
  const { signal, timeoutMs } = options;
  return new Promise<T>((resolve, reject) => {
    let id: string | null = null;
    let settled = false;
    const early: EventObject[] = [];
    // An actor that has already ended completes a new subscriber at once, before these are set.
    let answers: { unsubscribe(): void } | null = null;
    let ends: { unsubscribe(): void } | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const settle = (value: T | Error) => {
      if (settled) return;
      settled = true;
      answers?.unsubscribe();
      ends?.unsubscribe();
      signal?.removeEventListener('abort', onAbort);
      if (timer) clearTimeout(timer);
      if (value instanceof Error) reject(value);
      else resolve(value);
    };
    const offer = (ev: EventObject) => {
      const value = reply.answer?.(ev, id as string);
      if (value !== undefined) settle(value);
    };
    const onAbort = () => {
      const value = options.onAbort?.();
      if (value !== undefined) settle(value);
    };
    answers = reply.answer ? actor.on(reply.on ?? '*', (ev: EventObject) => { if (id === null) early.push(ev); else offer(ev); }) : null;
    ends = actor.subscribe({ complete: () => settle(reply.ended(snapshotOf(actor))), error: (err: unknown) => settle(err instanceof Error ? err : new Error(String(err))) });
    if (settled) return ends.unsubscribe();
    timer = timeoutMs === undefined ? null : setTimeout(() => settle(options.onTimeout?.() ?? new Error(`${actor.id} did not answer within ${timeoutMs} ms`)), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    if (!settled && (snapshotOf(actor) as Snapshot<unknown>).status !== 'active') settle(reply.ended(snapshotOf(actor)));
    if (settled) return;
    try {
      if (event) {
        if (reply.id) id = sendForId(actor, event, reply.id).id;
        else actor.send(event);
      }
    } catch (err) {
      return settle(err as Error);
    }
    id ??= '';
    for (const ev of early) offer(ev);
  });
}
