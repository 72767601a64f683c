import type { CommandResult } from '../domain/result.js';
import type { ActionDoc } from '../sfmd/types.js';
import type { CommandContext } from './types.js';

/**
 * The contract between the documents feature (issue 5: loading, rendering, /act listing and --help)
 * and the actions feature (issue 6: invocation, execution, templates, default actions). Each side
 * registers its providers in `services.ext` under these keys; neither imports the other.
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

/** Provided by the documents feature: the topic's current document, loading the package root in an `app` topic with no document (env check applies). Returns a failure result when it cannot. */
export type CurrentDocumentProvider = (ctx: CommandContext) => Promise<LoadedDocument | CommandResult | null>;
export const CURRENT_DOCUMENT_KEY = 'documents.current';

/** Provided by the actions feature: invoke action `id` with argument text `args` (behaviour.md §5). */
export type ActionInvoker = (ctx: CommandContext, loaded: LoadedDocument, id: string, args: string) => Promise<CommandResult>;
export const INVOKE_ACTION_KEY = 'actions.invoke';

/** Provided by the actions feature: run the `default:` action after /open, /refresh, /back (behaviour.md §4.13); returns the part after the rule. */
export type DefaultActionRunner = (ctx: CommandContext, loaded: LoadedDocument) => Promise<CommandResult>;
export const DEFAULT_ACTION_KEY = 'actions.runDefault';

/** Type guard: a provider answer that is a loaded document, not a failure. */
export function isLoaded(x: LoadedDocument | CommandResult | null): x is LoadedDocument {
  return x !== null && 'doc' in x;
}
