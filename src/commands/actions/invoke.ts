import { content, fail, nextLine, type CommandResult } from '../../domain/result.js';
import { readActionFile } from '../../effects/actionFiles.js';
import { actionHelp, usageLine } from '../../sfmd/usage.js';
import { bindArguments, missingList, type BindContext, type BindOutcome } from '../../sfmd/bind.js';
import type { ActionDef } from '../../sfmd/types.js';
import type { ActionInvoker, DefaultActionRunner, LoadedDocument } from '../docContract.js';
import type { CommandContext } from '../types.js';
import { CLI_LIMITS, runCliActionCommand, type CliLimits } from './cliRun.js';
import { HTTP_LIMITS, runHttpAction, type HttpLimits } from './httpRun.js';
import { definitionDollar, storeDollar } from './variables.js';

/**
 * Action invocation (spec §4.10; behaviour.md §5): find the action, bind the argument text, run
 * it, render its result. The current document, history and page shortcuts never change.
 */

/** Time and size limits of action runs (tests shorten them). */
export interface ActionLimits {
  http: HttpLimits;
  cli: CliLimits;
}

/** The limits of behaviour.md §1.8. */
export const DEFAULT_LIMITS: ActionLimits = { http: HTTP_LIMITS, cli: CLI_LIMITS };

/** The binding world of a call: shortcuts, variables and field files of this topic. */
export function bindContext(ctx: CommandContext, loaded: LoadedDocument): BindContext {
  const s = ctx.session;
  return {
    home: ctx.agent.home,
    vars: s.vars,
    shortcut: (name) => s.valueShortcuts.get(name) ?? s.pageShortcuts.get(name),
    knownShortcuts: () => [...new Set([...s.valueShortcuts.keys(), ...s.pageShortcuts.keys()])],
    storeDollar: storeDollar(ctx, loaded),
    definitionDollar: definitionDollar(ctx, loaded),
    readFieldFile: (path, limit) => readActionFile(ctx.agent, path, limit),
  };
}

/** `ERROR(NOT_FOUND): Action not found: <id>` (behaviour.md §2.6). */
function notFound(loaded: LoadedDocument, id: string): CommandResult {
  const ids = loaded.doc.actions.map((a) => a.id);
  return fail('NOT_FOUND', `Action not found: ${id}`, {
    details: [ids.length > 0 ? `Actions: ${ids.join(', ')}` : 'This document declares no actions.'],
    recovery: '/act',
  });
}

/** Run a bound action. */
async function run(ctx: CommandContext, loaded: LoadedDocument, a: ActionDef, bound: Extract<BindOutcome, { kind: 'ok' }>, limits: ActionLimits): Promise<CommandResult> {
  return a.kind === 'cli'
    ? runCliActionCommand(ctx, loaded, a, bound.fields, bound.warnings, limits.cli)
    : runHttpAction(ctx, loaded, a, bound.fields, bound.warnings, limits.http);
}

/** Map a non-ok binding outcome to its result (help, errors, missing required). */
function bindResult(a: ActionDef, b: Exclude<BindOutcome, { kind: 'ok' }>): CommandResult {
  if (b.kind === 'help') { const h = actionHelp(a); return content(h.system, h.lines); }
  if (b.kind === 'missing') {
    return fail('INVALID_ARGS', `Missing required: ${missingList(b.missing)}`, { details: [usageLine(a)], recovery: `/act.${a.id} --help` });
  }
  return fail(b.code, b.message, { ...(b.details ? { details: b.details } : {}), ...(b.recovery ? { recovery: b.recovery } : {}) });
}

/** The ActionInvoker of docContract.ts. `args` is the whole argument text (header rest, then `\n` and the body). */
export function makeInvoker(limits: ActionLimits = DEFAULT_LIMITS): ActionInvoker {
  return async (ctx, loaded, id, args) => {
    const a = loaded.doc.actions.find((x) => x.id === id);
    if (!a) return notFound(loaded, id);
    const b = bindArguments(a, args, bindContext(ctx, loaded));
    if (b.kind !== 'ok') return bindResult(a, b);
    return run(ctx, loaded, a, b, limits);
  };
}

/**
 * The DefaultActionRunner of docContract.ts (behaviour.md §4.13): runs `default:` with no
 * arguments and returns the part after the rule. It is always ok: a failing default or one with
 * missing required fields is shown, never fails the open.
 */
export function makeDefaultRunner(limits: ActionLimits = DEFAULT_LIMITS): DefaultActionRunner {
  return async (ctx, loaded) => {
    const id = loaded.doc.defaultAction;
    const a = id ? loaded.doc.actions.find((x) => x.id === id) : undefined;
    if (!a) return { ok: true, code: null, body: '' };
    const b = bindArguments(a, '', bindContext(ctx, loaded));
    let r: CommandResult;
    if (b.kind === 'missing') {
      r = { ok: true, code: null, body: [`[default] /act.${a.id} not run — missing required: ${missingList(b.missing)}`, nextLine([`/act.${a.id} --help`])].join('\n') };
    } else if (b.kind !== 'ok') r = bindResult(a, b);
    else r = await run(ctx, loaded, a, b, limits);
    return { ok: true, code: null, body: r.body };
  };
}
