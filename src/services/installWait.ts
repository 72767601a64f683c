import type { InstallOutcome } from '../domain/install.js';
import { ask } from '../actors/ask.js';
import type { InstallActor } from '../actors/tree.js';

/**
 * The outcome of a running install actor (spec §3 Package install), whatever state it ends in: the
 * machine's output, or what its context says when it was stopped from outside. `signal` cancels it
 * (the topic that asked was closed); the install then ends `aborted` and that is the answer.
 */
export function installOutcome(ref: InstallActor, signal?: AbortSignal): Promise<InstallOutcome> {
  return ask<InstallActor, InstallOutcome>(ref, null, {
    ended: (snap) => snap.output ?? snap.context.outcome ?? { ok: false, code: 'CONFLICT', message: 'The install was stopped' },
  }, {
    signal,
    onAbort: () => { ref.send({ type: 'install.cancel', code: 'CONFLICT', message: 'The topic was closed while this install ran' }); return undefined; },
  });
}
