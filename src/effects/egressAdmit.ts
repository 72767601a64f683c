import type { NetworkPolicy } from '../domain/networkPolicy.js';
import type { ProxyTarget } from '../domain/proxyTarget.js';
import { deniedAnswer, unresolvedAnswer, type ProxyAnswer } from './egressAnswers.js';
import { connectGuard, decideTarget } from './egressTarget.js';
import type { ProxyContext } from './egressTypes.js';

/** An agent whose credential the proxy accepted, with its policy at that moment. */
export interface Admitted {
  agentId: string;
  policy: NetworkPolicy;
}

/** The agent a request's `Proxy-Authorization` proves, if the daemon still knows it; else undefined (407). */
export function admit(ctx: ProxyContext, header: string | undefined): Admitted | undefined {
  const agentId = ctx.creds.verify(header);
  if (agentId === undefined) return undefined;
  const policy = ctx.opts.policyOf(agentId);
  return policy === undefined ? undefined : { agentId, policy };
}

/**
 * Where an admitted agent's request for `target` goes: the checked address to connect to, or the
 * answer to give instead (403 after telling the daemon of the refusal, 502 for a failed lookup).
 */
export async function judge(ctx: ProxyContext, who: Admitted, target: ProxyTarget): Promise<{ address: string } | { answer: ProxyAnswer }> {
  const guard = connectGuard(ctx.opts.protectedPorts().daemon, ctx.port());
  const verdict = await decideTarget(who.policy, target.host, target.port, guard, ctx.lookup);
  switch (verdict.kind) {
    case 'connect':
      return { address: verdict.address };
    case 'unresolved':
      return { answer: unresolvedAnswer(target.host, verdict.code) };
    case 'denied':
      ctx.opts.onDenied({ agentId: who.agentId, host: target.host, port: target.port, reason: verdict.reason, at: Date.now() });
      return { answer: deniedAnswer(who.agentId, who.policy, target.host, target.port, verdict.reason) };
  }
}
