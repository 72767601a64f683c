import { content, fail } from '../domain/result.js';
import type { Command, CommandContext } from './types.js';
import { ownValue } from '../domain/keys.js';
import { HELP_ENTRIES, HELP_PAGE } from './helpText.js';

/**
 * Usage lines of the current document's actions for the `Actions on this page` section
 * (behaviour.md §2.4). Filled by the documents feature through services.ext.
 */
export type ActionUsageProvider = (ctx: CommandContext) => string[];
export const ACTION_USAGE_KEY = 'help.actionUsage';

/** `/help [<command>]` (behaviour.md §2.4). */
export const helpCommand: Command = {
  name: 'help',
  run(ctx) {
    const arg = ctx.args.trim().replace(/^\//, '').toLowerCase();
    if (arg) {
      const entry = ownValue(HELP_ENTRIES, arg);
      if (!entry) return fail('NOT_FOUND', `No help for /${arg}`);
      return content(`Help: /${arg}`, [...entry.syntax, entry.sentence, ...(entry.flags ?? [])]);
    }
    const lines = [...HELP_PAGE];
    const usage = (ctx.services.ext.get(ACTION_USAGE_KEY) as ActionUsageProvider | undefined)?.(ctx) ?? [];
    if (usage.length > 0) lines.push('', 'Actions on this page', ...usage);
    return content('Loom commands', lines);
  },
};
