import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import type { IdentitySummary } from '../client/index.js';
import { isAgentId } from '../domain/ids.js';
import { LoomError } from '../domain/errors.js';
import { parseNetworkFlag, type NetworkPolicy } from '../domain/networkPolicy.js';
import { columns, plural } from '../domain/text.js';
import { nounTitle, WIRES } from '../domain/wire.js';
import { CliFailure, UsageError, agentFailure, client, cliWire, dataDir, savedDefaults, examples, globals, guard, httpFailure, print, type GlobalOpts } from './common.js';
import { isSandboxMode, SANDBOX_MODES } from '../domain/sandbox.js';

interface AddOpts {
  home?: string;
  allow?: string[];
  webhook?: boolean;
  sandbox?: string;
  network?: string;
}

/*
 * On a daemon of the user wire (behaviour.md §11) these commands manage its users: POST /users
 * (a home is required), GET /users, DELETE /users/{id}; the texts say "user".
 */

/** `--network`'s text as the body's `network` (behaviour.md §15.2); a bad value is a usage error. */
function networkOption(text: string | undefined): { network?: NetworkPolicy } {
  if (text === undefined) return {};
  try {
    return { network: parseNetworkFlag(text) };
  } catch (err) {
    throw new UsageError(`loom: ${err instanceof LoomError ? err.error : String(err)}`);
  }
}

async function add(opts: GlobalOpts, id: string, o: AddOpts): Promise<void> {
  // A usage error (exit 2) before the daemon is asked, worded as `loom daemon --sandbox` words it.
  if (o.sandbox !== undefined && !isSandboxMode(o.sandbox)) throw new UsageError(`loom: invalid --sandbox "${o.sandbox}" (use ${SANDBOX_MODES.join(' or ')})`);
  const network = networkOption(o.network);
  const c = client(opts, false);
  const r = await c.register(id, { ...(o.home ? { home: o.home } : {}), ...(o.allow ? { allowed_paths: o.allow } : {}), ...(o.webhook ? { webhook: true } : {}), ...(o.sandbox ? { sandbox: o.sandbox } : {}), ...network });
  if (r.status !== 200) throw httpFailure(r.status, r.body);
  const hook = r.body.webhook_url ? `\nwebhook: ${String(r.body.webhook_url)}` : '';
  print(opts, r.body, `${r.body.created ? 'Added' : 'Updated'} ${c.wire.noun} '${id}' · home ${String(r.body.home)}${hook}`);
}

async function list(opts: GlobalOpts): Promise<void> {
  const c = client(opts, false);
  const r = await c.identities();
  const extra = (a: IdentitySummary) => [a.allowedPaths.length ? `+ ${a.allowedPaths.join(', ')}` : '', a.sandbox === 'workspace' ? 'sandbox: workspace' : ''].filter(Boolean).join('  ');
  const rows = r.list.map((a) => [a.id, a.home, extra(a)]);
  print(opts, { [c.wire.listField]: r.list }, [`${nounTitle(c.wire)}s (${r.list.length})`, ...columns(rows)].join('\n'));
}

async function rm(opts: GlobalOpts, id: string, o: { purge?: boolean; force?: boolean }): Promise<number> {
  if (o.force && !o.purge) throw new UsageError('loom: --force only applies with --purge');
  const c = client(opts, false);
  const r = await c.deleteAgent(id, o);
  if (r.status !== 200) throw httpFailure(r.status, r.body);
  const noun = c.wire.noun;
  if (!r.body.deleted) throw new CliFailure({ error: `no ${noun} '${id}'`, code: `UNKNOWN_${noun.toUpperCase()}`, message: `loom agent list shows the ${noun}s` });
  const sessions = plural(Number(r.body.disposed_sessions), 'session');
  const caps = r.body.revoked_capabilities !== undefined ? `revoked ${plural(Number(r.body.revoked_capabilities), 'capability', 'capabilities')}, ` : '';
  const home = typeof r.body.purged_home === 'string' ? `home ${r.body.purged_home} deleted` : 'home kept';
  print(opts, r.body, `Deleted ${noun} '${id}' (${caps}disposed ${sessions}; ${home})`);
  return 0;
}

/** `loom agent add|list|rm|use` (behaviour.md §2.13); returns the `agent` command for `agent capability`. */
export function agentCommands(program: Command): Command {
  const g = () => globals(program);
  const agent = examples(program.command('agent').description('Manage agents: add, list, rm, use (and their capabilities)'), [
    'loom agent add leo', 'loom agent use leo', 'loom agent list',
  ]);
  examples(agent.command('add <id>')
    .description('Register an agent (idempotent); prints its home')
    .option('--home <path>', 'absolute home folder (default: <data>/agents/<id>/home; required on the user wire)')
    .option('--allow <path...>', 'additional absolute paths the agent may access')
    .option('--webhook', 'also create its local webhook')
    .option('--sandbox <mode>', 'none, or workspace to confine its commands, shells and CLI actions to its workspace (Landlock)')
    .option('--network <policy>', 'a confined agent\'s network: public (default), none, open, or allow=host,*.domain,host:port'), [
    'loom agent add leo', 'loom agent add leo --allow ~/projects --webhook', 'loom agent add leo --sandbox workspace',
    'loom agent add leo --sandbox workspace --network allow=api.github.com,127.0.0.1:8080', 'loom --wire user agent add ann --home ~/ann',
  ]).action((id: string, o: AddOpts) => guard(g(), () => add(g(), id, o)));
  examples(agent.command('list').description('List registered agents'), ['loom agent list', 'loom agent list --json'])
    .action(() => guard(g(), () => list(g())));
  examples(agent.command('rm <id>').description('Delete an agent (its home folder stays unless --purge)')
    .option('--purge', 'also delete its default home <data>/agents/<id>/home')
    .option('--force', 'with --purge: also delete a home chosen with --home'), [
    'loom agent rm leo', 'loom agent rm leo --purge', 'loom agent rm ann --purge --force   # ann was added with --home',
  ]).action((id: string, o: { purge?: boolean; force?: boolean }) => guard(g(), () => rm(g(), id, o)));
  examples(agent.command('use <id>').description('Make <id> the default agent of this CLI'), ['loom agent use leo'])
    .action((id: string) => guard(g(), async () => {
      if (!isAgentId(id)) throw agentFailure(id);
      mkdirSync(dataDir(), { recursive: true, mode: 0o700 });
      const key = WIRES[cliWire(g()) ?? 'agent'].files.cliDefault;
      writeFileSync(join(dataDir(), 'cli.json'), JSON.stringify({ ...savedDefaults(), [key]: id }) + '\n', { mode: 0o600 });
      print(g(), { [key]: id }, `Default ${key}: ${id}`);
    }));
  return agent;
}
