import { content, fail } from '../domain/result.js';
import type { Command, CommandContext, TopicStatus } from './types.js';
import { columns } from './format.js';
import { wireOf } from './wire.js';


/** The state column of /topics (behaviour.md §2.11). */
export function topicState(ctx: CommandContext, t: TopicStatus): string {
  const s = t.session;
  let state: string;
  if (s.ref.type === 'hub') state = '(hub)';
  else if (s.ref.type === 'bash') state = ctx.services.bash?.state(t) ?? 'no shell';
  else state = s.doc ? s.doc.display : '(no document)';
  if (t.executing) state += ' · executing';
  if (t.queueLength > 0) state += ` · ${t.queueLength} queued`;
  return state;
}

/** `tab, app, bash or hub` (the wire's topic types, behaviour.md §2.11, §11). */
function typeList(types: readonly string[]): string {
  return `${types.slice(0, -1).join(', ')} or ${types[types.length - 1]}`;
}

/** `/topics [tab|app|bash|hub]` (behaviour.md §2.11; `[file|app|web|bash]` on the user wire, §11). */
export const topicsCommand: Command = {
  name: 'topics',
  run(ctx) {
    const filter = ctx.args.trim();
    const wire = wireOf(ctx);
    if (filter && !wire.topicTypes.includes(filter)) return fail('INVALID_ARGS', `Unknown topic type: ${filter} (use ${typeList(wire.topicTypes)})`);
    const all = ctx.services.topics(ctx.agent.id).filter((t) => !filter || t.session.ref.type === filter || t.session === ctx.session);
    // The calling topic is busy with this very /topics; behaviour.md §2.11's example shows it without ` · executing`.
    const rows = all.map((t) => {
      const self = t.session === ctx.session;
      return [`${self ? '*' : ' '} ${t.session.ref.topic}`, t.session.ref.type, topicState(ctx, self ? { ...t, executing: false } : t)];
    });
    return content(`Topics of ${wire.noun} ${ctx.agent.id} (${all.length})`, columns(rows, ''));
  },
};
