import { DEFAULT_ACTION_KEY, INVOKE_ACTION_KEY } from '../commands/docContract.js';
import { makeDefaultRunner, makeInvoker } from '../commands/actions/invoke.js';
import type { Feature } from '../features.js';

/**
 * The actions feature (issue 6): provides the ActionInvoker and the DefaultActionRunner of
 * docContract.ts. The documents feature owns the command words (`/act.<id>`, `/act <id>`,
 * `/action…`, `/<id>`) and calls the invoker with the whole argument text (behaviour.md §5.1).
 */
export const actionsFeature: Feature = (ctx) => {
  ctx.system.services.ext.set(INVOKE_ACTION_KEY, makeInvoker());
  ctx.system.services.ext.set(DEFAULT_ACTION_KEY, makeDefaultRunner());
};
