import { InvalidArgumentError } from 'commander';
import type { CliParts } from './extensions.js';
import { cliAgent, client, guard, print, type GlobalOpts } from './common.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration of behaviour.md §2.13: `^\d+(ms|s|m|h|d)$` or bare milliseconds (`90s`, `15m`, `1h`,
 * `7d`, `1500`). Returns milliseconds, or null when the text is not a duration.
 */
export function parseDuration(text: string): number | null {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2] ?? 'ms'];
  return Number.isSafeInteger(ms) ? ms : null;
}

/** The mint output of behaviour.md §2.13 (five lines). */
export function mintText(r: Record<string, unknown>): string {
  const verbs = (r.verbs as string[]).join(', ');
  return [
    `Minted ${String(r.token_id)} for agent '${String(r.agent_id)}'`,
    `scope: ${r.path_prefix ? String(r.path_prefix) : '(whole workspace)'}  verbs: ${verbs}`,
    `expires: ${String(r.expires_at)}  single-use: ${r.single_use ? 'yes' : 'no'}`,
    `secret: ${String(r.secret)}`,
    'The secret is shown only once.',
  ].join('\n');
}

/** One row of `capability list`. */
function row(c: Record<string, unknown>): string {
  return `  ${String(c.token_id)}  ${c.path_prefix ? String(c.path_prefix) : '(workspace)'}  ${(c.verbs as string[]).join(',')}  ${String(c.state)}  expires ${String(c.expires_at)}`;
}

/** The error line of a refused call (stdout, exit 1: behaviour.md §2.13). */
function refusal(body: Record<string, unknown>): string {
  return `loom: ${String(body.error)}${body.message ? `: ${String(body.message)}` : ''}`;
}

function verbList(text: string): string[] {
  const verbs = text.split(',').map((v) => v.trim()).filter(Boolean);
  if (verbs.length === 0) throw new InvalidArgumentError('give verbs such as get,put');
  return verbs;
}

function duration(text: string): number {
  const ms = parseDuration(text);
  if (ms === null) throw new InvalidArgumentError('use a duration like 90s, 15m, 1h, 7d or milliseconds');
  return ms;
}

/**
 * `loom agent capability mint|list|revoke` (spec §4.2 shell form, behaviour.md §2.13). Talks to the
 * daemon through the client only.
 */
export function capabilityCli({ program, agent }: CliParts): void {
  const g = () => program.opts<GlobalOpts>();
  const cap = agent.command('capability').description('Mint, list and revoke /fs capabilities of the agent');
  cap.command('mint')
    .description('Mint a capability (POST /capabilities); prints the secret once')
    .option('--path <prefix>', 'subtree inside the workspace (default: the whole workspace)', '')
    .requiredOption('--verbs <list>', 'comma-separated: get, put, delete, stat', verbList)
    .requiredOption('--ttl <duration>', 'lifetime: 90s, 15m, 1h, 7d or milliseconds', duration)
    .option('--single-use', 'consumed by the first successful request')
    .action((o: { path: string; verbs: string[]; ttl: number; singleUse?: boolean }) => guard(async () => {
      const agentId = cliAgent(g());
      const r = await client(g()).mintCapability({ agent_id: agentId, path_prefix: o.path, verbs: o.verbs, ttl_ms: o.ttl, single_use: o.singleUse === true });
      if (r.status !== 201) {
        print(g(), r.body, refusal(r.body));
        return 1;
      }
      print(g(), r.body, mintText(r.body));
    }));
  cap.command('list').description('List the agent\'s capabilities (GET /capabilities?agent_id=)').action(() => guard(async () => {
    const r = await client(g()).listCapabilities(cliAgent(g()));
    if (r.status !== 200) {
      print(g(), r.body, refusal(r.body as unknown as Record<string, unknown>));
      return 1;
    }
    const caps = r.body.capabilities;
    print(g(), r.body, [`Capabilities of '${cliAgent(g())}' (${caps.length})`, ...caps.map(row)].join('\n'));
  }));
  cap.command('revoke <token_id>').description('Revoke a capability (DELETE /capabilities/<id>)').action((tokenId: string) => guard(async () => {
    const r = await client(g()).revokeCapability(tokenId);
    if (r.status !== 200) {
      print(g(), r.body, refusal(r.body));
      return 1;
    }
    print(g(), r.body, r.body.revoked ? `Revoked ${tokenId}` : `Not revoked: ${tokenId} is unknown or already dead`);
    return r.body.revoked ? 0 : 1;
  }));
}
