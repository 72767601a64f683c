import { dirname } from 'node:path';
import { ownValue } from '../../domain/keys.js';
import { topicScope } from '../../domain/topic.js';
import type { LoadedDocument } from '../docContract.js';
import { buildEnv, identityEnv } from '../shellEnv.js';
import type { CommandContext } from '../types.js';

/**
 * `$NAME` resolution and the CLI environment of actions (spec §4.12; behaviour.md §4.6, §4.8, §6.3,
 * §12 item 4: remote documents see only their app and config scopes, never global or the process
 * environment).
 */

/** The folder an action runs in: the document's folder, or the package folder (behaviour.md §4.8). */
export function actionDir(ctx: CommandContext, loaded: LoadedDocument): string {
  return loaded.dir ?? (loaded.path ? dirname(loaded.path) : ctx.agent.home);
}

/** The document part of the extra environment of behaviour.md §4.6 (with identityEnv: `HOME`, `LOOM_*`). */
function docEnv(ctx: CommandContext, loaded: LoadedDocument): Array<[string, string]> {
  return [['LOOM_DOC', loaded.path ?? loaded.uri], ['LOOM_DOC_DIR', loaded.origin === 'local' ? actionDir(ctx, loaded) : '']];
}

/** The extra environment of behaviour.md §4.6 (`HOME` = agent home, `LOOM_*`): what `$NAME` sees first. */
export function extraEnv(ctx: CommandContext, loaded: LoadedDocument): Record<string, string> {
  return Object.fromEntries([...identityEnv(ctx).filter(([k]) => k !== 'LOOM_USER_HOME' && k !== 'SVC_PORT'), ...docEnv(ctx, loaded)]);
}

/** True for documents that may use the process environment and global scope (behaviour.md §3.1). */
export function isLocal(loaded: LoadedDocument): boolean {
  return loaded.origin === 'local';
}

/** `$NAME` from the topic's env-store cascade (remote documents: app and config scopes only). */
export function storeDollar(ctx: CommandContext, loaded: LoadedDocument): (name: string) => string | undefined {
  const scope = topicScope(ctx.session.ref);
  return (name) => ctx.services.env.lookup(ctx.agent.id, scope, name, { includeGlobal: isLocal(loaded) })?.value;
}

/**
 * `$NAME` in action definitions (behaviour.md §4.6): extra env → env store cascade → `env:` default
 * of the document → process environment (local documents only) → unresolved.
 */
export function definitionDollar(ctx: CommandContext, loaded: LoadedDocument): (name: string) => string | undefined {
  const extra = extraEnv(ctx, loaded);
  const store = storeDollar(ctx, loaded);
  return (name) => {
    if (Object.prototype.hasOwnProperty.call(extra, name)) return extra[name];
    const s = store(name);
    if (s !== undefined) return s;
    const decl = loaded.doc.env.find((e) => e.name === name);
    if (decl?.default !== undefined) return decl.default;
    if (isLocal(loaded)) return ownValue(process.env, name);
    return undefined;
  };
}

/**
 * The environment of a CLI action (behaviour.md §4.8): the daemon's environment, the env-store
 * cascade (global < app < config), session variables the command references as `$name` and the
 * store does not shadow, then the extra variables, `LOOM_USER_HOME` and `SVC_PORT`. `env:` defaults
 * fill names none of those layers (except the daemon's environment) sets.
 */
export function cliEnvironment(ctx: CommandContext, loaded: LoadedDocument, referenced: Set<string>): NodeJS.ProcessEnv {
  const store = new Map(ctx.services.env.effective(ctx.agent.id, topicScope(ctx.session.ref)).map((e) => [e.name, e.value]));
  const vars: Array<[string, string]> = [];
  for (const name of referenced) {
    const v = ctx.session.vars.get(name);
    if (v !== undefined && !store.has(name)) vars.push([name, v]);
  }
  const defaults: Array<[string, string]> = [];
  for (const d of loaded.doc.env) if (d.default !== undefined) defaults.push([d.name, d.default]);
  return buildEnv([store, vars, identityEnv(ctx), docEnv(ctx, loaded)], defaults);
}
