import { InvalidArgumentError } from 'commander';
import { CAPABILITY_MAX_TTL_MS } from '../domain/limits.js';
import { columns, durationText } from '../domain/text.js';
import { CliFailure, agentFailure, cliAgent, client, examples, globals, guard, httpFailure, print, type CliParts, type GlobalOpts } from './common.js';

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

function verbList(text: string): string[] {
  const verbs = text.split(',').map((v) => v.trim()).filter(Boolean);
  if (verbs.length === 0) throw new InvalidArgumentError('give verbs such as get,put');
  return verbs;
}

/** `--ttl`: a duration in human units, at most 30d (checked here, so the error speaks in days, not ms). */
function duration(text: string): number {
  const ms = parseDuration(text);
  if (ms === null || ms < 1) throw new InvalidArgumentError('use a duration like 90s, 15m, 1h, 7d or milliseconds');
  if (ms > CAPABILITY_MAX_TTL_MS) throw new InvalidArgumentError(`at most ${durationText(CAPABILITY_MAX_TTL_MS)}`);
  return ms;
}

interface MintOpts {
  path?: string;
  verbs: string[];
  ttl: number;
  singleUse?: boolean;
}

async function mint(opts: GlobalOpts, o: MintOpts): Promise<void> {
  const agentId = cliAgent(opts);
  const r = await client(opts).mintCapability({ agent_id: agentId, path_prefix: o.path ?? '', verbs: o.verbs, ttl_ms: o.ttl, single_use: o.singleUse === true });
  if (r.status === 404 || r.status === 401) throw agentFailure(agentId);
  if (r.status !== 201) throw httpFailure(r.status, r.body);
  print(opts, r.body, mintText(r.body));
}

async function list(opts: GlobalOpts): Promise<void> {
  const agentId = cliAgent(opts);
  const c = client(opts);
  const r = await c.listCapabilities(agentId);
  if (r.status !== 200) throw httpFailure(r.status, r.body);
  const caps = r.body.capabilities;
  // An empty list for an agent that does not exist would hide a typo.
  if (caps.length === 0 && !(await c.listAgents()).body.agents.some((a) => a.id === agentId)) throw agentFailure(agentId);
  const rows = caps.map((x) => [String(x.token_id), x.path_prefix ? String(x.path_prefix) : '(workspace)', (x.verbs as string[]).join(','), String(x.state), `expires ${String(x.expires_at)}`]);
  print(opts, r.body, [`Capabilities of '${agentId}' (${caps.length})`, ...columns(rows)].join('\n'));
}

async function revoke(opts: GlobalOpts, tokenId: string): Promise<number> {
  const r = await client(opts).revokeCapability(tokenId);
  if (r.status !== 200) throw httpFailure(r.status, r.body);
  if (!r.body.revoked) throw new CliFailure({ error: `not revoked: ${tokenId} is unknown or already dead`, code: 'NOT_REVOKED', message: 'loom agent capability list shows the live ones' });
  print(opts, r.body, `Revoked ${tokenId}`);
  return 0;
}

/**
 * `loom agent capability mint|list|revoke` (spec §4.2 shell form, behaviour.md §2.13). Talks to the
 * daemon through the client only.
 */
export function capabilityCli({ program, agent }: CliParts): void {
  const g = () => globals(program);
  const cap = examples(agent.command('capability').description('Mint, list and revoke /fs capabilities of the agent'), [
    'loom --agent leo agent capability mint --path docs --verbs get,put --ttl 15m',
    'loom --agent leo agent capability list',
  ]);
  examples(cap.command('mint')
    .description('Mint a capability (POST /capabilities); prints the secret once')
    .option('--path <prefix>', 'subtree of the agent home (default: the whole workspace)')
    .requiredOption('--verbs <list>', 'comma-separated: get, put, delete, stat', verbList)
    .requiredOption('--ttl <duration>', `lifetime: 90s, 15m, 1h, 7d or milliseconds; at most ${durationText(CAPABILITY_MAX_TTL_MS)}`, duration)
    .option('--single-use', 'consumed by the first successful request'), [
    'loom --agent leo agent capability mint --path docs --verbs get,put --ttl 15m',
    'loom --agent leo agent capability mint --verbs get --ttl 30d --single-use',
  ]).action((o: MintOpts) => guard(g(), () => mint(g(), o)));
  examples(cap.command('list').description("List the agent's capabilities, live and recently dead"), ['loom --agent leo agent capability list'])
    .action(() => guard(g(), () => list(g())));
  examples(cap.command('revoke <token_id>').description('Revoke a capability (DELETE /capabilities/<id>)'), ['loom agent capability revoke cap_XXXXXXXXXXXXXXXX'])
    .action((tokenId: string) => guard(g(), () => revoke(g(), tokenId)));
}
