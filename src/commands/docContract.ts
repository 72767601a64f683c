import type { ActionServices } from './types.js';

/**
 * The contract between the documents feature (loading, rendering, /act listing and --help) and the
 * actions feature (invocation, execution, templates, default actions). The actions
 * feature provides `services.actions` (commands/types.ts ActionServices); neither imports the other.
 */

export type { DocOrigin, LoadedDocument } from './types.js';

/** The actions feature's invoker (services.actions.invoke): action `id` with argument text `args` (behaviour.md §5). */
export type ActionInvoker = ActionServices['invoke'];

/** The actions feature's default-action runner (services.actions.runDefault, behaviour.md §4.13). */
export type DefaultActionRunner = ActionServices['runDefault'];
