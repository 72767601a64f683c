import { fail } from '../domain/result.js';
import type { Command } from './types.js';
import { renderHub } from './hubs.js';
import { HUB_ONLY_MESSAGE } from './registry.js';

/**
 * `/open` and `/refresh` as far as the foundation goes: hub pages (behaviour.md §2.12).
 * The documents feature replaces these with the full commands of behaviour.md §3.
 */
export const openCommand: Command = {
  name: 'open',
  run(ctx) {
    if (ctx.session.ref.type === 'hub') return ctx.args.trim() === '' ? renderHub(ctx) : fail('INVALID_TARGET', HUB_ONLY_MESSAGE);
    if (ctx.args.trim() === '') return fail('INVALID_ARGS', 'Usage: /open <file|folder|URL|app:NAME|@shortcut|#anchor>');
    return fail('COMMAND_UNSUPPORTED', 'Unknown command: /open', { recovery: '/help lists the commands' });
  },
};

/** `/refresh`: hub pages only until the documents feature lands. */
export const refreshCommand: Command = {
  name: 'refresh',
  run(ctx) {
    if (ctx.session.ref.type === 'hub') return renderHub(ctx);
    return fail('INVALID_TARGET', 'No document open.');
  },
};
