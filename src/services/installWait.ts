import type { InstallOutcome } from '../domain/install.js';
import type { InstallActor } from '../actors/tree.js';

/**
 * The outcome of a running install actor (spec §3 Package install), whatever state it ends in: the
 * machine's output, or what its context says when it was stopped from outside. `signal` cancels it
 * (the topic that asked was closed).
 */
export function installOutcome(ref: InstallActor, signal?: AbortSignal): Promise<InstallOutcome> {
  const onAbort = () => ref.send({ type: 'install.cancel', code: 'CONFLICT', message: 'The topic was closed while this install ran' });
  signal?.addEventListener('abort', onAbort, { once: true });
  return new Promise((resolve) => {
    const finish = () => {
      signal?.removeEventListener('abort', onAbort);
      const snap = ref.getSnapshot();
      resolve(snap.output ?? snap.context.outcome ?? { ok: false, code: 'CONFLICT', message: 'The install was stopped' });
    };
    if (ref.getSnapshot().status !== 'active') finish();
    else ref.subscribe({ complete: finish, error: finish });
  });
}
