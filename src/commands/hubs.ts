import { content, fail, type CommandResult } from '../domain/result.js';
import type { HubName } from '../domain/topic.js';
import type { CommandContext, HubPage } from './types.js';
import { columns } from './format.js';

const title = (name: string) => `${name[0].toUpperCase()}${name.slice(1)} hub`;

/** Render the hub page of the session's hub topic. */
export async function renderHub(ctx: CommandContext): Promise<CommandResult> {
  const name = ctx.session.ref.name as HubName;
  const page = ctx.services.hubs.get(name);
  if (!page) return fail('INTERNAL_ERROR', `Internal error: no page for hub ${name}`);
  return content(title(name), await page(ctx));
}

function uptime(ms: number): string {
  const m = Math.floor(ms / 60000);
  return `${Math.floor(m / 1440)}d ${Math.floor((m % 1440) / 60)}h ${m % 60}m`;
}

/** behaviour.md §2.12 `system` hub. */
const systemHub: HubPage = (ctx) => {
  const { info } = ctx.services;
  const counts = ctx.services.counts();
  const queues = ctx.services.topics(ctx.agent.id).map((t) => [t.session.ref.topic, t.executing ? `executing · ${t.queueLength} queued` : 'idle']);
  return [
    `Loom ${info.version} · protocol 0.1 · role ${info.role} · port ${info.port()}`,
    `Uptime: ${uptime(ctx.services.clock.now() - info.startedAt)} · agents: ${counts.agents} · sessions: ${counts.sessions}`,
    `Queues of ${ctx.agent.id}`,
    ...columns(queues),
  ];
};

/** behaviour.md §2.12 `agent` hub. */
const agentHub: HubPage = (ctx) => {
  const a = ctx.agent;
  const caps = (ctx.services.capabilities?.listForAgent(a.id) ?? []).filter((c) => c.state === 'live');
  return [
    `Agent: ${a.id}`,
    `Home: ${a.home}`,
    `Allowed paths: ${a.allowedPaths.length > 0 ? a.allowedPaths.join(', ') : '(none)'}`,
    `Created: ${a.createdAt}`,
    `Webhook: ${ctx.services.events?.webhookUrl(a.id) ?? '(none)'}`,
    `Capabilities (${caps.length} live)`,
    ...columns(caps.map((c) => [c.token_id, c.path_prefix || '(workspace)', c.verbs.join(','), c.state, `expires ${c.expires_at}`])),
    'Mint from a shell: loom agent capability mint --path <prefix> --verbs get,put --ttl 15m [--single-use]',
  ];
};

/** behaviour.md §2.12 `bash` hub: the agent's bash topics and their shells (state, cwd, pid, last command). */
const bashHub: HubPage = (ctx) => {
  const bash = ctx.services.bash;
  const rows = ctx.services.topics(ctx.agent.id).filter((t) => t.session.ref.type === 'bash').map((t) => [t.session.ref.topic, bash?.hubState(t) ?? 'no shell']);
  return [`Bash topics (${rows.length})`, ...columns(rows), 'next: /exec <command> in topic bash:<name>'];
};

/** The hubs every build has; features add `event`, `app` and `tool` (behaviour.md §2.12). */
export const CORE_HUBS: Partial<Record<HubName, HubPage>> = { system: systemHub, agent: agentHub, bash: bashHub };
