import type { ActionDoc } from '../sfmd/types.js';
import type { ActionServices } from './types.js';

/**
 * The contract between the documents feature (issue 5: loading, rendering, /act listing and --help)
 * and the actions feature (issue 6: invocation, execution, templates, default actions). The actions
 * feature provides `services.actions` (commands/types.ts ActionServices); neither imports the other.
 */

/** behaviour.md §3.1 origin of a document. */
export type DocOrigin = 'local' | 'web' | 'manifest';

/** A loaded document as the actions side needs it. */
export interface LoadedDocument {
  doc: ActionDoc;
  origin: DocOrigin;
  /** Absolute URI (meta.uri). */
  uri: string;
  /** Display (behaviour.md §1.4). */
  display: string;
  /** Local documents: absolute file path. */
  path?: string;
  /** Folder CLI actions run in: the document's folder, or the package folder (behaviour.md §4.8). */
  dir?: string;
  /** Installed package name when the document belongs to one (for `app:<name>` scopes, /uninstall). */
  packageName?: string;
  /** Local file of `[!requirements]` for `Setup: /open <path>` lines, if any. */
  requirements?: string;
}

/** The actions feature's invoker (services.actions.invoke): action `id` with argument text `args` (behaviour.md §5). */
export type ActionInvoker = ActionServices['invoke'];

/** The actions feature's default-action runner (services.actions.runDefault, behaviour.md §4.13). */
export type DefaultActionRunner = ActionServices['runDefault'];
