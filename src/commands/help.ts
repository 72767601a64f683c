import { content, fail } from '../domain/result.js';
import type { Command } from './types.js';
import { ownValue } from '../domain/keys.js';
import { HELP_ENTRIES, HELP_PAGE } from './helpText.js';

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
    // The `Actions on this page` section comes from the documents feature (behaviour.md §2.4).
    const usage = ctx.services.documents?.usage(ctx) ?? [];
    if (usage.length > 0) lines.push('', 'Actions on this page', ...usage);
    return content('Loom commands', lines);
  },
};
