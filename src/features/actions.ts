import { makeDefaultRunner, makeInvoker } from '../commands/actions/invoke.js';
import type { Feature } from './types.js';

/**
 * The actions feature: provides `services.actions` (invocation and the default action,
 * commands/docContract.ts). The documents feature owns the command words (`/act.<id>`, `/act <id>`,
 * `/action…`, `/<id>`) and calls the invoker with the whole argument text (behaviour.md §5.1).
 */
export const actionsFeature: Feature = () => ({
  services: { actions: { invoke: makeInvoker(), runDefault: makeDefaultRunner() } },
});
