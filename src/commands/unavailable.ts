import { fail } from '../domain/result.js';
import { unavailableMessage, type WireDescription } from '../domain/wire.js';
import type { Command } from './types.js';

/**
 * A command word whose surface the wire lacks (behaviour.md §11: `/events…` and `/webhook` on the user
 * wire): `ERROR(COMMAND_UNSUPPORTED): /<word> is not available in the user wire variant`, whatever
 * its arguments or body, so a 0.1-era client learns why rather than `Unknown command`.
 */
export function unavailableCommand(word: string, wire: WireDescription): Command {
  return {
    name: word,
    // A body must not turn the answer into "does not take a body": the word itself is unavailable.
    takesBody: true,
    run: (ctx) => fail('COMMAND_UNSUPPORTED', unavailableMessage(wire, ctx.sub === null ? ctx.word : `${ctx.word}.${ctx.sub}`)),
  };
}
