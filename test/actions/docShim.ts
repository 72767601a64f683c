import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CommandRegistry } from '../../src/commands/registry.js';
import type { Services } from '../../src/commands/types.js';
import { CURRENT_DOCUMENT_KEY, DEFAULT_ACTION_KEY, INVOKE_ACTION_KEY, type ActionInvoker, type CurrentDocumentProvider, type DefaultActionRunner, type LoadedDocument } from '../../src/commands/docContract.js';
import type { SessionState } from '../../src/domain/session.js';
import { parseDocument } from '../../src/sfmd/parse.js';
import { displayOf, expandPath } from '../../src/effects/workspace.js';
import { actionArgs } from '../../src/features/actions.js';

/**
 * A stand-in for the documents feature (issue 5) used only while its /open and /act are not in
 * this branch: `/open <local file>` parses and remembers the document, `/act.<id>` invokes.
 * Installed only when no CURRENT_DOCUMENT provider is registered.
 */
export function installDocShim(services: Services, registry: CommandRegistry): boolean {
  if (services.ext.has(CURRENT_DOCUMENT_KEY)) return false;
  const docs = new WeakMap<SessionState, LoadedDocument>();
  const provider: CurrentDocumentProvider = async (ctx) => docs.get(ctx.session) ?? null;
  services.ext.set(CURRENT_DOCUMENT_KEY, provider);
  registry.register({
    name: 'open',
    async run(ctx) {
      const abs = expandPath(ctx.args.trim(), ctx.agent.home, ctx.agent.home);
      const doc = parseDocument(readFileSync(abs, 'utf8'));
      const display = displayOf(abs, ctx.agent.home);
      const loaded: LoadedDocument = { doc, origin: 'local', uri: `file://${abs}`, display, path: abs, dir: dirname(abs) };
      docs.set(ctx.session, loaded);
      const parts = [`Opened ${display}`, '---', doc.rendered.trim()];
      if (doc.actions.length > 0) parts.push('', `[actions] ${doc.actions.map((a) => a.id).join(', ')}`);
      if (doc.defaultAction) {
        const run = services.ext.get(DEFAULT_ACTION_KEY) as DefaultActionRunner;
        parts.push('', '---', '', (await run(ctx, loaded)).body);
      }
      return { ok: true, code: null, body: parts.join('\n') };
    },
  }, {
    name: 'act',
    takesBody: true,
    async run(ctx) {
      const loaded = docs.get(ctx.session);
      if (!loaded || !ctx.sub) return { ok: false, code: 'INVALID_TARGET', body: 'ERROR(INVALID_TARGET): No document open.' };
      return (services.ext.get(INVOKE_ACTION_KEY) as ActionInvoker)(ctx, loaded, ctx.sub, actionArgs(ctx));
    },
  });
  return true;
}
