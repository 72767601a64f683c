import { content, fail } from '../domain/result.js';
import { unavailableMessage } from '../domain/wire.js';
import type { Command } from './types.js';
import { helpEntry, helpPage } from './helpText.js';
import { wireOf } from './wire.js';


/** `/help [<command>]` (behaviour.md §2.4; on the user wire without the words it lacks, §11). */
export const helpCommand: Command = {
  name: 'help',
  run(ctx) {
    const wire = wireOf(ctx);
    const arg = ctx.args.trim().replace(/^\//, '').toLowerCase();
    if (arg) {
      if (wire.unavailableWords.includes(arg)) return fail('COMMAND_UNSUPPORTED', unavailableMessage(wire, arg));
      const entry = helpEntry(wire, arg);
      if (!entry) return fail('NOT_FOUND', `No help for /${arg}`);
      return content(`Help: /${arg}`, [...entry.syntax, entry.sentence, ...(entry.flags ?? [])]);
    }
    const lines = helpPage(wire);
    // The `Actions on this page` section comes from the documents feature (behaviour.md §2.4).
    const usage = ctx.services.documents?.usage(ctx) ?? [];
    if (usage.length > 0) lines.push('', 'Actions on this page', ...usage);
    return content('Loom commands', lines);
  },
};
