import { ACTION_ID_RE } from '../domain/ids.js';
import { CURRENT_DOCUMENT_KEY, DEFAULT_ACTION_KEY, INVOKE_ACTION_KEY, isLoaded, type CurrentDocumentProvider } from '../commands/docContract.js';
import { makeDefaultRunner, makeInvoker } from '../commands/actions/invoke.js';
import type { CommandContext } from '../commands/types.js';
import type { Feature } from '../features.js';

/** Argument text of an action call (behaviour.md §5.1): the header rest, then `\n` and the body. */
export function actionArgs(ctx: CommandContext): string {
  return ctx.body === '' ? ctx.args : `${ctx.args}\n${ctx.body}`;
}

/**
 * The actions feature (issue 6): provides the ActionInvoker and the DefaultActionRunner of
 * docContract.ts to the documents feature, and resolves `/<id>` for actions of the current document
 * (behaviour.md §2.1 item 5) once a current-document provider is registered.
 */
export const actionsFeature: Feature = (ctx, registry) => {
  const invoke = makeInvoker();
  ctx.system.services.ext.set(INVOKE_ACTION_KEY, invoke);
  ctx.system.services.ext.set(DEFAULT_ACTION_KEY, makeDefaultRunner());
  registry.addFallback(async (c) => {
    if (c.sub !== null || !ACTION_ID_RE.test(c.word) || c.session.ref.type === 'hub') return null;
    const current = c.services.ext.get(CURRENT_DOCUMENT_KEY) as CurrentDocumentProvider | undefined;
    if (!current) return null;
    const loaded = await current(c);
    if (!isLoaded(loaded) || !loaded.doc.actions.some((a) => a.id === c.word)) return null;
    return invoke(c, loaded, c.word, actionArgs(c));
  });
};
