import { dirname } from 'node:path';
import { nullRecord, ownValue } from '../../domain/keys.js';
import { topicScope } from '../../domain/topic.js';
import type { LoadedDocument } from '../docContract.js';
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

/** The extra environment of behaviour.md §4.6 (`HOME` = agent home, `LOOM_*`). */
export function extraEnv(ctx: CommandContext, loaded: LoadedDocument): Record<string, string> {
  return {
    HOME: ctx.agent.home,
    LOOM_AGENT_ID: ctx.agent.id,
    LOOM_TOPIC: ctx.session.ref.topic,
    LOOM_HOME: ctx.agent.home,
    LOOM_DOC: loaded.path ?? loaded.uri,
    LOOM_DOC_DIR: loaded.origin === 'local' ? actionDir(ctx, loaded) : '',
  };
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
  // Variable names are user text: `$__proto__` must be exported, not set the object's prototype.
  const env: NodeJS.ProcessEnv = Object.assign(nullRecord<string>(), process.env);
  const set = new Set<string>();
  for (const e of ctx.services.env.effective(ctx.agent.id, topicScope(ctx.session.ref))) { env[e.name] = e.value; set.add(e.name); }
  for (const name of referenced) {
    const v = ctx.session.vars.get(name);
    if (v !== undefined && !set.has(name)) { env[name] = v; set.add(name); }
  }
  const extra = { ...extraEnv(ctx, loaded), LOOM_USER_HOME: process.env.HOME ?? '', SVC_PORT: String(ctx.services.info.port()) };
  for (const [k, v] of Object.entries(extra)) { env[k] = v; set.add(k); }
  for (const d of loaded.doc.env) if (d.default !== undefined && !set.has(d.name)) env[d.name] = d.default;
  return env;
}
