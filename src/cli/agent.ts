import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { client, dataDir, guard, print, type GlobalOpts } from './common.js';

/** `loom agent add|list|rm|use` (behaviour.md §2.13); returns the `agent` command for extensions. */
export function agentCommands(program: Command): Command {
  const agent = program.command('agent').description('Manage agents: add, list, rm, use (and capabilities)');
  const g = () => program.opts<GlobalOpts>();
  agent.command('add <id>')
    .description('Register an agent (idempotent); prints its home')
    .option('--home <path>', 'absolute home folder (default: <data>/agents/<id>/home)')
    .option('--allow <path...>', 'additional absolute paths the agent may access')
    .option('--webhook', 'also create its local webhook')
    .action((id: string, o: { home?: string; allow?: string[]; webhook?: boolean }) => guard(async () => {
      const r = await client(g(), false).registerAgent({ agent_id: id, ...(o.home ? { home: o.home } : {}), ...(o.allow ? { allowed_paths: o.allow } : {}), ...(o.webhook ? { webhook: true } : {}) });
      if (r.status !== 200) {
        print(g(), r.body, `loom: ${String((r.body as { error?: string }).error)}`);
        return 1;
      }
      print(g(), r.body, `${r.body.created ? 'Added' : 'Updated'} agent '${id}' · home ${String(r.body.home)}${r.body.webhook_url ? `\nwebhook: ${String(r.body.webhook_url)}` : ''}`);
    }));
  agent.command('list').description('List registered agents').action(() => guard(async () => {
    const r = await client(g(), false).listAgents();
    const lines = r.body.agents.map((a) => `  ${a.id}  ${a.home}`);
    print(g(), r.body, `Agents (${r.body.agents.length})${lines.length ? '\n' + lines.join('\n') : ''}`);
  }));
  agent.command('rm <id>').description('Delete an agent (its home folder stays)').action((id: string) => guard(async () => {
    const r = await client(g(), false).deleteAgent(id);
    print(g(), r.body, r.body.deleted ? `Deleted agent '${id}' (revoked ${String(r.body.revoked_capabilities)} capabilities, disposed ${String(r.body.disposed_sessions)} sessions; home kept)` : `No agent '${id}'`);
    return r.body.deleted ? 0 : 1;
  }));
  agent.command('use <id>').description('Make <id> the default agent of this CLI').action((id: string) => guard(async () => {
    mkdirSync(dataDir(), { recursive: true, mode: 0o700 });
    writeFileSync(join(dataDir(), 'cli.json'), JSON.stringify({ agent: id }) + '\n', { mode: 0o600 });
    print(g(), { agent: id }, `Default agent: ${id}`);
  }));
  return agent;
}
