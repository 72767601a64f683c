import { fail, type CommandResult } from '../domain/result.js';
import { effectiveSandbox, type ConfinePlan } from '../domain/sandbox.js';
import { WIRES } from '../domain/wire.js';
import { confinePlan, sandboxRefusal } from '../effects/sandbox.js';
import type { CommandContext } from './types.js';

/** How the agent's programs may run: unconfined (`plan` null), confined by `plan`, or not at all. */
export type SandboxGate = { ok: true; plan: ConfinePlan | null } | { ok: false; result: CommandResult };

/**
 * The sandbox of the agent a command runs for (behaviour.md §15). A `workspace` agent on a machine
 * that cannot confine gets `ERROR(SANDBOX_UNAVAILABLE)` naming what is missing (a native part, or the
 * kernel's Landlock) and nothing runs (fail closed).
 */
export function commandSandbox(ctx: CommandContext): SandboxGate {
  const { info } = ctx.services;
  if (effectiveSandbox(ctx.agent.sandbox, info.sandbox ?? 'none') === 'none') return { ok: true, plan: null };
  const plan = confinePlan({ dataDir: info.dataDir, stateRoot: WIRES[info.wire].stateRoot, agentId: ctx.agent.id, home: ctx.agent.home, allowedPaths: ctx.agent.allowedPaths });
  return plan ? { ok: true, plan } : { ok: false, result: fail('SANDBOX_UNAVAILABLE', sandboxRefusal()) };
}

/** The environment of a confined program: its private temp folder as TMPDIR. */
export function sandboxEnv(env: NodeJS.ProcessEnv, plan: ConfinePlan | null): NodeJS.ProcessEnv {
  return plan ? { ...env, TMPDIR: plan.tmp } : env;
}
