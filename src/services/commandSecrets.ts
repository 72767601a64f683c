import type { EnvStore } from '../domain/ports.js';
import { compileMasks, envMask, sessionMask, type MaskedValue, type ValueMasks } from '../domain/redact.js';

/** How long a cached value list is trusted without looking at the env file (a hand edit, behaviour.md §6.2). */
export const ENV_RECHECK_MS = 1000;

const RECHECK = Object.freeze({ recheck: true });

/** One agent's env-store values as masks, with the revision they were read at. */
interface AgentMasks {
  revision: number;
  checkedAt: number;
  env: readonly MaskedValue[];
  /** `env` compiled (null: nothing to mask). */
  masks: ValueMasks | null;
}

/** One session's masks: the agent's env values and the session's variables. */
interface SessionMasks {
  env: AgentMasks;
  masks: ValueMasks | null;
}

/** An agent's masks for text that belongs to no one topic: its env values and every open session's variables. */
interface UnionMasks {
  env: AgentMasks;
  vars: ReadonlyArray<ReadonlyMap<string, string>>;
  masks: ValueMasks | null;
}

/**
 * The values a command's `cmd` must not show in the inspector (behaviour.md §13.4): every env-store
 * value of its agent (global, apps and configs: all an agent can read, a superset of what the trace
 * recorder keeps out) as `${env:NAME}`, and every value of its topic's session variables as
 * `{name}`. Lists are read and compiled only when asked (when a message, a snapshot or a `recent`
 * entry is built), and kept until the env store's revision or the session's variables change: a command
 * message then costs two Map lookups, and nothing more when the agent has no values.
 */
export class CommandSecrets {
  private readonly agents = new Map<string, AgentMasks>();
  private readonly sessions = new WeakMap<ReadonlyMap<string, string>, SessionMasks>();
  private readonly unions = new Map<string, UnionMasks>();

  constructor(private readonly env: Pick<EnvStore, 'values' | 'revision'>, private readonly now: () => number = Date.now) {}

  /**
   * The masks for a command of `agentId` in a topic whose session variables are `vars` (none: the
   * env store only); null when there is nothing to mask. `recheck` looks at the env file now (a
   * snapshot); otherwise at most once per ENV_RECHECK_MS per agent.
   */
  masks(agentId: string, vars?: ReadonlyMap<string, string>, opts?: { recheck?: boolean }): ValueMasks | null {
    const env = this.envOf(agentId, opts?.recheck === true);
    if (!vars || vars.size === 0) return env.masks;
    // A session's variables are a new map after every change (domain/session.ts), so the map is the key.
    const kept = this.sessions.get(vars);
    if (kept && kept.env === env) return kept.masks;
    const pairs: MaskedValue[] = [...env.env];
    for (const [name, value] of vars) pairs.push([value, sessionMask(name)]);
    const masks = compileMasks(pairs);
    this.sessions.set(vars, { env, masks });
    return masks;
  }

  /**
   * The masks for a text of `agentId` that belongs to no one topic (an install source, a package
   * record, a request path): its env-store values and the variables of each of its open sessions
   * (`sessions`, their variable maps). Kept until the env store or one of the maps changes.
   */
  agentMasks(agentId: string, sessions: ReadonlyArray<ReadonlyMap<string, string>>): ValueMasks | null {
    const vars = sessions.filter((v) => v.size > 0);
    if (vars.length <= 1) return this.masks(agentId, vars[0]);
    const env = this.envOf(agentId, false);
    const kept = this.unions.get(agentId);
    if (kept && kept.env === env && kept.vars.length === vars.length && kept.vars.every((v, i) => v === vars[i])) return kept.masks;
    const pairs: MaskedValue[] = [...env.env];
    for (const map of vars) for (const [name, value] of map) pairs.push([value, sessionMask(name)]);
    const masks = compileMasks(pairs);
    this.unions.set(agentId, { env, vars, masks });
    return masks;
  }

  /** Forget an agent (deleted): its list is not kept for nothing. */
  forget(agentId: string): void {
    this.agents.delete(agentId);
    this.unions.delete(agentId);
  }

  private envOf(agentId: string, recheck: boolean): AgentMasks {
    const kept = this.agents.get(agentId);
    const now = this.now();
    const due = recheck || !kept || now - kept.checkedAt >= ENV_RECHECK_MS;
    const revision = this.env.revision(agentId, due ? RECHECK : undefined);
    if (kept && kept.revision === revision) {
      if (due) kept.checkedAt = now;
      return kept;
    }
    // Names are the store's own (hand-edited keys included); a Map keeps `__proto__` a plain key.
    const env: MaskedValue[] = this.env.values(agentId).map((e) => [e.value, envMask(e.name)]);
    const fresh: AgentMasks = { revision, checkedAt: now, env, masks: compileMasks(env) };
    this.agents.set(agentId, fresh);
    return fresh;
  }
}
