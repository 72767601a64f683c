import { denialLine, fileDenials } from '../domain/denials.js';
import { fail, joinLines, type CommandResult } from '../domain/result.js';
import { effectiveNetwork, effectiveSandbox, missingGuaranteeMessage, rootChangedMessage, type ConfinePlan } from '../domain/sandbox.js';
import { WIRES } from '../domain/wire.js';
import { confinePlan } from '../effects/sandbox.js';
import type { CommandContext } from './types.js';

/** How the agent's programs may run: unconfined (`plan` null), confined by `plan`, or not at all. */
export type SandboxGate = { ok: true; plan: ConfinePlan | null } | { ok: false; result: CommandResult };

/**
 * The sandbox of the agent a command runs for (behaviour.md §15–§15.4). A `workspace` agent whose
 * policy needs a guarantee this system cannot enforce, or whose root changed since registration,
 * gets `ERROR(SANDBOX_UNAVAILABLE)` and nothing runs (fail closed).
 */
export function commandSandbox(ctx: CommandContext): SandboxGate {
  const { info } = ctx.services;
  if (effectiveSandbox(ctx.agent.sandbox, info.sandbox ?? 'none') === 'none') return { ok: true, plan: null };
  const egress = info.egress?.() ?? null;
  const r = confinePlan({
    dataDir: info.dataDir, stateRoot: WIRES[info.wire].stateRoot, agentId: ctx.agent.id, home: ctx.agent.home, allowedPaths: ctx.agent.allowedPaths,
    network: effectiveNetwork(ctx.agent.network), proxy: egress ? { port: egress.port, url: egress.url(ctx.agent.id) } : null,
  });
  if (r.ok) return { ok: true, plan: r.plan };
  if ('missing' in r) return { ok: false, result: fail('SANDBOX_UNAVAILABLE', missingGuaranteeMessage(r.missing, r.kernelHasLandlock)) };
  return { ok: false, result: fail('SANDBOX_UNAVAILABLE', rootChangedMessage(r.root, r.now)) };
}

/**
 * The environment of a confined program (behaviour.md §15.2, §15.3): its private temp folder as
 * TMPDIR and, where the network goes through the egress proxy, the proxy variables (NO_PROXY empty,
 * so the daemon itself is reached through the proxy as this agent) and LOOM_PROXY for the `loom` CLI.
 */
export function sandboxEnv(env: NodeJS.ProcessEnv, plan: ConfinePlan | null): NodeJS.ProcessEnv {
  if (!plan) return env;
  const out: NodeJS.ProcessEnv = { ...env, TMPDIR: plan.tmp };
  for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'all_proxy', 'no_proxy', 'LOOM_PROXY']) delete out[k];
  if (plan.proxyUrl) {
    for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) out[k] = plan.proxyUrl;
    out.NO_PROXY = '';
    out.no_proxy = '';
    out.LOOM_PROXY = plan.proxyUrl;
  }
  return out;
}

/**
 * A start that failed before anything ran, as the answer names it (behaviour.md §15.1, §15.4): for
 * a confined command the failed confinement step (a root reached through a link: §15.4's wording),
 * otherwise an internal error naming the call.
 */
export function spawnFailure(spawnError: string, plan: ConfinePlan | null): CommandResult {
  if (!plan) return fail('INTERNAL_ERROR', `Internal error: ${spawnError}`);
  const root = /^rule root (.+) failed: (.+)$/.exec(spawnError);
  if (root) return fail('SANDBOX_UNAVAILABLE', rootChangedMessage(root[1], /symbolic links/.test(root[2]) ? 'a symbolic link in its path' : root[2]));
  return fail('SANDBOX_UNAVAILABLE', `the sandbox could not be set up (${spawnError}); the agent's commands were not run`);
}

/**
 * Watch what the sandbox refuses a confined command while it runs (behaviour.md §15.5). The
 * returned function ends the watch and, when the command failed and something was refused, adds
 * the `loom sandbox: denied` line and `head.meta.sandbox`; nothing changes otherwise.
 */
export function watchDenials(ctx: CommandContext, plan: ConfinePlan | null): (r: CommandResult, output: string) => CommandResult {
  if (!plan) return (r) => r;
  const watch = ctx.services.info.denials?.watch(ctx.agent.id);
  return (r, output) => {
    const network = watch?.stop() ?? [];
    if (r.ok) return r;
    const denied = [...network, ...fileDenials(output, [plan.home, ...plan.allowedPaths, plan.tmp])];
    if (denied.length === 0) return r;
    return { ...r, body: joinLines([r.body, denialLine(denied, plan)]), sandbox: { mode: 'workspace', denied } };
  };
}
