import { plural } from '../../domain/text.js';
import { displayOf } from '../../effects/workspace.js';
import { warningLine } from '../../sfmd/parse.js';
import { usageLine } from '../../sfmd/usage.js';
import type { CommandContext } from '../types.js';
import { docData } from './state.js';

const key = (k: string) => `${k}:`.padEnd(11);

const ORIGIN = {
  local: 'local — CLI actions allowed',
  web: 'web page — HTTP actions only',
  manifest: 'linked package — HTTP actions only',
} as const;

/** `/info` lines `document:` … `warnings:` (behaviour.md §2.3). */
export function docInfoLines(ctx: CommandContext): string[] {
  const s = ctx.session;
  const data = docData(s);
  if (!s.doc || !data) return [`${key('document')}(none)`];
  const { doc, origin } = data.loaded;
  const page = [...s.pageShortcuts.keys()].length;
  const lines = [
    `${key('document')}${data.loaded.display}${data.pathDisplay ? ` (${data.pathDisplay})` : ''}`,
    `${key('uri')}${s.doc.uri}`,
    `${key('title')}${s.doc.title ?? '(none)'}`,
    `${key('anchor')}${s.doc.currentBlock ?? '(none)'}`,
    `${key('origin')}${origin === 'manifest' && !data.loaded.packageName ? 'manifest page — HTTP actions only' : ORIGIN[origin]}`,
    `${key('base')}${displayOf(s.baseDir ?? ctx.agent.home, ctx.agent.home)}`,
    `${key('history')}${plural(s.history.length, 'entry', 'entries')}`,
    `${key('actions')}${doc.actions.length ? doc.actions.map((a) => `${a.id} (${a.kind === 'cli' ? 'CLI' : a.method})`).join(', ') : '(none)'}`,
    `${key('menus')}${data.menus.length ? data.menus.map((m) => `${m.name} (${m.entries.length})`).join(', ') : '(none)'}`,
    `${key('shortcuts')}${page} page, ${s.valueShortcuts.size} value`,
    `${key('variables')}${s.vars.size} session (values: /set)`,
    `${key('warnings')}${data.warnings.length}`,
    ...data.warnings.map((w) => `  ${warningLine(w)}`),
  ];
  return lines;
}

/** `Actions on this page` of /help: one usage line per action (behaviour.md §2.4, §5.5). */
export function actionUsageLines(ctx: CommandContext): string[] {
  const data = docData(ctx.session);
  if (!data || ctx.session.ref.type === 'hub') return [];
  return data.loaded.doc.actions.map((a) => usageLine(a).replace(/^Usage: /, ''));
}
