import { content, fail, nextLine } from '../../domain/result.js';
import { HUB_ONLY_MESSAGE } from '../registry.js';
import type { Command } from '../types.js';
import { currentDocument } from './current.js';
import { docData } from './state.js';

/** `/nav [<menu>]` (behaviour.md §3.8). */
export const navCommand: Command = {
  name: 'nav',
  async run(ctx) {
    if (ctx.session.ref.type === 'hub') return fail('INVALID_TARGET', HUB_ONLY_MESSAGE);
    const cur = await currentDocument(ctx);
    if (cur === null) return fail('INVALID_TARGET', 'No document open.');
    if ('ok' in cur) return cur;
    const data = docData(ctx.session);
    if (!data) return fail('INVALID_TARGET', 'No document open.');
    const name = ctx.args.trim();
    const display = data.loaded.display;
    if (name === '') {
      if (data.menus.length === 0) return content(`Menus of ${display}`, '(no menus — declare one with [!nav:main](./nav/main.md))');
      const lines = data.menus.map((m) => {
        const labels = m.entries.slice(0, 3).map((e) => e.label).join(', ');
        const more = m.entries.length > 3 ? `, … (${m.entries.length - 3} more)` : '';
        return `${m.name} (${m.entries.length}): ${labels}${more}`.trimEnd();
      });
      return content(`Menus of ${display}`, [...lines, nextLine([`/nav ${data.menus[0].name}`])]);
    }
    const menu = data.menus.find((m) => m.name === name);
    if (!menu) {
      const detail = data.menus.length ? `Menus: ${data.menus.map((m) => m.name).join(', ')}` : 'This document has no menus.';
      return fail('NOT_FOUND', `Menu not found: ${name}`, { details: [detail] });
    }
    const width = Math.max(0, ...menu.entries.map((e) => `@${menu.name}.${e.id}`.length));
    const rows = menu.entries.map((e) => `@${menu.name}.${e.id}`.padEnd(width) + `  ${e.label}`);
    if (rows.length === 0) return content(`Menu ${menu.name}`, '(no entries)');
    return content(`Menu ${menu.name}`, [...rows, nextLine([`/open @${menu.name}.${menu.entries[0].id}`])]);
  },
};
