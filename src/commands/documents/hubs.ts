import { nextLine } from '../../domain/result.js';
import { columns } from '../format.js';
import type { CommandContext } from '../types.js';

/** Package rows `  <name>  <mode>  <version or ->  <source>` of one type (behaviour.md §2.12). */
function packageRows(ctx: CommandContext, type: 'app' | 'tool'): string[][] {
  return ctx.services.packages.list(ctx.agent.id).filter((p) => p.type === type).map((p) => [p.name, p.mode, p.version ?? '-', p.source]);
}

const orNone = (rows: string[]) => (rows.length ? rows : ['  (none)']);

/** The `app` hub page (behaviour.md §2.12). */
export function appHub(ctx: CommandContext): string[] {
  const rows = packageRows(ctx, 'app');
  const topics = ctx.services.topics(ctx.agent.id).filter((t) => t.session.ref.type === 'app');
  return [
    `Installed apps (${rows.length})`,
    ...orNone(columns(rows)),
    `Open app topics (${topics.length})`,
    ...orNone(columns(topics.map((t) => [t.session.ref.topic, t.session.doc ? t.session.doc.display : '(no document)']))),
    nextLine(['/open app:<name>', '/install <source> --app', '/uninstall <name>']),
  ];
}

/** The `tool` hub page (behaviour.md §2.12). */
export function toolHub(ctx: CommandContext): string[] {
  const rows = packageRows(ctx, 'tool');
  return [`Installed tools (${rows.length})`, ...orNone(columns(rows)), nextLine(['/open app:<name>', '/install <source> --tool'])];
}
