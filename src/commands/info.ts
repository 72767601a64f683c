import { content, fail } from '../domain/result.js';
import type { SessionState } from '../domain/session.js';
import type { Command } from './types.js';
import { shortcutText } from './format.js';
import { wireOf } from './wire.js';


/** Resolve a shortcut id: value shortcuts first, then page shortcuts (behaviour.md §3.7). */
export function findShortcut(s: SessionState, id: string) {
  return s.valueShortcuts.get(id) ?? s.pageShortcuts.get(id);
}

/** The `type:` line of /info (behaviour.md §2.3). */
function typeLine(s: SessionState): string {
  const r = s.ref;
  if (r.type !== 'app') return r.type;
  return r.config ? `app (package ${r.name}, config ${r.config})` : `app (package ${r.name})`;
}

const key = (k: string) => `${k}:`.padEnd(11);

/** `/info [@<shortcut>]` (behaviour.md §2.3). */
export const infoCommand: Command = {
  name: 'info',
  run(ctx) {
    const arg = ctx.args.trim();
    if (arg) {
      const id = arg.replace(/^@/, '');
      if (!arg.startsWith('@') || !id) return fail('INVALID_ARGS', 'Usage: /info [@<shortcut>]');
      const v = findShortcut(ctx.session, id);
      if (v === undefined) return fail('NOT_FOUND', `Unknown shortcut: @${id}`);
      return { ok: true, code: null, body: `@${id} → ${shortcutText(v)}` };
    }
    const s = ctx.session;
    const lines = [`${key(wireOf(ctx).noun)}${ctx.agent.id}`, `${key('type')}${typeLine(s)}`];
    if (!s.doc || s.ref.type === 'hub') {
      lines.push(`${key('document')}(none)`);
    } else {
      const more = ctx.services.documents?.info(ctx);
      lines.push(...(more ?? [`${key('document')}${s.doc.display}`, `${key('uri')}${s.doc.uri}`, `${key('title')}${s.doc.title ?? '(none)'}`, `${key('anchor')}${s.doc.currentBlock ?? '(none)'}`]));
    }
    return content(`Session ${s.ref.topic}`, lines);
  },
};
