import { ACTION_ID_RE } from '../../domain/ids.js';
import { content, fail, type CommandResult } from '../../domain/result.js';
import { actionHelp, FIELD_FILE_LINE, helpCore } from '../../sfmd/usage.js';
import { wantsHelp } from '../../sfmd/usage.js';
import type { LoadedDocument } from '../docContract.js';
import { HUB_ONLY_MESSAGE } from '../registry.js';
import type { Command, CommandContext, CommandFallback } from '../types.js';
import { currentDocument } from './current.js';

/** Both features are always installed together; a missing invoker is a wiring bug, not a user error. */
export const NO_EXECUTION = 'Internal error: no action invoker is registered';

/** `Actions of <display> (<n>)` listing (behaviour.md §2.6). */
function listing(loaded: LoadedDocument): CommandResult {
  const acts = loaded.doc.actions;
  const system = `Actions of ${loaded.display} (${acts.length})`;
  if (acts.length === 0) return content(system, 'This document declares no actions.');
  const lines: string[] = [];
  acts.forEach((a, i) => lines.push(...(i > 0 ? [''] : []), ...helpCore(a)));
  if (acts.some((a) => a.fields.length > 0)) lines.push('', FIELD_FILE_LINE);
  return content(system, lines);
}

/** Call action `id` of the document: help, the invoker of the actions feature, or the placeholder. */
async function callAction(ctx: CommandContext, loaded: LoadedDocument, id: string, args: string): Promise<CommandResult> {
  const action = loaded.doc.actions.find((a) => a.id === id);
  if (!action) {
    const ids = loaded.doc.actions.map((a) => a.id);
    return fail('NOT_FOUND', `Action not found: ${id}`, { details: [ids.length ? `Actions: ${ids.join(', ')}` : 'This document declares no actions.'], recovery: '/act' });
  }
  if (wantsHelp(args, action)) {
    const h = actionHelp(action);
    return content(h.system, h.lines);
  }
  const actions = ctx.services.actions;
  if (!actions) return fail('INTERNAL_ERROR', NO_EXECUTION);
  return actions.invoke(ctx, loaded, id, args);
}

/** The document for /act: the current one (app topics load the package root), or a failure. */
async function documentFor(ctx: CommandContext): Promise<LoadedDocument | CommandResult> {
  const cur = await currentDocument(ctx);
  if (cur === null) return fail('INVALID_TARGET', 'No document open.', { recovery: '/open <target>' });
  return cur;
}

/** Argument text of an invocation: header rest plus `\n` and the body when there is one (behaviour.md §5.1). */
const argText = (rest: string, body: string) => (body === '' ? rest : `${rest}\n${body}`);

/** `/act`, `/act --help`, `/act.<id> …`, `/act <id> …` (behaviour.md §2.6, §5). */
function actCommand(name: 'act' | 'action'): Command {
  return {
    name,
    takesBody: true,
    async run(ctx) {
      if (ctx.session.ref.type === 'hub') return fail('INVALID_TARGET', HUB_ONLY_MESSAGE);
      let id = ctx.sub;
      let rest = ctx.args;
      if (id === null) {
        const m = /^(\S+)\s*([\s\S]*)$/.exec(ctx.args.trim());
        if (!m || m[1] === '--help' || m[1] === '-h') {
          if (ctx.body.trim() !== '') return fail('INVALID_ARGS', `/${name} does not take a body (text after the first line)`);
          const doc = await documentFor(ctx);
          return 'ok' in doc ? doc : listing(doc);
        }
        id = m[1].toLowerCase();
        rest = m[2];
      }
      const doc = await documentFor(ctx);
      if ('ok' in doc) return doc;
      return callAction(ctx, doc, id, argText(rest, ctx.body));
    },
  };
}

export const actCommands: Command[] = [actCommand('act'), actCommand('action')];

/** behaviour.md §2.1 step 5: `/<id>` runs an action of the current document when the word is not built in. */
export const actionFallback: CommandFallback = async (ctx) => {
  if (ctx.session.ref.type === 'hub' || ctx.sub !== null || !ACTION_ID_RE.test(ctx.word)) return null;
  const cur = await currentDocument(ctx);
  if (cur === null || 'ok' in cur) return null;
  if (!cur.doc.actions.some((a) => a.id === ctx.word)) return null;
  return callAction(ctx, cur, ctx.word, argText(ctx.args, ctx.body));
};
