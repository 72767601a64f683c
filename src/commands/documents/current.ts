import { fail, type CommandResult } from '../../domain/result.js';
import type { LoadedDocument } from '../docContract.js';
import { HUB_ONLY_MESSAGE } from '../registry.js';
import type { CommandContext } from '../types.js';
import { loadAndSet } from './open.js';
import { docData } from './state.js';
import { notInstalled } from './targets.js';

/**
 * The topic's current document. In an `app` topic with no document the
 * package root is loaded first (env check applies, no default action, no history push:
 * behaviour.md §2.1 step 5, §2.6, §5.1). Null when a non-app topic has no document.
 */
export async function currentDocument(ctx: CommandContext): Promise<LoadedDocument | CommandResult | null> {
  const { session } = ctx;
  if (session.ref.type === 'hub') return fail('INVALID_TARGET', HUB_ONLY_MESSAGE);
  const cur = docData(session);
  if (cur) return cur.loaded;
  if (session.ref.type !== 'app') return null;
  if (!ctx.services.packages.get(ctx.agent.id, session.ref.name)) return notInstalled(session.ref.name);
  const r = await loadAndSet(ctx, { kind: 'package', name: session.ref.name, page: null }, null, 'keep');
  return 'ok' in r ? r : r.data.loaded;
}
